#pragma once
// Applies one image layer (a tar, plain, gzip or zstd, read with libarchive) to a root file
// system directory, by the OCI image spec's rules (layer.md): whiteouts (.wh.NAME) remove
// what lower layers put there, an opaque marker (.wh..wh..opq) empties its directory of lower
// layers' entries, hard links point at files already in the root. Every write goes through
// directory descriptors opened with O_NOFOLLOW from the root, so nothing is written outside
// it: a member whose parent is a symbolic link (writing through it could leave the root), a
// ".." or absolute path, and a hard link to something that is not a regular file already in
// the root are refused, and the layer with them. Symbolic links are made as they are:
// torchdock never follows one on the host, and the sandbox's kernel resolves them inside
// the root (an absolute target from the root, ".." stopping at it), as the engine does.
// A file is never changed in place (it is removed and written anew), so a root made of hard
// links to another (engine/image_store's chain cache) never changes that other.
#include <cstdint>
#include <filesystem>
#include <string>

#include "util/result.hpp"

namespace td::engine {

struct UnpackStats {
    std::uint64_t compressed_bytes = 0;  // read from the blob
    std::uint64_t bytes = 0;             // regular file contents written
    std::uint64_t entries = 0;
    std::uint64_t skipped_devices = 0;  // device nodes are not made (no privilege to)
    std::string digest;                 // sha256:<hex> of the blob as read
};

// Applies the layer in `blob` to `root`. `expected_digest` ("sha256:...", or "" to skip):
// the blob's bytes must hash to it, else an Error (the root is then partly written: the
// caller discards it). `max_bytes`: an Error once the contents written pass it.
Result<UnpackStats> unpack_layer(const std::filesystem::path& blob,
                                 const std::filesystem::path& root,
                                 const std::string& expected_digest, std::uint64_t max_bytes);

// Makes the directory `rel` ("opt/torchdock-probes") and its parents below `root` where
// missing (mode 0755), through the same O_NOFOLLOW walk: a symbolic link on the way is an
// Error, never followed. The sandbox's mount points, made before bubblewrap runs.
Status make_directories_in(const std::filesystem::path& root, const std::string& rel);

// A copy of the tree `from` at `to` (which must not exist) whose files are hard links to the
// originals and whose directories and symbolic links are new; modes and times kept.
Status link_tree(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace td::engine
