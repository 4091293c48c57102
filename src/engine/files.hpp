#pragma once
// File-system I/O. Every failure is a value (Result) carrying the path and the OS reason.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace td::engine {

Result<std::string> read_text_file(const std::filesystem::path& path);

// Every regular file under `dir` (recursively), keyed by its path relative to `dir` with
// '/' separators. Hidden entries (starting with '.') are skipped. A missing dir is empty.
Result<std::map<std::string, std::string>> read_tree(const std::filesystem::path& dir);

// Replaces `dir` with exactly `files`, atomically: the new tree is written beside it and
// swapped in with one renameat2(RENAME_EXCHANGE); a failure before the swap leaves the old
// tree untouched and removes the partial new one (a failure to delete the old tree after
// the swap is reported, with the new tree in place). Refuses (Config) to replace anything
// but a missing path, an empty directory or a tree torchdock rendered.
Status write_tree_atomically(const std::filesystem::path& dir,
                             const std::map<std::string, std::string>& files);

// Writes each file inside `dir` atomically (temp file + rename), leaving other files alone.
Status write_files(const std::filesystem::path& dir,
                   const std::map<std::string, std::string>& files);

}  // namespace td::engine
