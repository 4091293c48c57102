#include "core/diagnose/fingerprint_diff.hpp"

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;
using json = nlohmann::json;

namespace {

json base_fingerprint() {
    return json::parse(R"({
      "schema": 1, "kind": "host", "subject": "node-a",
      "os": {"id": "ubuntu", "version": "22.04", "glibc": "2.35"},
      "python": {"version": "3.10.12"},
      "torch": {"version": "2.4.1+cu121", "cuda": "12.1", "cudnn": 90100, "nccl": "2.20.5",
                "arch_list": ["sm_50","sm_60","sm_70","sm_75","sm_80","sm_86","sm_90"], "cuda_available": true},
      "driver": {"version": "535.104.05", "cuda": "12.2"},
      "gpus": [{"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "memory_bytes": 85899345920}],
      "cuda_runtime": {"version": "12.1", "library": "/usr/local/cuda/lib64/libcudart.so.12"},
      "libraries": [{"name": "cudnn", "soname": "libcudnn.so.9", "path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "version": "9.1.0"}],
      "duplicates": [],
      "unresolved": [],
      "env": {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "NVIDIA_VISIBLE_DEVICES": "all", "NCCL_P2P_DISABLE": "1"},
      "shm_bytes": 67108864, "container_runtime": "docker"
    })");
}

std::size_t index_of(const std::vector<FingerprintDifference>& d, const std::string& path) {
    for (std::size_t i = 0; i < d.size(); ++i)
        if (d[i].path == path) return i;
    FAIL("no difference at " << path);
    return d.size();
}

}  // namespace

TEST_CASE("identical fingerprints have no differences") {
    CHECK(diff_fingerprints(base_fingerprint(), base_fingerprint()).empty());
    CHECK(diff_fingerprints(json::object(), json::object()).empty());
}

TEST_CASE("null and missing fields are the same") {
    json a = base_fingerprint(), b = base_fingerprint();
    a["cuda_error"] = nullptr;
    b["torch"]["nccl"] = nullptr;
    a["torch"].erase("nccl");
    CHECK(diff_fingerprints(a, b).empty());
}

TEST_CASE("a driver change ranks above a cuDNN change above a python change above cosmetic") {
    json a = base_fingerprint(), b = base_fingerprint();
    b["driver"]["version"] = "550.54.15";
    b["torch"]["cudnn"] = 90101;
    b["python"]["version"] = "3.11.9";
    b["subject"] = "node-b";
    auto d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 4);
    CHECK(d[0].path == "driver.version");
    CHECK(d[0].category == "driver");
    CHECK(d[0].a == "535.104.05");
    CHECK(d[0].b == "550.54.15");
    CHECK(d[1].path == "torch.cudnn");
    CHECK(d[1].category == "cudnn");
    CHECK(d[1].a == "90100 (9.1.0)");
    CHECK(d[1].b == "90101 (9.1.1)");
    CHECK(d[2].path == "python.version");
    CHECK(d[2].category == "python");
    CHECK(d[3].path == "subject");
    CHECK(d[3].category == "cosmetic");
    CHECK(d[0].weight > d[1].weight);
    CHECK(d[1].weight > d[2].weight);
    CHECK(d[2].weight > d[3].weight);
    for (const auto& x : d) CHECK_FALSE(x.why.empty());
}

TEST_CASE("minor-only version changes weigh less than major ones") {
    json a = base_fingerprint();
    json patch = a, major = a, minor_driver = a, major_driver = a, minor_cuda = a, major_cuda = a;
    patch["torch"]["cudnn"] = 90101;  // 9.1.0 -> 9.1.1
    major["torch"]["cudnn"] = 8902;   // 9.1.0 -> 8.9.2
    minor_driver["driver"]["version"] = "535.183.01";
    major_driver["driver"]["version"] = "550.54.15";
    minor_cuda["cuda_runtime"]["version"] = "12.4";
    major_cuda["cuda_runtime"]["version"] = "13.0";
    auto w = [&](const json& b, const std::string& path) {
        auto d = diff_fingerprints(a, b);
        const FingerprintDifference* x = test::difference_at(d, path);
        REQUIRE(x);
        return x->weight;
    };
    CHECK(w(patch, "torch.cudnn") < w(major, "torch.cudnn"));
    CHECK(w(minor_driver, "driver.version") < w(major_driver, "driver.version"));
    CHECK(w(minor_cuda, "cuda_runtime.version") < w(major_cuda, "cuda_runtime.version"));
    // NCCL's minor version is its real version: 2.20 -> 2.21 outranks a patch change.
    json nccl_minor = a, nccl_patch = a;
    nccl_minor["torch"]["nccl"] = "2.21.5";
    nccl_patch["torch"]["nccl"] = "2.20.3";
    CHECK(w(nccl_patch, "torch.nccl") < w(nccl_minor, "torch.nccl"));
}

TEST_CASE("the ranking follows the documented order of categories") {
    json a = base_fingerprint(), b = base_fingerprint();
    b["driver"]["version"] = "550.54.15";                                  // driver
    b["cuda_runtime"]["version"] = "13.0";                                 // cuda runtime major
    b["torch"]["cudnn"] = 8902;                                            // cudnn
    b["torch"]["nccl"] = "2.21.5";                                         // nccl
    b["torch"]["cuda"] = "12.4";                                           // torch CUDA
    b["env"]["LD_LIBRARY_PATH"] = "/opt/other/lib:/usr/local/cuda/lib64";  // search path
    b["gpus"][0]["name"] = "NVIDIA H200";                                  // GPU model (same cc)
    b["torch"]["version"] = "2.5.1+cu124";                                 // torch version
    b["shm_bytes"] = 8589934592LL;                                         // /dev/shm
    b["env"]["NCCL_P2P_DISABLE"] = "0";                                    // NCCL_* env
    b["os"]["glibc"] = "2.39";                                             // OS
    b["python"]["version"] = "3.12.3";                                     // python
    b["gpus"][0]["memory_bytes"] = 150754820096LL;                         // cosmetic
    auto d = diff_fingerprints(a, b);
    std::vector<std::string> order = {
        "driver.version",      "cuda_runtime.version", "torch.cudnn",  "torch.nccl",
        "torch.cuda",          "env.LD_LIBRARY_PATH",  "gpus[0].name", "torch.version",
        "shm_bytes",           "env.NCCL_P2P_DISABLE", "os.glibc",     "python.version",
        "gpus[0].memory_bytes"};
    for (std::size_t i = 1; i < order.size(); ++i) {
        INFO(order[i - 1] << " before " << order[i]);
        CHECK(index_of(d, order[i - 1]) < index_of(d, order[i]));
    }
    CHECK(test::difference_at(d, "gpus[0].memory_bytes")->category == "cosmetic");
    CHECK(test::difference_at(d, "env.NCCL_P2P_DISABLE")->category == "env");
    CHECK(test::difference_at(d, "env.LD_LIBRARY_PATH")->category == "search_path");
    CHECK(test::difference_at(d, "os.glibc")->category == "os");
    CHECK(test::difference_at(d, "gpus[0].name")->category == "gpu");
    CHECK(test::difference_at(d, "torch.version")->category == "torch");
    CHECK(std::is_sorted(
        d.begin(), d.end(), [](const FingerprintDifference& x, const FingerprintDifference& y) {
            return x.weight > y.weight || (x.weight == y.weight && x.path < y.path);
        }));
}

TEST_CASE("B has an sm_90 GPU that A's torch arch list lacks") {
    json a = base_fingerprint(), b = base_fingerprint();
    a["torch"]["arch_list"] = {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"};
    b["torch"]["arch_list"] = a["torch"]["arch_list"];  // the same image on both hosts
    a["gpus"][0] = {
        {"name", "NVIDIA A100-SXM4-80GB"}, {"cc", "8.0"}, {"memory_bytes", 85899345920LL}};
    auto d = diff_fingerprints(a, b);
    const FingerprintDifference* gap = test::difference_at(d, "torch.arch_list[sm_90]");
    REQUIRE(gap);
    CHECK(gap->category == "arch");
    CHECK_THAT(gap->a, ContainsSubstring("no sm_90"));
    CHECK(gap->b == "NVIDIA H100 80GB HBM3 (cc 9.0)");
    CHECK_THAT(gap->why, ContainsSubstring("NVIDIA H100 80GB HBM3"));
    CHECK_THAT(gap->why, ContainsSubstring("sm_90"));
    CHECK_THAT(gap->why, ContainsSubstring("no kernel image"));
    // It outranks the GPU model change that causes it, and everything below torch CUDA.
    CHECK(index_of(d, "torch.arch_list[sm_90]") < index_of(d, "gpus[0].name"));
    CHECK(gap->weight > test::difference_at(d, "gpus[0].cc")->weight);
    // A's A100 (sm_80) is covered by the list: no gap the other way.
    CHECK_FALSE(test::difference_at(d, "torch.arch_list[sm_80]"));
}

TEST_CASE("an arch list that covers the other side's GPU through PTX is no gap") {
    json a = base_fingerprint(), b = base_fingerprint();
    a["torch"]["arch_list"] = {"sm_80", "compute_80"};
    a["gpus"][0] = {{"name", "NVIDIA A100-SXM4-80GB"}, {"cc", "8.0"}};
    auto d = diff_fingerprints(a, b);
    CHECK_FALSE(test::difference_at(d, "torch.arch_list[sm_90]"));
    CHECK(test::difference_at(d, "torch.arch_list"));
}

TEST_CASE("libraries, duplicates and unresolved are keyed by name") {
    json a = base_fingerprint(), b = base_fingerprint();
    b["libraries"] = json::parse(R"([
        {"name": "nccl", "soname": "libnccl.so.2", "path": "/usr/lib/libnccl.so.2", "version": "2.21.5"},
        {"name": "cudnn", "soname": "libcudnn.so.8", "path": "/opt/conda/lib/libcudnn.so.8", "version": "8.9.2"}])");
    b["duplicates"] = json::parse(R"([{"name": "cudnn", "copies": [
        {"path": "/opt/conda/lib/libcudnn.so.8", "version": "8.9.2"}, {"path": "/usr/lib/libcudnn.so.9", "version": "9.1.0"}]}])");
    b["unresolved"] =
        json::parse(R"([{"soname": "libcublasLt.so.12", "needed_by": "/usr/lib/libcudnn.so.9"}])");
    auto d = diff_fingerprints(a, b);
    const FingerprintDifference* cudnn = test::difference_at(d, "libraries[cudnn]");
    REQUIRE(cudnn);
    CHECK(cudnn->category == "libraries");
    CHECK_THAT(cudnn->a, ContainsSubstring("9.1.0"));
    CHECK_THAT(cudnn->b, ContainsSubstring("8.9.2"));
    const FingerprintDifference* nccl = test::difference_at(d, "libraries[nccl]");
    REQUIRE(nccl);
    CHECK(nccl->a == "(absent)");
    const FingerprintDifference* dup = test::difference_at(d, "duplicates[cudnn]");
    REQUIRE(dup);
    CHECK(dup->a == "(absent)");
    CHECK_THAT(dup->b, ContainsSubstring("/opt/conda/lib/libcudnn.so.8 (8.9.2)"));
    const FingerprintDifference* unresolved =
        test::difference_at(d, "unresolved[libcublasLt.so.12]");
    REQUIRE(unresolved);
    CHECK_THAT(unresolved->b, ContainsSubstring("needed by /usr/lib/libcudnn.so.9"));
    // Order of list entries does not matter, only their keys.
    json c = base_fingerprint(), e = base_fingerprint();
    c["libraries"] = b["libraries"];
    e["libraries"] = {b["libraries"][1], b["libraries"][0]};
    CHECK(diff_fingerprints(c, e).empty());
}

TEST_CASE("libraries without a name (the libs probe) are keyed by soname") {
    json a = base_fingerprint(), b = base_fingerprint();
    a["libraries"] = json::parse(
        R"([{"soname": "libcudnn.so.9", "path": "/usr/lib/libcudnn.so.9", "found_via": "ldconfig"}])");
    b["libraries"] = json::parse(
        R"([{"soname": "libcudnn.so.9", "path": "/opt/conda/lib/libcudnn.so.9", "found_via": "LD_LIBRARY_PATH"}])");
    auto d = diff_fingerprints(a, b);
    const FingerprintDifference* lib = test::difference_at(d, "libraries[cudnn]");
    REQUIRE(lib);
    CHECK(lib->category == "libraries");
    CHECK_THAT(lib->why, ContainsSubstring("different place"));
    CHECK(test::difference_at(d, "libraries[1]") == nullptr);
}

TEST_CASE("env differences are per variable") {
    json a = base_fingerprint(), b = base_fingerprint();
    b["env"].erase("NCCL_P2P_DISABLE");
    b["env"]["CUDA_VISIBLE_DEVICES"] = "0,1";
    auto d = diff_fingerprints(a, b);
    REQUIRE(d.size() == 2);
    const FingerprintDifference* p2p = test::difference_at(d, "env.NCCL_P2P_DISABLE");
    REQUIRE(p2p);
    CHECK(p2p->a == "1");
    CHECK(p2p->b == "(absent)");
    const FingerprintDifference* visible = test::difference_at(d, "env.CUDA_VISIBLE_DEVICES");
    REQUIRE(visible);
    CHECK(visible->a == "(absent)");
    CHECK(visible->b == "0,1");
}

TEST_CASE("a different number of GPUs is reported with each GPU's fields") {
    json a = base_fingerprint(), b = base_fingerprint();
    b["gpus"].push_back(b["gpus"][0]);
    auto d = diff_fingerprints(a, b);
    CHECK(test::difference_at(d, "gpus.count"));
    CHECK(test::difference_at(d, "gpus[1].name"));
    CHECK(test::difference_at(d, "gpus[1].cc"));
    CHECK(test::difference_at(d, "gpus[1].memory_bytes")->category == "cosmetic");
}

TEST_CASE("torch failing to import on one side outranks everything it hides") {
    json a = base_fingerprint(), b = base_fingerprint();
    b["torch"] = nullptr;
    b["torch_import_error"] = "ImportError: libnccl.so.2: cannot open shared object file";
    b["driver"]["version"] = "550.54.15";
    auto d = diff_fingerprints(a, b);
    REQUIRE_FALSE(d.empty());
    CHECK(d[0].path == "torch_import_error");
    CHECK(d[0].category == "torch");
    CHECK(d[0].weight > test::difference_at(d, "driver.version")->weight);
    CHECK(d[0].weight > test::difference_at(d, "torch.cudnn")->weight);
}
