#pragma once
// Owner, mode and real path of host files, for the trust rules of core/build/settings_trust.
#include <filesystem>
#include <optional>
#include <string>

#include "core/build/settings_trust.hpp"

namespace td::engine {

// stat(2) of `path`, following symlinks; kind `missing` when it cannot be read.
FileFacts stat_facts(const std::filesystem::path& path);

// realpath(3): absolute, every symlink resolved; nothing when the path does not resolve.
std::optional<std::string> real_path(const std::filesystem::path& path);

// The user torchdock runs as (the effective uid).
unsigned current_uid();

}  // namespace td::engine
