#include "core/diagnose/doctor.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

// The JSON is written over several lines here for reading; a probe prints it on one.
ProbeRun probe(const std::string& name, std::string data_json) {
    for (auto& c : data_json)
        if (c == '\n') c = ' ';
    return parse_probe_output(name,
                              R"({"probe":")" + name +
                                  R"(","schema":1,"status":"pass","reason":"","data":)" +
                                  data_json + "}\n",
                              0);
}

// A host with one GPU of compute capability `cc`, torch 2.9.1 reporting `arch_list`, and the
// kernel audit of its libraries.
std::vector<Finding> findings(const std::string& cc, const std::string& arch_list,
                              const std::string& objects) {
    std::map<std::string, ProbeRun> probes;
    probes["cuda"] = probe("cuda", R"({"runtime_version":12080,"driver_version":12080,
        "devices":[{"name":"Test GPU","cc":")" +
                                       cc + R"(","memory_bytes":1}]})");
    probes["torch"] = probe("torch", R"({"torch":"2.9.1+cu128","cuda":"12.8","arch_list":)" +
                                         arch_list + R"(,"cuda_available":true,
        "loaded_libraries":["/x/torch/lib/libtorch_cuda.so"]})");
    probes["kernels"] = probe("kernels", R"({"objects":)" + objects + "}");
    EnvironmentFacts facts;
    facts.kind = "host";
    return doctor_findings(build_fingerprint(facts, probes), test::real_kb());
}

const Finding* find(const std::vector<Finding>& all, const std::string& id) {
    for (const auto& f : all)
        if (f.id == id) return &f;
    return nullptr;
}

}  // namespace

TEST_CASE("doctor DR118: an object without code for the GPU here is named with what it has") {
    auto f = findings("6.0", R"(["sm_80","sm_90"])", R"([
        {"path":"/x/torch/lib/libtorch_cuda.so","has_fatbin":true,"sass":["sm_80","sm_90"],"ptx":[]},
        {"path":"/x/ext.so","has_fatbin":true,"sass":["sm_80"],"ptx":[]}])");
    const Finding* dr = find(f, "DR118");
    REQUIRE(dr);
    CHECK(dr->severity == "error");
    CHECK_THAT(dr->title, ContainsSubstring("Test GPU"));
    CHECK_THAT(dr->detail, ContainsSubstring("libtorch_cuda.so"));
    CHECK_THAT(dr->detail, ContainsSubstring("ext.so"));
    CHECK_THAT(dr->fix, ContainsSubstring("6.0"));
}

TEST_CASE("doctor DR118: no finding when every object runs on the GPU here") {
    auto f = findings("9.0", R"(["sm_80","sm_90"])", R"([
        {"path":"/x/torch/lib/libtorch_cuda.so","has_fatbin":true,"sass":["sm_80","sm_90"],"ptx":[]}])");
    CHECK_FALSE(find(f, "DR118"));
    CHECK_FALSE(find(f, "DR119"));
}

TEST_CASE("doctor DR119: torch claiming an arch its binary lacks") {
    auto f = findings("9.0", R"(["sm_80","sm_90","sm_120"])", R"([
        {"path":"/x/torch/lib/libtorch_cuda.so","has_fatbin":true,"sass":["sm_80","sm_90"],"ptx":[]}])");
    const Finding* dr = find(f, "DR119");
    REQUIRE(dr);
    CHECK_THAT(dr->detail, ContainsSubstring("torch reports sm_120"));
}

TEST_CASE("doctor DR125: a venv of Python 3.11 under 3.13 is an error, never 'no torch'") {
    std::map<std::string, ProbeRun> probes;
    probes["torch"] = probe("torch", R"J({"torch":null,
        "interpreters_tried":["/app/.venv/bin/python (3.13.5, no torch)"],
        "torch_for_other_python":[{"dir":"/app/.venv/lib/python3.11/site-packages",
          "python":"3.11","evidence":"lib/python3.11","interpreter":"/app/.venv/bin/python",
          "interpreter_python":"3.13.5"}]})J");
    EnvironmentFacts facts;
    facts.kind = "image";
    auto found = doctor_findings(build_fingerprint(facts, probes), test::real_kb());
    auto is = [](const char* id) { return [id](const Finding& f) { return f.id == id; }; };
    auto dr125 = std::find_if(found.begin(), found.end(), is("DR125"));
    REQUIRE(dr125 != found.end());
    CHECK(dr125->severity == "error");
    CHECK_THAT(dr125->detail, ContainsSubstring("built for Python 3.11"));
    CHECK(std::none_of(found.begin(), found.end(), is("DR113")));
}
