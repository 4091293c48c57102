// Debian packages per OS and the apt lock: apt's own answer in the pinned base parsed
// strictly, pinned by render, compared by `lock --check`.
#include "core/render/apt_lock.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/render/lockfile.hpp"
#include "core/render/render_plan.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

// apt-get install --simulate --no-install-recommends curl, in debian:bookworm (as apt 2.6
// prints it; the versions are those of a real run).
const char* k_simulation = R"(Reading package lists...
Building dependency tree...
Reading state information...
The following additional packages will be installed:
  libcurl4 libnghttp2-14
The following NEW packages will be installed:
  curl libcurl4 libnghttp2-14
0 upgraded, 3 newly installed, 0 to remove and 0 not upgraded.
Inst libnghttp2-14 (1.52.0-1+deb12u2 Debian:12.12/stable [amd64])
Inst libcurl4 (7.88.1-10+deb12u14 Debian:12.12/stable [amd64])
Inst curl (7.88.1-10+deb12u14 Debian:12.12/stable [amd64])
Conf libnghttp2-14 (1.52.0-1+deb12u2 Debian:12.12/stable [amd64])
Conf libcurl4 (7.88.1-10+deb12u14 Debian:12.12/stable [amd64])
Conf curl (7.88.1-10+deb12u14 Debian:12.12/stable [amd64])
)";

const AptLockInputs k_inputs{"debian:bookworm@sha256:" + std::string(64, 'a'), {"curl", "tar"}};

}  // namespace

TEST_CASE("apt's simulation gives every package it installs, and those already there") {
    std::string text =
        std::string(k_simulation) + "tar is already the newest version (1.34+dfsg-1.2+deb12u1).\n";
    auto lock = parse_apt_simulation(text, k_inputs);
    REQUIRE(lock);
    CHECK(lock->resolved.size() == 3);
    CHECK(lock->resolved.at("curl") == "7.88.1-10+deb12u14");
    CHECK(lock->present.at("tar") == "1.34+dfsg-1.2+deb12u1");
    CHECK(apt_locked_pins(lock.value()) ==
          std::vector<std::string>{"curl=7.88.1-10+deb12u14", "libcurl4=7.88.1-10+deb12u14",
                                   "libnghttp2-14=1.52.0-1+deb12u2"});
}

TEST_CASE("a package apt did not resolve, or a line that is no Debian pin, is refused") {
    auto missing = parse_apt_simulation(
        "E: Unable to locate package tar\n" + std::string(k_simulation), k_inputs);
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, ContainsSubstring("did not resolve tar"));
    CHECK_THAT(missing.error().message, ContainsSubstring("E: Unable to locate package tar"));
    auto hostile = parse_apt_simulation(
        "Inst curl ($(reboot) Debian:12.12/stable [amd64])\ntar is already the newest version "
        "(1).\n",
        k_inputs);
    REQUIRE_FALSE(hostile);
    CHECK_THAT(hostile.error().message, ContainsSubstring("apt's answer, line 1"));
}

TEST_CASE("moved apt versions are named") {
    AptLock a, b;
    a.resolved = {{"curl", "7.88.1-10+deb12u12"}, {"libold", "1"}};
    b.resolved = {{"curl", "7.88.1-10+deb12u14"}, {"libnew", "2"}};
    CHECK(diff_apt_locks(a, b) ==
          std::vector<std::string>{"curl 7.88.1-10+deb12u12 -> 7.88.1-10+deb12u14",
                                   "gone: libold 1", "new: libnew 2"});
}

TEST_CASE("apt lists per OS reach only that OS's Dockerfile; a locked one is pinned") {
    const std::string manifest = R"({"schema": 1, "name": "a", "image": "t/a", "base": "os-pip",
      "matrix": {"torch": ["2.9.1"], "cuda": ["cpu"], "os": ["debian12", "ubuntu24.04"]},
      "apt": {"debian12": ["curl"], "ubuntu24.04": ["git=1:2.43.0-1ubuntu7.3"]}})";
    auto plan = test::plan_one(manifest);
    REQUIRE(test::problems_text(plan).empty());
    const auto& deb = plan.files.at("a-2.9.1-cpu-debian12/Dockerfile");
    const auto& ubu = plan.files.at("a-2.9.1-cpu-ubuntu24.04/Dockerfile");
    CHECK_THAT(deb, ContainsSubstring("      curl\n"));
    CHECK(deb.find("git=") == std::string::npos);
    CHECK_THAT(ubu, ContainsSubstring("git=1:2.43.0-1ubuntu7.3"));
    CHECK(ubu.find("curl") == std::string::npos);
    // Unlocked and unpinned: said in the Dockerfile and as a warning.
    CHECK_THAT(deb, ContainsSubstring("# Not pinned: no lock file"));
    CHECK_THAT(
        test::problems_text(plan) +
            [&] {
                std::string w;
                for (const auto& d : plan.warnings) w += d.message + "\n";
                return w;
            }(),
        ContainsSubstring("installs Debian packages without a version"));
    // With an apt lock for the same base digest and packages: every package pinned.
    const std::string digest = "sha256:" + std::string(64, 'b');
    AptLock lock =
        parse_apt_simulation(k_simulation, {"debian:bookworm@" + digest, {"curl"}}).value();
    std::map<std::string, LockEntry> images;
    for (const auto& v : plan.variants) images[v.base_ref] = {digest, ""};
    lock.inputs.base = plan.variants[0].base_ref + "@" + digest;
    std::string lock_text = render_lockfile(images, {}, {{"a-2.9.1-cpu-debian12", lock}});
    Diagnostics d("a.lock.json");
    LockFile back = parse_lockfile(lock_text, d);
    REQUIRE(d.empty());
    REQUIRE(back.apt.count("a-2.9.1-cpu-debian12"));
    RenderPlan locked = plan_render(
        {ManifestSource{"manifests/a.json", manifest, "manifests/a.lock.json", lock_text}},
        test::real_kb());
    REQUIRE(test::problems_text(locked).empty());
    const auto& pinned = locked.files.at("a-2.9.1-cpu-debian12/Dockerfile");
    CHECK_THAT(pinned, ContainsSubstring("curl=7.88.1-10+deb12u14"));
    CHECK_THAT(pinned, ContainsSubstring("libnghttp2-14=1.52.0-1+deb12u2"));
    CHECK(pinned.find("Not pinned") == std::string::npos);
}

TEST_CASE("an apt object keyed by an OS the matrix does not have is refused") {
    auto plan = test::plan_one(R"({"schema": 1, "name": "a", "image": "t/a", "base": "os-pip",
      "matrix": {"torch": ["2.9.1"], "cuda": ["cpu"], "os": ["debian12"]},
      "apt": {"ubuntu22.04": ["curl"]}})");
    CHECK_THAT(
        test::problems_text(plan),
        ContainsSubstring(
            "$.apt[\"ubuntu22.04\"]: \"ubuntu22.04\" is not an OS of this matrix (debian12)"));
}

TEST_CASE("the resolution build fails only when the archive cannot be reached") {
    std::string df =
        apt_resolution_dockerfile("127.0.0.1:5000/library/debian@sha256:" + std::string(64, 'c'),
                                  {"curl", "git=1:2.39.5-0+deb12u2"});
    CHECK_THAT(df, ContainsSubstring("FROM 127.0.0.1:5000/library/debian@sha256:"));
    CHECK_THAT(df,
               ContainsSubstring("RUN apt-get update -qq \\\n && { apt-get install --simulate "
                                 "--no-install-recommends -y \\\n      curl \\\n      "
                                 "git=1:2.39.5-0+deb12u2 >/apt-resolution.txt 2>&1 || true; }"));
    CHECK_THAT(df, ContainsSubstring("FROM scratch\nCOPY --from=resolve /apt-resolution.txt /\n"));
}
