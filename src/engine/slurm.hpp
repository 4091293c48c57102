#pragma once
// Slurm's own commands, run with the process runner (argv, no shell, a timeout): the nodes of
// a partition or a hostlist, one task per node through srun, draining a node. SLURM_CONF and
// the rest of Slurm's environment pass through.
#include <chrono>
#include <string>
#include <vector>

#include "engine/process.hpp"
#include "util/result.hpp"

namespace td::engine {

struct SlurmNode {
    std::string name;
    std::string state;  // sinfo's compact state: idle, mix, alloc, down*, drain...
};

// The nodes of `hostlist` ("node[1-3],gpu7"; `scontrol show hostnames`) or of `partition`
// (`sinfo -N -p`), each with its state from sinfo. Exactly one of the two is non-empty.
Result<std::vector<SlurmNode>> slurm_nodes(const std::string& hostlist,
                                           const std::string& partition,
                                           std::chrono::seconds timeout);

// Whether a node in this state takes a new job step (idle, mix, alloc, completing).
bool slurm_node_usable(const std::string& state);

// `srun --label` with one task on each of `nodes`, running `argv` there; the result as the
// process runner gives it (TERM, then KILL on timeout: srun cancels the step on TERM).
Result<ProcessResult> srun_each_node(const std::vector<std::string>& nodes,
                                     const std::string& partition,
                                     const std::vector<std::string>& argv,
                                     std::chrono::seconds timeout);

// `scontrol update NodeName=NODE State=DRAIN Reason=REASON`.
Status drain_node(const std::string& node, const std::string& reason);

}  // namespace td::engine
