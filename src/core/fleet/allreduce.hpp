#pragma once
// `torchdock allreduce`: a multi-node all-reduce inside the image, one rank per Slurm task.
// Each rank's place from Slurm's environment (`slurm_rank`); the ranks' answers combined
// (`judge_allreduce`): exact sums are the gate, time per size is the slowest rank's,
// bandwidth is judged only against a baseline measured on healthy nodes, the transport NCCL
// used is read from its INFO lines, and a rank that never answered is named with its node.
// Pure.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace td {

struct SlurmRank {
    int rank = 0, world = 0, local_rank = 0;
    std::string node;      // SLURMD_NODENAME
    std::string nodelist;  // the step's nodes (SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST)
    std::string job_id, step_id;
    int port = 0;  // the rendezvous port every rank of this step derives alike
};

// From a Slurm task's environment; an error names the variable that is missing or wrong (not
// inside an srun step).
Result<SlurmRank> slurm_rank(const std::map<std::string, std::string>& env);

// "NodeAddr=10.0.0.7" in `scontrol show node NAME`'s answer; "" when absent.
std::string node_address(const std::string& scontrol_show_node);

// The transports NCCL's INFO lines say it used: "NET/IB/GDRDMA", "NET/IB", "NET/Socket",
// "P2P", "SHM", "NVLS", "CollNet" (sorted, unique); empty when the lines name none.
std::vector<std::string> nccl_transports(const std::vector<std::string>& lines);

// One rank's outcome as allreduce-rank reported it, or why there is none.
struct RankOutcome {
    int rank = -1;
    std::string node;
    std::string status;  // pass | fail | error | timeout | missing
    std::string reason;
    nlohmann::json data;                  // the probe's data (sizes, backend, nccl_log...)
    std::vector<std::string> infiniband;  // the node's /dev/infiniband entries
};

struct AllreduceSize {
    long long bytes = 0, count = 0;
    double time_us = 0;  // the slowest rank's
    double algbw_gbps = 0, busbw_gbps = 0;
    long long wrong = 0;  // over every rank (each rank's count checked: 0 to the elements)
    std::optional<double> baseline_busbw;
    bool slow = false;  // under the baseline by more than the tolerance
};

struct AllreduceResult {
    int world = 0;
    std::string backend;
    std::vector<AllreduceSize> sizes;
    std::vector<RankOutcome> ranks;  // by rank
    std::vector<std::string> transports;
    // pass: every rank answered `pass` with a result for every size any rank reduced, every
    // count is a non-negative integer and every sum exact, no size is slow against a baseline
    // and NCCL did not fall back to sockets where InfiniBand exists; fail: otherwise
    std::string verdict = "fail";
    std::vector<std::string> findings;  // why not pass, most decisive first (any one fails)
    std::string bandwidth_judged;       // "against BASELINE" or why not judged
};

// `baseline`: an earlier allreduce --json on healthy nodes (its sizes' busbw_gbps), or null.
// `tolerance`: the fraction under the baseline that still passes (0.2: 80 % of it).
AllreduceResult judge_allreduce(std::vector<RankOutcome> ranks, int world,
                                const nlohmann::json& baseline, double tolerance);

// The result as nccl-tests' `-J` JSON (v2.19 layout, one object): what tools that read those
// files load. torch.distributed reduces in place, so each result has "in_place" only.
nlohmann::json nccl_tests_json(const AllreduceResult& r, const std::vector<std::string>& args);

}  // namespace td
