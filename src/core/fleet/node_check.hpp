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
    bool deadline_passed = false;
    double seconds = 0;
};

struct NodeVerdict {
    // healthy (exit 0) | drain (exit 1: the image does not run right on this node) |
    // unknown (exit 3: it could not be checked here: the image is not on this node)
    std::string state = "healthy";
    std::vector<std::string> reasons;  // why it is not healthy, most decisive first
    std::vector<std::string> notes;    // warnings that do not drain
};

NodeVerdict judge_node(const NodeCheckFacts& facts);

// NHC's one-line form on a failed check, for the health-check log and a prolog's output:
// "ERROR: torchdock: node2: TD130 /dev/shm is 64 MiB ... (+2 more)". Printable ASCII, one line.
std::string nhc_line(const std::string& node, const NodeVerdict& verdict);

// The reason `scontrol update NodeName=... State=DRAIN Reason=...` gets: "torchdock: <first
// reason>", printable, at most 200 characters.
std::string drain_reason(const NodeVerdict& verdict);

// node-check's JSON report (schema 1): the verdict, the fingerprint, the image on this node,
// the checks, preflight. `torchdock fleet` reads it back with fleet_fingerprint.
nlohmann::json node_check_report(const NodeCheckFacts& facts, const NodeVerdict& verdict);

}  // namespace td
