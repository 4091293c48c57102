#pragma once
// Running the probes (probes/README.md): inside an image through a throwaway container, or
// natively on this host. Both return the parsed result (core/validate/probe_run.hpp ProbeRun).
#include <filesystem>
#include <string>
#include <vector>

#include "core/validate/checks.hpp"
#include "engine/docker_api.hpp"

namespace td::engine {

inline constexpr const char* k_probe_mount = "/opt/torchdock-probes";

struct ProbeSpec {
    std::string name;               // "cuda"
    std::string file;               // what must exist in the probe directory
    std::vector<std::string> args;  // flags
    bool python = false;            // run with the environment's python (torch_probe.py)
    bool gpu_only = false;
};

// The probes `validate` runs; `doctor` runs the same with lighter flags.
std::vector<ProbeSpec> validation_probes(bool gpu_tier);
std::vector<ProbeSpec> doctor_probes();

// The default probe directory: $TORCHDOCK_PROBES, else build/<preset>/probes-bin next to
// the running binary.
std::filesystem::path default_probes_dir();

ProbeRun run_probe_in_image(const DockerApi& api, const std::string& image, const ProbeSpec& p,
                            const std::filesystem::path& probes_dir, int gpus, int timeout_s,
                            const std::string& run_label);

// `python` is the interpreter for python probes (empty: python3 on PATH).
ProbeRun run_probe_on_host(const ProbeSpec& p, const std::filesystem::path& probes_dir,
                           int timeout_s, const std::string& python = {});

// One shell command in the image, for facts no probe reports (/etc/os-release, glibc, /dev/shm).
Result<std::string> run_shell_in_image(const DockerApi& api, const std::string& image,
                                       const std::string& script, const std::string& run_label);

}  // namespace td::engine
