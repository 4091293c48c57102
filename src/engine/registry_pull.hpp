#pragma once
// Reading an image from a registry without an engine (docker://): its manifest (an index
// picks the platform's), its configuration and its layers, each verified against its digest.
// A 401 is answered as the registry asks: a Bearer token from its realm, or Basic; the login
// is the Docker client's (`docker login` writes it to $DOCKER_CONFIG/config.json, else
// ~/.docker/config.json; credential helpers are not run). Implemented in engine/registry.cpp,
// beside the digest resolution `lock` uses.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/build/image_ref.hpp"
#include "util/result.hpp"

namespace td::engine {

struct PulledImage {
    std::string config, config_digest;
    std::vector<std::string> layer_digests;  // bottom first, as the manifest lists them
};

Result<PulledImage> resolve_registry_image(const ImageRef& ref, const std::string& platform,
                                           std::chrono::milliseconds timeout);
// Writes the blob `digest` of `ref`'s repository to `dest`; Error unless its bytes hash to it.
Status fetch_registry_blob(const ImageRef& ref, const std::string& digest,
                           const std::filesystem::path& dest, std::chrono::milliseconds timeout);

}  // namespace td::engine
