#pragma once
// Where the kernel audit reads bytes from: an interface over "give me n bytes at offset
// o", so one parser serves a file read with pread (probes/kernels), a memory buffer (tests,
// the fuzzer), an mmap, or HTTP range reads of a wheel member. The parser asks for small
// pieces (headers) and, when it scans a section, for chunks of at most kScanChunk bytes;
// it never asks for a whole object.
//
// Part of the kernels domain: pure, C++17, standard library only (see arch.hpp).
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace td::kernels {

class ByteSource {
  public:
    virtual ~ByteSource() = default;
    // Total size in bytes.
    virtual std::uint64_t size() const = 0;
    // Copies exactly n bytes at offset into out; false when that range cannot be read
    // (past the end, an I/O error). Never called with n == 0.
    virtual bool read(std::uint64_t offset, void* out, std::size_t n) const = 0;
};

// Bytes already in memory (a test fixture, the fuzzer's input, an mmap). Does not own them.
class MemoryByteSource final : public ByteSource {
  public:
    MemoryByteSource(const void* data, std::size_t size)
        : m_data(static_cast<const unsigned char*>(data)), m_size(size) {}
    std::uint64_t size() const override { return m_size; }
    bool read(std::uint64_t offset, void* out, std::size_t n) const override {
        if (offset > m_size || n > m_size - offset) return false;
        std::memcpy(out, m_data + offset, n);
        return true;
    }

  private:
    const unsigned char* m_data;
    std::size_t m_size;
};

// Little-endian loads from a byte buffer (ELF64 LSB and fatbins are little-endian).
namespace le {
inline std::uint16_t u16(const unsigned char* p) {
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
inline std::uint32_t u32(const unsigned char* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
inline std::uint64_t u64(const unsigned char* p) {
    return static_cast<std::uint64_t>(u32(p)) | (static_cast<std::uint64_t>(u32(p + 4)) << 32);
}
}  // namespace le

}  // namespace td::kernels
