// libFuzzer target: any bytes as a doctor fingerprint (what `diff` and `explain
// --fingerprint` read, and what doctor judges) must be ranked, judged and used to confirm
// explanations without a crash or an escaping exception, also when each field has another
// type than doctor writes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/diagnose/doctor.hpp"
#include "core/diagnose/fingerprint_diff.hpp"
#include "core/json/json_text.hpp"
#include "fuzz_support.hpp"

namespace {

const nlohmann::json& reference() {
    static const nlohmann::json fp = nlohmann::json::parse(R"({
      "schema": 1, "kind": "host", "subject": "node-a",
      "os": {"id": "ubuntu", "version": "22.04", "glibc": "2.35"},
      "python": {"version": "3.10.12"},
      "torch": {"version": "2.4.1+cu121", "cuda": "12.1", "cudnn": 90100, "nccl": "2.20.5",
                "arch_list": ["sm_80","sm_90"], "cuda_available": true},
      "driver": {"version": "535.104.05", "cuda": "12.2"},
      "gpus": [{"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "memory_bytes": 85899345920}],
      "libraries": [{"name": "cudnn", "soname": "libcudnn.so.9", "path": "/usr/lib/libcudnn.so.9",
                     "version": "9.1.0"}],
      "duplicates": [], "unresolved": [], "env": {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"},
      "shm_bytes": 67108864, "container_runtime": "docker"})");
    return fp;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    std::string why;
    auto parsed = td::parse_json_bounded(text, why);
    if (!parsed) {
        if (why.empty()) std::abort();
        return 0;
    }
    const nlohmann::json& fp = *parsed;
    // diff reads any JSON `diff` was given after its schema check; rank both ways.
    for (const auto& d : td::diff_fingerprints(fp, reference()))
        if (d.category.empty()) std::abort();
    (void)td::diff_fingerprints(reference(), fp);
    (void)td::diff_fingerprints(fp, fp);
    (void)td::doctor_findings(fp, td::fuzz::kb(), &td::fuzz::signatures());
    td::LogScanner scanner(td::fuzz::signatures());
    scanner.feed(
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n");
    scanner.finish();
    (void)scanner.explanations(&fp, td::fuzz::kb());
    return 0;
}
