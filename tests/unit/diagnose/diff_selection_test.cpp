#include "core/diagnose/diff_selection.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

// n differences of each category given, ranked as diff ranks them (weight, then path).
std::vector<FingerprintDifference> ranked(
    const std::vector<std::pair<std::string, int>>& categories_and_counts) {
    std::vector<FingerprintDifference> out;
    int weight = 100;
    for (const auto& [category, n] : categories_and_counts)
        for (int i = 0; i < n; ++i)
            out.push_back({category + "." + std::to_string(i), "x", "y", category, weight--, "w"});
    return out;
}

std::size_t sum(const DiffView& v) {
    std::size_t n = v.shown.size();
    for (const auto& [_, count] : v.not_shown) n += count;
    return n;
}

}  // namespace

TEST_CASE("by default: the top 10 outside cosmetic, the rest counted by category") {
    auto d = ranked({{"cuda", 2}, {"torch", 3}, {"libraries", 30}, {"cosmetic", 40}});
    auto sel = diff_selection(false, std::nullopt, {}, {});
    REQUIRE(sel);
    auto v = select_differences(d, sel.value());
    REQUIRE(v.shown.size() == k_default_top);
    CHECK(v.shown[0].category == "cuda");
    CHECK(v.shown[2].category == "torch");
    CHECK(v.total == 75);
    CHECK(sum(v) == v.total);
    using Count = std::pair<std::string, std::size_t>;
    CHECK(v.not_shown == std::vector<Count>{{"libraries", 25}, {"cosmetic", 40}});
}

TEST_CASE("diff selection: --all shows every difference, cosmetic included") {
    auto d = ranked({{"cuda", 2}, {"cosmetic", 40}});
    auto v = select_differences(d, diff_selection(true, std::nullopt, {}, {}).value());
    CHECK(v.shown.size() == 42);
    CHECK(v.not_shown.empty());
}

TEST_CASE("diff selection: --top, --only and --hide") {
    auto d = ranked({{"cuda", 2}, {"torch", 3}, {"libraries", 30}, {"cosmetic", 40}});
    auto top = select_differences(d, diff_selection(false, 3, {}, {}).value());
    CHECK(top.shown.size() == 3);
    CHECK(sum(top) == 75);
    auto only =
        select_differences(d, diff_selection(false, std::nullopt, {"cosmetic,torch"}, {}).value());
    REQUIRE(only.shown.size() == 10);
    CHECK(only.shown[0].category == "torch");
    CHECK(only.shown[3].category == "cosmetic");
    CHECK(sum(only) == 75);
    auto hide = select_differences(
        d, diff_selection(true, std::nullopt, {}, {"libraries", "cosmetic"}).value());
    CHECK(hide.shown.size() == 5);
    CHECK(sum(hide) == 75);
}

TEST_CASE("flags that make no sense are refused, naming the categories") {
    auto bad = diff_selection(false, std::nullopt, {"cudaa"}, {});
    REQUIRE_FALSE(bad);
    CHECK(bad.error().kind == ErrorKind::Usage);
    CHECK_THAT(bad.error().message, ContainsSubstring("did you mean cuda?"));
    CHECK_THAT(bad.error().message, ContainsSubstring("libraries"));
    CHECK_FALSE(diff_selection(false, 0, {}, {}));
    CHECK_FALSE(diff_selection(true, 5, {}, {}));
    CHECK_FALSE(diff_selection(false, std::nullopt, {}, {"cosmetic,nope"}));
}
