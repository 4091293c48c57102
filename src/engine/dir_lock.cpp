#include "engine/dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "util/strings.hpp"

namespace td::engine {

Result<DirLock> DirLock::acquire(const std::filesystem::path& dir, const std::string& name,
                                 std::chrono::milliseconds wait,
                                 const std::function<void(const std::filesystem::path&)>& on_wait) {
    std::filesystem::path path = dir / name;
    // O_NOFOLLOW: a symlink planted as the lock file is not followed to another file.
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return Error{ErrorKind::Io, "cannot open the lock file " + quote_value(path.string()) +
                                        ": " + std::strerror(errno)};
    auto deadline = std::chrono::steady_clock::now() + wait;
    bool told = false;
    while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        if (errno != EWOULDBLOCK) {
            int e = errno;
            ::close(fd);
            return Error{ErrorKind::Io,
                         "cannot lock " + quote_value(path.string()) + ": " + std::strerror(e)};
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            ::close(fd);
            return Error{ErrorKind::Environment,
                         "another process holds the lock " + quote_value(path.string()) +
                             " (another `kb refresh` writing this data directory); waited " +
                             std::to_string(wait.count() / 1000) +
                             " s; nothing was written, run it again when that one has finished"};
        }
        if (!told && on_wait) {
            on_wait(path);
            told = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return DirLock(fd, std::move(path));
}

DirLock::DirLock(DirLock&& other) noexcept : m_fd(other.m_fd), m_path(std::move(other.m_path)) {
    other.m_fd = -1;
}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = other.m_fd;
        m_path = std::move(other.m_path);
        other.m_fd = -1;
    }
    return *this;
}

DirLock::~DirLock() {
    if (m_fd >= 0) ::close(m_fd);  // closing the last descriptor releases the flock
}

}  // namespace td::engine
