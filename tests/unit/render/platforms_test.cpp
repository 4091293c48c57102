#include "core/render/platforms.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/build/build_index.hpp"
#include "core/build/registry_policy.hpp"
#include "core/render/lockfile.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/render_plan.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

// platform_manifest(TORCH, CUDA, INDEX, PLATFORMS): an os-pip family on Debian 12.
std::string platform_manifest(const std::string& torch, const std::string& cuda,
                              const std::string& index, const std::string& platforms) {
    return R"({"schema": 1, "name": "gh", "image": "t/gh", "base": "os-pip", "wheel_index": ")" +
           index + R"(", "matrix": {"torch": [")" + torch + R"("], "cuda": [")" + cuda +
           R"("], "os": ["debian12"]}, "platforms": )" + platforms + "}";
}
const std::string k_both = R"(["linux/amd64", "linux/arm64"])";
const std::string k_platform_variant = "gh-2.11.0-cu130-debian12";

// A lock of the variant's set for `platform`: its inputs, each pinned with a hash.
PythonLock lock_for(const Variant& v, const std::string& platform) {
    PythonLock lock;
    lock.inputs = *python_lock_plan(v, test::real_kb(), platform).inputs;
    for (const auto& req : lock.inputs.requirements) {
        auto [name, version] = requirement_pin(req);
        lock.packages.push_back({name, version, {test::k_fake_hash}});
    }
    std::sort(lock.packages.begin(), lock.packages.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    lock.graph = true;
    return lock;
}

RenderPlan render_locked(const std::string& text, const std::map<std::string, PythonLock>& locks) {
    return plan_render(
        {{"manifests/gh.json", text, "manifests/gh.lock.json", render_lockfile({}, locks)}},
        test::real_kb());
}

}  // namespace

TEST_CASE("platforms: only linux/amd64 and linux/arm64, each once, at least one") {
    auto problems = [](const std::string& platforms) {
        return test::problems_text(
            test::plan_one(platform_manifest("2.11.0", "cu130", "pypi", platforms)));
    };
    CHECK_THAT(problems(R"(["linux/amd64", "linux/riscv64"])"),
               ContainsSubstring("$.platforms[1]: platform \"linux/riscv64\" is not one torchdock "
                                 "builds for; accepted: linux/amd64, linux/arm64"));
    CHECK_THAT(problems(R"(["linux/arm64", "linux/arm64"])"),
               ContainsSubstring("$.platforms[1]: duplicate entry \"linux/arm64\""));
    CHECK_THAT(problems("[]"), ContainsSubstring("$.platforms: expected at least one entry"));
    CHECK_THAT(problems(R"("linux/arm64")"), ContainsSubstring("$.platforms: expected an array"));
    CHECK(problems(k_both).empty());
}

TEST_CASE(
    "platforms: a CPU-only linux/arm64 torch behind a CUDA variant is refused, naming the "
    "release that works") {
    auto problems =
        test::problems_text(test::plan_one(platform_manifest("2.9.1", "cu128", "pypi", k_both)));
    CHECK_THAT(problems, ContainsSubstring("$.platforms[1]: variant gh-2.9.1-cu128-debian12 for "
                                           "linux/arm64: torch 2.9.1's linux/arm64 wheel on PyPI "
                                           "is a CPU-only build, not cu128 like its linux/amd64 "
                                           "one"));
    CHECK_THAT(problems, ContainsSubstring("no release's linux/arm64 wheel on PyPI is built for "
                                           "CUDA 12, the first built for CUDA at all is torch "
                                           "2.11.0 (cu130)"));
    // A CPU variant there is what PyPI serves, but not on linux/amd64 (cu128): still refused.
    CHECK_THAT(test::problems_text(test::plan_one(
                   platform_manifest("2.9.1", "cu128", "pypi", R"(["linux/arm64"])"))),
               ContainsSubstring("CPU-only build"));
}

TEST_CASE("platforms: the PyTorch wheel index's linux/arm64 builds are not in the knowledge base") {
    auto problems = test::problems_text(
        test::plan_one(platform_manifest("2.11.0", "cu130", "pytorch", k_both)));
    CHECK_THAT(problems, ContainsSubstring("not on the PyTorch wheel index; set \"wheel_index\": "
                                           "\"pypi\"; the first release whose linux/arm64 wheel "
                                           "on PyPI is built for CUDA 13 is torch 2.11.0"));
}

TEST_CASE("platforms: Debian's own torch builds for linux/arm64; nothing is refused") {
    auto plan = test::plan_one(
        R"({"schema": 1, "name": "deb", "image": "t/deb", "base": "debian-torch",
            "matrix": {"os": ["debian12"]}, "platforms": ["linux/arm64"]})");
    CHECK(test::problems_text(plan).empty());
    CHECK_THAT(plan.files.at("deb-debian12/Dockerfile"),
               ContainsSubstring("io.torchdock.platforms=\"linux/arm64\""));
}

TEST_CASE("platforms: unlocked, the Dockerfile names its platforms; amd64 alone stays as it was") {
    auto plan = test::plan_one(platform_manifest("2.11.0", "cu130", "pypi", k_both));
    REQUIRE(test::problems_text(plan).empty());
    const std::string& df = plan.files.at(k_platform_variant + "/Dockerfile");
    CHECK_THAT(df, ContainsSubstring("# Platforms: linux/amd64, linux/arm64 (docker buildx build "
                                     "--platform linux/amd64,linux/arm64).\n"));
    CHECK_THAT(df, ContainsSubstring("io.torchdock.platforms=\"linux/amd64,linux/arm64\""));
    auto plain = test::plan_one(platform_manifest("2.11.0", "cu130", "pypi", R"(["linux/amd64"])"));
    const std::string& one = plain.files.at(k_platform_variant + "/Dockerfile");
    CHECK(one.find("Platforms") == std::string::npos);
    CHECK(one.find("io.torchdock.platforms") == std::string::npos);
}

TEST_CASE(
    "platforms: each platform's set is locked for its wheels; the Dockerfile installs the "
    "one BuildKit builds") {
    const std::string text = platform_manifest("2.11.0", "cu130", "pypi", k_both);
    auto plan = test::plan_one(text);
    const Variant& v = plan.variants.at(0);
    CHECK(python_lock_plan(v, test::real_kb(), "linux/arm64").inputs->platform ==
          "aarch64-manylinux_2_36");
    CHECK(python_lock_plan(v, test::real_kb()).inputs->platform == "x86_64-manylinux_2_36");
    PythonLock amd = lock_for(v, "linux/amd64"), arm = lock_for(v, "linux/arm64");
    arm.packages[0].hashes = {"sha256:" + std::string(64, 'b')};  // another wheel, same pins

    RenderPlan locked = render_locked(
        text, {{k_platform_variant, amd}, {k_platform_variant + "@linux/arm64", arm}});
    REQUIRE(test::problems_text(locked).empty());
    const std::string& df = locked.files.at(k_platform_variant + "/Dockerfile");
    CHECK_THAT(df, ContainsSubstring("one per platform (linux/amd64: 3 packages, linux/arm64: 3 "
                                     "packages)"));
    CHECK_THAT(df, ContainsSubstring("ARG TARGETARCH\n"));
    CHECK_THAT(df, ContainsSubstring("--mount=type=bind,source=requirements.amd64.lock.txt,"
                                     "target=/tmp/torchdock/requirements.amd64.lock.txt"));
    CHECK_THAT(df, ContainsSubstring("--mount=type=bind,source=requirements.arm64.lock.txt,"));
    CHECK_THAT(df, ContainsSubstring("-r \"/tmp/torchdock/requirements.${TARGETARCH}.lock.txt\""));
    CHECK_THAT(df, ContainsSubstring("no Python set is locked for TARGETARCH=${TARGETARCH}"));
    CHECK_THAT(df, ContainsSubstring("io.torchdock.python-set=\"torch==2.11.0,"));
    CHECK(locked.files.count(k_platform_variant + "/requirements.lock.txt") == 0);
    CHECK_THAT(locked.files.at(k_platform_variant + "/requirements.arm64.lock.txt"),
               ContainsSubstring("(variant " + k_platform_variant + ", linux/arm64)"));
    CHECK_THAT(locked.files.at(k_platform_variant + "/requirements.arm64.lock.txt"),
               ContainsSubstring("--hash=sha256:bbbb"));

    // Sets whose pins differ: no label could be true of both images.
    arm.packages.push_back({"nvidia-only-here", "1.0", {test::k_fake_hash}, {"torch"}});
    RenderPlan differ = render_locked(
        text, {{k_platform_variant, amd}, {k_platform_variant + "@linux/arm64", arm}});
    REQUIRE(test::problems_text(differ).empty());
    const std::string& df2 = differ.files.at(k_platform_variant + "/Dockerfile");
    CHECK(df2.find("io.torchdock.python-set=") == std::string::npos);
    CHECK_THAT(df2, ContainsSubstring("# No io.torchdock.python-set label"));
}

TEST_CASE(
    "platforms: with one platform's set unlocked, none is used, and the Dockerfile says "
    "which") {
    const std::string text = platform_manifest("2.11.0", "cu130", "pypi", k_both);
    auto plan = test::plan_one(text);
    RenderPlan half =
        render_locked(text, {{k_platform_variant, lock_for(plan.variants.at(0), "linux/amd64")}});
    REQUIRE(test::problems_text(half).empty());
    CHECK_THAT(half.variants.at(0).python_not_locked,
               ContainsSubstring("linux/arm64's set: manifests/gh.lock.json has no Python lock"));
    CHECK_FALSE(half.variants.at(0).python_lock);
    CHECK(half.files.count(k_platform_variant + "/requirements.amd64.lock.txt") == 0);
}

TEST_CASE("platforms: lock file keys name a variant and another platform; inputs match the key") {
    CHECK(check_python_lock_key("v-1") == "");
    CHECK(check_python_lock_key("v-1@linux/arm64") == "");
    CHECK_THAT(check_python_lock_key("v-1@linux/amd64"),
               ContainsSubstring("whose Python set is keyed by the variant's name alone"));
    CHECK_THAT(check_python_lock_key("v-1@linux/s390x"),
               ContainsSubstring("platform \"linux/s390x\" is not one torchdock builds for"));
    CHECK(python_lock_key("v-1", "linux/amd64") == "v-1");
    CHECK(python_lock_key("v-1", "linux/arm64") == "v-1@linux/arm64");
    PythonLock x86;
    x86.inputs = {{"a==1"}, "3.11", "x86_64-manylinux_2_36", ""};
    x86.packages = {{"a", "1", {test::k_fake_hash}}};
    Diagnostics diags("t.lock.json");
    (void)parse_lockfile(render_lockfile({}, {{"v@linux/arm64", x86}}), diags);
    REQUIRE_FALSE(diags.empty());
    CHECK_THAT(format_diagnostic(diags.items()[0]),
               ContainsSubstring("$.python[\"v@linux/arm64\"].inputs.platform: resolved for "
                                 "\"x86_64-manylinux_2_36\", but its key is for linux/arm64 "
                                 "(aarch64 wheels)"));
    CHECK(uv_platform_for_glibc("2.36", "aarch64") == "aarch64-manylinux_2_36");
}

TEST_CASE(
    "platforms: a registry index's platforms, arm64/v8 as linux/arm64, attestations left out") {
    const std::string index = R"({"schemaVersion": 2, "manifests": [
        {"digest": "sha256:aa", "platform": {"os": "linux", "architecture": "amd64"}},
        {"digest": "sha256:bb", "platform": {"os": "linux", "architecture": "arm64", "variant": "v8"}},
        {"digest": "sha256:cc", "platform": {"os": "linux", "architecture": "arm", "variant": "v7"}},
        {"digest": "sha256:dd", "platform": {"os": "unknown", "architecture": "unknown"}},
        {"digest": "sha256:ee"}, "not an object"]})";
    auto listed = registry::index_platforms(index);
    CHECK(listed == std::map<std::string, std::string>{{"linux/amd64", "sha256:aa"},
                                                       {"linux/arm64", "sha256:bb"},
                                                       {"linux/arm/v7", "sha256:cc"}});
    CHECK(registry::index_platforms("not json").empty());
    CHECK(
        registry::is_index_media_type("application/vnd.docker.distribution.manifest.list.v2+json"));
    CHECK_FALSE(registry::is_index_media_type("application/vnd.oci.image.manifest.v1+json"));

    const std::set<std::string> both = {"linux/amd64", "linux/arm64"};
    CHECK(base_platforms_problem(both, true, listed) == "");
    CHECK(base_platforms_problem(both, true, {{"linux/amd64", "sha256:aa"}}) ==
          "its index has no linux/arm64 manifest (it lists linux/amd64); the manifest builds "
          "linux/amd64, linux/arm64");
    CHECK_THAT(base_platforms_problem({"linux/arm64"}, false, {}),
               ContainsSubstring("is a single-platform manifest, not an index"));
}

TEST_CASE("platforms: the lock file keeps each platform's manifest digest, and checks them") {
    const std::string d = "sha256:" + std::string(64, 'c');
    std::string text = render_lockfile({{"debian:bookworm", {d, "", {{"linux/arm64", d}}}}});
    Diagnostics diags("t.lock.json");
    LockFile back = parse_lockfile(text, diags);
    REQUIRE(diags.empty());
    CHECK(back.image_platforms.at("debian:bookworm").at("linux/arm64") == d);

    std::string bad = text;
    bad.replace(bad.find("\"linux/arm64\""), 13, "\"linux/mips\"");
    Diagnostics bad_diags("t.lock.json");
    (void)parse_lockfile(bad, bad_diags);
    REQUIRE_FALSE(bad_diags.empty());
    CHECK_THAT(format_diagnostic(bad_diags.items()[0]),
               ContainsSubstring("platform \"linux/mips\" is not one torchdock builds for"));
}

TEST_CASE("platforms: build --platform natively, emulated, or refused naming what to install") {
    CHECK(judge_build_platform("linux/amd64", "x86_64", false).error.empty());
    CHECK(judge_build_platform("linux/amd64", "x86_64", false).note.empty());
    auto refused = judge_build_platform("linux/arm64", "x86_64", false);
    CHECK_THAT(refused.error, ContainsSubstring("building linux/arm64 on this x86_64 engine needs "
                                                "emulation, and this host has no qemu-aarch64 "
                                                "handler in binfmt_misc: install Debian's "
                                                "qemu-user-static"));
    auto emulated = judge_build_platform("linux/arm64", "x86_64", true);
    CHECK(emulated.error.empty());
    CHECK_THAT(emulated.note, ContainsSubstring("linux/arm64 is emulated on this x86_64 engine "
                                                "(qemu-aarch64 in binfmt_misc)"));
    CHECK(judge_build_platform("linux/arm64", "aarch64", false).note.empty());
}

TEST_CASE("platforms: the build index lists each platform's lock file, and nothing else") {
    auto index = [](const std::string& extra) {
        return R"({"schema": 1, "variants": [{"name": "gh-1", "family": "gh", "image": "t/gh",
            "tag": "1", "dockerfile": "gh-1/Dockerfile", "base": "debian:bookworm",
            "torch_source": "pypi", "python_lock": null)" +
               extra + "}]}";
    };
    auto ok = parse_build_index(index(R"(, "platforms": ["linux/amd64", "linux/arm64"],
        "python_locks": {"linux/amd64": "gh-1/requirements.amd64.lock.txt",
                         "linux/arm64": "gh-1/requirements.arm64.lock.txt"})"),
                                "index.json");
    REQUIRE(ok);
    CHECK(ok.value()[0].platforms == std::vector<std::string>{"linux/amd64", "linux/arm64"});
    CHECK(ok.value()[0].python_locks.at("linux/arm64") == "gh-1/requirements.arm64.lock.txt");
    CHECK(parse_build_index(index(""), "index.json").value()[0].platforms ==
          std::vector<std::string>{"linux/amd64"});
    for (const std::string bad :
         {R"(, "platforms": ["linux/arm64"], "python_locks": {"linux/arm64": "../x"})",
          R"(, "platforms": ["linux/mips"])", R"(, "platforms": [])",
          R"(, "python_locks": {"linux/arm64": "gh-1/requirements.arm64.lock.txt"})"})
        CHECK_FALSE(parse_build_index(index(bad), "index.json"));
}
