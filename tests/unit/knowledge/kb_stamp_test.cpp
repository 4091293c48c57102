// data/knowledge_base.json: the date --version shows, and the text kb refresh writes.
#include "core/knowledge/kb_stamp.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <fstream>
#include <sstream>

#include "test_support.hpp"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("the bundled knowledge base has a date") {
    std::ifstream in(td::test::source_path(std::string("data/") + td::k_kb_stamp_file));
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    auto date = td::parse_kb_date(text.str());
    REQUIRE(date);
    CHECK(date.value().size() == 10);
}

TEST_CASE("kb refresh's text reads back as its date, in the committed file's format") {
    std::string text = td::kb_stamp_text("2027-01-31");
    CHECK(td::parse_kb_date(text).value() == "2027-01-31");
    CHECK_THAT(text, ContainsSubstring("\n  \"date\": \"2027-01-31\"\n}\n"));
}

TEST_CASE("a knowledge_base.json without a proper date is refused with its path") {
    auto missing = td::parse_kb_date(R"({"schema": 1})");
    REQUIRE(!missing);
    CHECK_THAT(missing.error().message, ContainsSubstring("knowledge_base.json: $.date: missing"));
    for (const char* bad : {R"({"date": "2026-13-01"})", R"({"date": "01.12.2026"})",
                            R"({"date": 20261201})", "not json"})
        CHECK(!td::parse_kb_date(bad));
}
