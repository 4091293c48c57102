// The reference pages: every ID the code emits has one, every page is complete, and the
// listing fits 100 columns.
#include "core/reference/reference.hpp"

#include <catch2/catch_test_macros.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/diagnose/finding_catalog.hpp"
#include "core/validate/checks.hpp"
#include "engine/project_loader.hpp"
#include "report/reference_report.hpp"
#include "test_support.hpp"

using namespace td;

namespace {

// Every "TDnnn"/"DRnnn" in src/ (emitted IDs, and IDs named in messages), with its file.
std::map<std::string, std::string> ids_in_source() {
    std::map<std::string, std::string> out;
    for (const auto& f : std::filesystem::recursive_directory_iterator(test::source_path("src"))) {
        if (!f.is_regular_file()) continue;
        std::ifstream in(f.path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string s = text.str();
        for (std::size_t i = 0; i + 5 <= s.size(); ++i) {
            bool prefix = (s[i] == 'T' && s[i + 1] == 'D') || (s[i] == 'D' && s[i + 1] == 'R');
            bool digits = prefix && std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
                          std::isdigit(static_cast<unsigned char>(s[i + 3])) &&
                          std::isdigit(static_cast<unsigned char>(s[i + 4]));
            bool bounded = i + 5 == s.size() || !std::isalnum(static_cast<unsigned char>(s[i + 5]));
            bool start = i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]));
            if (digits && bounded && start) out[s.substr(i, 5)] = f.path().string();
        }
    }
    return out;
}

}  // namespace

TEST_CASE("reference: every TD/DR ID written anywhere in src/ has a catalog entry") {
    auto ids = ids_in_source();
    REQUIRE(ids.size() > 40);  // the scan found the emitted IDs
    CHECK(ids.count("TD130"));
    CHECK(ids.count("DR123"));
    for (const auto& [id, file] : ids) {
        INFO(id << " in " << file);
        CHECK((find_check(id) != nullptr || find_finding(id) != nullptr));
    }
}

TEST_CASE("reference: every entry is complete, IDs are unique, the listing fits 100 columns") {
    auto entries = reference_entries(test::real_signatures());
    std::size_t signatures = 0;  // vocabulary entries are meanings, not pages
    for (const auto& s : test::real_signatures().signatures) signatures += s.vocabulary ? 0 : 1;
    CHECK(entries.size() == check_catalog().size() + finding_catalog().size() + signatures);
    std::set<std::string> seen;
    for (const auto& e : entries) {
        INFO(e.id);
        CHECK(seen.insert(e.id).second);
        for (const auto* field :
             {&e.title, &e.summary, &e.details, &e.what, &e.why, &e.evidence, &e.fix, &e.waive})
            CHECK(!field->empty());
    }
    std::istringstream list(report::reference_list(entries));
    int lines = 0;
    for (std::string line; std::getline(list, line); ++lines) CHECK(line.size() <= 100);
    CHECK(lines == static_cast<int>(entries.size()) + 1);
}

TEST_CASE("reference: lookup is case-insensitive; pages say how to waive or why not") {
    auto entries = reference_entries(test::real_signatures());
    const ReferenceEntry* shm = find_reference(entries, "td130");
    REQUIRE(shm);
    CHECK(shm->waive.find("--waive TD130=REASON") != std::string::npos);
    CHECK(shm->waive.find("io.torchdock.waive.TD130") != std::string::npos);
    const ReferenceEntry* files = find_reference(entries, "TD112");
    REQUIRE(files);
    CHECK(files->waive.rfind("not waivable", 0) == 0);
    CHECK(find_reference(entries, "TD999") == nullptr);
    const ReferenceEntry* ex = find_reference(entries, "EX170");
    REQUIRE(ex);
    CHECK(ex->kind == "signature");
    CHECK(!ex->sources.empty());
    std::string page = report::reference_page(*shm);
    for (const char* label : {"What:", "Why:", "Evidence:", "Fix:", "Waive:", "Docs:"})
        CHECK(page.find(label) != std::string::npos);
    CHECK(reference_anchor("TD130") == "docs/checks.md#td130");
}

TEST_CASE("reference: docs/checks.md is what `torchdock checks --markdown` prints") {
    std::ifstream in(test::source_path("docs/checks.md"));
    std::stringstream committed;
    committed << in.rdbuf();
    INFO("regenerate: torchdock checks --markdown > docs/checks.md");
    CHECK(committed.str() ==
          report::reference_markdown(reference_entries(test::real_signatures())));
}
