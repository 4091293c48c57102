#pragma once
// One probe run inside an image (or natively): how it ended and what its JSON result line
// said (probes/README.md is the contract). Pure. Used by validate's checks and by doctor's
// fingerprints.
#include <nlohmann/json.hpp>
#include <string>

namespace td {

struct ProbeRun {
    enum class State { Ran, NotRun, Crashed, TimedOut };
    State state = State::NotRun;
    std::string program;  // "probe-cuda", "torch_probe.py": how messages name the probe
    std::string status;   // pass | fail | waived | error (from the probe's JSON line)
    std::string reason;   // the probe's reason, or why it did not run
    nlohmann::json data;
    int exit_code = -1;
    std::string stderr_tail;
    double seconds = 0;
    bool cached = false;  // read back from torchdock's cache, not run now (engine/file_probe_cache)
    // Evidence: the probe ran to its end and reported what it observed (pass, fail or
    // waived). A probe that did not run, hung, crashed, printed garbage or reported an
    // error of its own is no evidence for anything.
    bool usable() const {
        return state == State::Ran && data.is_object() &&
               (status == "pass" || status == "fail" || status == "waived");
    }
    // Why this run is no evidence, naming the probe ("probe-libs timed out after 5 s");
    // empty when usable().
    std::string problem() const;
};

// "import torch died of SIGBUS (exit 135) while loading /x/libc10_cuda.so": the torch
// probe's crash record (data.crash) in words.
std::string crash_summary(const nlohmann::json& crash);

// Whose code produced a probe's answer (the threat model in README "Validating"):
//   "torchdock"             a static program of torchdock's reading files (probe-env,
//                           probe-record, probe-kernels): no code of the image runs
//   "torchdock+image-libraries"  probe-libs: a static reader for what resolves where, whose
//                           versions by content come from the image's libraries (loaded one
//                           per child by probe-libversion)
//   "image-libraries"       the image's CUDA libraries answer torchdock's probe (cuda, cudnn,
//                           nccl, gemm)
//   "image-python"          the image's own interpreter and torch (torch_probe.py)
std::string probe_source(const std::string& name);

// The program that implements probe `name` ("cuda" -> "probe-cuda", "torch" ->
// "torch_probe.py").
std::string probe_program(const std::string& name);

// Parses a probe's stdout: its last non-empty line must be the schema-1 JSON object.
ProbeRun parse_probe_output(const std::string& probe, const std::string& stdout_text,
                            int exit_code);

}  // namespace td
