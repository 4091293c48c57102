#pragma once
// The settings of `build` and `lock`: the settings file (core/build/settings.hpp), if any,
// with the flags on top.
#include <filesystem>
#include <optional>
#include <string>

#include "app/commands.hpp"
#include "core/build/settings.hpp"
#include "util/result.hpp"

namespace td::app {

// Errors name the file, line and JSON path, or the flag. The netrc file must be a regular
// file; its path comes back absolute.
// `check_waiver` judges the file's "waivers" (validate passes core/validate's waiver_problem).
Result<Settings> load_settings(const SettingsOptions& opts, const WaiverCheck& check_waiver = {});

// The settings file when neither --config nor $TORCHDOCK_CONFIG names one: torchdock.json in
// `start` or a directory above it, up to the repository root (the first with .git), then
// $XDG_CONFIG_HOME/torchdock/torchdock.json (~/.config when unset). Nothing if none exists.
std::optional<std::string> find_settings_file(const std::filesystem::path& start);

}  // namespace td::app
