#pragma once
// Files for the kernel audit (core/kernels): a file opened as a ByteSource read with
// pread, so auditing a 1 GB libtorch_cuda.so costs headers and 1 MiB search chunks of
// memory, not the file. For torchdock-side audits (a host environment, a file at hand);
// inside images the audit runs in probes/kernels.
#include <memory>
#include <string>

#include "core/kernels/byte_source.hpp"
#include "util/result.hpp"

namespace td::engine {

class KernelFile final : public kernels::ByteSource {
  public:
    // Io error naming the path and the OS reason when it cannot be opened or is not a
    // regular file.
    static Result<std::unique_ptr<KernelFile>> open(const std::string& path);
    ~KernelFile() override;
    KernelFile(const KernelFile&) = delete;
    KernelFile& operator=(const KernelFile&) = delete;

    std::uint64_t size() const override { return m_size; }
    bool read(std::uint64_t offset, void* out, std::size_t n) const override;

  private:
    KernelFile(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
    int m_fd;
    std::uint64_t m_size;
};

}  // namespace td::engine
