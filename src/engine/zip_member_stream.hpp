#pragma once
// Streams one member of a remote ZIP archive (a wheel) without downloading the archive:
// its local header and data are read in ranged chunks, inflated piece by piece (raw
// DEFLATE, ZIP method 8, with zlib; method 0 is copied), and handed to a sink that may stop
// the reading at any point. While one chunk is inflated, the next ones are already being
// fetched (`ahead` requests in flight), so download and inflation overlap.
//
// Memory: about (ahead + 1) chunks plus zlib's 32 KiB window and a 256 KiB output buffer,
// whatever the member's size. Read to its end, the member's size and CRC-32 are checked
// against the central directory; stopped early, they cannot be (stats say which).
#include <cstdint>
#include <functional>
#include <string>

#include "core/pypi/zip_directory.hpp"
#include "util/result.hpp"

namespace td::engine {

// Exactly `length` bytes of the archive from `offset`, or an error. Called from several
// threads at once when `ahead` > 0.
using RangeFetch = std::function<Result<std::string>(std::uint64_t offset, std::uint64_t length)>;

// Consecutive pieces of the member; returns false to stop the reading.
using MemberSink = std::function<bool(const unsigned char* data, std::size_t n)>;

struct MemberStreamOptions {
    std::uint64_t chunk_bytes = 8u << 20;  // bytes per range request
    int ahead = 6;                         // requests in flight beyond the chunk inflated
};

struct MemberStreamStats {
    std::uint64_t requests = 0;
    std::uint64_t bytes_fetched = 0;    // by range, chunks fetched ahead and not used included
    std::uint64_t compressed_used = 0;  // bytes of the member's data zlib consumed
    std::uint64_t compressed_size = 0;  // the member's, from the central directory
    std::uint64_t inflated = 0;         // bytes given to the sink
    std::uint64_t uncompressed_size = 0;
    bool stopped_early = false;  // the sink stopped the reading before the member's end
    bool crc_checked = false;    // read to its end; size and CRC-32 match the directory
};

// `archive_size` bounds every range; `what` (the archive's file name) starts every error.
// Errors: Config for a damaged archive (a bad local header, a corrupt or cut-off deflate
// stream, a size or CRC-32 that does not match), the fetch's own error otherwise.
Result<MemberStreamStats> stream_zip_member(const RangeFetch& fetch, std::uint64_t archive_size,
                                            const pypi::ZipEntry& member, const std::string& what,
                                            const MemberSink& sink,
                                            const MemberStreamOptions& opts = {});

}  // namespace td::engine
