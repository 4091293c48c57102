#pragma once
// The probes that only read files (probe-record: every file of torch's wheels against its
// RECORD; probe-kernels: the GPU code in every object) give an answer that is a function of
// the image's files (its layers), the user they are read as, the probe's arguments, the
// LD_LIBRARY_PATH its container sees (probe-kernels scans it) and the probe itself. Kept under
// those, so a second validate of the same image (or of one that only changes its configuration)
// does not hash gigabytes again. The cache lives in $TORCHDOCK_CACHE_DIR, else
// $XDG_CACHE_HOME/torchdock, else ~/.cache/torchdock (subdirectory probes/); an entry that cannot
// be read or written is just a miss.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/validate/probe_run.hpp"
#include "core/validate/runtime_env.hpp"
#include "engine/docker_api.hpp"
#include "engine/probe_exec.hpp"

namespace td::engine {

// Whether `probe` only reads files (its answer can be cached by layers).
bool reads_files_only(const std::string& probe);

// "" when the probe binary cannot be read or the image has no layers (nothing is cached).
std::string file_probe_cache_key(const ImageInfo& info, const ProbeSpec& spec,
                                 const std::filesystem::path& probes_dir);
std::optional<ProbeRun> cached_probe_run(const std::string& probe, const std::string& key);
// Stores a run that is evidence (pass or fail); anything else is not kept.
void store_probe_run(const std::string& probe, const std::string& key, const ProbeRun& run);
std::filesystem::path cache_dir();

// The specs the probes ran with the last time this probe set ran in this image (a guess
// run_probes checks, never evidence), from which probe set and with how many GPUs, kept per
// caller (`purpose`), interpreter override and probe timeout. An entry that cannot be read or
// written is just a miss.
struct KeptProbeMemo {
    std::filesystem::path probes_dir;
    int gpus = 0;
    ProbeMemo specs;
};
std::string probe_memo_key(const ImageInfo& info, const std::string& purpose,
                           const std::optional<std::string>& python_override, int timeout_s);
std::optional<KeptProbeMemo> load_probe_memo(const std::string& key);
void store_probe_memo(const std::string& key, const KeptProbeMemo& memo);

}  // namespace td::engine
