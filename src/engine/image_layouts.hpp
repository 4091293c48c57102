#pragma once
// What an image read without an engine is made of, read far enough for the store
// (engine/image_store) to know its configuration and its layers' digests: an OCI image layout
// (a directory, or a tar of one), a `docker save` archive (both its layouts, linked members
// followed), or a registry (engine/registry_pull). Every index, manifest and configuration
// is checked against its digest as it is read; the layers when they are unpacked.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/build/image_source.hpp"
#include "util/result.hpp"

namespace td::engine {

// A layer: its digest, and (once staged) a local file holding it.
struct LayerBlob {
    std::string digest;
    std::filesystem::path path;
};

// The image's configuration and its layers; `stage` makes the layers given local files in
// the staging directory (a no-op for a layout directory, whose blobs are read in place).
struct ResolvedImage {
    std::string config, config_digest;
    std::vector<LayerBlob> layers;
    std::function<Status(std::vector<LayerBlob*>)> stage = [](std::vector<LayerBlob*>) {
        return ok_status();
    };
};

// "sha256:abc..." -> "abc...".
std::string hex_of(const std::string& digest);

// Reads `s` (OciDir, OciArchive, DockerArchive or Registry; `platform` picks an index's
// manifest); Error naming the file, member or blob and what is wrong with it.
Result<ResolvedImage> resolve_image(const ImageSource& s, const std::string& platform,
                                    std::chrono::milliseconds registry_timeout,
                                    const std::filesystem::path& staging);

}  // namespace td::engine
