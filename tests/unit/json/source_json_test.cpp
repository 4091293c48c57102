#include "core/json/source_json.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/json/diagnostics.hpp"
#include "core/json/json_text.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("values remember their line and column") {
    auto r =
        parse_source_json("{\n  // comment\n  \"a\": [1, \"x\"],\n  /* block */ \"b\": true,\n}");
    REQUIRE(r.errors.empty());
    const JsonValue* a = r.value.find("a");
    REQUIRE(a);
    CHECK(a->pos.line == 3);
    CHECK(a->pos.col == 8);
    CHECK(a->items[1].pos.col == 12);
    CHECK(r.value.members[1].key_pos.line == 4);
    CHECK(r.value.find("b")->boolean);
}

TEST_CASE("syntax errors say where") {
    auto r = parse_source_json("{\n  \"a\": 1\n  \"b\": 2\n}");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].pos.line == 3);
    CHECK_THAT(r.errors[0].message, ContainsSubstring("expected ',' or '}'"));
}

TEST_CASE("duplicate keys, raw control characters and deep nesting are refused") {
    CHECK_THAT(parse_source_json("{\"a\":1,\"a\":2}").errors.at(0).message,
               ContainsSubstring("duplicate key"));
    CHECK_THAT(parse_source_json("[\"a\nb\"]").errors.at(0).message,
               ContainsSubstring("control character"));
    CHECK_THAT(parse_source_json(std::string(100, '[')).errors.at(0).message,
               ContainsSubstring("nesting"));
    CHECK_THAT(parse_source_json("{\"a\":1} x").errors.at(0).message,
               ContainsSubstring("after the top-level"));
    CHECK_THAT(parse_source_json("/* open").errors.at(0).message,
               ContainsSubstring("unterminated"));
    CHECK_FALSE(parse_source_json("[1e999]").errors.empty());
}

TEST_CASE("escapes decode, including surrogate pairs") {
    auto r = parse_source_json(R"(["\u00e9\n\ud83d\ude00"])");
    REQUIRE(r.errors.empty());
    CHECK(r.value.items[0].text == "\xc3\xa9\n\xf0\x9f\x98\x80");
    CHECK_FALSE(parse_source_json(R"(["\ud83d"])").errors.empty());
}

TEST_CASE("integers are told apart from fractions") {
    auto r = parse_source_json("[1000, 1.5, 2e3, -3]");
    REQUIRE(r.errors.empty());
    CHECK(r.value.items[0].is_integer());
    CHECK_FALSE(r.value.items[1].is_integer());
    CHECK_FALSE(r.value.items[2].is_integer());
    CHECK(r.value.items[3].number == -3);
}

TEST_CASE("a UTF-8 byte order mark at the start is not content", "[regression]") {
    auto r = parse_source_json("\xEF\xBB\xBF{\"a\": 1}");
    CHECK(r.errors.empty());
}

TEST_CASE("JSON from outside is parsed with a depth limit (a 50,000-deep fingerprint)",
          "[regression]") {
    std::string why;
    std::string deep = std::string(50000, '[') + std::string(50000, ']');
    CHECK_FALSE(parse_json_bounded(deep, why));
    CHECK(why.find("deeper than 64") != std::string::npos);
    CHECK(parse_json_bounded(R"({"schema": 1, "a": [[1]]})", why));
    CHECK_FALSE(parse_json_bounded("{", why));
}

TEST_CASE("diagnostics keep the first 100 problems of a file and count the rest", "[regression]") {
    Diagnostics d("m.json");
    for (int i = 0; i < 3500; ++i) d.add({1, 1}, "$.pip", "bad");
    CHECK(d.count() == 3500);
    REQUIRE(d.items().size() == 101);
    CHECK(d.items().back().message.find("and 3400 more problems") != std::string::npos);
}

TEST_CASE(
    "outside JSON (fingerprints): a key twice in one object is refused when asked, "
    "naming it and its path",
    "[regression][json]") {
    std::string why;
    const std::string dup =
        R"({"schema": 1, "host": {"os": "debian", "glibc": "2.36", "os": "x"}})";
    CHECK(parse_json_bounded(dup, why));  // nlohmann's default: the last one wins
    CHECK_FALSE(parse_json_bounded(dup, why, 64, true));
    CHECK(why.find("duplicate key \"os\" at $.host.os") != std::string::npos);
    CHECK_FALSE(parse_json_bounded(R"({"a": [{"k": 1}, {"k": 2, "k": 3}]})", why, 64, true));
    CHECK(why.find("$.a[].k") != std::string::npos);
    CHECK_FALSE(parse_json_bounded(R"({"schema": 1, "schema": 1})", why, 64, true));
    CHECK(why.find("at $.schema") != std::string::npos);
    // The same key in different objects, and a key with a dot, are fine.
    CHECK(parse_json_bounded(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}],
                                 "x.y": 1, "x": {"y": 2}})",
                             why, 64, true));
}
