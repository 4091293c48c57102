#pragma once
// CUDA fatbin containers: the format the CUDA toolchain (nvcc, fatbinary) writes into
// `.nv_fatbin` and that the driver reads at module load. Only the headers are read, never
// a payload: the architecture list is in the entry headers, so compressed entries are
// counted, not decompressed.
//
// Layout (little-endian; learnt from the toolkit's fatbinary_section.h (section names),
// public descriptions such as GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md,
// and checked against cuobjdump 13.4 on objects built with nvcc 13.0 and on the
// toolkit's own libraries; see tests/data/kernels/ and tests/e2e/probes/):
//
//   container header, 16 bytes: u32 magic 0xBA55ED50, u16 version (1), u16 header size
//     (16), u64 size of the entries that follow the header.
//   entry header, `header size` bytes (64 to 128 seen): u16 kind (1 PTX, 2 ELF/SASS,
//     8 LTO-IR), u16 (0x0101), u32 header size, u64 payload size (padded to 8), u32
//     compressed size, u32, u16 minor and u16 major version (PTX: the PTX ISA version;
//     ELF: the cubin format version), u32 arch (cc*10), u32/u32 name offset and length,
//     u64 flags, u64, u64 uncompressed size. The next entry starts at header + header size
//     + payload size.
//   flags: 0x1 64-bit, 0x10 Linux, 0x2000 compressed with LZ4 (torch 2.9.1+cu128's
//     payloads start with an LZ4 block token and a literal "\x7fELF"), 0x8000 compressed
//     with zstd (nvcc 13.0's start with zstd's frame magic 28 b5 2f fd), 0x100000
//     arch-specific target (sm_90a), 0x200000 family-specific target (sm_100f): each
//     seen to follow nvcc's -gencode and -Xfatbin options on the fixtures.
//
// Bounded on any input: entry headers of at most kMaxEntryHeader bytes, at most
// limits.max_entries_per_container entries kept per container, at most
// limits.max_containers containers per region; searching reads chunks of kScanChunk.
// Part of the kernels domain: pure, C++17, standard library only (see arch.hpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/kernels/arch.hpp"
#include "core/kernels/byte_source.hpp"

namespace td::kernels {

inline constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
inline constexpr std::uint64_t kFlagCompressedLz4 = 0x2000;
inline constexpr std::uint64_t kFlagCompressedZstd = 0x8000;
inline constexpr std::uint64_t kFlagArchSpecific = 0x100000;
inline constexpr std::uint64_t kFlagFamilySpecific = 0x200000;
inline constexpr std::uint32_t kMinEntryHeader = 64;
inline constexpr std::uint32_t kMaxEntryHeader = 4096;
inline constexpr std::size_t kScanChunk = 1 << 20;

enum class EntryKind : std::uint8_t { ptx, sass, ltoir, other };

struct FatbinEntry {
    EntryKind kind = EntryKind::other;
    std::uint16_t raw_kind = 0;
    Arch arch;       // number from the arch field, suffix from the flags
    PtxIsa version;  // PTX: PTX ISA version; SASS: cubin format version
    std::uint64_t flags = 0;
    bool compressed = false;
    std::uint64_t offset = 0;  // of the entry header, in the source
    std::uint32_t header_size = 0;
    std::uint64_t payload_size = 0;  // as stored (compressed, padded)
    std::uint32_t raw_arch = 0;      // the arch field as written
};

struct FatbinContainer {
    std::uint64_t offset = 0;  // of the container header, in the source
    std::uint64_t size = 0;    // header + entries
    std::vector<FatbinEntry> entries;
    bool entries_truncated = false;  // more than max_entries_per_container
};

struct FatbinLimits {
    std::uint64_t max_containers = 1u << 20;  // per region
    std::size_t max_entries_per_container = 4096;
    std::uint64_t max_search_bytes = ~std::uint64_t{0};  // bytes read while searching
};

// How a region holds containers. `sequence`: a fatbin section (.nv_fatbin,
// __nv_relfatbin): containers one after another, anything that does not parse is a
// problem. `search`: any other section: containers may sit anywhere 8-byte aligned among
// other data; a candidate that does not parse is not a container (no problem reported).
enum class RegionMode : std::uint8_t { sequence, search };

struct RegionScan {
    std::uint64_t containers = 0;
    std::uint64_t bytes_searched = 0;
    bool truncated = false;             // a limit stopped the scan early
    std::vector<std::string> problems;  // at most kMaxProblems
};
inline constexpr std::size_t kMaxProblems = 16;

inline constexpr std::size_t kContainerHeaderBytes = 16;
inline constexpr std::uint16_t kMaxContainerHeader = 256;

// The pieces parse_container and the streaming scanner (fatbin_stream.hpp) share.
// `h`: the 16 bytes of a container header at `offset`. Checks magic, version and header
// size; `room` is how many bytes the region has from `offset` on (the body must fit).
// Returns the container's size (header + body), or 0 with `why` set.
std::uint64_t check_container_header(const unsigned char* h, std::uint64_t offset,
                                     std::uint64_t room, std::string& why);
// `e`: the first kMinEntryHeader bytes of an entry header at `offset`.
FatbinEntry decode_entry(const unsigned char* e, std::uint64_t offset);
// Header size in range, header and payload within `room` (bytes from the entry to its
// container's end); `strict` (searching): a known kind and an arch of 10..999 as well.
bool check_entry(const FatbinEntry& entry, std::uint64_t room, bool strict, std::string& why);
// "0x3ff7d10": how offsets appear in problems.
std::string hex_offset(std::uint64_t v);

// Parses the container at `offset`, which must end by `end`. On failure returns false
// and says why in `why`; `out` is then unspecified.
bool parse_container(const ByteSource& src, std::uint64_t offset, std::uint64_t end,
                     const FatbinLimits& limits, FatbinContainer& out, std::string& why);

// Finds and parses every container in [offset, offset + size) and hands each to `visit`.
RegionScan scan_region(const ByteSource& src, std::uint64_t offset, std::uint64_t size,
                       RegionMode mode, const FatbinLimits& limits,
                       const std::function<void(const FatbinContainer&)>& visit);

}  // namespace td::kernels
