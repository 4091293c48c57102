// The held-out set (tests/data/explain_heldout/): well formed, and explain never gives a
// wrong root cause on it. Its score is a figure (bench/explain_heldout_bench), not asserted
// here: the set measures generalisation and is not a target to tune against.
#include "diagnose/explain_heldout.hpp"

#include <catch2/catch_test_macros.hpp>
#include <set>

#include "diagnose/explain_corpus.hpp"
#include "engine/project_loader.hpp"

namespace {

const std::filesystem::path k_root = TORCHDOCK_SOURCE_DIR;

}  // namespace

TEST_CASE("explain held-out set: well formed, one thread a file, none from the corpus") {
    auto cases = td::test::load_heldout(k_root / "tests/data/explain_heldout");
    REQUIRE(cases.size() >= 60);
    auto corpus = td::test::load_corpus(k_root / "tests/data/explain_corpus");
    std::set<std::string> corpus_sources;
    for (const auto& c : corpus) corpus_sources.insert(c.source);
    std::set<std::string> seen;
    for (const auto& c : cases) {
        INFO(c.file);
        CHECK(c.problem.empty());
        CHECK(seen.insert(c.source).second);
        CHECK(corpus_sources.count(c.source) == 0);
        // a package registry's host is never written into the project (replaced by <...>)
        for (const char* host : {"pypi.org", "pythonhosted", "debian.org", "ubuntu.com",
                                 "download.pytorch.org", "download.nvidia.com"})
            CHECK((c.log + c.truth + c.source).find(host) == std::string::npos);
    }
}

TEST_CASE("explain held-out set: no answer is a wrong root cause") {
    auto kb = td::engine::load_knowledge_base(k_root / "data");
    auto sigs = td::engine::load_error_signatures(k_root / "data");
    REQUIRE(kb);
    REQUIRE(sigs);
    int right = 0, wrong_root = 0;
    auto cases = td::test::load_heldout(k_root / "tests/data/explain_heldout");
    for (const auto& c : cases) {
        auto found = td::explain_log(c.log, sigs.value(), nullptr, kb.value());
        auto grade = td::test::grade_heldout(c, found);
        if (grade == td::test::HeldoutGrade::Right) ++right;
        if (grade == td::test::HeldoutGrade::WrongRootCause) {
            ++wrong_root;
            UNSCOPED_INFO(c.file << ": " << found.front().id << " " << found.front().title);
        }
    }
    WARN("held-out: " << right << " of " << cases.size() << " right");
    CHECK(wrong_root == 0);
}
