#pragma once
// probe-record's verdict for an image is a function of the image's files (its layers), the
// user it reads them as, the site directories it is given and the probe itself: kept under
// those, so a second validate of the same image (or of one that only changes its
// configuration) does not hash gigabytes again. The cache lives in $TORCHDOCK_CACHE_DIR,
// else $XDG_CACHE_HOME/torchdock, else ~/.cache/torchdock (subdirectory record/); an entry
// that cannot be read or written is just a miss.
#include <filesystem>
#include <optional>
#include <string>

#include "core/validate/probe_run.hpp"
#include "engine/docker_api.hpp"

namespace td::engine {

struct ProbeSpec;

// "" when the probe binary cannot be read (then nothing is cached).
std::string record_cache_key(const ImageInfo& info, const ProbeSpec& spec,
                             const std::filesystem::path& probes_dir);
std::optional<ProbeRun> cached_record(const std::string& key);
// Stores a run that is evidence (pass or fail); anything else is not kept.
void store_record(const std::string& key, const ProbeRun& run);
std::filesystem::path cache_dir();

}  // namespace td::engine
