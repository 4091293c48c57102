// The explain corpus: real error logs from public issues (tests/data/explain_corpus/, see its
// README.md) run through the real signatures and knowledge base. A case is right when the
// first explanation is the expected signature (and the "also" ones follow), or when nothing
// is named for a log torchdock should not claim; it is missed when nothing is named for a
// known failure, and wrong when another cause is named. Wrong is never allowed; at least
// 95% must be right. Prints the counts per family.
//
// Vocabulary entries (data/vocabularies: the meaning of a code or message) answer only when
// no signature does. tests/data/explain_corpus/meanings.json is the key for them: for a
// signature (or an "unknown" log, by file name), the vocabulary entries whose meaning is
// true of its logs. A vocabulary answer in the key is "meaning" (right, but not a cause);
// any other vocabulary answer is wrong.
//
// Leave-families-out: for each family, its signatures are removed and its logs scored on
// what is left (other families' signatures and the vocabularies, written without those
// logs): right (a meaning in the key), none (says it does not know), wrong. Printed next
// to the in-corpus score; wrong must stay 0 there too.
#include "diagnose/explain_corpus.hpp"

#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/diagnose/explain.hpp"
#include "engine/files.hpp"
#include "engine/project_loader.hpp"
#include "test_support.hpp"

using namespace td;

namespace {

const std::vector<test::CorpusCase>& corpus() {
    static const auto c = test::load_corpus(test::source_path("tests/data/explain_corpus"));
    return c;
}

struct Tally {
    int total = 0, right = 0, missed = 0, wrong = 0, meaning = 0;
};

// meanings.json: {"signatures": {"EX150": ["nccl/ncclSystemError"]}, "files": {...}}.
const nlohmann::json& meanings() {
    static const nlohmann::json j = [] {
        auto text =
            engine::read_text_file(test::source_path("tests/data/explain_corpus/meanings.json"));
        if (!text) throw std::runtime_error(text.error().message);
        return nlohmann::json::parse(text.value());
    }();
    return j;
}

bool meaning_ok(const test::CorpusCase& c, const std::string& id) {
    for (const auto& [key, name] :
         {std::pair{"signatures", c.expect}, std::pair{"files", c.file}}) {
        auto table = meanings().find(key);
        if (table == meanings().end() || !table->contains(name)) continue;
        for (const auto& v : (*table)[name])
            if (v == id) return true;
    }
    return false;
}

enum class Outcome { Right, Meaning, Missed, Wrong };

Outcome judge(const test::CorpusCase& c, const std::vector<Explanation>& found,
              const ErrorSignatures& s) {
    if (found.empty()) return c.expect == "unknown" ? Outcome::Right : Outcome::Missed;
    const Explanation& first = found.front();
    if (first.vocabulary && first.id == c.expect) return Outcome::Right;  // a held-out meaning
    if (first.vocabulary) return meaning_ok(c, first.id) ? Outcome::Meaning : Outcome::Wrong;
    if (first.id != c.expect) return Outcome::Wrong;
    bool right = true;
    for (const auto& id : c.also) {
        bool present = false;
        for (const auto& e : found) present = present || e.id == id;
        right = right && present;
    }
    for (const auto& [name, value] : c.facts) {
        auto it = first.facts.find(name);
        right = right && it != first.facts.end() && (value.empty() || it->second == value);
    }
    (void)s;
    return right ? Outcome::Right : Outcome::Wrong;
}

}  // namespace

TEST_CASE("explain corpus: every case is well formed and names a real signature") {
    REQUIRE(corpus().size() >= 120);
    std::set<std::string> sources;
    for (const auto& c : corpus()) {
        INFO(c.file);
        CHECK(c.problem.empty());
        CHECK(c.source.rfind("https://", 0) == 0);
        for (const char* host : {"pypi.org", "pythonhosted", "debian.org"})
            CHECK(c.source.find(host) == std::string::npos);
        if (c.expect != "unknown") CHECK(test::real_signatures().find(c.expect) != nullptr);
        for (const auto& id : c.also) CHECK(test::real_signatures().find(id) != nullptr);
        sources.insert(c.source);
    }
    // Real variety: many distinct threads, not one log copied around.
    CHECK(sources.size() >= 120);
}

TEST_CASE("explain corpus: >= 95% named right, none confidently wrong") {
    std::map<std::string, Tally> by_family;
    Tally all;
    std::string wrong_cases, missed_cases;
    for (const auto& c : corpus()) {
        auto found = explain_log(c.log, test::real_signatures(), nullptr, test::real_kb());
        const ErrorSignature* expected = test::real_signatures().find(c.expect);
        std::string family = expected ? expected->family : "unknown";
        Tally& t = by_family[family];
        ++t.total;
        ++all.total;
        for (const auto& e : found) {
            for (const std::string* text : {&e.cause, &e.fix}) {
                INFO(c.file << " " << e.id);
                CHECK(text->find("[[") == std::string::npos);
                CHECK(text->find('{') == std::string::npos);
            }
        }
        std::string got = found.empty() ? "unknown" : found.front().id;
        switch (judge(c, found, test::real_signatures())) {
            case Outcome::Right:
                ++t.right;
                ++all.right;
                break;
            case Outcome::Meaning:  // the meaning of the code: true, but not the cause
                ++t.meaning;
                ++all.meaning;
                if (c.expect == "unknown") {
                    ++t.right;
                    ++all.right;
                } else {
                    ++t.missed;
                    ++all.missed;
                    missed_cases += "  " + c.file + ": expected " + c.expect +
                                    ", got the meaning " + got + "\n";
                }
                break;
            case Outcome::Wrong:
                ++t.wrong;
                ++all.wrong;
                wrong_cases += "  " + c.file + ": expected " + c.expect + ", got " + got + "\n";
                break;
            case Outcome::Missed:
                ++t.missed;
                ++all.missed;
                missed_cases += "  " + c.file + ": expected " + c.expect + ", got nothing\n";
        }
    }
    std::printf(
        "explain corpus (in-corpus): %d logs, %d right, %d missed (said unknown or only "
        "the meaning of a code), %d wrong; %d answered by a vocabulary's meaning\n",
        all.total, all.right, all.missed, all.wrong, all.meaning);
    std::printf("  %-12s %5s %5s %6s %5s\n", "family", "logs", "right", "missed", "wrong");
    for (const auto& [family, t] : by_family)
        std::printf("  %-12s %5d %5d %6d %5d\n", family.c_str(), t.total, t.right, t.missed,
                    t.wrong);
    if (!missed_cases.empty()) std::printf("missed:\n%s", missed_cases.c_str());
    if (!wrong_cases.empty()) std::printf("wrong:\n%s", wrong_cases.c_str());
    INFO("wrong:\n" << wrong_cases << "missed:\n" << missed_cases);
    CHECK(all.wrong == 0);
    CHECK(all.right * 100 >= all.total * 95);
}

TEST_CASE("explain corpus: leave-families-out (vocabularies on families they never saw)") {
    std::set<std::string> families;
    for (const auto& s : test::real_signatures().signatures)
        if (!s.vocabulary) families.insert(s.family);
    std::map<std::string, Tally> by_family;
    Tally all;
    std::string wrong_cases, crossed_cases;
    int crossed = 0;
    for (const auto& family : families) {
        ErrorSignatures without = test::real_signatures();
        std::erase_if(without.signatures,
                      [&](const ErrorSignature& s) { return !s.vocabulary && s.family == family; });
        without.build_index();
        for (const auto& c : corpus()) {
            const ErrorSignature* expected = test::real_signatures().find(c.expect);
            if (!expected || expected->vocabulary || expected->family != family) continue;
            auto found = explain_log(c.log, without, nullptr, test::real_kb());
            Tally& t = by_family[family];
            ++t.total;
            ++all.total;
            // A generic catalog entry only restates the tool's words (a message with no
            // meaning rule, or a wrapper of the real error): no meaning, so counted as none.
            const ErrorSignature* first =
                found.empty() ? nullptr : test::real_signatures().find(found.front().id);
            if (!first || first->generic()) {
                ++t.missed;
                ++all.missed;
            } else if (found.front().vocabulary && meaning_ok(c, found.front().id)) {
                ++t.right;
                ++all.right;
            } else if (!found.front().vocabulary) {
                // Another family's signature: with every signature loaded the right one ranks
                // first, so this measures the overlap of signatures, not the vocabularies.
                ++crossed;
                --t.total;
                --all.total;
                crossed_cases +=
                    "  " + c.file + " (" + c.expect + "): got " + found.front().id + "\n";
            } else {
                ++t.wrong;
                ++all.wrong;
                wrong_cases +=
                    "  " + c.file + " (" + c.expect + "): got " + found.front().id + "\n";
            }
        }
    }
    std::printf(
        "explain corpus (leave-families-out): %d logs, %d right (the true meaning), %d "
        "none (said unknown), %d wrong\n",
        all.total, all.right, all.missed, all.wrong);
    std::printf("  %-12s %5s %5s %6s %5s\n", "left out", "logs", "right", "none", "wrong");
    for (const auto& [family, t] : by_family)
        std::printf("  %-12s %5d %5d %6d %5d\n", family.c_str(), t.total, t.right, t.missed,
                    t.wrong);
    std::printf("  and %d answered by another family's signature (not counted above):\n%s", crossed,
                crossed_cases.c_str());
    if (!wrong_cases.empty()) std::printf("leave-families-out wrong:\n%s", wrong_cases.c_str());
    INFO("wrong:\n" << wrong_cases);
    CHECK(all.total > 0);
    CHECK(all.wrong == 0);
}
