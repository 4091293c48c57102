// GET /version as dockerd and Podman's Docker-compatible API really answer it
// (tests/data/engine/, see its README): Podman is told apart by its first component.
#include <catch2/catch_test_macros.hpp>

#include "engine/docker_api.hpp"
#include "engine/files.hpp"
#include "test_support.hpp"

using namespace td;

namespace {}  // namespace

TEST_CASE("engine version: Podman's compatible API is named podman, dockerd docker") {
    auto podman = engine::parse_engine_version(
        test::source_text("tests/data/engine/podman-4.3.1.version.json"));
    REQUIRE(podman);
    CHECK(podman->name == "podman");
    CHECK(podman->version == "4.3.1");
    CHECK(podman->api_version == "1.41");
    auto docker = engine::parse_engine_version(
        test::source_text("tests/data/engine/docker-20.10.24.version.json"));
    REQUIRE(docker);
    CHECK(docker->name == "docker");
    CHECK(docker->version == "20.10.24+dfsg1");
}

TEST_CASE("engine version: an answer that is not the API's object is an Environment error") {
    for (const std::string body : {"", "not json", "{\"Version\": 4}"}) {
        auto v = engine::parse_engine_version(body);
        REQUIRE_FALSE(v);
        CHECK(v.error().kind == ErrorKind::Environment);
    }
    // A component list of another shape is not Podman.
    auto odd = engine::parse_engine_version(R"({"Version": "1", "Components": ["x"]})");
    REQUIRE(odd);
    CHECK(odd->name == "docker");
}
