#include <catch2/catch_test_macros.hpp>
TEST_CASE("smoke") { REQUIRE(1 == 1); }
