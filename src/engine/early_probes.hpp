#pragma once
// Probes started before the evidence that decides how they run is in: a second validate of
// the same image starts every probe (torch's included) at once, beside probe-env, with the
// spec it ran with last time (ProbeMemo). A run is kept only when the spec that this run's
// own evidence gives (probe-env's plan, torch's answer) is exactly the one it was started
// with: the same evidence as waiting, sooner. Any other is run again with its own spec.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/validate/probe_run.hpp"
#include "engine/probe_exec.hpp"

namespace td::engine {

nlohmann::json probe_memo_json(const ProbeMemo& memo);
// nullopt when `j` is not a memo this version wrote (then there is no guess).
std::optional<ProbeMemo> probe_memo_from_json(const nlohmann::json& j);

class EarlyProbes {
  public:
    EarlyProbes() = default;
    // Starts every spec of `memo` now: each python probe on a thread of its own through
    // `prober.one`, the others together on one thread through `prober.all`.
    EarlyProbes(const ProbeMemo& memo, const Prober& prober);
    EarlyProbes(const EarlyProbes&) = delete;
    EarlyProbes& operator=(const EarlyProbes&) = delete;
    ~EarlyProbes();  // waits for the runs still going (a guess that was not taken)

    // The run started with exactly `spec` (waiting for it to end), once; nullopt when none was.
    std::optional<ProbeRun> take(const ProbeSpec& spec);
    std::size_t started() const { return runs_.size(); }
    // Whether a run started with exactly `spec` is there to take (does not wait for it).
    bool has(const ProbeSpec& spec) const;
    // Whether a run of the probe `name` was started (taken or not).
    bool holds(const std::string& name) const;

  private:
    struct Early {
        ProbeSpec spec;
        ProbeRun run;
        std::size_t thread = 0;  // in threads_: the one that runs it
        bool taken = false;
    };
    std::vector<std::unique_ptr<Early>> runs_;
    std::vector<std::thread> threads_;
};

}  // namespace td::engine
