// The inputs of `validate`: probe results parsed from their output, the expectations an
// image carries (labels, environment, knowledge base, --expect), and probe flags derived
// from the knowledge base. Judging them is validation.cpp.
#include <algorithm>
#include <cstdio>

#include "core/validate/checks.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {

using nlohmann::json;

ProbeRun parse_probe_output(const std::string& probe, const std::string& stdout_text,
                            int exit_code) {
    ProbeRun run;
    run.state = ProbeRun::State::Ran;
    run.exit_code = exit_code;
    auto lines = split(stdout_text, '\n');
    while (!lines.empty() && lines.back().find_first_not_of(" \r\t") == std::string::npos)
        lines.pop_back();
    if (lines.empty()) {
        run.status = "error";
        run.reason = "no output (exit code " + std::to_string(exit_code) + ")";
        return run;
    }
    try {
        json j = json::parse(lines.back());
        if (!j.is_object() || j.value("schema", 0) != 1 || j.value("probe", "") != probe)
            throw std::invalid_argument("not a schema-1 result of probe " + probe);
        run.status = j.value("status", "error");
        run.reason = j.value("reason", "");
        run.data = j.contains("data") ? j["data"] : json::object();
        static const std::map<std::string, int> codes = {
            {"pass", 0}, {"fail", 1}, {"waived", 2}, {"error", 3}};
        auto it = codes.find(run.status);
        if (it == codes.end() || it->second != exit_code) {
            run.reason = "status \"" + run.status + "\" disagrees with exit code " +
                         std::to_string(exit_code) +
                         (run.reason.empty() ? "" : " (" + run.reason + ")");
            run.status = "error";
        }
    } catch (const std::exception& e) {
        run.status = "error";
        run.reason = "unreadable result line (" + std::string(e.what()) +
                     "): " + lines.back().substr(0, 200);
        run.data = json();
    }
    return run;
}

Expectations gather_expectations(const std::string& image_ref,
                                 const std::map<std::string, std::string>& labels,
                                 const std::vector<std::string>& env, const KnowledgeBase& kb,
                                 const std::map<std::string, std::string>& overrides) {
    Expectations e;
    const std::string prefix = "io.torchdock.";
    for (const auto& [k, v] : labels)
        if (starts_with(k, prefix)) e[k.substr(prefix.size())] = v;
    if (!e.empty()) e["source"] = "image labels";
    if (e.empty()) {
        // nvidia/cuda images describe themselves in their environment.
        for (const auto& kv : env) {
            auto eq = kv.find('=');
            std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
            if (k == "CUDA_VERSION" && Version::parse(v))
                e["cuda"] = Version::parse(v)->major_minor();
            if (k == "NV_CUDNN_VERSION") e["cudnn"] = v.substr(0, v.find('-'));
            if (k == "NCCL_VERSION") e["nccl"] = v.substr(0, v.find('-'));
        }
        if (!e.empty()) e["source"] = "image environment (CUDA_VERSION, NV_CUDNN_VERSION)";
        // NGC PyTorch releases are in the knowledge base.
        const std::string ngc = "nvcr.io/nvidia/pytorch:";
        if (starts_with(image_ref, ngc)) {
            std::string release = image_ref.substr(ngc.size(), 5);
            if (const NgcRelease* r = kb.ngc(release)) {
                if (auto v = Version::parse(r->cuda)) e["cuda"] = v->major_minor();
                e["cudnn"] = r->cudnn;
                e["nccl"] = r->nccl;
                e["torch"] = r->torch;
                e["min-driver"] = r->min_driver;
                e["source"] = "knowledge base (NGC PyTorch " + release + ")";
            }
        }
    }
    for (const auto& [k, v] : overrides) e[k] = v;
    if (!overrides.empty())
        e["source"] = (e.count("source") ? e["source"] + " + " : "") + "--expect";
    return e;
}

Result<std::map<std::string, std::string>> parse_expect_overrides(
    const std::vector<std::string>& flags) {
    static const std::vector<std::string> keys = {"cuda",
                                                  "cudnn",
                                                  "nccl",
                                                  "torch",
                                                  "torch-reports",
                                                  "python",
                                                  "min-driver",
                                                  "min-driver-compat",
                                                  "arch-list",
                                                  "target-gpus",
                                                  "validate.gemm-tflops-min.fp32",
                                                  "validate.gemm-tflops-min.tf32",
                                                  "validate.gemm-tflops-min.fp16",
                                                  "validate.gemm-tflops-min.bf16",
                                                  "validate.gemm-tflops-min.fp8",
                                                  "validate.allreduce-busbw-min-gbps",
                                                  "validate.shm-min-mb"};
    std::map<std::string, std::string> out;
    for (const auto& f : flags) {
        auto eq = f.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error{ErrorKind::Usage, "--expect " + quote_value(f) +
                                               " is not key=value (like cuda=12.4 or torch=2.4.1)"};
        std::string key = f.substr(0, eq);
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
            std::string msg = "--expect: unknown key " + quote_value(key);
            if (auto near = closest_match(key, keys))
                msg += "; did you mean \"" + *near + "\"?";
            else
                msg += "; known keys: " + join(keys, ", ");
            return Error{ErrorKind::Usage, msg};
        }
        out[key] = f.substr(eq + 1);
    }
    return out;
}

// "--peak-tflops=bf16:989,fp16:989,..." for the first GPU the cuda probe saw, from gpus.json.
std::optional<std::string> gemm_peak_flag(const ProbeRun& cuda, const KnowledgeBase& kb) {
    if (!cuda.usable() || !cuda.data.contains("devices") || cuda.data["devices"].empty())
        return std::nullopt;
    const GpuModel* g = kb.gpu(cuda.data["devices"][0].value("name", ""));
    if (!g) return std::nullopt;
    std::vector<std::string> parts;
    for (const auto& [dtype, tflops] : g->peak_tflops) {
        if (dtype != "fp32" && dtype != "tf32" && dtype != "fp16" && dtype != "bf16" &&
            dtype != "fp8")
            continue;  // GEMM dtypes only
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s:%g", dtype.c_str(), tflops);
        parts.push_back(buf);
    }
    if (parts.empty()) return std::nullopt;
    return "--peak-tflops=" + join(parts, ",");
}

}  // namespace td
