#pragma once
// The parts of a ZIP archive (APPNOTE 6.3) needed to read one member of a remote wheel
// with range requests: the end-of-central-directory record (ZIP64 included), the
// central directory, and a member's local header. Pure: works on byte strings handed in,
// with every offset and length checked against them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace td::pypi {

struct ZipEntry {
    std::string name;
    std::uint16_t method = 0;  // 0 stored, 8 deflate
    std::uint64_t compressed_size = 0, uncompressed_size = 0, local_header_offset = 0;
    std::uint32_t crc32 = 0;
};

struct CentralDirectoryLocation {
    std::uint64_t offset = 0, size = 0, entries = 0;
};

// How many bytes at the end of an archive to fetch first: the EOCD record (22 bytes plus
// a comment of up to 64 KiB) and, usually, the whole central directory of a small wheel.
constexpr std::uint64_t k_zip_tail_bytes = 128 * 1024;

// Finds the central directory from `tail`, the last bytes of an archive of `archive_size`
// bytes. Handles the ZIP64 locator when it lies inside `tail`.
Result<CentralDirectoryLocation> locate_central_directory(std::string_view tail,
                                                          std::uint64_t archive_size);

// Parses `bytes`, the whole central directory. At most 1,000,000 entries.
Result<std::vector<ZipEntry>> parse_central_directory(std::string_view bytes);

// The offset of a member's data from its local header (`header` holds at least the 30
// fixed bytes; the name and extra field lengths come from it).
Result<std::uint64_t> member_data_offset(std::string_view header, const ZipEntry& entry);

// The "<name>-<version>.dist-info/METADATA" member of a wheel, if present (the shortest
// such path wins; a wheel has exactly one).
const ZipEntry* find_wheel_metadata(const std::vector<ZipEntry>& entries);

}  // namespace td::pypi
