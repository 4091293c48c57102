// The expectations an image carries (labels, environment, knowledge base, --expect).
// Judging what the probes observed against them is checks.cpp.
#include "core/validate/expectations.hpp"

#include <algorithm>
#include <cstdlib>

#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {

Expectations gather_expectations(const std::string& image_ref,
                                 const std::map<std::string, std::string>& labels,
                                 const std::vector<std::string>& env, const KnowledgeBase& kb,
                                 const std::map<std::string, std::string>& overrides) {
    Expectations e;
    // An empty value promises nothing (what `ENV NCCL_VERSION=$NCCL_VERSION` gives when the
    // build argument was not passed); it is kept apart as a finding.
    std::vector<std::string> empty;
    const std::string prefix = "io.torchdock.";
    for (const auto& [k, v] : labels)
        if (starts_with(k, prefix)) {
            if (v.find_first_not_of(" \t") == std::string::npos)
                empty.push_back(k);
            else
                e[k.substr(prefix.size())] = v;
        }
    if (!e.empty()) e["source"] = "image labels";
    if (e.empty()) {
        // nvidia/cuda images describe themselves in their environment.
        for (const auto& kv : env) {
            auto eq = kv.find('=');
            std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
            if (k == "CUDA_VERSION" && Version::parse(v))
                e["cuda"] = Version::parse(v)->major_minor();
            for (const auto& [var, key] :
                 {std::pair{"NV_CUDNN_VERSION", "cudnn"}, std::pair{"NCCL_VERSION", "nccl"}}) {
                if (k != var) continue;
                std::string version = v.substr(0, v.find('-'));
                if (version.empty())
                    empty.push_back(k);
                else
                    e[key] = version;
            }
            if (k == "CUDA_VERSION" && !Version::parse(v) && v.empty()) empty.push_back(k);
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
    if (!empty.empty()) e[k_empty_promises] = join(empty, ", ");
    return e;
}

std::vector<std::string> promises(const Expectations& e) {
    std::vector<std::string> out;
    for (const auto& [k, v] : e)
        if (k != "source" && k != k_empty_promises) out.push_back(k + "=" + v);
    return out;
}

namespace {

// Empty when `value` is a sensible value for expectation `key`, else what would be.
std::string check_expect_value(const std::string& key, const std::string& value) {
    if (value.empty()) return "the value is empty";
    if (!is_valid_utf8(value) || value.find_first_of("\t\r\n") != std::string::npos)
        return "not printable text on one line";
    if (starts_with(key, "validate.")) {
        char* end = nullptr;
        double x = std::strtod(value.c_str(), &end);
        if (!end || *end || !(x >= 0) || x > 1e9) return "expected a number from 0 to 1e9";
        return {};
    }
    if (key == "torch" || key == "torch-reports") {
        // A torch version: a release ("2.4.1") with an optional pre-release or local part.
        std::size_t digits = value.find_first_not_of("0123456789.");
        std::string release = value.substr(0, digits);
        if (!Version::parse(release) ||
            value.find_first_not_of("0123456789.abcdefghijklmnopqrstuvwxyz+") != std::string::npos)
            return "expected a torch version like 2.4.1 or 2.4.1+cu121";
        return {};
    }
    if (key == "target-gpus" || key == "arch-list") return {};
    // cuda, cudnn, nccl, python, min-driver, min-driver-compat: dotted numbers.
    if (!Version::parse(value))
        return "expected a version of 1 to 4 numbers, like 12.4 or 9.1.0.70";
    return {};
}

}  // namespace

const std::vector<std::string>& validate_expect_keys() {
    // Every key here is judged by a check (README "Checks"); a key nothing checks is refused
    // rather than silently ignored.
    static const std::vector<std::string> keys = {"cuda",
                                                  "cudnn",
                                                  "nccl",
                                                  "torch",
                                                  "torch-reports",
                                                  "torchvision",
                                                  "torchaudio",
                                                  "python",
                                                  "min-driver",
                                                  "arch-list",
                                                  "target-gpus",
                                                  "validate.gemm-tflops-min.fp32",
                                                  "validate.gemm-tflops-min.tf32",
                                                  "validate.gemm-tflops-min.fp16",
                                                  "validate.gemm-tflops-min.bf16",
                                                  "validate.gemm-tflops-min.fp8",
                                                  "validate.allreduce-busbw-min-gbps",
                                                  "validate.shm-min-mb"};
    return keys;
}

const std::vector<std::string>& preflight_expect_keys() {
    static const std::vector<std::string> keys = {
        "cuda", "nccl", "min-driver", "min-driver-compat", "arch-list", "target-gpus"};
    return keys;
}

Result<std::map<std::string, std::string>> parse_expect_overrides(
    const std::vector<std::string>& flags, const std::vector<std::string>& keys) {
    std::map<std::string, std::string> out;
    for (const auto& f : flags) {
        auto eq = f.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error{ErrorKind::Usage, "--expect " + quote_value(f) +
                                               " is not key=value (like cuda=12.4 or torch=2.4.1)"};
        std::string key = f.substr(0, eq);
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
            std::string msg = "--expect: unknown key " + quote_value(key);
            if (auto near = closest_match(key, keys)) msg += "; did you mean \"" + *near + "\"?";
            msg += "; keys this command checks: " + join(keys, ", ");
            return Error{ErrorKind::Usage, msg};
        }
        std::string value = f.substr(eq + 1);
        if (auto bad = check_expect_value(key, value); !bad.empty())
            return Error{ErrorKind::Usage,
                         "--expect " + key + "=" + quote_value(value) + ": " + bad};
        out[key] = value;
    }
    return out;
}

}  // namespace td
