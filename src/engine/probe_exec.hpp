#pragma once
// Running the probes (probes/README.md): inside an image through a throwaway container, or
// natively on this host. Both return the parsed result (core/validate/probe_run.hpp ProbeRun).
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/probe_run.hpp"
#include "core/validate/runtime_env.hpp"
#include "engine/image_host.hpp"

namespace td::engine {

inline constexpr const char* k_probe_mount = "/opt/torchdock-probes";
// The runner that starts several probes in one container (probes/batch).
inline constexpr const char* k_batch_runner = "probe-batch";
// The CPU weight of the probes that are not python's (the engine's default, torch's, is 1024).
inline constexpr int k_helper_cpu_shares = 128;

struct ProbeSpec {
    std::string name;               // "cuda"
    std::string file;               // what must exist in the probe directory
    std::vector<std::string> args;  // flags, passed as arguments (never through a shell line)
    bool python = false;            // run with the environment's python (torch_probe.py)
    bool gpu_only = false;
    // Python probes: the interpreters to consider, in order (core plan_runtime); the first
    // that exists starts the probe, which then picks the first that finds torch. `resolved`:
    // they were read off the image (they exist), so the first is started directly, without
    // a shell. `others`: the image's other interpreters, which the probe describes.
    std::vector<std::string> interpreters;
    bool resolved = false;
    std::vector<std::string> others;
    // "NAME=value" over the image's Env (what a wrapper ENTRYPOINT sets up; LD_PRELOAD=""
    // for probes that only read files: a preloaded library must not answer for them).
    std::vector<std::string> env;
    bool keep_entrypoint = false;  // only probe-env, to read what a wrapper sets up
    bool host_network = false;     // only the all-reduce probe: its ranks are on other hosts

    bool operator==(const ProbeSpec&) const = default;
};

inline ProbeSpec probe_spec(std::string name, std::string file, std::vector<std::string> args = {},
                            bool python = false, bool gpu_only = false) {
    ProbeSpec p;
    p.name = std::move(name);
    p.file = std::move(file);
    p.args = std::move(args);
    p.python = python;
    p.gpu_only = gpu_only;
    return p;
}

// The probes `validate` runs, in order (the torch probe first: the others look where torch
// looks); `doctor` runs the same with lighter flags.
std::vector<ProbeSpec> validation_probes(bool gpu_tier);
// node-check's quick tier, inside Slurm's 60 s: validate's probes without the sustained GEMM
// (about 70 s alone), torch in one process and NCCL on one small message; on a GPU node the
// torch and NCCL probes still run on the GPU.
std::vector<ProbeSpec> quick_validation_probes();
// The files-only tier's: the static programs that only read files (probe-env runs first, from
// engine/runtime_env), so an image of another architecture is read without running its code.
std::vector<ProbeSpec> files_only_probes();
std::vector<ProbeSpec> doctor_probes();
// What `preflight` runs in an image: the torch probe (facts only) and the kernel audit.
std::vector<ProbeSpec> kernel_audit_probes();
// What `sbom IMAGE` lists: torch's facts, every distribution (probe-record --dists=*) and
// the GPU code of every object (probe-kernels).
std::vector<ProbeSpec> sbom_probes();

// What each probe ran with the last time this probe set ran in an image: name -> spec
// (engine/early_probes: a guess that is checked, never evidence).
using ProbeMemo = std::map<std::string, ProbeSpec>;
class EarlyProbes;

// How probes are run. `one`: one probe (safe to call from several threads). `many`: several
// probes that are not python's at once, a run each in order (in an image: one container for
// them all); without it, `all` runs each through `one` on a thread of its own.
struct Prober {
    std::function<ProbeRun(const ProbeSpec&)> one;
    std::function<std::vector<ProbeRun>(const std::vector<ProbeSpec>&)> many;

    std::vector<ProbeRun> all(const std::vector<ProbeSpec>& specs) const;
};

// Runs `specs` through `prober`, each with the flags that depend on what the earlier ones
// found (core/validate/probe_plan: site directories, the libraries torch loaded, the GPU's
// peaks, LD_PRELOAD), in the environment `plan` says the image runs in, python probes with
// its interpreters: first the python probes, then every other probe at once
// (`prober.all`), then gemm. Stops at Ctrl-C (the probes not run are absent from the result).
//
// `early`: probes already started with last run's specs; a probe whose spec now is exactly
// one of them takes that run instead of running again. Where `early` has no run of libs or
// record, they start beside torch's import once a locate run of the torch probe (no import)
// says where torch's python imports from, under the same rule. `memo`: gets the spec every probe
// but gemm ran with (gemm's depends on the GPU and runs alone, last).
std::map<std::string, ProbeRun> run_probes(std::vector<ProbeSpec> specs, const RuntimePlan& plan,
                                           const KnowledgeBase& kb, const Prober& prober,
                                           EarlyProbes* early = nullptr, ProbeMemo* memo = nullptr);

ProbeRun run_probe_in_image(const ImageHost& api, const std::string& image, const ProbeSpec& p,
                            const std::filesystem::path& probes_dir, int gpus, int timeout_s,
                            const std::string& run_label);

// Runs the probes that are not python's (one environment) together in one container through
// probe-batch, each judged as if it had run alone; one container each when they cannot share
// one (another environment, an ENTRYPOINT kept, no probe-batch built). A probe whose output
// did not fit the batch runs again alone.
std::vector<ProbeRun> run_probes_in_image(const ImageHost& api, const std::string& image,
                                          const std::vector<ProbeSpec>& specs,
                                          const std::filesystem::path& probes_dir, int gpus,
                                          int timeout_s, const std::string& run_label);

ProbeRun run_probe_on_host(const ProbeSpec& p, const std::filesystem::path& probes_dir,
                           int timeout_s);

// One shell command in the image, for facts no probe reports (/etc/os-release, glibc, /dev/shm).
Result<std::string> run_shell_in_image(const ImageHost& api, const std::string& image,
                                       const std::string& script, const std::string& run_label);

}  // namespace td::engine
