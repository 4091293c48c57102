#pragma once
// Where torchdock finds its knowledge base and its probes: a flag, else an environment
// variable, else a path relative to the running binary's own directory (the installed
// layout, which the build tree mirrors: ../share/torchdock/data, ../libexec/torchdock/probes;
// see cmake/install_layout.cmake). No absolute path is compiled in.
#include <filesystem>
#include <optional>
#include <string>

#include "core/validate/platform.hpp"
#include "util/result.hpp"

namespace td::engine {

// A directory and how it was chosen, for messages: "--probes", "$TORCHDOCK_PROBES", or
// "relative to the binary /usr/bin/torchdock".
struct LocatedDir {
    std::filesystem::path path;
    std::string chosen_by;
};

// The running binary, symlinks resolved (a link in /usr/local/bin still finds /usr/share);
// empty when /proc/self/exe cannot be read.
std::filesystem::path own_binary();

// --data, else $TORCHDOCK_DATA, else <binary dir>/../share/torchdock/data (symlinks resolved,
// so the build tree's link names the source data/ it points to).
LocatedDir locate_data_dir(const std::optional<std::string>& flag);

// --probes, else $TORCHDOCK_PROBES, else <binary dir>/../libexec/torchdock/probes.
LocatedDir locate_probes_dir(const std::optional<std::string>& flag);

// The probe directory is usable: a directory holding probe-env and torch_probe.py (the two
// every command that runs probes starts with). Otherwise a Config error naming the directory,
// how it was chosen, what is missing, and the fix (--probes DIR or $TORCHDOCK_PROBES).
Status check_probes_dir(const LocatedDir& dir);

// The probes that read an image of `image_arch` on an engine of `engine_arch`, and how
// (core/validate/platform reading_tier): `probes_dir` itself, or the linux-arm64 set in it
// for an arm64 image on another engine, which runs under qemu-user where this host emulates
// arm64 (host_emulates) and the set was built. `files_only`: --files-only.
struct ImageReading {
    std::filesystem::path probes_dir;  // the set to run: the linux-arm64 one when emulated
    ReadingTier tier;
    // A probe timeout for this tier: `native_s`, three times that under qemu-user (torch's
    // import took about 34 s emulated here).
    int timeout_s(int native_s) const {
        return tier.kind == ReadingTier::Emulated ? 3 * native_s : native_s;
    }
};
ImageReading image_reading(const std::filesystem::path& probes_dir, const std::string& image_arch,
                           const std::string& engine_arch, bool files_only);

}  // namespace td::engine
