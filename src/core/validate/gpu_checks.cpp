// The GPU tier: GPUs visible, driver floor, arch coverage of the GPUs present, GEMM
// correctness and throughput, NCCL all-reduce correctness and bandwidth, torch.matmul.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/validate/check_context.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::validate_detail {
namespace {

using json = nlohmann::json;

void gemm_checks(CheckContext& ctx) {
    const ProbeRun* p = ctx.probe("gemm");
    const json& g = ctx.data("gemm");
    if (!g.contains("results")) {
        ctx.skip("TD143", ctx.why_missing("gemm"));
        ctx.skip("TD144", ctx.why_missing("gemm"));
        return;
    }
    std::vector<std::string> wrong, slow, figures;
    for (const auto& r : g["results"]) {
        std::string dtype = str(r, "dtype");
        if (!r.value("correct", false)) wrong.push_back(dtype);
        double tflops = r.value("tflops_median", 0.0);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s %.1f", dtype.c_str(), tflops);
        figures.push_back(buf);
        std::string min = ctx.expected("validate.gemm-tflops-min." + dtype);
        if (!min.empty() && tflops < std::atof(min.c_str()))
            slow.push_back(std::string(buf) + " < " + min);
    }
    if (wrong.empty() && p && p->status != "fail")
        ctx.add("TD143", "pass", "correct", "correct", "GEMM results match the FP64 reference");
    else
        ctx.add("TD143", "fail", "wrong: " + join(wrong, ","), "correct",
                "GEMM results outside tolerance for " + join(wrong, ", "),
                "check the GPU (ECC errors, clocks) and the cuBLAS installation");
    bool any_threshold = false;
    for (const auto& [k, v] : ctx.input().expect)
        any_threshold = any_threshold || starts_with(k, "validate.gemm-tflops-min.");
    if (!any_threshold)
        ctx.skip("TD144",
                 "no GEMM threshold is labelled (measured: " + join(figures, ", ") + " TFLOP/s)");
    else if (slow.empty())
        ctx.add("TD144", "pass", join(figures, ", ") + " TFLOP/s", "thresholds met",
                "GEMM throughput meets the thresholds");
    else
        ctx.add("TD144", "fail", join(slow, ", "), "thresholds",
                "GEMM below threshold: " + join(slow, ", "),
                "check clocks, power limits and that the right GPU was used");
}

void nccl_checks(CheckContext& ctx) {
    const json& n = ctx.data("nccl");
    std::vector<std::string> wrong;
    double best = 0;
    bool any = false;
    for (const char* mode : {"single_process", "multi_process"}) {
        if (!n.contains(mode) || !n[mode].is_array()) continue;
        for (const auto& r : n[mode]) {
            any = true;
            if (!r.value("correct", false))
                wrong.push_back(std::string(mode) + " " + str(r, "dtype") + " " + str(r, "bytes") +
                                " B");
            best = std::max(best, r.value("busbw_gbps", 0.0));
        }
    }
    if (!any) {
        ctx.skip("TD145", ctx.why_missing("nccl"));
        ctx.skip("TD146", ctx.why_missing("nccl"));
        return;
    }
    if (wrong.empty())
        ctx.add("TD145", "pass", "exact", "exact", "NCCL all-reduce sums are exact");
    else
        ctx.add("TD145", "fail", join(wrong, "; "), "exact",
                "NCCL all-reduce gave wrong sums: " + wrong.front(),
                "check NCCL_* variables, the interconnect and /dev/shm (TD130)");
    std::string min = ctx.expected("validate.allreduce-busbw-min-gbps");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB/s", best);
    if (min.empty())
        ctx.skip("TD146", std::string("no bus bandwidth threshold is labelled (best measured: ") +
                              buf + ")");
    else if (best >= std::atof(min.c_str()))
        ctx.add("TD146", "pass", buf, ">= " + min + " GB/s", "bus bandwidth meets the threshold");
    else
        ctx.add("TD146", "fail", buf, ">= " + min + " GB/s",
                std::string("best bus bandwidth ") + buf + " is below " + min + " GB/s",
                "check NVLink/PCIe topology (nvidia-smi topo -m) and NCCL_P2P/NCCL_IB settings");
}

}  // namespace

void judge_gpu_tier(CheckContext& ctx) {
    std::vector<const char*> ids = {"TD140", "TD141", "TD142", "TD143",
                                    "TD144", "TD145", "TD146", "TD147"};
    if (!ctx.input().gpu_tier) {
        for (auto id : ids) ctx.skip(id, "GPU tier skipped: " + ctx.input().gpu_skip_reason);
        return;
    }
    const json& c = ctx.data("cuda");
    long long count = c.contains("device_count") && c["device_count"].is_number_integer()
                          ? c["device_count"].get<long long>()
                          : 0;
    if (count < 1) {
        std::string reason = c.contains("error") && c["error"].is_object()
                                 ? str(c["error"], "name") + " (" + str(c["error"], "class") + ")"
                                 : ctx.why_missing("cuda");
        ctx.add("TD140", "fail", "0 GPUs", ">= 1 GPU",
                "GPUs were requested but the probes see none: " + reason,
                "check the NVIDIA driver and nvidia-container-toolkit on the host");
        for (std::size_t i = 1; i < ids.size(); ++i)
            ctx.skip(ids[i], "no GPU visible to the probes");
        return;
    }
    std::vector<std::string> names;
    for (const auto& d : c["devices"]) names.push_back(str(d, "name") + " (" + str(d, "cc") + ")");
    ctx.add("TD140", "pass", std::to_string(count) + " GPU(s): " + join(names, ", "), ">= 1 GPU",
            "GPUs visible");

    std::string driver = str(c, "nvidia_driver"), floor = ctx.expected("min-driver");
    // A floor the knowledge base could not confirm is labelled so, and printed so.
    std::string floor_note = ctx.expected("min-driver-unconfirmed") == "true"
                                 ? " (unconfirmed in the knowledge base)"
                                 : "";
    if (floor.empty())
        ctx.skip("TD141", "no minimum driver is labelled");
    else if (driver.empty())
        ctx.skip("TD141", "the host driver version could not be read");
    else {
        auto have = Version::parse(driver), want = Version::parse(floor);
        if (have && want && !(*have < *want))
            ctx.add("TD141", "pass", driver, ">= " + floor + floor_note, "driver " + driver);
        else
            ctx.add("TD141", "fail", driver, ">= " + floor + floor_note,
                    "the host driver " + driver + " is older than the image needs (" + floor +
                        floor_note + ")",
                    "upgrade the driver to " + floor +
                        " or newer (or use the cuda-compat package on data-center GPUs)");
    }

    const json& t = ctx.data("torch");
    if (!t.contains("arch_list"))
        ctx.skip("TD142", ctx.why_missing("torch"));
    else {
        std::vector<std::string> arch, uncovered;
        for (const auto& a : t["arch_list"]) arch.push_back(normalize_arch(a.get<std::string>()));
        for (const auto& d : c["devices"])
            if (!arch_list_covers(arch, str(d, "cc")))
                uncovered.push_back(str(d, "name") + " (" + str(d, "cc") + ")");
        if (uncovered.empty())
            ctx.add("TD142", "pass", join(arch, ";"), "present GPUs",
                    "the arch list covers the GPUs present");
        else
            ctx.add("TD142", "fail", join(arch, ";"), "present GPUs",
                    "no kernel image for: " + join(uncovered, ", "),
                    "use a torch build compiled for these GPUs");
    }

    gemm_checks(ctx);
    nccl_checks(ctx);
    const json& mm = t.contains("matmul") ? t["matmul"] : json();
    if (!mm.is_object())
        ctx.skip("TD147", "the torch probe ran no GPU matmul (" + ctx.why_missing("torch") + ")");
    else if (mm.value("correct", false))
        ctx.add("TD147", "pass", "correct", "correct", "torch.matmul matches its reference");
    else
        ctx.add("TD147", "fail", "wrong", "correct", "torch.matmul does not match its reference",
                "check the GPU and the torch/cuBLAS build");
}

}  // namespace td::validate_detail
