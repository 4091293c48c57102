#pragma once
// What `srun --label` hands back from one task per node, read: each task's output, srun's own
// error lines about nodes, and a node's result classified (a report, or why there is none:
// the launcher, the image, a timeout, unreadable output). Pure.
#include <map>
#include <string>
#include <vector>

#include "core/fleet/fleet.hpp"

namespace td {

// "  3: text" lines (srun pads the task number) -> task 3's text, lines joined by '\n'.
// Unlabelled lines are left out.
std::map<int, std::string> split_labelled_output(const std::string& out);

// srun's lines that name a node ("srun: error: node2: task 1: Exited with exit code 3",
// "srun: error: Task launch for StepId=4.0 failed on node node3: Communication connection
// failure"):
// node -> the line (the last such line of each node). Other lines are left out.
std::map<std::string, std::string> srun_node_errors(const std::string& err);

// Which node srun launched each task on, from its verbose lines ("srun: launching StepId=4.0
// on host node2, 2 tasks: 2-3"; `srun -v`): task -> node. Srun's word, not the task's: a
// task's own report may name any node. A task named twice keeps neither.
std::map<int, std::string> srun_task_nodes(const std::string& err);

// srun's lines that say the step could not start at all ("srun: error: Unable to allocate
// resources: ..."), in order.
std::vector<std::string> srun_launch_errors(const std::string& err);

struct TaskOutcome {
    std::string node;        // the node srun ran the task on (never the name inside its report)
    std::string output;      // the task's labelled stdout ("" when none came back)
    std::string node_error;  // srun's line about this node, if any
    bool timed_out = false;
    int timeout_s = 0;
    std::string launch_error;  // why srun started nothing (applies to every node)
};

// A node's report (node-check's JSON on the task's stdout), or why there is none: the
// result is `t.node`'s whatever name the report gives (FleetNode::claimed_node keeps that
// name when it differs); output with no parsable report is an `output` failure.
FleetNode classify_task(const TaskOutcome& t);

}  // namespace td
