// Where the probes are looked for, and the error when they are not there.
#include "engine/install_layout.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

TEST_CASE("a flag beats the environment, the environment beats the binary's layout") {
    ::setenv("TORCHDOCK_PROBES", "/from/env", 1);
    CHECK(td::engine::locate_probes_dir(std::string("/from/flag")).chosen_by == "--probes");
    auto env = td::engine::locate_probes_dir(std::nullopt);
    CHECK(env.path == "/from/env");
    CHECK(env.chosen_by == "$TORCHDOCK_PROBES");
    ::unsetenv("TORCHDOCK_PROBES");
    auto rel = td::engine::locate_probes_dir(std::nullopt);
    CHECK_THAT(rel.chosen_by, ContainsSubstring("relative to the binary /"));
    CHECK(rel.path.filename() == "probes");
    CHECK(rel.path.parent_path().filename() == "torchdock");
}

TEST_CASE("a probe directory that is missing or incomplete is an error naming it and the fix") {
    fs::path dir = fs::temp_directory_path() / "td-install-layout-test";
    fs::remove_all(dir);
    auto missing = td::engine::check_probes_dir({dir, "--probes"});
    REQUIRE(!missing);
    CHECK_THAT(missing.error().message,
               ContainsSubstring(dir.string() + " (--probes): it does not exist"));
    CHECK_THAT(missing.error().message, ContainsSubstring("$TORCHDOCK_PROBES"));
    fs::create_directories(dir);
    std::ofstream(dir / "probe-env") << "x";
    auto partial = td::engine::check_probes_dir({dir, "--probes"});
    REQUIRE(!partial);
    CHECK_THAT(partial.error().message, ContainsSubstring("it has no torch_probe.py"));
    std::ofstream(dir / "torch_probe.py") << "x";
    CHECK(td::engine::check_probes_dir({dir, "--probes"}));
    fs::remove_all(dir);
}
