#pragma once
// Whose settings file this is, and what it may do (ARCHITECTURE.md, "inputs have owners").
// Pure: the facts about files (owner, mode, real paths) come from the engine.
//
// The invoking user's settings (--config, $TORCHDOCK_CONFIG, $XDG_CONFIG_HOME/torchdock)
// may name host files (the index netrc). A torchdock.json found by the search from the
// working directory belongs to the repository being rendered: it may set mirrors, indexes
// and waivers, never name a credentials file, and is used only when it and the directories
// that hold it are the user's (or root's) and not writable by group or others, like git's
// safe.directory.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/build/settings.hpp"

namespace td {

enum class SettingsOrigin {
    flag,         // --config FILE
    environment,  // $TORCHDOCK_CONFIG
    user_config,  // $XDG_CONFIG_HOME/torchdock/torchdock.json (~/.config when unset)
    repository,   // torchdock.json found from the working directory upward
};

// "--config", "$TORCHDOCK_CONFIG", "your config directory", "the working tree's".
std::string settings_origin_name(SettingsOrigin origin);

// Whether settings from `origin` may name files on the host (a netrc): only the user's own.
bool may_name_host_files(SettingsOrigin origin);

// What stat(2) says about one path (after symlinks, unless said otherwise).
struct FileFacts {
    enum class Kind { missing, regular, directory, other };
    Kind kind = Kind::missing;
    unsigned uid = 0;   // owner
    unsigned mode = 0;  // permission bits, st_mode & 07777
};

// The directories the search for torchdock.json looks in, in order, from `start` (absolute,
// normalised) upward: up to and including the first that is a repository root
// (`is_repository_root`: it holds .git) or is `home` (the user's home directory). When
// neither lies on the way to "/", only `start` itself: the search never walks to "/".
std::vector<std::string> settings_search_dirs(
    std::string_view start, std::string_view home,
    const std::function<bool(const std::string& dir)>& is_repository_root);

// Why `path` (a settings file or a directory holding one) cannot be trusted for the user
// `user_uid`, "" when it can: owned by the user or root, and not writable by group or
// others (a sticky world-writable directory such as /tmp included).
std::string trust_problem(std::string_view path, const FileFacts& facts, unsigned user_uid);

// Whether `path` lies inside the directory `root`, both real (absolute, symlinks resolved,
// no "." or ".."): "/r/a" is inside "/r", "/r" is inside "/r", "/rx" is not.
bool path_within(std::string_view root, std::string_view path);

// Why the settings from `origin` are refused as written, "" when not: a repository's file
// naming a credentials file (indexes.netrc). `file` names the settings file in the message.
std::string origin_problem(SettingsOrigin origin, const Settings& settings, std::string_view file);

// Why `real_path` (symlinks resolved) cannot be handed to a build as the index credentials
// (`what`: "the index credentials file"), "" when it can: a regular file, not under /proc,
// /sys or /dev, owned by the user `user_uid`, not writable by group or others.
std::string secret_file_problem(std::string_view what, std::string_view real_path,
                                const FileFacts& facts, unsigned user_uid);

}  // namespace td
