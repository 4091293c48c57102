#include "engine/kernel_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace td::engine {

Result<std::unique_ptr<KernelFile>> KernelFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{ErrorKind::Io, path + ": cannot open: " + std::strerror(errno)};
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error{ErrorKind::Io, path + ": not a regular file"};
    }
    return std::unique_ptr<KernelFile>(new KernelFile(fd, static_cast<std::uint64_t>(st.st_size)));
}

KernelFile::~KernelFile() { ::close(m_fd); }

bool KernelFile::read(std::uint64_t offset, void* out, std::size_t n) const {
    if (offset > m_size || n > m_size - offset) return false;
    auto* p = static_cast<unsigned char*>(out);
    while (n > 0) {
        const ssize_t got = ::pread(m_fd, p, n, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        p += got;
        n -= static_cast<std::size_t>(got);
        offset += static_cast<std::uint64_t>(got);
    }
    return true;
}

}  // namespace td::engine
