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
#include "core/validate/expectations.hpp"
#include "core/validate/probe_run.hpp"
#include "util/result.hpp"

namespace td {

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

// Every check ID with its name and what it means (the README's "Checks" table).
struct CheckInfo {
    const char* id;
    const char* name;
    const char* tier;  // static | gpu
    const char* meaning;
};
const std::vector<CheckInfo>& check_catalog();

}  // namespace td
