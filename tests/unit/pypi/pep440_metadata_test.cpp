// PEP 440 versions and specifiers, wheel names, METADATA and markers, on recorded
// METADATA files (tests/data/pypi/*.METADATA: the header part of real wheels' METADATA).
#include <catch2/catch_test_macros.hpp>
#include <fstream>
#include <sstream>

#include "core/pypi/metadata.hpp"
#include "core/pypi/pep440.hpp"
#include "core/pypi/wheel_name.hpp"
#include "test_support.hpp"

using namespace td::pypi;

namespace {

Pep440Version v(const char* s) {
    auto p = Pep440Version::parse(s);
    REQUIRE(p.has_value());
    return *p;
}

bool admits(const char* spec, const char* version) {
    auto s = SpecifierSet::parse(spec);
    REQUIRE(s.has_value());
    return s->contains(v(version));
}

}  // namespace

TEST_CASE("PEP 440 versions order as pip orders them", "[pypi]") {
    CHECK(v("2.9.1") < v("2.10.0"));
    CHECK(v("2.15.0rc1") < v("2.15.0"));
    CHECK(v("2.15.0.dev20260101") < v("2.15.0a1"));
    CHECK(v("2.0.0") < v("2.0.0.post1"));
    CHECK(v("2.0.0") < v("2.0.0+cu117"));
    CHECK(v("1.13") == v("1.13.0"));
    CHECK(v("V1.0RC1").str() == "1.0rc1");
    CHECK(v("2.0.0+CU117").local() == "cu117");
    CHECK_FALSE(Pep440Version::parse("2.x"));
    CHECK_FALSE(Pep440Version::parse(""));
    CHECK_FALSE(Pep440Version::parse("1.0+"));
}

TEST_CASE("Specifiers: pins, ranges, prefixes, compatible release", "[pypi]") {
    CHECK(admits("==2.11.0", "2.11.0"));
    CHECK_FALSE(admits("==2.11.0", "2.11.1"));
    CHECK(admits("(==1.13.1)", "1.13.1"));
    CHECK_FALSE(admits("==2.0.0+cu117", "2.0.0"));  // torchvision 0.15.0 pins a local build
    CHECK(admits(">=2.11", "2.14.1"));
    CHECK_FALSE(admits(">=2.11", "2.10.0"));
    CHECK(admits("<=13.1.1.3,>=13.1.0.3", "13.1.0.3"));
    CHECK_FALSE(admits("<=13.1.1.3,>=13.1.0.3", "13.2.0.1"));
    CHECK(admits("==13.1.0.3.*", "13.1.0.3"));
    CHECK(admits("~=3.8.0", "3.8.4"));
    CHECK_FALSE(admits("~=3.8.0", "3.9.0"));
    CHECK_FALSE(admits(">=2.14.0", "2.15.0rc1"));  // pre-releases only when asked for
    CHECK(SpecifierSet::parse("==13.1.0.3.*")->pinned() == "13.1.0.3");
    CHECK(SpecifierSet::parse(">=2.11")->pinned().empty());
    CHECK_FALSE(SpecifierSet::parse(">=2.11.*"));
    CHECK_FALSE(SpecifierSet::parse("=>2.11"));
}

TEST_CASE("Wheel names: build tags, free-threaded builds, glibc floors", "[pypi]") {
    auto w = parse_wheel_name("torch-2.10.0-3-cp314-cp314t-manylinux_2_28_x86_64.whl");
    REQUIRE(w);
    CHECK(w->build == 3);
    CHECK(w->cpython_versions() == std::vector<std::string>{"3.14t"});
    CHECK(w->glibc_floor() == "2.28");
    CHECK(w->linux_x86_64());
    auto old = parse_wheel_name("torch-1.13.1-cp311-cp311-manylinux1_x86_64.whl");
    REQUIRE(old);
    CHECK(old->glibc_floor() == "2.5");
    CHECK(old->cpython_versions() == std::vector<std::string>{"3.11"});
    auto mac = parse_wheel_name("torch-2.14.1-cp312-cp312-macosx_14_0_arm64.whl");
    REQUIRE(mac);
    CHECK_FALSE(mac->linux_x86_64());
    CHECK(parse_wheel_name("torchaudio-2.11.1-py3-none-manylinux_2_28_x86_64.whl")
              ->cpython_versions()
              .empty());
    CHECK_FALSE(parse_wheel_name("torch-2.11.0.tar.gz"));
    CHECK_FALSE(parse_wheel_name("torch--cp312-cp312-any.whl"));
    CHECK(normalize_project_name("Cuda_Toolkit") == "cuda-toolkit");
}

TEST_CASE("Markers are evaluated against the given environment", "[pypi]") {
    MarkerEnvironment env;
    env.python_version = "3.13";
    CHECK(*evaluate_marker("platform_system == \"Linux\" and python_version < \"3.15\"", env));
    CHECK_FALSE(*evaluate_marker("python_version < \"3.13\"", env));
    CHECK_FALSE(*evaluate_marker("extra == 'cudart'", env));
    env.extra = "cudart";
    CHECK(*evaluate_marker(
        "(sys_platform == 'linux' or sys_platform == 'win32') and extra == 'cudart'", env));
    CHECK_FALSE(evaluate_marker("platform_system ==", env).has_value());
    CHECK_FALSE(evaluate_marker("unknown_var == 'x'", env).has_value());
}

TEST_CASE("Recorded METADATA of torch 2.11.0 pins through cuda-toolkit", "[pypi]") {
    auto md = parse_core_metadata(td::test::source_text("tests/data/pypi/torch-2.11.0.METADATA"));
    REQUIRE(md);
    CHECK(md->name == "torch");
    CHECK(md->version == "2.11.0");
    MarkerEnvironment env;
    env.python_version = "3.13";
    const Requirement* tk = md->requirement_on("cuda-toolkit", env);
    REQUIRE(tk);
    CHECK(tk->specifier.pinned() == "13.0.2");
    CHECK(tk->extras.size() == 11);
    const Requirement* cudnn = md->requirement_on("nvidia-cudnn-cu13", env);
    REQUIRE(cudnn);
    CHECK(cudnn->specifier.pinned() == "9.19.0.56");
    // Extras are not base requirements.
    CHECK_FALSE(md->requirement_on("optree", env));
}

TEST_CASE("METADATA errors name the line", "[pypi]") {
    auto bad = parse_core_metadata("Name: x\nVersion: 1\nRequires-Dist: torch (=>2)\n");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("torch (=>2)") != std::string::npos);
    CHECK_FALSE(parse_core_metadata("no header here\n"));
    CHECK_FALSE(parse_core_metadata("Summary: no name\n"));
}
