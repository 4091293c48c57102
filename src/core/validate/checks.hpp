#pragma once
// `torchdock validate`: what the probes observed inside an image, judged against what the
// image promises. Pure: probe outputs, expectations and the knowledge base in, check
// results out. Every check has a stable ID (README "Checks").
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "util/result.hpp"

namespace td {

struct ProbeRun {
    enum class State { Ran, NotRun, Crashed, TimedOut };
    State state = State::NotRun;
    std::string status;  // pass | fail | waived | error (from the probe's JSON line)
    std::string reason;  // the probe's reason, or why it did not run
    nlohmann::json data;
    int exit_code = -1;
    std::string stderr_tail;
    double seconds = 0;
    bool usable() const { return state == State::Ran && data.is_object(); }
};

// Parses a probe's stdout: its last non-empty line must be the schema-1 JSON object.
ProbeRun parse_probe_output(const std::string& probe, const std::string& stdout_text,
                            int exit_code);

// What the image promises: key -> value. Keys are the io.torchdock.* label names without
// the prefix (cuda, cudnn, nccl, torch, torch-reports, python, min-driver, arch-list,
// target-gpus, validate.gemm-tflops-min.bf16, validate.allreduce-busbw-min-gbps,
// validate.shm-min-mb), plus "source" (where they came from).
using Expectations = std::map<std::string, std::string>;

// Expectations from image labels and environment (nvidia/cuda's CUDA_VERSION,
// NV_CUDNN_VERSION and NCCL_VERSION when there are no torchdock labels), then the knowledge base
// for well-known images (NGC PyTorch by tag), then `overrides` (--expect key=value).
Expectations gather_expectations(const std::string& image_ref,
                                 const std::map<std::string, std::string>& labels,
                                 const std::vector<std::string>& env, const KnowledgeBase& kb,
                                 const std::map<std::string, std::string>& overrides);

// Parses --expect key=value flags. Keys are the expectation keys above; an unknown key or
// a missing '=' is a Usage error with a did-you-mean.
Result<std::map<std::string, std::string>> parse_expect_overrides(
    const std::vector<std::string>& flags);

struct ValidationInput {
    std::string image;
    Expectations expect;
    std::map<std::string, ProbeRun> probes;  // by probe name
    bool gpu_tier = false;                   // GPUs were given to the probes
    std::string gpu_skip_reason;             // why not, when not
    std::optional<long long> shm_bytes;      // /dev/shm size a default `docker run` gives
};

struct CheckResult {
    std::string id;        // "TD101"
    std::string name;      // "cuda.runtime"
    std::string severity;  // error | warning
    std::string status;    // pass | fail | warn | skip
    std::string observed, expected, message, fix;
};

std::vector<CheckResult> evaluate(const ValidationInput& input, const KnowledgeBase& kb);

// "--peak-tflops=bf16:989,fp16:989,..." for the first GPU the cuda probe saw (gpus.json
// datasheet peaks of the GEMM dtypes), or nullopt when the GPU or its peaks are unknown.
std::optional<std::string> gemm_peak_flag(const ProbeRun& cuda, const KnowledgeBase& kb);

// Every check ID with its name and what it means (the README's "Checks" table).
struct CheckInfo {
    const char* id;
    const char* name;
    const char* tier;  // static | gpu
    const char* meaning;
};
const std::vector<CheckInfo>& check_catalog();

}  // namespace td
