#include "util/duration.hpp"

#include <catch2/catch_test_macros.hpp>

#include "util/strings.hpp"

using namespace td;

TEST_CASE("durations: seconds, or a number with s, m or h") {
    CHECK(parse_duration_seconds("90") == 90);
    CHECK(parse_duration_seconds("90s") == 90);
    CHECK(parse_duration_seconds("30m") == 1800);
    CHECK(parse_duration_seconds("2h") == 7200);
    CHECK(parse_duration_seconds("0") == 0);
    for (const char* bad : {"", "s", "-1", "1.5h", "2d", "1 h", "h2", "99999999999999h", "+3"})
        CHECK_FALSE(parse_duration_seconds(bad).has_value());
    CHECK(format_duration(7200) == "2h");
    CHECK(format_duration(1800) == "30m");
    CHECK(format_duration(90) == "90s");
    CHECK(format_duration(0) == "0s");
}

TEST_CASE("edit distance counts a swap of neighbours as one edit") {
    CHECK(edit_distance("lsit", "list") == 1);
    CHECK(edit_distance("list", "init") == 3);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(closest_match("lsit", {"render", "init", "list"}) == std::optional<std::string>("list"));
}
