#pragma once
// `torchdock fleet`: the node-check reports of many nodes (gathered through srun) compared.
// Nodes are grouped by what matters (every leaf `diff` does not rank cosmetic); each node that
// differs from the majority is named with `diff`'s ranking ("node2: /dev/shm in containers
// 64 MiB vs 1 GiB on 2 nodes"); a value with no majority is a split. A node that gave no
// report says why: the launcher, the image, a timeout. Pure.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace td {

struct FleetNode {
    std::string node;
    nlohmann::json report;  // node-check's JSON report; null when the node gave none
    // "" (a report came back) | launcher (srun could not start it there) | image (the image
    // is not on that node's engine) | timeout | output (it ran, but printed no report)
    std::string failure_kind;
    std::string failure;  // one line: what srun or node-check said
    // The name inside the report when it is not the node srun ran the task on (a renamed or
    // cloned node, a wrong SLURMD_NODENAME): the report is this node's, and the mismatch a
    // finding on it. "" when they agree.
    std::string claimed_node;
    // Set by judge_fleet from the report's evidence (its checks, findings, preflight, image),
    // made only worse, never better, by the report's own "verdict": healthy | drain |
    // unknown, "" without a report; the reasons, most decisive first; every waiver applied
    // ("TD130 by --waive: reason").
    std::string verdict;
    std::vector<std::string> reasons;
    std::vector<std::string> waivers;
};

struct FleetOutlier {
    std::string node, path, label;  // label: "/dev/shm in containers", "NCCL_SOCKET_IFNAME"
    std::string value, majority;    // as shown ("64 MiB", "(unset)")
    std::size_t majority_nodes = 0;
    std::string category;  // diff's
    int weight = 0;
    std::string why;
};

struct FleetSplit {  // no value is held by more nodes than every other
    std::string path, label, category;
    int weight = 0;
    std::vector<std::pair<std::string, std::vector<std::string>>> values;  // value -> nodes
};

struct FleetGroup {
    std::vector<std::string> nodes;  // reported nodes alike in everything that matters
};

struct FleetReport {
    std::string image;
    std::vector<FleetNode> nodes;        // in the order given
    std::vector<FleetGroup> groups;      // largest first
    std::vector<FleetOutlier> outliers;  // by weight, then node
    std::vector<FleetSplit> splits;
    std::size_t healthy = 0, drained = 0, unknown = 0, failed = 0;  // failed: no report
    // One group, and every node reported (healthy or not: that is the verdicts' business).
    bool uniform() const {
        return groups.size() <= 1 && outliers.empty() && splits.empty() && failed == 0;
    }
};

// What fleet compares of a node-check report: the host fingerprint with its findings, the
// image as this node runs it (ID, engine, /dev/shm in its containers) and validate's check
// statuses.
nlohmann::json fleet_fingerprint(const nlohmann::json& node_check_report);

FleetReport judge_fleet(std::string image, std::vector<FleetNode> nodes);

// One node's verdict, reasons and waivers (FleetNode::verdict) from its report: a failed or
// unjudged check, an error finding, preflight's no or a name that is not srun's node drains;
// an image not there, a report with no checks or an unknown "verdict" is unknown.
void judge_node_report(FleetNode& node);

// "node2: /dev/shm in containers 64 MiB vs 1 GiB on 2 nodes"
std::string outlier_line(const FleetOutlier& o);
// "NCCL_SOCKET_IFNAME: eth9 on node3; (unset) on node1, node2"
std::string split_line(const FleetSplit& s);

// A leaf's value as people read it: byte counts in KiB/MiB/GiB ("unlimited" kept), an image
// ID shortened, an absent variable "(unset)".
std::string fleet_value(const std::string& path, const std::string& value);
// A path's name as people read it: "image.shm_bytes" -> "/dev/shm in containers".
std::string fleet_label(const std::string& path);

}  // namespace td
