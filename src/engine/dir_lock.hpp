#pragma once
// An exclusive advisory lock (flock) on a lock file in a directory, held for a
// read-modify-write of files there (`kb refresh` on the data directory). The kernel drops
// the lock when the process ends, however it ends, so a killed run never leaves it held.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "util/result.hpp"

namespace td::engine {

class DirLock {
  public:
    // Waits up to `wait` for the lock on `dir`/`name` (created if missing), calling
    // `on_wait` once when another process holds it. Error (Environment) when the wait ends
    // with the lock still held, naming the lock file; Io when it cannot be opened.
    static Result<DirLock> acquire(
        const std::filesystem::path& dir, const std::string& name, std::chrono::milliseconds wait,
        const std::function<void(const std::filesystem::path&)>& on_wait);
    DirLock(DirLock&& other) noexcept;
    DirLock& operator=(DirLock&& other) noexcept;
    DirLock(const DirLock&) = delete;
    DirLock& operator=(const DirLock&) = delete;
    ~DirLock();

    const std::filesystem::path& path() const { return m_path; }

  private:
    DirLock(int fd, std::filesystem::path path) : m_fd(fd), m_path(std::move(path)) {}
    int m_fd = -1;
    std::filesystem::path m_path;
};

}  // namespace td::engine
