#pragma once
// What an image promises, gathered from its labels, its environment, the knowledge base and
// --expect flags. Pure.
#include <map>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "util/result.hpp"

namespace td {

// What the image promises: key -> value. Keys are the io.torchdock.* label names without
// the prefix (cuda, cudnn, nccl, torch, torch-reports, python, min-driver, arch-list,
// target-gpus, validate.gemm-tflops-min.bf16, validate.allreduce-busbw-min-gbps,
// validate.shm-min-mb), plus "source" (where they came from).
using Expectations = std::map<std::string, std::string>;

// The key under which gather_expectations lists what was set but empty ("NCCL_VERSION,
// io.torchdock.torch"): not a promise, a finding.
inline constexpr const char* k_empty_promises = "empty-values";

// Every promise as "key=value" (not "source", not the empty values).
std::vector<std::string> promises(const Expectations& e);

// Expectations from image labels and environment (nvidia/cuda's CUDA_VERSION,
// NV_CUDNN_VERSION and NCCL_VERSION when there are no torchdock labels), then the knowledge base
// for well-known images (NGC PyTorch by tag), then `overrides` (--expect key=value).
Expectations gather_expectations(const std::string& image_ref,
                                 const std::map<std::string, std::string>& labels,
                                 const std::vector<std::string>& env, const KnowledgeBase& kb,
                                 const std::map<std::string, std::string>& overrides);

// Parses --expect key=value flags against the keys a command checks (validate and
// preflight check different things). An unknown key, a missing '=' or a value that is not a
// version, a torch version or a number as its key needs is a Usage error (with a
// did-you-mean for a near key).
Result<std::map<std::string, std::string>> parse_expect_overrides(
    const std::vector<std::string>& flags, const std::vector<std::string>& keys);
const std::vector<std::string>& validate_expect_keys();
const std::vector<std::string>& preflight_expect_keys();

}  // namespace td
