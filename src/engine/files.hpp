#pragma once
// File-system I/O. Every failure is a value (Result) carrying the path and the OS reason.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace td::engine {

Result<std::string> read_text_file(const std::filesystem::path& path);

// Reads `path` ("-": standard input) in blocks of at most `block_bytes`, handing each to
// `sink` in order, so memory stays at one block whatever the size of the file or the
// stream. Returns the bytes read. A directory is refused; a Ctrl-C stops the reading with
// an Io error saying so.
Result<std::uint64_t> read_blocks(const std::string& path, std::size_t block_bytes,
                                  const std::function<void(std::string_view)>& sink);

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
