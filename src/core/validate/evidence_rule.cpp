// The one rule that keeps a verdict from being better than its evidence (checks.hpp).
#include "core/validate/checks.hpp"

namespace td {

void apply_evidence_rule(std::vector<CheckResult>& results, const ValidationInput& in) {
    for (auto& r : results) {
        if (r.status == "fail" || r.status == "error") continue;
        const CheckInfo& info = check_info(r.id);
        if (info.tier == "gpu" && !in.gpu_tier) continue;
        for (const auto& name : info.evidence) {
            auto it = in.probes.find(name);
            std::string problem;
            if (it != in.probes.end())
                problem = it->second.problem();
            else if (r.status != "skip")
                problem = probe_program(name) + " was not run";
            if (problem.empty()) continue;
            r.status = "error";
            r.message = "cannot be judged: " + problem;
            r.fix = it != in.probes.end() && it->second.state == ProbeRun::State::TimedOut
                        ? "find what blocks the probe in this image, or raise --probe-timeout"
                        : "make the probe run to its end in this image (see the reason above)";
            break;
        }
    }
}

}  // namespace td
