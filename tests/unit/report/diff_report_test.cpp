#include "report/diff_report.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>

#include "util/strings.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace {

std::vector<FingerprintDifference> sample_differences() {
    return {{"cuda_runtime.version", "(absent)", "12.8", "cuda", 99,
             "the CUDA runtime differs: a newer one needs a newer driver"},
            {"torch.version", "1.13.0a0", "2.9.1+cu128", "torch", 50, "a different torch release"},
            {"libraries[X11]", "libX11.so.6 at /usr/lib", "(absent)", "libraries", 20, "x"},
            {"libraries[Qt5Gui]", "libQt5Gui.so.5 at /usr/lib", "(absent)", "libraries", 20, "x"},
            {"subject", "a\x1b[2J", "b", "cosmetic", 5, "descriptive only"}};
}

}  // namespace

TEST_CASE("diff text: the answer first, the top rows, then what is left by category") {
    auto sel = diff_selection(false, 2, {}, {}).value();
    std::string text = report::diff_text(select_differences(sample_differences(), sel),
                                         {"a.json", "b.json", "cpu:1", "cuda\x1b[2J:1"});
    auto lines = split(text, '\n');
    CHECK_THAT(lines[0], StartsWith("5 differences; the most likely to break a GPU job: the CUDA "
                                    "runtime differs (cuda_runtime.version: (absent) vs 12.8)"));
    CHECK(lines[1] == "A: cpu:1 (a.json)");
    CHECK_THAT(lines[2], StartsWith("B: cuda\\x1b[2J:1"));
    CHECK_THAT(text, ContainsSubstring("torch.version"));
    CHECK_THAT(text, !ContainsSubstring("libraries[X11]"));
    CHECK_THAT(text, ContainsSubstring("and 3 more not shown: 2 libraries, 1 cosmetic"));
    CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("diff JSON: every difference, whatever the selection, and the counts") {
    auto j = nlohmann::json::parse(
        report::diff_json(sample_differences(), {"a.json", "b.json", "", ""}));
    CHECK(j["differences"].size() == 5);
    CHECK(j["summary"]["total"] == 5);
    CHECK(j["summary"]["by_category"]["libraries"] == 2);
    CHECK(j["summary"]["by_category"]["cuda"] == 1);
    CHECK_FALSE(j["summary"]["by_category"].contains("driver"));
}

TEST_CASE("identical fingerprints say so") {
    CHECK(report::diff_text(
              select_differences({}, diff_selection(false, std::nullopt, {}, {}).value()),
              {"a", "b", "", ""}) == "no differences\n");
}
