#pragma once
// Reads the image as `docker run IMAGE python` runs it (core/validate/runtime_env): probe-env
// once with the ENTRYPOINT removed (the environment the image configures, which python and
// python3 its PATH resolves to, the ENTRYPOINT script's first bytes), and, when the
// ENTRYPOINT is a wrapper that runs its arguments, once through it (30 s at most), so the
// probes can run in the environment it sets up, with the entrypoint itself removed.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/platform.hpp"
#include "core/validate/runtime_env.hpp"
#include "engine/image_host.hpp"
#include "engine/install_layout.hpp"

namespace td::engine {

// probe-env run once in the image with the ENTRYPOINT removed, and the nonce it was given.
// When the image's configuration alone shows a wrapper ENTRYPOINT (`uv run`, `sh -c '...
// "$@"'`), probe-env also ran through it at the same time (`through`), from `probes_dir`.
struct EnvReading {
    ProbeRun run;
    std::string nonce;
    std::optional<ProbeRun> through;
    std::filesystem::path probes_dir;
};

// probe-env from this host's probe set: a static program, so it runs in an image whatever the
// image's files are built for, and no code of the image takes part. Reads what the image
// configures, what python and python3 run and the ELF identity of those files and of /bin/sh.
EnvReading read_environment(const ImageHost& api, const std::string& image, const ImageInfo& info,
                            const std::filesystem::path& host_probes_dir,
                            const std::string& run_label);

// How an image is read. Its platform comes from its files (core files_platform over
// read_environment's answer); the config's architecture is a claim, compared with them
// (`claim_problem`) and used only where no file says a platform. The tier and the probe set
// (install_layout image_reading) follow from the files' platform.
struct PlatformReading {
    ImageReading set;
    FilesPlatform files;
    std::string platform;       // "linux/amd64"; "" when neither the files nor the config say
    std::string machine;        // its ELF machine ("x86_64"): the files', else the config's
    std::string claim_problem;  // core platform_claim_problem; "" when they agree
    EnvReading env;             // handed on to probe_image, which does not read it again
};
PlatformReading read_platform(const ImageHost& api, const std::string& image, const ImageInfo& info,
                              const std::filesystem::path& host_probes_dir,
                              const std::string& engine_arch, bool files_only,
                              const std::string& run_label);

struct RuntimeReading {
    RuntimePlan plan;
    EntrypointVerdict entrypoint;
    std::map<std::string, ProbeRun> probes;  // "env", and "env_entrypoint" for a wrapper
};

// `files_only` set (to the image's ELF machine, "" when unknown): the files-only tier
// (core/validate/platform): a wrapper ENTRYPOINT is not run (it is the image's code), and the
// plan gets the machine and the import directories read from names. `env`: read_environment's
// answer already at hand (read_platform), else probe-env is run here.
RuntimeReading read_runtime(const ImageHost& api, const std::string& image, const ImageInfo& info,
                            const std::filesystem::path& probes_dir,
                            const std::optional<std::string>& python_override,
                            const std::string& run_label,
                            const std::optional<std::string>& files_only = std::nullopt,
                            const EnvReading* env = nullptr);

// The size of /dev/shm as probe-env read it in the container (statfs: no shell needed);
// nullopt when it did not answer.
std::optional<long long> env_shm_bytes(const std::map<std::string, ProbeRun>& probes);

struct ProbeSpec;
class EarlyProbes;

// A second run of the same probes on the same image starts them all before probe-env, with
// the specs they ran with last time (engine/early_probes): start_early, then read_platform
// and probe_image, which keeps an early run only where this run's own evidence gives the
// same spec (and the same probe set, GPUs and timeout), and records this run's specs for the next.
// `purpose` names the probe set's caller and options ("validate quick"): each its own memo.
struct EarlyStart {
    std::string key;                   // the memo's ("": nothing is kept, e.g. no image ID)
    std::filesystem::path probes_dir;  // the probe set the early runs came from
    int gpus = 0;
    int timeout_s = 0;
    std::shared_ptr<EarlyProbes> probes;
};
EarlyStart start_early(const ImageHost& api, const std::string& image, const ImageInfo& info,
                       const std::string& purpose,
                       const std::optional<std::string>& python_override, int timeout_s,
                       const std::string& run_label);

// read_runtime, then `specs` through engine::run_probes in that environment (GPUs: 0 none,
// -1 all, N), each probe with `timeout_s`. The result's probes hold the environment readings
// too ("env", "env_entrypoint"). `early`: start_early's (see there).
RuntimeReading probe_image(const ImageHost& api, const std::string& image, const ImageInfo& info,
                           std::vector<ProbeSpec> specs, const std::filesystem::path& probes_dir,
                           const std::optional<std::string>& python_override, int gpus,
                           int timeout_s, const KnowledgeBase& kb, const std::string& run_label,
                           const std::optional<std::string>& files_only = std::nullopt,
                           const EnvReading* env = nullptr, EarlyStart* early = nullptr);

}  // namespace td::engine
