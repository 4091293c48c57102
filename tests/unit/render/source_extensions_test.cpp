// Extensions built from source: parsed strictly, refused at render where no CUDA toolkit can
// build them (the knowledge base's pip_toolkits), rendered as a build stage FROM the Python
// set with TORCH_CUDA_ARCH_LIST from the target GPUs, its own hash-locked set, and the wheel
// installed in the final stage.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/build/build_index.hpp"
#include "core/render/extensions.hpp"
#include "core/render/lockfile.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/render_plan.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::string k_sha_a = std::string(64, 'a');
const std::string k_url = "https://example.org/src/tdext-0.1.0.tar.gz";

std::string source(const std::string& extra = "", const std::string& url = k_url) {
    return R"([{"name": "tdext", "source": {"url": ")" + url + R"(", "sha256": ")" + k_sha_a +
           R"(")" + extra + "}}]";
}

// torch 2.11.0 from PyPI is its cu130 build (data/torch.json default_variant).
std::string manifest(const std::string& extensions, const std::string& gpus = R"(["A100", "H100"])",
                     const std::string& torch = "2.11.0", const std::string& cuda = "cu130") {
    return R"({"schema": 1, "name": "se", "image": "t/se", "base": "os-pip",
      "wheel_index": "pypi", "matrix": {"torch": [")" +
           torch + R"("], "cuda": [")" + cuda + R"("], "os": ["debian12"]},
      "target_gpus": )" +
           gpus + R"(, "extensions": )" + extensions + "}";
}

const char* k_variant = "se-2.11.0-cu130-debian12";

}  // namespace

TEST_CASE("a source extension renders a build stage with the pip toolkit for the target GPUs") {
    auto plan = test::plan_one(manifest(
        source(R"(, "build_requires": ["setuptools==81.0.0", "ninja==1.13.0"], "max_jobs": 3)")));
    REQUIRE(test::problems_text(plan).empty());
    const Variant& v = plan.variants.at(0);
    REQUIRE(v.extensions.size() == 1);
    CHECK(v.extensions[0].from_source);
    CHECK(v.extensions[0].version == "0.1.0");
    REQUIRE(v.source_build);
    CHECK(v.source_build->cuda == "13.0");
    CHECK(v.source_build->arch_list == "8.0;9.0");
    // The toolkit of data/extensions.json, the CUDA runtime torch 2.11.0 pins, the build's own.
    CHECK(v.source_build->requirements ==
          std::vector<std::string>{"nvidia-cuda-nvcc==13.0.88", "nvidia-cuda-crt==13.0.88",
                                   "nvidia-nvvm==13.0.88", "nvidia-cuda-cccl==13.0.85",
                                   "nvidia-cuda-runtime==13.0.96", "setuptools==81.0.0",
                                   "ninja==1.13.0"});
    // The runtime set does not resolve the source archive; the build set has the toolkit.
    auto runtime = python_lock_plan(v, test::real_kb()).inputs;
    REQUIRE(runtime);
    for (const auto& r : runtime->requirements) CHECK(r.find("tdext") == std::string::npos);
    auto build = build_lock_plan(v, test::real_kb()).inputs;
    REQUIRE(build);
    CHECK(build->requirements == v.source_build->requirements);
    CHECK(build->python == runtime->python);
    CHECK(build->platform == runtime->platform);

    const auto& d = plan.files.at(std::string(k_variant) + "/Dockerfile");
    CHECK_THAT(d, ContainsSubstring("FROM debian:bookworm AS python-set\n"));
    CHECK_THAT(d, ContainsSubstring("FROM python-set AS extension-build\n"));
    CHECK_THAT(d, ContainsSubstring("      g++ \\\n      python3-dev=3.11.2-1+b1\n"));
    CHECK_THAT(d, ContainsSubstring("ENV CUDA_HOME=/opt/torchdock/cuda\n"));
    CHECK_THAT(d, ContainsSubstring("ln -sf libcudart.so.13"));
    CHECK_THAT(d,
               ContainsSubstring("TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" MAX_JOBS=\"${MAX_JOBS:-3}\""));
    // Never pip's wheel cache: it keys a built wheel by URL and hash, not the arch list.
    CHECK_THAT(d, ContainsSubstring("pip wheel --no-cache-dir --no-deps --no-build-isolation"));
    CHECK_THAT(d, ContainsSubstring("'tdext @ " + k_url + "#sha256=" + k_sha_a + "'"));
    CHECK_THAT(d,
               ContainsSubstring("\nFROM python-set\nRUN --mount=type=bind,from=extension-build"));
    CHECK_THAT(d, ContainsSubstring("io.torchdock.built-extensions=\"tdext==0.1.0\""));
    // Installed only from the built wheel, never by the runtime set's pip line.
    CHECK(d.find("pip install --no-cache-dir --no-deps --no-index \\\n      "
                 "/tmp/torchdock/wheels/*.whl") != std::string::npos);
    // Unlocked: the toolkit is pinned by version, and the Dockerfile says why not locked.
    CHECK_THAT(d, ContainsSubstring("      nvidia-cuda-nvcc==13.0.88 \\\n"));
    CHECK_THAT(d, ContainsSubstring("pinned by version but not hash-locked: no lock file"));
}

TEST_CASE("a source extension is refused where no toolkit can build it, saying why") {
    // CUDA 12: the index's nvcc wheel has no nvcc (the fact and its source are named).
    auto e = test::refusal(manifest(source(), R"(["A100"])", "2.9.1", "cu128"));
    CHECK_THAT(e, ContainsSubstring("$.extensions[0].source: tdext is built from source"));
    CHECK_THAT(e, ContainsSubstring("has CUDA 12.8: the index has no nvcc for CUDA 12"));
    CHECK_THAT(e, ContainsSubstring("nvidia-cuda-nvcc-cu12 12.8.93"));
    CHECK_THAT(e, ContainsSubstring("it knows one for CUDA 13.0"));
    // A CPU variant.
    std::string cpu = manifest(source(), R"(["A100"])", "2.11.0", "cpu");
    cpu.replace(cpu.find("\"pypi\""), 6, "\"pytorch\"");
    CHECK_THAT(test::refusal(cpu), ContainsSubstring("is CPU-only"));
    // No target GPUs: no TORCH_CUDA_ARCH_LIST.
    CHECK_THAT(test::refusal(manifest(source(), "[]")), ContainsSubstring("add \"target_gpus\""));
    // A GPU the CUDA 13.0 toolkit no longer compiles for.
    CHECK_THAT(test::refusal(manifest(source(), R"(["V100"])")),
               ContainsSubstring("target GPU V100 (sm_70), which the CUDA 13.0 toolkit does not "
                                 "compile for (it compiles for sm_75 sm_80"));
    // A base that brings its own torch (refused for every extension).
    std::string ngc = R"({"schema": 1, "name": "n", "image": "t/n", "base": "ngc",
      "matrix": {"ngc": ["25.01"]}, "target_gpus": ["H100"], "extensions": )" +
                      source() + "}";
    CHECK_THAT(test::refusal(ngc), ContainsSubstring("base \"ngc\" brings its own torch"));
}

TEST_CASE("malformed source extensions are refused with their JSON path") {
    CHECK_THAT(test::refusal(manifest(source("", "https://example.org/src/tdext-0.1.0.whl"))),
               ContainsSubstring("$.extensions[0].source.url"));
    CHECK_THAT(test::refusal(manifest(source("", "https://example.org/src/other-0.1.0.tar.gz"))),
               ContainsSubstring("is not a source archive of tdext"));
    CHECK_THAT(test::refusal(manifest(source("", "https://example.org/src/tdext.tar.gz"))),
               ContainsSubstring("is not a source archive of tdext"));
    CHECK_THAT(test::refusal(manifest(source("", "https://u:p@example.org/tdext-0.1.0.tar.gz"))),
               ContainsSubstring("no credentials"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "tdext", "source": {"url": ")" + k_url +
                                      R"(", "sha256": "xyz"}}])")),
               ContainsSubstring("$.extensions[0].source.sha256"));
    CHECK_THAT(
        test::refusal(manifest(R"([{"name": "tdext", "version": "0.1.0", "source": {"url": ")" +
                               k_url + R"(", "sha256": ")" + k_sha_a + R"("}}])")),
        ContainsSubstring("leave \"version\" out"));
    CHECK_THAT(
        test::refusal(manifest(
            R"([{"name": "tdext", "wheel": {"url": "https://e.org/tdext-0.1.0-py3-none-any.whl", "sha256": ")" +
            k_sha_a + R"("}, "source": {"url": ")" + k_url + R"(", "sha256": ")" + k_sha_a +
            R"("}}])")),
        ContainsSubstring("a wheel or is built from source, not both"));
    CHECK_THAT(test::refusal(manifest(source(R"(, "build_requires": ["setuptools>=70"])"))),
               ContainsSubstring("$.extensions[0].source.build_requires"));
    CHECK_THAT(
        test::refusal(manifest(source(R"(, "build_requires": ["nvidia-cuda-nvcc==13.0.48"])"))),
        ContainsSubstring("the CUDA toolkit's wheels come from the variant"));
    CHECK_THAT(test::refusal(
                   manifest(source(R"(, "build_requires": ["ninja==1.13.0", "Ninja==1.11.1"])"))),
               ContainsSubstring("names ninja twice"));
    CHECK_THAT(test::refusal(manifest(source(R"(, "max_jobs": 0)"))),
               ContainsSubstring("$.extensions[0].source.max_jobs"));
    CHECK_THAT(test::refusal(manifest(source(R"(, "cflags": "-O3")"))),
               ContainsSubstring("$.extensions[0].source"));
}

TEST_CASE("two source extensions may not pin one build requirement differently") {
    std::string two = R"([{"name": "tdext", "source": {"url": ")" + k_url + R"(", "sha256": ")" +
                      k_sha_a + R"(", "build_requires": ["ninja==1.13.0"]}},
        {"name": "other", "source": {"url": "https://example.org/other-2.0.zip", "sha256": ")" +
                      k_sha_a + R"(", "build_requires": ["ninja==1.11.1"]}}])";
    CHECK_THAT(test::refusal(manifest(two)),
               ContainsSubstring("$.extensions[1].source.build_requires: \"ninja==1.11.1\" "
                                 "contradicts \"ninja==1.13.0\""));
}

TEST_CASE("the build stage's set is locked beside the Python set and rendered from the lock") {
    std::string text = manifest(source(R"(, "build_requires": ["ninja==1.13.0"])"));
    auto plan = test::plan_one(text);
    REQUIRE(test::problems_text(plan).empty());
    const Variant& v = plan.variants.at(0);
    auto in = build_lock_plan(v, test::real_kb()).inputs;
    REQUIRE(in);
    std::vector<LockedPackage> pkgs;
    for (const auto& r : in->requirements) {
        auto eq = r.find("==");
        pkgs.push_back({r.substr(0, eq), r.substr(eq + 2), {"sha256:" + std::string(64, 'b')}, {}});
    }
    std::sort(pkgs.begin(), pkgs.end(),
              [](const LockedPackage& a, const LockedPackage& b) { return a.name < b.name; });
    PythonLock build{*in, pkgs, true};
    std::string lock_text = render_lockfile({}, {}, {}, {{k_variant, build}});
    Diagnostics diags("x.lock.json");
    LockFile parsed = parse_lockfile(lock_text, diags);
    REQUIRE(diags.count() == 0);
    REQUIRE(parsed.build_python.count(k_variant));
    CHECK(parsed.build_python.at(k_variant).packages == pkgs);

    ManifestSource src{"manifests/se.json", text, "manifests/se.lock.json", lock_text};
    RenderPlan locked = plan_render({src}, test::real_kb());
    REQUIRE(test::problems_text(locked).empty());
    const auto& d = locked.files.at(std::string(k_variant) + "/Dockerfile");
    CHECK_THAT(d, ContainsSubstring("hash-locked in manifests/se.lock.json: 6 packages."));
    CHECK_THAT(d, ContainsSubstring("source=requirements.build.lock.txt"));
    const auto& reqs = locked.files.at(std::string(k_variant) + "/requirements.build.lock.txt");
    CHECK_THAT(reqs, ContainsSubstring("the build stage's Python set"));
    CHECK_THAT(reqs, ContainsSubstring("nvidia-cuda-nvcc==13.0.88 \\\n    --hash=sha256:bbbb"));
    CHECK_THAT(locked.files.at("index.json"),
               ContainsSubstring("\"build_lock\": \"" + std::string(k_variant) +
                                 "/requirements.build.lock.txt\""));
    // A build lock from other inputs is not used, and says so.
    std::string moved = manifest(source(R"(, "build_requires": ["ninja==1.11.1"])"));
    RenderPlan stale = plan_render(
        {{"manifests/se.json", moved, "manifests/se.lock.json", lock_text}}, test::real_kb());
    REQUIRE(test::problems_text(stale).empty());
    CHECK_FALSE(stale.files.count(std::string(k_variant) + "/requirements.build.lock.txt"));
    std::string warned;
    for (const auto& w : stale.warnings) warned += w.path + ": " + w.message + "\n";
    CHECK_THAT(warned, ContainsSubstring("$.build_python[\"" + std::string(k_variant) +
                                         "\"]: was resolved from other requirements"));
}

TEST_CASE("a mirror rewrites images in FROM lines, never a stage named earlier") {
    std::string d =
        "FROM debian:bookworm AS python-set\nRUN true\nFROM python-set AS build\n"
        "FROM Python-Set\nFROM ubuntu:24.04\n";
    std::string out = rewrite_from_lines(d, [](const std::string& image) { return "m/" + image; });
    CHECK(out ==
          "FROM m/debian:bookworm AS python-set\nRUN true\nFROM python-set AS build\n"
          "FROM Python-Set\nFROM m/ubuntu:24.04\n");
}

TEST_CASE("on a devel nvidia/cuda base the image's own nvcc builds, for CUDA 12 too") {
    auto cuda_base = [](const std::string& flavor, const std::string& extra) {
        return R"({"schema": 1, "name": "dv", "image": "t/dv", "base": "nvidia-cuda",
          "matrix": {"torch": ["2.9.1"], "cuda": ["cu128"], "flavor": [")" +
               flavor + R"("], "os": ["ubuntu24.04"]},
          "target_gpus": ["H100", "RTX 4090"], "extensions": )" +
               source(extra) + "}";
    };
    auto plan = test::plan_one(cuda_base("devel", ""));
    REQUIRE(test::problems_text(plan).empty());
    const Variant& v = plan.variants.at(0);
    REQUIRE(v.source_build);
    CHECK(v.source_build->home.empty());
    CHECK(v.source_build->cuda == "12.8");
    CHECK(v.source_build->arch_list == "8.9;9.0");
    CHECK(v.source_build->requirements.empty());
    // Nothing for pip to install in the build stage: no build lock to ask for.
    CHECK_FALSE(build_lock_plan(v, test::real_kb()).inputs);
    const auto& d = plan.files.at(v.name + "/Dockerfile");
    CHECK_THAT(d, ContainsSubstring("toolkit of the base image"));
    CHECK_THAT(d, ContainsSubstring("\nENV CUDA_HOME=/usr/local/cuda\n"));
    CHECK(d.find("nvidia-cuda-nvcc") == std::string::npos);
    CHECK(d.find("libcudart.so") == std::string::npos);
    CHECK_THAT(d, ContainsSubstring("TORCH_CUDA_ARCH_LIST=\"8.9;9.0\""));
    // Its build requirements are installed (and locked) there.
    auto with_reqs = test::plan_one(cuda_base("devel", R"(, "build_requires": ["ninja==1.13.0"])"));
    REQUIRE(test::problems_text(with_reqs).empty());
    auto in = build_lock_plan(with_reqs.variants.at(0), test::real_kb()).inputs;
    REQUIRE(in);
    CHECK(in->requirements == std::vector<std::string>{"ninja==1.13.0"});
    // The runtime flavor has no nvcc, and PyPI none for CUDA 12: refused, naming the way out.
    CHECK_THAT(test::refusal(cuda_base("runtime", "")),
               ContainsSubstring("or on base nvidia-cuda with flavor devel"));
}
