#pragma once
// The probes for an engine on another machine: a named volume on that engine,
// "torchdock-probes-<key>" (the key: the files' names, sizes and modification times), filled
// once through a container that is created and never started (the image under test carries
// it; PUT /containers/ID/archive unpacks a tar of the directory's files into the volume) and
// then bound read-only where the local directory would be. A volume whose filling failed is
// removed, so a later run fills it again.
#include <filesystem>
#include <string>

#include "engine/docker_api.hpp"

namespace td::engine {

Result<std::string> remote_probe_volume(const DockerApi& api, const std::string& carrier_image,
                                        const std::filesystem::path& dir);

}  // namespace td::engine
