#pragma once
// Slurm's own commands, run with the process runner (argv, no shell, a timeout): the nodes of
// a partition or a hostlist, one task per node through srun, draining a node. SLURM_CONF and
// the rest of Slurm's environment pass through.
#include <chrono>
#include <string>
#include <vector>

#include "core/fleet/allreduce.hpp"
#include "engine/process.hpp"
#include "util/result.hpp"

namespace td::engine {

struct SlurmNode {
    std::string name;
    std::string state;  // sinfo's compact state: idle, mix, alloc, down*, drain...
};

// The nodes a fleet command runs on, and the partition its srun step asks for.
struct SlurmSelection {
    std::vector<SlurmNode> nodes;  // once each, in sinfo's order
    std::string partition;         // "" for the cluster's default partition
};

// The nodes of `hostlist` ("node[1-3],gpu7"; `scontrol show hostnames`), of `partition`
// (`sinfo -N -p`), or of the hostlist within the partition, each with its state from sinfo,
// in sinfo's order (by name: the order Slurm lays a step's tasks out in where nodes are
// defined in name order, as on most clusters), not the order of `hostlist`. A hostlist
// alone runs in the default partition when it holds every node, else in the first
// partition that does (srun refuses nodes outside the partition it runs in).
// An empty hostlist and partition is a Usage error (it is not "every node").
Result<SlurmSelection> slurm_nodes(const std::string& hostlist, const std::string& partition,
                                   std::chrono::seconds timeout);

// The pure part of slurm_nodes: `listing` is `sinfo --noheader --Node --format="%N %P %t"`
// (a node once per partition; the default partition's name ends in '*'), `wanted` the
// hostlist's node names (empty: every node of `partition`).
Result<SlurmSelection> select_slurm_nodes(const std::string& listing,
                                          const std::vector<std::string>& wanted,
                                          const std::string& partition,
                                          const std::string& hostlist);

// Whether a node in this state takes a new job step (idle, mix, alloc, completing).
bool slurm_node_usable(const std::string& state);

// `srun --label` with `per_node` tasks on each of `nodes` (block distribution: task i on node
// i / per_node), running `argv` there; the result as the process runner gives it (TERM,
// then KILL on timeout: srun cancels the step on TERM).
Result<ProcessResult> srun_each_node(const std::vector<std::string>& nodes,
                                     const std::string& partition,
                                     const std::vector<std::string>& argv,
                                     std::chrono::seconds timeout, int per_node = 1);

// The address of a node (`scontrol show node NAME`: NodeAddr), else the name itself; and the
// first node of a hostlist (`scontrol show hostnames`).
Result<std::string> slurm_node_address(const std::string& node);
Result<std::string> first_node_of(const std::string& hostlist);

// This process's place in its srun step (core/fleet/allreduce slurm_rank over its environment).
Result<SlurmRank> this_slurm_rank();

// This process's variables that steer collectives (NCCL_*, GLOO_*, TORCH_NCCL_*, UCX_*), as
// "NAME=value": a rank's container gets them, as pyxis and enroot pass a job's environment.
std::vector<std::string> collective_environment();

// `scontrol update NodeName=NODE State=DRAIN Reason=REASON`, for one node only: the name
// passes core's check_node_name and `scontrol -o show node NODE` must give exactly one record
// named NODE (NodeName= also takes ALL, nodesets and host lists), else nothing is drained.
// Both scontrol calls together take at most `timeout`.
Status drain_node(const std::string& node, const std::string& reason,
                  std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace td::engine
