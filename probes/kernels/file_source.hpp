#pragma once
// A file as a td::kernels::ByteSource, read with pread: the audit asks for headers and
// 1 MiB search chunks only, so a 1 GB libtorch_cuda.so costs a few MB of memory (the page
// cache is the kernel's, not this process's RSS).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/kernels/byte_source.hpp"

namespace kernelsprobe {

class FileSource final : public td::kernels::ByteSource {
  public:
    explicit FileSource(const std::string& path)
        : m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        if (m_fd < 0) {
            m_error = std::strerror(errno);
            return;
        }
        struct stat st;
        if (::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            m_error = "not a regular file";
            ::close(m_fd);
            m_fd = -1;
            return;
        }
        m_size = static_cast<std::uint64_t>(st.st_size);
    }
    ~FileSource() override {
        if (m_fd >= 0) ::close(m_fd);
    }
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;

    bool ok() const { return m_fd >= 0; }
    const std::string& error() const { return m_error; }
    std::uint64_t size() const override { return m_size; }
    bool read(std::uint64_t offset, void* out, std::size_t n) const override {
        if (m_fd < 0 || offset > m_size || n > m_size - offset) return false;
        auto* p = static_cast<unsigned char*>(out);
        while (n > 0) {
            ssize_t got = ::pread(m_fd, p, n, static_cast<off_t>(offset));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return false;
            p += got;
            n -= static_cast<std::size_t>(got);
            offset += static_cast<std::uint64_t>(got);
        }
        return true;
    }

  private:
    int m_fd = -1;
    std::uint64_t m_size = 0;
    std::string m_error;
};

}  // namespace kernelsprobe
