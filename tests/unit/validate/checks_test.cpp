#include "core/validate/checks.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

// The JSON is written over several lines here for reading; a probe prints it on one.
ProbeRun probe(const std::string& name, std::string json_text, int exit_code) {
    for (auto& c : json_text)
        if (c == '\n') c = ' ';
    return parse_probe_output(name, "human line\n" + json_text + "\n", exit_code);
}

const CheckResult& check(const std::vector<CheckResult>& all, const std::string& id) {
    for (const auto& c : all)
        if (c.id == id) return c;
    FAIL("no check " << id);
    return all.front();
}

}  // namespace

TEST_CASE("probe output: the last line is the result; status and exit code must agree") {
    auto ok = probe(
        "cuda", R"({"probe":"cuda","schema":1,"status":"waived","reason":"no GPU","data":{}})", 2);
    CHECK(ok.status == "waived");
    CHECK(ok.usable());
    auto disagree =
        probe("cuda", R"({"probe":"cuda","schema":1,"status":"pass","reason":"","data":{}})", 1);
    CHECK(disagree.status == "error");
    CHECK_THAT(disagree.reason, ContainsSubstring("disagrees with exit code 1"));
    auto garbage = parse_probe_output("cuda", "Segmentation fault\n", 139);
    CHECK(garbage.status == "error");
    CHECK_FALSE(garbage.usable());
    auto other =
        probe("cuda", R"({"probe":"libs","schema":1,"status":"pass","reason":"","data":{}})", 0);
    CHECK(other.status == "error");
}

TEST_CASE(
    "expectations: labels first, nvidia/cuda environment, the knowledge base for NGC, --expect "
    "last") {
    auto e = gather_expectations("x", {{"io.torchdock.cuda", "12.4"}, {"maintainer", "me"}}, {},
                                 test::real_kb(), {});
    CHECK(e["cuda"] == "12.4");
    CHECK(e["source"] == "image labels");
    e = gather_expectations("nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", {},
                            {"CUDA_VERSION=12.4.1", "NV_CUDNN_VERSION=9.1.0.70-1"}, test::real_kb(),
                            {});
    CHECK(e["cuda"] == "12.4");
    CHECK(e["cudnn"] == "9.1.0.70");
    e = gather_expectations("nvcr.io/nvidia/pytorch:24.05-py3", {}, {}, test::real_kb(),
                            {{"nccl", "2.0.0"}});
    CHECK(e["cuda"] == "12.4");
    CHECK(e["nccl"] == "2.0.0");
    CHECK_THAT(e["source"], ContainsSubstring("--expect"));
}

TEST_CASE(
    "checks: a CPU image with an exact gloo all-reduce passes the static tier, the GPU tier is "
    "skipped") {
    ValidationInput in;
    in.expect = {{"torch", "1.13.1"}, {"torch-reports", "1.13.0a0"}};
    in.probes["torch"] =
        probe("torch", R"({"probe":"torch","schema":1,"status":"pass","reason":"","data":
        {"torch":"1.13.0a0","cuda":null,"arch_list":[],"distributed":{"backend":"gloo","world_size":2,"expected":10,"observed":10,"exact":true}}})",
              0);
    in.probes["cuda"] = probe(
        "cuda", R"({"probe":"cuda","schema":1,"status":"error","reason":"no libcudart","data":{}})",
        3);
    in.gpu_skip_reason = "no NVIDIA runtime";
    in.shm_bytes = 64LL << 20;
    auto r = evaluate(in, test::real_kb());
    CHECK(check(r, "TD101").status == "pass");
    CHECK(check(r, "TD120").status == "pass");
    CHECK(check(r, "TD121").status == "pass");
    CHECK(check(r, "TD123").status == "pass");
    CHECK(check(r, "TD130").status == "warn");
    CHECK(check(r, "TD140").status == "skip");
    CHECK_THAT(check(r, "TD140").message, ContainsSubstring("no NVIDIA runtime"));
    CHECK(check(r, "TD110").status == "skip");
}

TEST_CASE("checks: each promise that is broken fails its own check") {
    ValidationInput in;
    in.expect = {{"cuda", "12.4"},
                 {"cudnn", "9.1.0.70"},
                 {"nccl", "2.21.5"},
                 {"target-gpus", "H100"},
                 {"validate.shm-min-mb", "1024"}};
    in.probes["cuda"] = probe(
        "cuda",
        R"({"probe":"cuda","schema":1,"status":"waived","reason":"","data":{"runtime_version":13000}})",
        2);
    in.probes["cudnn"] = probe(
        "cudnn",
        R"({"probe":"cudnn","schema":1,"status":"waived","reason":"","data":{"version_string":"8.9.2","cudart_version":11080}})",
        2);
    in.probes["libs"] =
        probe("libs", R"({"probe":"libs","schema":1,"status":"fail","reason":"x","data":
        {"libraries":[],"unresolved":[{"soname":"libcudart.so.11.0","needed_by":"/x/libcudnn_ops.so.8"}],
         "duplicates":[{"name":"cudnn","copies":[{"path":"/a/libcudnn.so.9.1.0","version":"9.1.0"},{"path":"/b/libcudnn.so.8.9.2","version":"8.9.2"}]}]}})",
              1);
    in.probes["torch"] =
        probe("torch", R"({"probe":"torch","schema":1,"status":"fail","reason":"wrong sum","data":
        {"torch":"2.4.1+cu118","cuda":"11.8","arch_list":["sm_80","sm_86"],"distributed":{"backend":"gloo","world_size":2,"expected":10,"observed":11,"exact":false}}})",
              1);
    in.shm_bytes = 64LL << 20;
    auto r = evaluate(in, test::real_kb());
    CHECK_THAT(check(r, "TD101").message, ContainsSubstring("runs CUDA 13.0 but is labelled 12.4"));
    CHECK(check(r, "TD102").status == "fail");
    CHECK_THAT(check(r, "TD103").message, ContainsSubstring("needs libcudart.so.11.0"));
    CHECK(check(r, "TD104").status == "fail");
    CHECK_THAT(check(r, "TD110").message,
               ContainsSubstring("libcudart.so.11.0 (needed by /x/libcudnn_ops.so.8)"));
    CHECK(check(r, "TD111").status == "fail");
    CHECK(check(r, "TD121").status == "fail");
    CHECK_THAT(check(r, "TD122").message, ContainsSubstring("H100"));
    CHECK(check(r, "TD123").status == "fail");
    CHECK(check(r, "TD130").status == "fail");
    for (const auto& c : r)
        if (c.status == "fail") CHECK_FALSE(c.fix.empty());
}

TEST_CASE("checks: the GPU tier judges thresholds from the labels") {
    ValidationInput in;
    in.gpu_tier = true;
    in.expect = {{"min-driver", "550.54.15"},
                 {"validate.gemm-tflops-min.bf16", "700"},
                 {"validate.allreduce-busbw-min-gbps", "100"}};
    in.probes["cuda"] =
        probe("cuda", R"({"probe":"cuda","schema":1,"status":"pass","reason":"","data":
        {"runtime_version":12040,"nvidia_driver":"535.104.05","device_count":1,"devices":[{"name":"NVIDIA H200","cc":"9.0"}]}})",
              0);
    in.probes["gemm"] =
        probe("gemm", R"({"probe":"gemm","schema":1,"status":"pass","reason":"","data":
        {"results":[{"dtype":"bf16","correct":true,"tflops_median":650.0}]}})",
              0);
    in.probes["nccl"] =
        probe("nccl", R"({"probe":"nccl","schema":1,"status":"pass","reason":"","data":
        {"single_process":[{"dtype":"float32","bytes":1024,"correct":true,"busbw_gbps":150.0}]}})",
              0);
    auto r = evaluate(in, test::real_kb());
    CHECK(check(r, "TD140").status == "pass");
    CHECK_THAT(check(r, "TD141").message,
               ContainsSubstring("older than the image needs (550.54.15)"));
    CHECK(check(r, "TD143").status == "pass");
    CHECK_THAT(check(r, "TD144").message, ContainsSubstring("bf16 650.0 < 700"));
    CHECK(check(r, "TD145").status == "pass");
    CHECK(check(r, "TD146").status == "pass");
    CHECK(gemm_peak_flag(in.probes["cuda"], test::real_kb()).value_or("").find("--peak-tflops=") ==
          0);
    CHECK(gemm_peak_flag(in.probes["cuda"], test::real_kb()).value_or("").find("fp64") ==
          std::string::npos);
}
