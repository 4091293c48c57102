// The explain corpus: real error logs from public issues (tests/data/explain_corpus/, see its
// README.md) run through the real signatures and knowledge base. A case is right when the
// first explanation is the expected signature (and the "also" ones follow), or when nothing
// is named for a log torchdock should not claim; it is missed when nothing is named for a
// known failure, and wrong when another cause is named. Wrong is never allowed; at least
// 95% must be right. Prints the counts per family.
#include "diagnose/explain_corpus.hpp"

#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "core/diagnose/explain.hpp"
#include "engine/project_loader.hpp"
#include "test_support.hpp"

using namespace td;

namespace {

const ErrorSignatures& sigs() {
    static const ErrorSignatures s = [] {
        auto parsed = engine::load_error_signatures(test::source_path("data"));
        if (!parsed) throw std::runtime_error(parsed.error().message);
        return parsed.value();
    }();
    return s;
}

const std::vector<test::CorpusCase>& corpus() {
    static const auto c = test::load_corpus(test::source_path("tests/data/explain_corpus"));
    return c;
}

struct Tally {
    int total = 0, right = 0, missed = 0, wrong = 0;
};

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
        if (c.expect != "unknown") CHECK(sigs().find(c.expect) != nullptr);
        for (const auto& id : c.also) CHECK(sigs().find(id) != nullptr);
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
        auto found = explain_log(c.log, sigs(), nullptr, test::real_kb());
        const ErrorSignature* expected = sigs().find(c.expect);
        std::string family = expected ? expected->family : "unknown";
        Tally& t = by_family[family];
        ++t.total;
        ++all.total;
        bool right = false, wrong = false;
        if (c.expect == "unknown") {
            right = found.empty();
            wrong = !found.empty();
        } else if (found.empty()) {
            // missed: said plainly that the log is unknown
        } else if (found.front().id != c.expect) {
            wrong = true;
        } else {
            right = true;
            for (const auto& id : c.also) {
                bool present = false;
                for (const auto& e : found) present = present || e.id == id;
                right = right && present;
            }
            for (const auto& [name, value] : c.facts) {
                auto it = found.front().facts.find(name);
                right = right && it != found.front().facts.end() &&
                        (value.empty() || it->second == value);
            }
            wrong = !right;
        }
        for (const auto& e : found) {
            for (const std::string* text : {&e.cause, &e.fix}) {
                INFO(c.file << " " << e.id);
                CHECK(text->find("[[") == std::string::npos);
                CHECK(text->find('{') == std::string::npos);
            }
        }
        std::string got = found.empty() ? "unknown" : found.front().id;
        if (right) {
            ++t.right;
            ++all.right;
        } else if (wrong) {
            ++t.wrong;
            ++all.wrong;
            wrong_cases += "  " + c.file + ": expected " + c.expect + ", got " + got + "\n";
        } else {
            ++t.missed;
            ++all.missed;
            missed_cases += "  " + c.file + ": expected " + c.expect + ", got nothing\n";
        }
    }
    std::printf("explain corpus: %d logs, %d right, %d missed (said unknown), %d wrong\n",
                all.total, all.right, all.missed, all.wrong);
    std::printf("  %-10s %5s %5s %6s %5s\n", "family", "logs", "right", "missed", "wrong");
    for (const auto& [family, t] : by_family)
        std::printf("  %-10s %5d %5d %6d %5d\n", family.c_str(), t.total, t.right, t.missed,
                    t.wrong);
    if (!missed_cases.empty()) std::printf("missed:\n%s", missed_cases.c_str());
    if (!wrong_cases.empty()) std::printf("wrong:\n%s", wrong_cases.c_str());
    INFO("wrong:\n" << wrong_cases << "missed:\n" << missed_cases);
    CHECK(all.wrong == 0);
    CHECK(all.right * 100 >= all.total * 95);
}
