#include "core/validate/probe_plan.hpp"

#include <catch2/catch_test_macros.hpp>

#include "test_support.hpp"

using namespace td;

TEST_CASE(
    "CUDA library families are told by file name, sub-libraries and auditwheel names "
    "included") {
    CHECK(cuda_library_family("libcudnn.so.9") == "cudnn");
    CHECK(cuda_library_family("libcudnn_ops.so.9") == "cudnn");
    CHECK(cuda_library_family("libcublasLt.so.12") == "cublasLt");
    CHECK(cuda_library_family("libcublas.so.12") == "cublas");
    CHECK(cuda_library_family("libcudart.so.12") == "cudart");
    CHECK(cuda_library_family("libcuda.so.1") == "cuda");
    CHECK(cuda_library_family("libnvrtc-builtins.so.12.8") == "nvrtc");
    CHECK(cuda_library_family("libtorch_cuda.so").empty());
    CHECK(cuda_library_family("libc.so.6").empty());
}

TEST_CASE(
    "library probes ask the files torch loaded; the library probe looks where torch's "
    "interpreter imports from") {
    ProbeRun torch = parse_probe_output(
        "torch",
        R"({"probe":"torch","schema":1,"status":"pass","reason":"","data":{"site_dirs":["/app/.venv/lib/python3.11/site-packages","/usr/lib/python3.11"],"loaded_libraries":["/w/nvidia/cudnn/lib/libcudnn_graph.so.9","/w/nvidia/cudnn/lib/libcudnn.so.9","/w/nvidia/cuda_runtime/lib/libcudart.so.12"]}})"
        "\n",
        0);
    const auto& kb = test::real_kb();
    CHECK(dynamic_probe_flags("libs", &torch, nullptr, kb) ==
          std::vector<std::string>{
              "--site-dirs=/app/.venv/lib/python3.11/site-packages,/usr/lib/python3.11"});
    CHECK(dynamic_probe_flags("cudnn", &torch, nullptr, kb) ==
          std::vector<std::string>{"--library=/w/nvidia/cudnn/lib/libcudnn.so.9",
                                   "--cudart=/w/nvidia/cuda_runtime/lib/libcudart.so.12"});
    CHECK(dynamic_probe_flags("cuda", &torch, nullptr, kb) ==
          std::vector<std::string>{"--library=/w/nvidia/cuda_runtime/lib/libcudart.so.12"});
    CHECK(dynamic_probe_flags("nccl", &torch, nullptr, kb) ==
          std::vector<std::string>{"--cudart=/w/nvidia/cuda_runtime/lib/libcudart.so.12"});
    CHECK(dynamic_probe_flags("cuda", nullptr, nullptr, kb).empty());
}

TEST_CASE("probe-record checks every distribution of an image that carries a locked set") {
    std::map<std::string, std::string> labels = {{"io.torchdock.python-set", "torch==2.9.1"}};
    CHECK(label_probe_flags("record", labels) == std::vector<std::string>{"--dists=*"});
    CHECK(label_probe_flags("libs", labels).empty());
    CHECK(label_probe_flags("record", {{"io.torchdock.python-set", ""}}).empty());
    CHECK(label_probe_flags("record", {}).empty());
}
