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

namespace td::engine {

struct ProbeSpec;
using ProbeArgsMemo = std::map<std::string, std::vector<std::string>>;

// Whether `probe` only reads files (its answer can be cached by layers).
bool reads_files_only(const std::string& probe);

// "" when the probe binary cannot be read or the image has no layers (nothing is cached).
std::string file_probe_cache_key(const ImageInfo& info, const ProbeSpec& spec,
                                 const std::filesystem::path& probes_dir);
std::optional<ProbeRun> cached_probe_run(const std::string& probe, const std::string& key);
// Stores a run that is evidence (pass or fail); anything else is not kept.
void store_probe_run(const std::string& probe, const std::string& key, const ProbeRun& run);
std::filesystem::path cache_dir();

// The arguments the probes got the last time this probe set ran in this image, in this
// environment (run_probes' args_memo: a guess it checks, never evidence). Empty when none
// is kept; an entry that cannot be read or written is just a miss.
std::string args_memo_key(const ImageInfo& info, const std::vector<ProbeSpec>& specs,
                          const RuntimePlan& plan);
ProbeArgsMemo load_args_memo(const std::string& key);
void store_args_memo(const std::string& key, const ProbeArgsMemo& memo);

}  // namespace td::engine
