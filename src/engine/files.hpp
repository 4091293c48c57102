#pragma once
// File-system I/O. Every failure is a value (Result) carrying the path and the OS reason.
//
// Only what is meant is read or written: inputs must be regular files under a size cap (a
// FIFO, device or directory named like an input is refused, never waited on), and nothing
// below a tree root is reached through a symlink: a tree (the rendered Dockerfiles, the
// build work dir, a report's directory) can contain a committed symlink pointing anywhere.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace td::engine {

// The cap on a JSON input (manifest, lock, settings, index, fingerprint, knowledge base
// file) and on a rendered Dockerfile read back: far above any real one.
inline constexpr std::size_t k_max_input_bytes = std::size_t{16} << 20;

// Reads a regular file (a symlink to one is followed) of at most `max_bytes`. A directory,
// FIFO, socket or device is refused (Io, naming what it is) without blocking on it; so is a
// file over the cap (naming both sizes).
Result<std::string> read_text_file(const std::filesystem::path& path,
                                   std::size_t max_bytes = k_max_input_bytes);

// Reads `rel` (a relative path with '/' separators) below `root` without following a
// symlink anywhere below `root`: a symlinked directory or file there is refused (Io). The
// same checks as read_text_file otherwise.
Result<std::string> read_file_in_tree(const std::filesystem::path& root, const std::string& rel,
                                      std::size_t max_bytes = k_max_input_bytes);

// Reads `path` ("-": standard input) in blocks of at most `block_bytes`, handing each to
// `sink` in order, so memory stays at one block whatever the size of the file or the
// stream. Returns the bytes read. A directory, device or socket is refused (a FIFO is read
// like a pipe); a Ctrl-C stops the reading with an Io error saying so.
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

// Writes `files` into the tree at `dir` (render --only), leaving its other files alone;
// the same refusal as write_tree_atomically for a tree torchdock did not render, and the
// no-symlink rule of write_files.
Status write_into_rendered_tree(const std::filesystem::path& dir,
                                const std::map<std::string, std::string>& files);

enum class MissingDir { Create, Refuse };

// Writes each file below `dir` atomically (a new temp file, then rename over the name),
// leaving other files alone. Missing subdirectories are created; `dir` itself is created
// or refused as `missing` says. Never follows a symlink below `dir` (refused, Io). Writes
// regular files only: a name that is there and is a device, FIFO, socket, symlink or
// directory is refused (Io, naming it and what it is) before anything is written, never
// replaced (`--json=/dev/null` must not turn the host's /dev/null into a file); a missing
// name is created with RENAME_NOREPLACE, so a node made there meanwhile is not replaced.
Status write_files(const std::filesystem::path& dir,
                   const std::map<std::string, std::string>& files,
                   MissingDir missing = MissingDir::Refuse);

// A report file that will be written at the end of a run: refused now (Usage) when the
// path is empty, is a directory, or its directory does not exist, or it is there and not a
// regular file (a device, FIFO, socket or symlink, named with what it is), so no work is
// wasted and write_files's refusal is said before the work.
Status check_output_file(const std::string& flag, const std::string& path);

// A file created fresh for streaming writes (a build log) below `root`: a regular file at
// `rel` is replaced, anything else there (a symlink, device, FIFO, socket, directory) is
// refused like write_files does; directories below `root` are created and never followed
// when they are symlinks. Closed when destroyed.
class OutputFile {
  public:
    static Result<OutputFile> create(const std::filesystem::path& root, const std::string& rel);
    OutputFile(OutputFile&& o) noexcept : m_fd(o.m_fd), m_path(std::move(o.m_path)) { o.m_fd = -1; }
    OutputFile& operator=(OutputFile&&) = delete;
    OutputFile(const OutputFile&) = delete;
    ~OutputFile();
    Status write(const std::string& text);
    const std::string& path() const { return m_path; }

  private:
    OutputFile(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}
    int m_fd = -1;
    std::string m_path;
};

}  // namespace td::engine
