#pragma once
// Reads the image as `docker run IMAGE python` runs it (core/validate/runtime_env): probe-env
// once with the ENTRYPOINT removed (the environment the image configures, which python and
// python3 its PATH resolves to, the ENTRYPOINT script's first bytes), and, when the
// ENTRYPOINT is a wrapper that runs its arguments, once through it (30 s at most), so the
// probes can run in the environment it sets up, with the entrypoint itself removed.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/runtime_env.hpp"
#include "engine/docker_api.hpp"

namespace td::engine {

struct RuntimeReading {
    RuntimePlan plan;
    EntrypointVerdict entrypoint;
    std::map<std::string, ProbeRun> probes;  // "env", and "env_entrypoint" for a wrapper
};

// `files_only` set (to the image's ELF machine, "" when unknown): the files-only tier
// (core/validate/platform): a wrapper ENTRYPOINT is not run (it is the image's code), and the
// plan gets the machine and the import directories read from names.
RuntimeReading read_runtime(const DockerApi& api, const std::string& image, const ImageInfo& info,
                            const std::filesystem::path& probes_dir,
                            const std::optional<std::string>& python_override,
                            const std::string& run_label,
                            const std::optional<std::string>& files_only = std::nullopt);

struct ProbeSpec;

// read_runtime, then `specs` through engine::run_probes in that environment (GPUs: 0 none,
// -1 all, N), each probe with `timeout_s`. The result's probes hold the environment readings
// too ("env", "env_entrypoint").
RuntimeReading probe_image(const DockerApi& api, const std::string& image, const ImageInfo& info,
                           std::vector<ProbeSpec> specs, const std::filesystem::path& probes_dir,
                           const std::optional<std::string>& python_override, int gpus,
                           int timeout_s, const KnowledgeBase& kb, const std::string& run_label,
                           const std::optional<std::string>& files_only = std::nullopt);

}  // namespace td::engine
