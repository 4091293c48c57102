#pragma once
// `torchdock doctor`: a structured fingerprint of an environment (a host, or an image) built
// from what the probes observed plus a few facts (OS, glibc, environment, /dev/shm), and the
// findings the knowledge base can see in it. Pure.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/explain.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/probe_run.hpp"

namespace td {

struct EnvironmentFacts {
    std::string kind;                               // host | image
    std::string subject;                            // hostname or image reference
    std::map<std::string, std::string> os_release;  // /etc/os-release
    std::string glibc;
    std::vector<std::string> env;  // NAME=value
    std::optional<long long> shm_bytes;
    std::string container_runtime;  // none | docker | podman | kubernetes | ... (host only)
    std::map<std::string, std::string> labels;  // image only
    std::string interpreter_why;  // why the python judged is that one (core RuntimePlan::why)
    // Host only: the soft RLIMIT_MEMLOCK (-1 unlimited; nullopt unread) and the entries of
    // /dev/infiniband (uverbs0, rdma_cm...), which NCCL's IB transport needs.
    std::optional<long long> memlock_bytes;
    std::vector<std::string> infiniband;
};

// The fingerprint (schema 1). Only variables that change GPU behaviour are kept from the
// environment: LD_LIBRARY_PATH, NVIDIA_*, CUDA_*, NCCL_*, TORCH_*, PYTORCH_*, CUDNN_*.
nlohmann::json build_fingerprint(const EnvironmentFacts& facts,
                                 const std::map<std::string, ProbeRun>& probes);

struct Finding {
    std::string id;        // DR101...
    std::string severity;  // error | warning | info
    std::string title;
    std::string detail;
    std::string fix;
};

// `signatures` (optional) give the cause and fix of an import or cuDNN error, the same as
// `explain` says.
std::vector<Finding> doctor_findings(const nlohmann::json& fingerprint, const KnowledgeBase& kb,
                                     const ErrorSignatures* signatures = nullptr);

// The findings as the fingerprint's "findings" list (doctor --json, node-check's report).
nlohmann::json findings_json(const std::vector<Finding>& findings);

// Parses /etc/os-release text.
std::map<std::string, std::string> parse_os_release(const std::string& text);

}  // namespace td
