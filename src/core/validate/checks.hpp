#pragma once
// `torchdock validate`: what the probes observed inside an image, judged against what the
// image promises. Pure: probe outputs, expectations and the knowledge base in, check
// results out. Every check has a stable ID (README "Checks").
//
// A verdict is never better than its evidence: every check names the probes it rests on
// (CheckInfo::evidence), and `evaluate` turns a pass, warn or skip into `error` when one of
// them was attempted but gave no evidence (hung, crashed, printed garbage, reported an
// error, or its engine went away). That rule lives in one place, `apply_evidence_rule`.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/expectations.hpp"
#include "core/validate/probe_run.hpp"
#include "core/validate/runtime_env.hpp"

namespace td {

// What a known error signature says about an error text (an import error, torch's cuDNN
// error): the same cause and fix `explain` gives. Filled in by the caller (validate may not
// depend on diagnosis); nullopt when no signature knows the text.
struct ErrorAdvice {
    std::string id, cause, fix;  // "EX103", ...
};
using ErrorAdvisor = std::function<std::optional<ErrorAdvice>(const std::string& error_text)>;

struct ValidationInput {
    std::string image;
    std::string image_id;  // the ID the probes ran on ("sha256:...")
    RuntimePlan runtime;   // how the image runs (core/validate/runtime_env)
    EntrypointVerdict entrypoint;
    std::vector<std::string> cmd;  // the image's CMD
    Expectations expect;
    std::map<std::string, ProbeRun> probes;  // by probe name; absent: not attempted
    bool gpu_tier = false;                   // GPUs were given to the probes
    std::string gpu_skip_reason;             // why not, when not
    // The image's platform as its files say (core/validate/platform files_platform), the
    // engine's record of the config only where no file says it ("linux/arm64"); "" when
    // neither does.
    std::string platform;
    // Not empty: the config claims another platform than the files are built for, in words
    // (platform_claim_problem); TD132 fails with it.
    std::string platform_problem;
    // Not empty: the files-only tier only (core/validate/platform files_only_reason), and why;
    // the checks whose evidence needs the image's code to run are skipped with it.
    std::string files_only_reason;
    // The keys the invoking user set with --expect (the rest of `expect` are the image's
    // claims or the knowledge base's).
    std::vector<std::string> user_expect_keys;
    std::optional<long long> shm_bytes;  // /dev/shm size a default `docker run` gives
    std::string shm_error;               // why shm_bytes is unknown
    ErrorAdvisor advise;                 // optional
};

struct CheckResult {
    std::string id;        // "TD101"
    std::string name;      // "cuda.runtime"
    std::string severity;  // error | warning
    // pass | fail | warn | skip | error (could not be judged: its evidence is missing;
    // counted as a failure) | waived (a fail or warn a waiver covers: `outcome` keeps it)
    std::string status;
    std::string observed, expected, message, fix;
    std::string outcome;                       // the status before a waiver; "" when not waived
    std::string waiver_reason, waiver_source;  // source: Waiver::source
    // The expectations of the user's own --expect this check compared (a failure of these is
    // never waived: core/validate/waivers).
    std::vector<std::string> user_expectations;
};

std::vector<CheckResult> evaluate(const ValidationInput& input, const KnowledgeBase& kb);

// Every check ID with its reference page (`torchdock checks ID`, docs/checks.md): the
// check_catalog.cpp entries are the only place a check ID is defined.
struct CheckInfo {
    std::string id;
    std::string name;
    std::string tier;                   // static | gpu
    std::string meaning;                // what: when it passes
    std::vector<std::string> evidence;  // probe names ("cuda", "torch", ...)
    std::string why;                    // why it matters
    std::string reads;                  // what torchdock reads to decide
    std::string fix;                    // the typical fix on failure
    std::string not_waivable;           // "" when a waiver may cover it, else why not
};
const std::vector<CheckInfo>& check_catalog();
// The catalog entry of `id`, or nullptr.
const CheckInfo* find_check(const std::string& id);
// The catalog entry of `id`; every ID the checks emit is in the catalog (std::logic_error
// otherwise).
const CheckInfo& check_info(const std::string& id);

// The evidence rule: a check that would pass, warn or skip while a probe it rests on was
// attempted (present in `in.probes`) and gave no evidence becomes `error`, naming that
// probe and why ("probe-libs timed out after 5 s"). A fail stays a fail. A pass or warn
// whose evidence probe was not attempted at all becomes `error` too. GPU-tier checks are
// exempt when the GPU tier did not run (they are skipped for that reason alone).
void apply_evidence_rule(std::vector<CheckResult>& results, const ValidationInput& in);

}  // namespace td
