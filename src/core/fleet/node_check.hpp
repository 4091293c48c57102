#pragma once
// `torchdock node-check`: the quick tier of one node, judged. What the node is (doctor's host
// fingerprint with its findings), how the image runs on it (validate's checks through this
// node's engine, preflight against this node's driver and GPUs), and the verdict a health
// check or a prolog acts on. The report it writes is what `torchdock fleet` gathers. Pure.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnose/preflight.hpp"
#include "core/validate/checks.hpp"
#include "util/result.hpp"

namespace td {

// The image as this node's engine has it.
struct ImageOnNode {
    std::string reference;                  // as given
    std::string id;                         // the image ID behind it here ("" when absent)
    std::vector<std::string> repo_digests;  // "repo@sha256:..." it was pulled as
    std::string engine;                     // "docker 20.10.24" (the engine's ServerVersion)
    std::optional<long long> shm_bytes;     // /dev/shm a default run of it gets here
    std::string tier;                       // validate's reading tier (full, emulated, files-only)
};

struct NodeCheckFacts {
    std::string node;            // SLURMD_NODENAME, else the host name
    nlohmann::json fingerprint;  // doctor's host fingerprint, with its "findings"
    ImageOnNode image;
    std::string engine_error;    // the engine did not answer: the node cannot run containers
    std::string image_error;     // why the image could not be validated here
    bool image_missing = false;  // not on this node's engine (never pulled, or the pull failed)
    std::vector<CheckResult> checks;  // validate's, on this node
    std::optional<PreflightResult> preflight;
    std::string preflight_skipped;  // why preflight did not run (no driver here)
    int deadline_s = 0;
    // The checks could not all be made in time: what was still waiting when the deadline's
    // time for them ran out (an engine call cut short, the probes), or the run ended past
    // the deadline. Not evidence against the node: unknown, unless a check failed.
    std::string out_of_time;
    bool deadline_passed = false;
    double seconds = 0;
};

struct NodeVerdict {
    // healthy (exit 0) | drain (exit 1: the image does not run right on this node) |
    // unknown (exit 3: it could not be checked here: the image is not on this node, or the
    // checks did not finish within the deadline)
    std::string state = "healthy";
    std::vector<std::string> reasons;  // why it is not healthy, most decisive first
    std::vector<std::string> notes;    // warnings that do not drain
    // Every waiver applied, "TD130 by --waive": a check that failed or warned and was waived
    // by the user. Shown on the NHC line and in the report, whatever the verdict.
    std::vector<std::string> waived;
};

// "TD130 by --waive" for each waived check (status "waived"), in order.
std::vector<std::string> waivers_applied(const std::vector<CheckResult>& checks);

NodeVerdict judge_node(const NodeCheckFacts& facts);

// Whether `name` (from `source`: "--node", "SLURMD_NODENAME", "the host name") can be one
// node's name for `scontrol update NodeName=`: letters, digits and ._- only, not starting
// with '-' or '.', and not Slurm's keyword ALL (any case; scontrol takes it as every node of
// the cluster). Host lists ("gpu[1-8]", "a,b") are refused by the grammar. A Usage error
// names the value, its source and what is accepted. A nodeset name passes here: only
// `single_node_record` over scontrol's answer tells it from a node.
Status check_node_name(const std::string& name, const std::string& source);

// Whether `scontrol -o show node NAME`'s answer is exactly one node record, whose NodeName is
// `name` (a nodeset, a host list or a keyword gives several records or another name).
bool single_node_record(const std::string& scontrol_oneline, const std::string& name);

// NHC's one-line form on a failed check, for the health-check log and a prolog's output:
// "ERROR: torchdock: node2: TD130 /dev/shm is 64 MiB ... (+2 more)"; every waiver applied
// follows ("OK: torchdock: node1: healthy (waived: TD130 by --waive)"). Printable ASCII, one
// line.
std::string nhc_line(const std::string& node, const NodeVerdict& verdict);

// The reason `scontrol update NodeName=... State=DRAIN Reason=...` gets: "torchdock: <first
// reason>", printable, at most 200 characters.
std::string drain_reason(const NodeVerdict& verdict);

// node-check's JSON report (schema 1): the verdict, the fingerprint, the image on this node,
// the checks, preflight. `torchdock fleet` reads it back with fleet_fingerprint.
nlohmann::json node_check_report(const NodeCheckFacts& facts, const NodeVerdict& verdict);

}  // namespace td
