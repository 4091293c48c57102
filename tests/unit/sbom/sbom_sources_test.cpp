// What an SBOM lists: a variant's from its lock (every package by hash, the base by digest,
// the Debian packages it pins), an image's from its probes; never more than that evidence.
#include "core/sbom/sbom_sources.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>

#include "core/render/python_lock.hpp"
#include "core/render/render_plan.hpp"
#include "engine/files.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using Kind = SbomComponent::Kind;

namespace {

const SbomComponent* find(const SbomInput& in, Kind kind, const std::string& name) {
    for (const auto& c : in.components)
        if (c.kind == kind && c.name == name) return &c;
    return nullptr;
}

}  // namespace

TEST_CASE("a locked variant's SBOM: every locked package with its hashes, the base by digest") {
    RenderPlan plan = test::golden_plan(true);
    REQUIRE(test::problems_text(plan).empty());
    const Variant& v = plan.variants.at(0);
    REQUIRE(v.python_lock);
    auto in = variant_sbom_input(v, test::real_kb());
    REQUIRE(in);
    std::size_t python = 0;
    for (const auto& c : in->components) python += c.kind == Kind::Python ? 1 : 0;
    CHECK(python == v.python_lock->packages.size());
    const SbomComponent* torch = find(in.value(), Kind::Python, "torch");
    REQUIRE(torch);
    CHECK(torch->version == v.torch + "+" + v.wheel_variant);
    CHECK_FALSE(torch->hashes.empty());
    for (const auto& h : torch->hashes) CHECK(h.hex.size() == 64);
    const SbomComponent* base = nullptr;
    for (const auto& c : in->components)
        if (c.kind == Kind::BaseImage) base = &c;
    REQUIRE(base);
    REQUIRE(v.base_digest);
    CHECK(base->digest == *v.base_digest);
    auto doc = nlohmann::json::parse(cyclonedx_json(in.value()));
    CHECK(doc["specVersion"] == "1.6");
    CHECK(doc["metadata"]["component"]["name"] == v.name);
}

TEST_CASE("a variant without a Python lock has no SBOM: its set is not known by hash") {
    RenderPlan plan = test::golden_plan(false);
    REQUIRE(test::problems_text(plan).empty());
    auto in = variant_sbom_input(plan.variants.at(0), test::real_kb());
    REQUIRE_FALSE(in);
    CHECK_THAT(in.error().message, ContainsSubstring("has no Python lock"));
    CHECK_THAT(in.error().message, ContainsSubstring("torchdock lock"));
}

TEST_CASE("an image's SBOM lists what its probes read, and nothing when probe-record gave none") {
    std::map<std::string, ProbeRun> probes;
    auto ran = [](const char* name, const std::string& data) {
        ProbeRun r;
        r.state = ProbeRun::State::Ran;
        r.program = name;
        r.status = "pass";
        r.data = nlohmann::json::parse(data);
        return r;
    };
    std::map<std::string, std::string> labels = {
        {"org.opencontainers.image.base.name", "debian:bookworm"},
        {"org.opencontainers.image.base.digest", "sha256:" + std::string(64, 'b')},
        {"io.torchdock.variant", "v1"}};
    auto none = image_sbom_input("img:1", "sha256:c", labels, probes);
    REQUIRE_FALSE(none);
    CHECK_THAT(none.error().message, ContainsSubstring("could not be read"));
    probes["record"] = ran("probe-record", R"({"distributions":[
        {"name":"torch","version":"2.9.1","dist_info":"/s/torch-2.9.1.dist-info","problems":[]},
        {"name":"xformers","version":"0.0.33.post2","dist_info":"/s/x.dist-info","problems":[{"kind":"hash"}]}]})");
    probes["torch"] =
        ran("torch_probe.py", R"({"loaded_libraries":["/s/nvidia/cudnn/lib/libcudnn.so.9"]})");
    probes["kernels"] = ran("probe-kernels", R"({"objects":[
        {"path":"/s/xformers/_C.so","has_fatbin":true,"sass":["sm_80","sm_90a"],"ptx":[{"arch":"compute_80","isa":"8.7"}]},
        {"path":"/s/numpy/x.so","has_fatbin":false}]})");
    auto in = image_sbom_input("img:1", "sha256:c", labels, probes);
    REQUIRE(in);
    const SbomComponent* x = find(in.value(), Kind::Python, "xformers");
    REQUIRE(x);
    CHECK_THAT(x->note, ContainsSubstring("differ from its RECORD"));
    const SbomComponent* obj = find(in.value(), Kind::GpuObject, "_C.so");
    REQUIRE(obj);
    CHECK(obj->gpu_targets == std::vector<std::string>{"sm_80", "sm_90a", "compute_80"});
    CHECK(find(in.value(), Kind::CudaLibrary, "libcudnn.so.9"));
    CHECK_FALSE(find(in.value(), Kind::GpuObject, "x.so"));
    CHECK(find(in.value(), Kind::BaseImage, "debian"));
    for (const auto& [key, value] : in->subject.properties) CHECK(key != "torchdock:not-read");
    // probe-kernels crashed: its objects are missing, and the SBOM says so.
    probes["kernels"].state = ProbeRun::State::Crashed;
    auto partial = image_sbom_input("img:1", "sha256:c", labels, probes);
    REQUIRE(partial);
    CHECK_FALSE(find(partial.value(), Kind::GpuObject, "_C.so"));
    std::string not_read;
    for (const auto& [key, value] : partial->subject.properties)
        if (key == "torchdock:not-read") not_read = value;
    CHECK_THAT(not_read, ContainsSubstring("probe-kernels"));
}

TEST_CASE("an image's SBOM never vouches for files a RECORD does not list", "[regression][sbom]") {
    ProbeRun record;
    record.state = ProbeRun::State::Ran;
    record.program = "probe-record";
    record.status = "pass";
    record.data = nlohmann::json::parse(R"({"distributions":[
        {"name":"torch","version":"9.9.9","dist_info":"/s/torch-9.9.9.dist-info","files":0,"unchecked":0,"problems":[]},
        {"name":"md5only","version":"1","dist_info":"/s/m.dist-info","files":0,"unchecked":3,"problems":[]},
        {"name":"mixed","version":"1","dist_info":"/s/x.dist-info","files":5,"unchecked":2,"problems":[]},
        {"name":"many","version":"1","dist_info":"/s/y.dist-info","files":900,"unchecked":0,"problems":[{"kind":"hash"}],"problems_total":120},
        {"name":"fine","version":"1","dist_info":"/s/f.dist-info","files":12,"unchecked":0,"problems":[]}]})");
    auto in = image_sbom_input("img:1", "sha256:c", {}, {{"record", record}});
    REQUIRE(in);
    auto note = [&](const char* name) {
        const SbomComponent* c = find(in.value(), Kind::Python, name);
        REQUIRE(c);
        return c->note;
    };
    CHECK_THAT(note("torch"), ContainsSubstring("its RECORD lists no files with a hash, so no "
                                                "file was checked"));
    CHECK_THAT(note("md5only"), ContainsSubstring("3 file(s) a hash other than sha256"));
    CHECK_THAT(note("mixed"), ContainsSubstring("its 5 file(s) with a sha256 hash as its RECORD "
                                                "says, 2 with another hash not checked"));
    CHECK_THAT(note("many"), ContainsSubstring("120 file(s) differ"));
    CHECK(note("fine") == "installed; every file as its RECORD says (probe-record)");
    for (const char* name : {"torch", "md5only", "mixed", "many"})
        CHECK(note(name).find("every file as its RECORD says") == std::string::npos);
}
