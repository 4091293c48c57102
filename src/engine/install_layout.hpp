#pragma once
// Where torchdock finds its knowledge base and its probes: a flag, else an environment
// variable, else a path relative to the running binary's own directory (the installed
// layout, which the build tree mirrors: ../share/torchdock/data, ../libexec/torchdock/probes;
// see cmake/install_layout.cmake). No absolute path is compiled in.
#include <filesystem>
#include <optional>
#include <string>

#include "util/result.hpp"

namespace td::engine {

// A directory and how it was chosen, for messages: "--probes", "$TORCHDOCK_PROBES", or
// "relative to the binary /usr/bin/torchdock".
struct LocatedDir {
    std::filesystem::path path;
    std::string chosen_by;
};

// --data, else $TORCHDOCK_DATA, else <binary dir>/../share/torchdock/data (symlinks resolved,
// so the build tree's link names the source data/ it points to).
LocatedDir locate_data_dir(const std::optional<std::string>& flag);

// --probes, else $TORCHDOCK_PROBES, else <binary dir>/../libexec/torchdock/probes.
LocatedDir locate_probes_dir(const std::optional<std::string>& flag);

// The probe directory is usable: a directory holding probe-env and torch_probe.py (the two
// every command that runs probes starts with). Otherwise a Config error naming the directory,
// how it was chosen, what is missing, and the fix (--probes DIR or $TORCHDOCK_PROBES).
Status check_probes_dir(const LocatedDir& dir);

}  // namespace td::engine
