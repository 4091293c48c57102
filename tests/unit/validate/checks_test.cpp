#include "core/validate/checks.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "core/validate/check_context.hpp"
#include "core/validate/probe_plan.hpp"
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
        "cuda",
        R"({"probe":"cuda","schema":1,"status":"waived","reason":"no libcudart found","data":{}})",
        2);
    in.gpu_skip_reason = "no NVIDIA runtime";
    in.shm_bytes = 64LL << 20;
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD101").status == "pass");
    CHECK(test::check_of(r, "TD120").status == "pass");
    CHECK(test::check_of(r, "TD121").status == "pass");
    CHECK(test::check_of(r, "TD123").status == "pass");
    CHECK(test::check_of(r, "TD130").status == "warn");
    CHECK(test::check_of(r, "TD140").status == "skip");
    CHECK_THAT(test::check_of(r, "TD140").message, ContainsSubstring("no NVIDIA runtime"));
    CHECK(test::check_of(r, "TD110").status == "skip");
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
    CHECK_THAT(test::check_of(r, "TD101").message,
               ContainsSubstring("runs CUDA 13.0 but is labelled 12.4"));
    CHECK(test::check_of(r, "TD102").status == "fail");
    CHECK_THAT(test::check_of(r, "TD103").message, ContainsSubstring("needs libcudart.so.11.0"));
    CHECK(test::check_of(r, "TD104").status == "fail");
    CHECK_THAT(test::check_of(r, "TD110").message,
               ContainsSubstring("libcudart.so.11.0 (needed by /x/libcudnn_ops.so.8)"));
    CHECK(test::check_of(r, "TD111").status == "fail");
    CHECK(test::check_of(r, "TD121").status == "fail");
    CHECK_THAT(test::check_of(r, "TD122").message, ContainsSubstring("H100"));
    CHECK(test::check_of(r, "TD123").status == "fail");
    CHECK(test::check_of(r, "TD130").status == "fail");
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
    CHECK(test::check_of(r, "TD140").status == "pass");
    CHECK_THAT(test::check_of(r, "TD141").message,
               ContainsSubstring("older than the image needs (550.54.15)"));
    CHECK(test::check_of(r, "TD143").status == "pass");
    CHECK_THAT(test::check_of(r, "TD144").message, ContainsSubstring("bf16 650.0 < 700"));
    CHECK(test::check_of(r, "TD145").status == "pass");
    CHECK(test::check_of(r, "TD146").status == "pass");
    auto flags = dynamic_probe_flags("gemm", nullptr, &in.probes["cuda"], test::real_kb());
    REQUIRE(flags.size() == 1);
    CHECK(flags[0].find("--peak-tflops=") == 0);
    CHECK(flags[0].find("fp64") == std::string::npos);
}

TEST_CASE("checks: TD144 judges the full-entropy sustained median and no other figure") {
    // probe-gemm's result entry as it is now: tflops_median is timed on uniform(-1,1)
    // operands; the halves, the exact-operand check and any other figure (even a hypothetical
    // low-entropy "upper bound" beside the results) must not reach the threshold.
    ValidationInput in;
    in.gpu_tier = true;
    in.expect = {{"validate.gemm-tflops-min.bf16", "700"}};
    in.probes["cuda"] =
        probe("cuda", R"({"probe":"cuda","schema":1,"status":"pass","reason":"","data":
        {"device_count":1,"devices":[{"name":"NVIDIA H200","cc":"9.0"}]}})",
              0);
    in.probes["gemm"] =
        probe("gemm", R"J({"probe":"gemm","schema":1,"status":"pass","reason":"","data":
        {"timing":{"mode":"sustained","seconds":10},"operands":{"timing":"uniform(-1,1)"},
         "upper_bound_low_entropy":[{"dtype":"bf16","tflops_median":885.0}],
         "results":[{"dtype":"bf16","m":8192,"n":8192,"k":8192,"correct":true,"tflops_median":690.0,
           "check":{"correct":true},"timed_check":{"correct":true},
           "operands":{"distribution":"uniform(-1,1)"},
           "timing":{"mode":"sustained","tflops_first_half":760.0,"tflops_last_half":688.0}}]}})J",
              0);
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD143").status == "pass");
    CHECK(test::check_of(r, "TD144").status == "fail");
    CHECK_THAT(test::check_of(r, "TD144").message, ContainsSubstring("bf16 690.0 < 700"));
}

namespace {

// An image where every check of both tiers can pass: CUDA 12.4, cuDNN 9.1.0, NCCL 2.21.5,
// torch 2.4.1+cu124 on one H100.
ValidationInput healthy_gpu_image() {
    ValidationInput in;
    in.gpu_tier = true;
    in.expect = {{"source", "image labels"},
                 {"cuda", "12.4"},
                 {"cudnn", "9.1.0"},
                 {"nccl", "2.21.5"},
                 {"torch", "2.4.1"},
                 {"python", "3.11"},
                 {"torchvision", "0.19.1"},
                 {"arch-list", "8.0;9.0"},
                 {"target-gpus", "H100"},
                 {"python-set", "torch==2.4.1+cu124"},
                 {"min-driver", "550.54.15"},
                 {"validate.gemm-tflops-min.bf16", "500"},
                 {"validate.allreduce-busbw-min-gbps", "100"}};
    in.probes["cuda"] =
        probe("cuda", R"({"probe":"cuda","schema":1,"status":"pass","reason":"","data":
        {"runtime_version":12040,"nvidia_driver":"560.35.03","device_count":1,"devices":[{"name":"NVIDIA H100 80GB HBM3","cc":"9.0"}]}})",
              0);
    in.probes["cudnn"] =
        probe("cudnn", R"({"probe":"cudnn","schema":1,"status":"pass","reason":"","data":
        {"version":90100,"version_string":"9.1.0","cudart_version":12040}})",
              0);
    in.probes["nccl"] =
        probe("nccl", R"({"probe":"nccl","schema":1,"status":"pass","reason":"","data":
        {"version":"2.21.5","single_process":[{"dtype":"float32","bytes":1024,"correct":true,"busbw_gbps":150.0}]}})",
              0);
    in.probes["libs"] =
        probe("libs", R"({"probe":"libs","schema":1,"status":"pass","reason":"","data":
        {"libraries":[{"soname":"libcudart.so.12"}],"unresolved":[],"duplicates":[]}})",
              0);
    in.probes["gemm"] =
        probe("gemm", R"({"probe":"gemm","schema":1,"status":"pass","reason":"","data":
        {"results":[{"dtype":"bf16","correct":true,"tflops_median":650.0}]}})",
              0);
    in.probes["torch"] =
        probe("torch", R"({"probe":"torch","schema":1,"status":"pass","reason":"","data":
        {"torch":"2.4.1+cu124","cuda":"12.4","cudnn":90100,"nccl":"2.21.5","python":"3.11.2",
         "python_executable":"/opt/venv/bin/python","arch_list":["sm_80","sm_90"],
         "torch_file":"/opt/venv/lib/python3.11/site-packages/torch/__init__.py",
         "distributions":{"torchvision":{"version":"0.19.1+cu124","location":"/opt/venv/lib/python3.11/site-packages"},
           "torch":{"version":"2.4.1+cu124","requires":["filelock","nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\""]},
           "nvidia-cudnn-cu12":{"version":"9.1.0.70"}},
         "matmul":{"correct":true},
         "distributed":{"backend":"nccl","world_size":2,"expected":10,"observed":10,"exact":true},
         "writable":{"uid":1000,"temp_dir":"/tmp","temp_error":null,"home":"/home/u","home_writable":true}}})",
              0);
    in.probes["kernels"] =
        probe("kernels", R"({"probe":"kernels","schema":1,"status":"pass","reason":"","data":
        {"objects":[{"path":"/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so","has_fatbin":true,"sass":["sm_80","sm_90"],"ptx":[]},
                    {"path":"/opt/venv/lib/python3.11/site-packages/numpy/core/_multiarray_umath.so","has_fatbin":false,"sass":[],"ptx":[]}]}})",
              0);
    in.probes["record"] =
        probe("record", R"({"probe":"record","schema":1,"status":"pass","reason":"","data":
        {"distributions":[{"name":"torch","version":"2.4.1+cu124","files":10,"problems":[],
          "tags":["cp311-cp311-manylinux_2_28_x86_64"],"elf":{"x86_64/64":{"count":3,"first":"torch/lib/libc10.so"}},
          "texts":{"torch/version.py":"__version__ = '2.4.1+cu124'\ncuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n"}}],
         "files":10,"hashed_bytes":1048576,
         "inspected":[{"path":"/opt/venv/bin/python","exists":true,"type":"regular","elf":"x86_64/64","cpython":true},
                      {"path":"/opt/venv/lib/python3.11/site-packages/torch/__init__.py","exists":true,"type":"regular",
                       "record":{"dist":"torch 2.4.1+cu124","dist_info":"/opt/venv/lib/python3.11/site-packages/torch-2.4.1+cu124.dist-info","verified":true}}]}})",
              0);
    in.platform = "linux/amd64";
    in.probes["env"] = probe("env", R"({"probe":"env","schema":1,"status":"pass","reason":"","data":
        {"nonce":"n","env":{"PATH":"/opt/venv/bin:/usr/bin"},"python":{"python":{"path":"/opt/venv/bin/python","realpath":"/usr/bin/python3.11"},"python3":null},"interpreters":[]}})",
                             0);
    in.runtime = plan_runtime({"PATH=/opt/venv/bin:/usr/bin"}, {}, &in.probes["env"], nullptr, "n",
                              std::nullopt);
    in.shm_bytes = 16LL << 30;
    return in;
}

// The ways a probe run gives no evidence.
std::vector<std::pair<std::string, ProbeRun>> broken_runs(const std::string& name) {
    std::vector<std::pair<std::string, ProbeRun>> out;
    ProbeRun hung;
    hung.program = probe_program(name);
    hung.state = ProbeRun::State::TimedOut;
    hung.reason = "timed out after 5 s";
    out.emplace_back("timed out", hung);
    ProbeRun crashed = hung;
    crashed.state = ProbeRun::State::Crashed;
    crashed.reason = "the Docker engine at /run/docker.sock is not answering";
    out.emplace_back("engine gone", crashed);
    out.emplace_back("garbage", parse_probe_output(name, "Segmentation fault\n", 139));
    out.emplace_back("own error",
                     probe(name,
                           R"({"probe":")" + name +
                               R"(","schema":1,"status":"error","reason":"boom","data":{}})",
                           3));
    return out;
}

}  // namespace

TEST_CASE("TD129: the installed Python set is the lock's, or each difference is named") {
    ValidationInput in = healthy_gpu_image();
    auto record = [&](const std::string& dists) {
        in.probes["record"] =
            probe("record",
                  R"({"probe":"record","schema":1,"status":"pass","reason":"","data":
        {"distributions":[)" +
                      dists + R"(],"files":10,"hashed_bytes":1048576}})",
                  0);
        return test::check_of(evaluate(in, test::real_kb()), "TD129");
    };
    in.expect["python-set"] = "jinja2==3.1.6,torch==2.4.1+cu124,typing-extensions==4.15.0";
    auto ok = record(R"({"name":"torch","version":"2.4.1+cu124","files":1,"problems":[]},
        {"name":"Jinja2","version":"3.1.6","files":1,"problems":[]},
        {"name":"typing_extensions","version":"4.15.0","files":1,"problems":[]},
        {"name":"pip","version":"25.3","files":1,"problems":[]})");
    CHECK(ok.status == "pass");
    CHECK_THAT(ok.message, ContainsSubstring("the environment's own: pip 25.3"));
    auto bad = record(R"({"name":"torch","version":"2.4.1+cu124","files":1,"problems":[]},
        {"name":"Jinja2","version":"3.1.5","files":1,"problems":[]},
        {"name":"requests","version":"2.32.3","files":1,"problems":[]})");
    CHECK(bad.status == "fail");
    CHECK_THAT(bad.message, ContainsSubstring("at another version: jinja2 3.1.6 -> 3.1.5"));
    CHECK_THAT(bad.message, ContainsSubstring("not locked: requests 2.32.3"));
    CHECK_THAT(bad.message,
               ContainsSubstring("locked but not installed: typing-extensions 4.15.0"));
    in.expect.erase("python-set");
    CHECK(record(R"({"name":"torch","version":"2.4.1+cu124","files":1,"problems":[]})").status ==
          "skip");
}

TEST_CASE("evidence rule: the healthy image passes every check of both tiers") {
    auto r = evaluate(healthy_gpu_image(), test::real_kb());
    CHECK(r.size() == check_catalog().size());
    for (const auto& c : r) {
        INFO(c.id << " " << c.status << ": " << c.message);
        CHECK(c.status == "pass");
    }
}

TEST_CASE(
    "evidence rule: for every check ID, a probe it rests on that gives no evidence is "
    "never a pass, warn or quiet skip") {
    for (const auto& info : check_catalog()) {
        for (const auto& name : info.evidence) {
            for (const auto& [how, run] : broken_runs(name)) {
                ValidationInput in = healthy_gpu_image();
                in.probes[name] = run;
                auto r = evaluate(in, test::real_kb());
                const CheckResult& c = test::check_of(r, info.id);
                INFO(info.id << " with " << name << " " << how << ": " << c.status << ": "
                             << c.message);
                CHECK((c.status == "error" || c.status == "fail"));
                if (c.status == "error") CHECK_THAT(c.message, ContainsSubstring(run.program));
            }
        }
    }
}

TEST_CASE(
    "evidence rule: a check without a probe of its own (TD130) is an error when /dev/shm "
    "cannot be read") {
    ValidationInput in = healthy_gpu_image();
    in.shm_bytes.reset();
    in.shm_error = "the engine went away";
    auto c = test::check_of(evaluate(in, test::real_kb()), "TD130");
    CHECK(c.status == "error");
    CHECK_THAT(c.message, ContainsSubstring("the engine went away"));
}

TEST_CASE(
    "evidence rule: a pass whose probe was never attempted is an error; a GPU tier that "
    "did not run stays skipped") {
    ValidationInput in = healthy_gpu_image();
    in.probes.erase("libs");
    CHECK(test::check_of(evaluate(in, test::real_kb()), "TD110").status == "skip");
    in = healthy_gpu_image();
    in.probes.erase("cudnn");
    auto c = test::check_of(evaluate(in, test::real_kb()), "TD102");
    CHECK(c.status == "error");
    CHECK_THAT(c.message, ContainsSubstring("probe-cudnn was not run"));
    in = healthy_gpu_image();
    in.gpu_tier = false;
    in.gpu_skip_reason = "no NVIDIA runtime";
    in.probes.erase("gemm");
    in.probes["cuda"] = broken_runs("cuda").front().second;
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD140").status == "skip");
    CHECK(test::check_of(r, "TD101").status == "error");
    CHECK_THAT(test::check_of(r, "TD101").message,
               ContainsSubstring("probe-cuda timed out after 5 s"));
}

TEST_CASE(
    "TD119: an image with no PyTorch fails, with or without labels or environment "
    "expectations (any promise is unmet without torch)") {
    ValidationInput in;
    in.probes["torch"] =
        probe("torch",
              R"({"probe":"torch","schema":1,"status":"waived","reason":"no torch module","data":
        {"torch":null,"python":"3.11.2","python_executable":"/usr/bin/python3"}})",
              2);
    in.shm_bytes = 64LL << 20;
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD119").status == "fail");
    CHECK_THAT(
        test::check_of(r, "TD119").message,
        ContainsSubstring("no PyTorch found; interpreters tried: /usr/bin/python3 (3.11.2)"));
    CHECK(test::check_of(r, "TD120").status == "skip");
    in.expect = {{"cuda", "12.4"},
                 {"source", "image environment (CUDA_VERSION, NV_CUDNN_VERSION)"}};
    CHECK(test::check_of(evaluate(in, test::real_kb()), "TD119").status == "fail");
    CHECK_THAT(test::check_of(evaluate(in, test::real_kb()), "TD119").message,
               ContainsSubstring("cuda=12.4"));
    in.expect = {{"torch", "2.4.1"}, {"source", "image labels"}};
    CHECK(test::check_of(evaluate(in, test::real_kb()), "TD119").status == "fail");
}

TEST_CASE(
    "TD119: a torch that does not import fails with the import error; the checks that "
    "need torch say so instead of calling it a CPU build") {
    ValidationInput in = healthy_gpu_image();
    in.probes["torch"] =
        probe("torch",
              R"({"probe":"torch","schema":1,"status":"fail","reason":"import torch failed","data":
        {"torch":null,"python":"3.11.2","python_executable":"/app/.venv/bin/python",
         "import_error":"ImportError: libnccl.so.2: cannot open shared object file: No such file or directory"}})",
              1);
    in.probes["cuda"] = probe(
        "cuda",
        R"({"probe":"cuda","schema":1,"status":"waived","reason":"no libcudart","data":{}})", 2);
    in.probes["cudnn"] = probe(
        "cudnn",
        R"({"probe":"cudnn","schema":1,"status":"waived","reason":"no libcudnn","data":{}})", 2);
    in.probes["nccl"] = probe(
        "nccl", R"({"probe":"nccl","schema":1,"status":"waived","reason":"no libnccl","data":{}})",
        2);
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD119").status == "fail");
    CHECK_THAT(test::check_of(r, "TD119").message, ContainsSubstring("libnccl.so.2: cannot open"));
    for (const char* id : {"TD120", "TD121", "TD122", "TD123"}) {
        INFO(id);
        CHECK(test::check_of(r, id).status == "skip");
        CHECK_THAT(test::check_of(r, id).message, ContainsSubstring("torch does not import"));
    }
    // What the labels promise and nothing in the image provides is unmet, not unknown
    // (real-image report, case 7).
    for (const char* id : {"TD101", "TD102", "TD104"}) {
        INFO(id);
        CHECK(test::check_of(r, id).status == "fail");
        CHECK_THAT(test::check_of(r, id).message, ContainsSubstring("promise"));
    }
}

TEST_CASE("TD110/TD111: probe-libs finding nothing to resolve is a skip, not a pass") {
    ValidationInput in = healthy_gpu_image();
    in.probes["libs"] = probe(
        "libs",
        R"({"probe":"libs","schema":1,"status":"waived","reason":"no CUDA libraries and no torch found","data":{}})",
        2);
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD110").status == "skip");
    CHECK_THAT(test::check_of(r, "TD110").message,
               ContainsSubstring("no CUDA libraries and no torch"));
    CHECK(test::check_of(r, "TD111").status == "skip");
}

TEST_CASE("TD111: an nvJitLink known only by its name beside one that reports 12.8") {
    ValidationInput in = healthy_gpu_image();
    const std::string libs = R"j({"probe":"libs","schema":1,"status":"pass","reason":"","data":
        {"libraries":[],"unresolved":[],"duplicates":[{"name":"nvJitLink","copies":[
          {"path":"/usr/local/cuda-12.1/lib64/libnvJitLink.so.12","version":"12",
           "content_version":null,
           "content_error":"the library reports no version (no nvJitLinkVersion)"},
          {"path":"/w/nvidia/nvjitlink/lib/libnvJitLink.so.12","version":"12",
           "content_version":"12.8"}]}]}})j";
    in.probes["libs"] = probe("libs", libs, 0);
    SECTION("torch maps the wheel's copy: the other is a copy beside it (warn)") {
        in.probes["torch"].data["loaded_libraries"] =
            nlohmann::json::array({"/w/nvidia/nvjitlink/lib/libnvJitLink.so.12"});
        auto td111 = test::check_of(evaluate(in, test::real_kb()), "TD111");
        CHECK(td111.status == "warn");
        CHECK_THAT(td111.message,
                   ContainsSubstring("torch loads only 12.8 from /w/nvidia/nvjitlink/lib"));
        CHECK_THAT(td111.message, ContainsSubstring("libnvJitLink.so.12 (12 by its file name: the "
                                                    "library reports no version"));
    }
    SECTION("nothing says which torch loads: not a conflict, but said") {
        in.probes["torch"].data.erase("loaded_libraries");
        auto td111 = test::check_of(evaluate(in, test::real_kb()), "TD111");
        CHECK(td111.status == "warn");
        CHECK_THAT(td111.message, ContainsSubstring("versions cannot all be read"));
    }
}

TEST_CASE("expect flags: values are checked: versions, thresholds, one line", "[regression]") {
    CHECK(parse_expect_overrides({"cuda=12.4", "torch=2.4.1+cu124", "validate.shm-min-mb=1024"},
                                 validate_expect_keys()));
    // A key validate does not check is refused, not ignored.
    auto compat = parse_expect_overrides({"min-driver-compat=535"}, validate_expect_keys());
    REQUIRE_FALSE(compat);
    CHECK_THAT(compat.error().message, ContainsSubstring("keys this command checks"));
    CHECK(parse_expect_overrides({"min-driver-compat=535.54"}, preflight_expect_keys()));
    for (const char* bad : {"cuda=99999999999999999999.1", "cudnn=abc", "torch=2.4; rm -rf /",
                            "validate.shm-min-mb=-1", "nccl=", "python=3.11\n"}) {
        INFO(bad);
        auto r = parse_expect_overrides({bad}, validate_expect_keys());
        REQUIRE_FALSE(r);
        CHECK(r.error().kind == ErrorKind::Usage);
    }
}

TEST_CASE(
    "expectations are prefixes: cudnn=9 matches 9.10.2.21, 9.10.2.99 does not; what the "
    "library cannot tell is a warning",
    "[regression]") {
    using validate_detail::match_version;
    using validate_detail::VersionMatch;
    CHECK(match_version("9.10.2.21", "9") == VersionMatch::Equal);
    CHECK(match_version("9.10.2.21", "9.10") == VersionMatch::Equal);
    CHECK(match_version("9.10.2.21", "9.10.2.21") == VersionMatch::Equal);
    CHECK(match_version("9.10.2.21", "9.10.2.99") == VersionMatch::Differs);
    CHECK(match_version("12.8", "12") == VersionMatch::Equal);
    CHECK(match_version("2.27.5", "2.27") == VersionMatch::Equal);
    CHECK(match_version("9.10.2", "9.10.2.21") == VersionMatch::Unverifiable);
    CHECK(match_version("9.1.0", "9.10") == VersionMatch::Differs);
    ValidationInput in = healthy_gpu_image();
    in.expect["cudnn"] = "9.1.0.70";
    auto c = test::check_of(evaluate(in, test::real_kb()), "TD102");
    CHECK(c.status == "warn");
    CHECK_THAT(c.message, ContainsSubstring("as far as the library reports"));
}

TEST_CASE("every labelled key is checked: python, torchvision, torchaudio, arch-list",
          "[regression]") {
    ValidationInput in = healthy_gpu_image();
    in.expect["python"] = "3.12";
    in.expect["torchaudio"] = "2.4.1";
    in.expect["arch-list"] = "6.0;8.0";
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD118").status == "fail");
    CHECK_THAT(test::check_of(r, "TD118").message, ContainsSubstring("Python 3.11.2"));
    CHECK(test::check_of(r, "TD124").status == "fail");
    CHECK_THAT(test::check_of(r, "TD124").message,
               ContainsSubstring("torchaudio 2.4.1 is labelled but not installed"));
    CHECK(test::check_of(r, "TD122").status == "fail");
    CHECK_THAT(test::check_of(r, "TD122").message,
               ContainsSubstring("6.0 is labelled but not compiled in"));
}

TEST_CASE("without expectations the observed versions are still shown") {
    ValidationInput in = healthy_gpu_image();
    in.expect = {{"source", "image labels"}};
    auto r = evaluate(in, test::real_kb());
    CHECK(test::check_of(r, "TD102").observed == "9.1.0");
    CHECK(test::check_of(r, "TD104").observed == "2.21.5");
    CHECK(test::check_of(r, "TD118").observed == "3.11.2");
    CHECK_THAT(test::check_of(r, "TD124").observed, ContainsSubstring("torchvision 0.19.1+cu124"));
}

TEST_CASE(
    "TD125: an extension without the target GPU's architecture fails, naming what it has "
    "and what the GPU needs") {
    ValidationInput in = healthy_gpu_image();
    in.expect["target-gpus"] = "H100,RTX 5090";
    in.expect["arch-list"] = "";
    in.probes["kernels"] =
        probe("kernels", R"({"probe":"kernels","schema":1,"status":"pass","reason":"","data":
        {"objects":[{"path":"/x/torch/lib/libtorch_cuda.so","has_fatbin":true,"sass":["sm_80","sm_90","sm_120"],"ptx":[]},
                    {"path":"/x/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so","has_fatbin":true,"sass":["sm_80","sm_90"],"ptx":[]}]}})",
              0);
    auto c = test::check_of(evaluate(in, test::real_kb()), "TD125");
    CHECK(c.status == "fail");
    CHECK_THAT(c.message, ContainsSubstring("flash_attn_2_cuda"));
    CHECK_THAT(c.message, ContainsSubstring("has sm_80, sm_90"));
    CHECK_THAT(c.message, ContainsSubstring("needs sm_120 or PTX <= compute_120"));
}

TEST_CASE("TD126: torch claiming an arch its binary lacks fails") {
    ValidationInput in = healthy_gpu_image();
    in.probes["kernels"] =
        probe("kernels", R"({"probe":"kernels","schema":1,"status":"pass","reason":"","data":
        {"objects":[{"path":"/x/torch/lib/libtorch_cuda.so","has_fatbin":true,"sass":["sm_80"],"ptx":[]}]}})",
              0);
    auto c = test::check_of(evaluate(in, test::real_kb()), "TD126");
    CHECK(c.status == "fail");
    CHECK_THAT(c.message, ContainsSubstring("torch reports sm_90"));
}

TEST_CASE("a probe answer of the wrong shape is that check's error, never a crash",
          "[regression]") {
    // Adversarial report N12: "distributed": {"exact": "yes"} aborted validate.
    ValidationInput in = healthy_gpu_image();
    in.probes["torch"] =
        probe("torch", R"({"probe":"torch","schema":1,"status":"pass","reason":"","data":
        {"torch":"2.4.1+cu124","cuda":"12.4","arch_list":"sm_80","distributions":[],
         "python_executable":"/opt/venv/bin/python",
         "torch_file":"/opt/venv/lib/python3.11/site-packages/torch/__init__.py",
         "distributed":{"backend":"gloo","exact":"yes","world_size":2}}})",
              0);
    std::vector<CheckResult> r;
    REQUIRE_NOTHROW(r = evaluate(in, test::real_kb()));
    CHECK(r.size() == check_catalog().size());
    const auto& td123 = test::check_of(r, "TD123");
    CHECK(td123.status == "error");
    CHECK_THAT(td123.message, ContainsSubstring("unexpected shape"));
    CHECK(test::check_of(r, "TD110").status == "pass");  // the other checks keep their verdicts
}

TEST_CASE("without an importable torch every promise fails TD119; empty values are no promise",
          "[regression]") {
    // Adversarial report N13: empty NV_CUDNN_VERSION, any io.torchdock label, or the user's
    // own --expect made an image without PyTorch pass.
    auto no_torch = [](Expectations e) {
        ValidationInput in;
        in.expect = std::move(e);
        in.probes["torch"] = probe("torch", R"J({"probe":"torch","schema":1,"status":"waived",
            "reason":"no torch","data":{"torch":null,"interpreters_tried":["/usr/bin/python3 (3.11.2, no torch)"]}})J",
                                   2);
        in.shm_bytes = 16LL << 30;
        return test::check_of(evaluate(in, test::real_kb()), "TD119");
    };
    auto env_only =
        gather_expectations("x", {}, {"NV_CUDNN_VERSION=", "NCCL_VERSION="}, test::real_kb(), {});
    CHECK(promises(env_only).empty());
    CHECK(env_only[k_empty_promises] == "NV_CUDNN_VERSION, NCCL_VERSION");
    auto r = no_torch(env_only);
    CHECK(r.status == "fail");
    CHECK_THAT(r.message, ContainsSubstring("set but empty"));
    for (const auto& labels :
         std::vector<std::map<std::string, std::string>>{{{"io.torchdock.foo", "bar"}},
                                                         {{"io.torchdock.torch", ""}},
                                                         {{"io.torchdock.python", "3.11"}}})
        CHECK(no_torch(gather_expectations("x", labels, {}, test::real_kb(), {})).status == "fail");
    CHECK(
        no_torch(gather_expectations("x", {}, {}, test::real_kb(), {{"python", "3.11"}})).status ==
        "fail");
}
