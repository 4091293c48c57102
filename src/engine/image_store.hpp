#pragma once
// Images without an engine: read from an OCI layout (oci:), an OCI or `docker save` archive
// (oci-archive:, docker-archive:), a registry (docker://, engine/registry_pull) or an enroot
// squashfs file (squashfs:, through squashfs-tools' unsquashfs), and unpacked into a root file
// system for the sandbox (engine/sandbox).
//
// The store lives in $TORCHDOCK_CACHE_DIR/images, else for root /var/cache/torchdock/images
// (the images' users must be able to reach it), else <cache>/images (engine/file_probe_cache
// cache_dir):
//   blobs/sha256/<hex>   layers and configurations, each verified against its digest
//   roots/<chain>/       a root file system per chain of layers (the chain: sha256 over the
//                        ordered, verified blob digests), made from the chain one layer shorter
//                        by hard links (engine/layer_unpack link_tree) plus the top layer, so
//                        images sharing their lower layers share their files
//   roots/<chain>.json   when it was made and last used, and what its own layer added
// Every write is to a temporary name renamed into place, so two runs at once or a run
// killed halfway leave no half-made root under its final name. `prune_store` keeps the
// store under a size cap, the least recently used roots first.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/build/image_source.hpp"
#include "engine/docker_api.hpp"
#include "util/result.hpp"

namespace td::engine {

struct StoreOptions {
    std::filesystem::path dir;             // the store; default_store_dir() when empty
    std::string platform = "linux/amd64";  // the manifest of an index to use
    std::uint64_t max_image_bytes = std::uint64_t{64} << 30;  // one image's files, unpacked
    std::chrono::milliseconds registry_timeout{std::chrono::minutes(30)};
};

struct LocalImage {
    ImageInfo info;                                          // as the engine's inspect gives it
    std::filesystem::path root;                              // the unpacked root file system
    bool cached = false;                                     // every layer was unpacked already
    std::uint64_t unpacked_bytes = 0, compressed_bytes = 0;  // this run's unpacking
    double unpack_seconds = 0, fetch_seconds = 0;
    std::string source;  // "docker-archive:/tmp/x.tar:repo:tag"
};

std::filesystem::path default_store_dir();

// Reads `source` (not an engine image) and makes its root; Error naming the file, member
// or blob and what is wrong with it.
Result<LocalImage> open_local_image(const ImageSource& source, const StoreOptions& options = {});

struct StoreEntry {
    std::string chain;
    std::uint64_t bytes = 0;  // what its own layer added
    long long last_used = 0;  // seconds since the epoch
};
Result<std::vector<StoreEntry>> list_store(const std::filesystem::path& dir);
// Removes the least recently used roots until the store holds at most `max_bytes` (what
// each root's own layer added); 0 empties it. `keep`: a root in use, never removed. Returns
// the bytes freed.
Result<std::uint64_t> prune_store(const std::filesystem::path& dir, std::uint64_t max_bytes,
                                  const std::filesystem::path& keep = {});

}  // namespace td::engine
