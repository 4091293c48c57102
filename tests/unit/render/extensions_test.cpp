// CUDA extensions in manifests: parsed strictly, resolved per variant from the knowledge
// base's facts (data/extensions.json, read from PyPI by `kb refresh --extensions`), refused
// at render when their torch pin or GPU code cannot fit, and carried into the lock.
#include "core/render/extensions.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/render/python_lock.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

std::string manifest(const std::string& extensions, const std::string& torch = R"("2.9.1")",
                     const std::string& gpus = R"(["A100", "H100"])") {
    return R"({"schema": 1, "name": "xf", "image": "t/xf", "base": "os-pip",
      "wheel_index": "pypi", "matrix": {"torch": [)" +
           torch + R"(], "cuda": ["cu128"], "os": ["debian12"]},
      "target_gpus": )" +
           gpus + R"(, "extensions": )" + extensions + "}";
}

const std::string k_sha_e = std::string(64, 'e');

}  // namespace

TEST_CASE("an extension without a version gets the release that fits each variant's torch") {
    auto plan = test::plan_one(manifest(R"([{"name": "xformers"}])", R"("2.8.0", "2.9.1")"));
    REQUIRE(plan.problems.empty());
    REQUIRE(plan.variants.size() == 2);
    for (const auto& v : plan.variants) {
        REQUIRE(v.extensions.size() == 1);
        // xformers pins torch exactly: 0.0.32.post2 requires torch==2.8.0, 0.0.33.post2 2.9.1
        // (their METADATA, recorded with the wheels' sha256 in data/extensions.json).
        CHECK(v.extensions[0].version == (v.torch == "2.8.0" ? "0.0.32.post2" : "0.0.33.post2"));
        CHECK_THAT(v.extensions[0].facts_source, ContainsSubstring("sha256"));
        auto in = python_lock_plan(v, test::real_kb()).inputs;
        REQUIRE(in);
        CHECK(in->requirements.back() == "xformers==" + v.extensions[0].version);
    }
    const auto& dockerfile = plan.files.at("xf-2.9.1-cu128-debian12/Dockerfile");
    CHECK_THAT(dockerfile, ContainsSubstring("io.torchdock.extensions=\"xformers==0.0.33.post2\""));
    CHECK_THAT(dockerfile, ContainsSubstring("#   xformers 0.0.33.post2 from the package index"));
}

TEST_CASE("an extension pinned for another torch is refused, naming the release that fits") {
    auto e = test::refusal(manifest(R"([{"name": "xformers", "version": "0.0.33.post1"}])"));
    CHECK_THAT(e, ContainsSubstring("$.extensions[0].version: xformers 0.0.33.post1 requires "
                                    "torch==2.9.0"));
    CHECK_THAT(e, ContainsSubstring("has torch 2.9.1; xformers 0.0.33.post2 fits torch 2.9.1"));
}

TEST_CASE("an extension whose GPU code does not run on a target GPU is refused, naming both") {
    auto e = test::refusal(manifest(R"([{"name": "xformers"}])", R"("2.9.1")", R"(["V100"])"));
    CHECK_THAT(e, ContainsSubstring("xformers 0.0.33.post2 has no GPU code that runs on target "
                                    "GPU V100 (sm_70)"));
    CHECK_THAT(e, ContainsSubstring("xformers/_C.so has sm_75 sm_80 compute_80 sm_90a"));
}

TEST_CASE("GPU fit of a release follows CUDA's rules per object") {
    ExtensionRelease rel;
    rel.objects = {{"a/_C.so", {"sm_80", "sm_90a"}, 3},
                   {"a/fa3.so", {"sm_90a"}, 1},
                   {"a/ptx.so", {"compute_80"}, 1}};
    auto h100 = extension_gpu_fit(rel, "9.0");
    CHECK(h100.runs.size() == 3);
    auto a100 = extension_gpu_fit(rel, "8.0");
    CHECK(a100.lacks == std::vector<std::string>{"a/fa3.so"});
    auto b200 = extension_gpu_fit(rel, "10.0");  // sm_80 does not run on 10.0, sm_90a neither
    CHECK(b200.runs == std::vector<std::string>{"a/ptx.so"});
    auto v100 = extension_gpu_fit(rel, "7.0");
    CHECK(v100.runs.empty());
}

TEST_CASE("an extension the knowledge base does not know is refused with how to add it") {
    auto e = test::refusal(manifest(R"([{"name": "flash_attn"}])"));
    CHECK_THAT(e,
               ContainsSubstring("$.extensions[0].name: flash-attn is not in the knowledge base"));
    CHECK_THAT(e, ContainsSubstring("kb refresh --extensions"));
    e = test::refusal(manifest(R"([{"name": "xformers", "version": "0.0.1"}])"));
    CHECK_THAT(e, ContainsSubstring("xformers 0.0.1 is not in the knowledge base; it knows "
                                    "0.0.32.post2 (torch==2.8.0)"));
}

TEST_CASE("malformed extension entries are refused with their JSON path") {
    CHECK_THAT(test::refusal(manifest(R"({"name": "xformers"})")),
               ContainsSubstring("$.extensions: expected an array"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "xformers; rm -rf /"}])")),
               ContainsSubstring("$.extensions[0].name"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "xformers"}, {"name": "XFormers"}])")),
               ContainsSubstring("$.extensions[1].name: \"XFormers\" is listed twice"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "torch"}])")),
               ContainsSubstring("torch is the variant's own"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "xformers", "version": ">=0.0.30"}])")),
               ContainsSubstring("$.extensions[0].version"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "xformers", "version": "0.0.33+cu128"}])")),
               ContainsSubstring("a local version"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "xformers", "from": "git"}])")),
               ContainsSubstring("$.extensions[0]"));
    std::string url = "https://example.org/w/flash_attn-2.8.1-cp311-cp311-linux_x86_64.whl";
    CHECK_THAT(test::refusal(manifest(R"([{"name": "flash-attn", "wheel": {"url": ")" + url +
                                      R"(?x=1", "sha256": ")" + k_sha_e + R"("}}])")),
               ContainsSubstring("$.extensions[0].wheel.url"));
    CHECK_THAT(test::refusal(manifest(R"([{"name": "flash-attn", "wheel": {"url": ")" + url +
                                      R"(", "sha256": "abc"}}])")),
               ContainsSubstring("$.extensions[0].wheel.sha256: SHA-256 \"abc\" is not 64"));
    CHECK_THAT(test::refusal(manifest(
                   R"([{"name": "flash-attn", "wheel": {"url": "file:///tmp/x.whl", "sha256": ")" +
                   k_sha_e + R"("}}])")),
               ContainsSubstring("is not http:// or https://"));
    // The wheel must be the named project's, for this Python, on Linux x86_64.
    CHECK_THAT(
        test::refusal(manifest(
            R"([{"name": "flash-attn", "wheel": {"url": "https://example.org/w/other-1.0-py3-none-any.whl", "sha256": ")" +
            k_sha_e + R"("}}])")),
        ContainsSubstring("is of \"other\", not flash-attn"));
    CHECK_THAT(
        test::refusal(manifest(
            R"([{"name": "flash-attn", "wheel": {"url": "https://example.org/w/flash_attn-2.8.1-cp312-cp312-linux_x86_64.whl", "sha256": ")" +
            k_sha_e + R"("}}])")),
        ContainsSubstring(
            "is for CPython 3.12, but variant xf-2.9.1-cu128-debian12 has Python 3.11"));
}

TEST_CASE("a wheel by URL is locked by its sha256 and rendered as NAME @ URL") {
    std::string url =
        "https://example.org/w/flash_attn-2.8.1+cu12torch2.9-cp311-cp311-linux_x86_64.whl";
    auto plan = test::plan_one(manifest(R"([{"name": "flash-attn", "wheel": {"url": ")" + url +
                                        R"(", "sha256": ")" + k_sha_e + R"("}}])"));
    REQUIRE(plan.problems.empty());
    const auto& v = plan.variants.at(0);
    REQUIRE(v.extensions.size() == 1);
    CHECK(v.extensions[0].version == "2.8.1+cu12torch2.9");
    CHECK_THAT(v.extensions[0].notes.at(0), ContainsSubstring("not checked"));
    std::string req = "flash-attn @ " + url + "#sha256=" + k_sha_e;
    CHECK(v.extensions[0].requirement == req);
    CHECK(check_lock_requirement(req).empty());
    CHECK_FALSE(check_lock_requirement("flash-attn @ " + url + "#sha256=abc").empty());
    // uv's answer for it: the URL line, its one hash.
    std::string uv = "flash-attn @ " + url + "#sha256=" + k_sha_e +
                     " \\\n    --hash=sha256:" + k_sha_e + "\n    # via -r requirements.in\n";
    auto parsed = parse_uv_requirements(uv);
    REQUIRE(parsed);
    REQUIRE(parsed->size() == 1);
    CHECK(parsed->at(0).url == url);
    CHECK(parsed->at(0).version == "2.8.1+cu12torch2.9");
    PythonLockInputs in{{req}, "3.11", "x86_64-manylinux_2_36", ""};
    CHECK(check_lock_covers(in, parsed.value()).empty());
    auto other = parsed.value();
    other[0].hashes = {"sha256:" + std::string(64, 'f')};
    CHECK_THAT(check_lock_covers(in, other), ContainsSubstring("not the sha256 its inputs fix"));
    PythonLock lock{in, parsed.value(), true};
    CHECK_THAT(render_requirements_file(v, "x.lock.json", lock),
               ContainsSubstring("flash-attn @ " + url + " \\\n    --hash=sha256:" + k_sha_e));
}
