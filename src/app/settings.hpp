#pragma once
// The settings of `build`, `lock` and `validate`: the settings file (core/build/settings.hpp),
// if any, with the flags on top. Who wrote the file decides what it may do
// (core/build/settings_trust.hpp).
#include <filesystem>
#include <optional>
#include <string>

#include "app/commands.hpp"
#include "core/build/settings.hpp"
#include "core/build/settings_trust.hpp"
#include "util/result.hpp"

namespace td::app {

// Errors name the file, line and JSON path, or the flag. The settings file in use is named
// on stderr (a note; nothing with -q). The netrc file must be a regular file the user owns,
// not under /proc, /sys or /dev, and named by the user (--index-netrc or their own
// settings), never by the working tree's torchdock.json; its path comes back real
// (symlinks resolved). `check_waiver` judges the file's "waivers" (validate passes
// core/validate's waiver_problem).
Result<Settings> load_settings(const SettingsOptions& opts, const WaiverCheck& check_waiver = {});

struct SettingsFile {
    std::string path;
    SettingsOrigin origin = SettingsOrigin::repository;
};

// The settings file when neither --config nor $TORCHDOCK_CONFIG names one: torchdock.json in
// `start` or a directory above it, up to the repository root (the first with .git) or the
// home directory ($HOME), only `start` itself when neither is above it; then
// $XDG_CONFIG_HOME/torchdock/torchdock.json (~/.config when unset). Nothing if none exists.
// A file found is refused (an error saying how to trust it: --config or $TORCHDOCK_CONFIG)
// when it, or a directory from the one holding it up to where the search stops, is owned by
// another user than the invoking one or root, or is writable by group or others; and a
// repository's file that resolves outside the repository.
Result<std::optional<SettingsFile>> find_settings_file(const std::filesystem::path& start);

}  // namespace td::app
