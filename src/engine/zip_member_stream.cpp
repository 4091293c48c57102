#include "engine/zip_member_stream.hpp"

#include <zlib.h>

#include <algorithm>
#include <deque>
#include <future>
#include <optional>
#include <vector>

namespace td::engine {
namespace {

constexpr std::size_t k_out_bytes = 256u << 10;  // the sink sees pieces of at most this
constexpr std::uint64_t k_first_bytes = 4096;    // the local header and its name, usually

// zlib's raw inflater, released on every path.
class RawInflater {
  public:
    RawInflater() { m_ok = inflateInit2(&m_z, -MAX_WBITS) == Z_OK; }
    ~RawInflater() {
        if (m_ok) inflateEnd(&m_z);
    }
    RawInflater(const RawInflater&) = delete;
    RawInflater& operator=(const RawInflater&) = delete;
    bool ok() const { return m_ok; }
    z_stream& z() { return m_z; }

  private:
    z_stream m_z{};
    bool m_ok = false;
};

struct Chunk {
    std::uint64_t offset = 0, length = 0;
    std::future<Result<std::string>> body;
};

}  // namespace

Result<MemberStreamStats> stream_zip_member(const RangeFetch& fetch, std::uint64_t archive_size,
                                            const pypi::ZipEntry& member, const std::string& what,
                                            const MemberSink& sink,
                                            const MemberStreamOptions& opts) {
    const std::string where = what + ": " + member.name;
    auto damaged = [&](const std::string& why) {
        return Error{ErrorKind::Config, where + ": " + why};
    };
    MemberStreamStats stats;
    stats.compressed_size = member.compressed_size;
    stats.uncompressed_size = member.uncompressed_size;
    if (member.method != 0 && member.method != 8)
        return damaged("compression method " + std::to_string(member.method) +
                       " (only stored and deflate are read)");
    if (member.local_header_offset >= archive_size)
        return damaged("its local header lies past the archive's end");
    const std::uint64_t chunk = std::max<std::uint64_t>(opts.chunk_bytes, 1);

    // The first chunk holds the local header (30 bytes, name, extra field) and the start
    // of the data: one request instead of two.
    const std::uint64_t first_len = std::min(std::max<std::uint64_t>(chunk, k_first_bytes),
                                             archive_size - member.local_header_offset);
    auto fetched = fetch(member.local_header_offset, first_len);
    ++stats.requests;
    if (!fetched) return fetched.error();
    std::string head = std::move(fetched.value());
    stats.bytes_fetched += head.size();
    if (head.size() != first_len)
        return Error{ErrorKind::Environment, where + ": asked for " + std::to_string(first_len) +
                                                 " bytes, got " + std::to_string(head.size())};
    auto data_at = pypi::member_data_offset(head, member);
    if (!data_at) return Error{ErrorKind::Config, what + ": " + data_at.error().message};
    const std::uint64_t begin = data_at.value();
    if (begin > archive_size || member.compressed_size > archive_size - begin)
        return damaged("its data (" + std::to_string(member.compressed_size) +
                       " bytes) runs past the archive's end");
    const std::uint64_t end = begin + member.compressed_size;

    // Ranges after the first chunk, fetched `ahead` at a time in the background.
    std::uint64_t next_offset = member.local_header_offset + first_len;
    std::deque<Chunk> in_flight;
    auto launch = [&] {
        while (next_offset < end &&
               in_flight.size() < static_cast<std::size_t>(std::max(0, opts.ahead)) + 1) {
            Chunk c;
            c.offset = next_offset;
            c.length = std::min(chunk, end - next_offset);
            c.body = std::async(std::launch::async,
                                [&fetch, o = c.offset, l = c.length] { return fetch(o, l); });
            next_offset += c.length;
            in_flight.push_back(std::move(c));
            ++stats.requests;
        }
    };
    // Whatever happens, count what the fetches still running bring in.
    auto settle = [&] {
        for (auto& c : in_flight)
            if (auto r = c.body.get()) stats.bytes_fetched += r->size();
        in_flight.clear();
    };

    RawInflater inflater;
    if (member.method == 8 && !inflater.ok())
        return Error{ErrorKind::Environment, "zlib: inflateInit2 failed"};
    std::vector<unsigned char> out(k_out_bytes);
    uLong crc = crc32(0L, Z_NULL, 0);
    bool stream_end = false, stopped = false;

    // Gives the bytes [piece, piece + n) of the member's data to zlib (or, stored, to the
    // sink). Sets `stopped` when the sink has enough.
    auto emit = [&](const unsigned char* p, std::size_t m) {
        crc = crc32(crc, p, static_cast<uInt>(m));
        stats.inflated += m;
        if (!sink(p, m)) stopped = true;
    };
    auto take = [&](const unsigned char* piece, std::size_t n) -> std::optional<Error> {
        stats.compressed_used += n;
        if (member.method == 0) {
            if (n > stats.uncompressed_size - stats.inflated)
                return damaged("its stored data is longer than its recorded size");
            emit(piece, n);
            return std::nullopt;
        }
        z_stream& z = inflater.z();
        z.next_in = const_cast<Bytef*>(piece);
        z.avail_in = static_cast<uInt>(n);
        bool full = false;  // the last call filled the output: more may be pending
        while (!stopped && !stream_end && (z.avail_in > 0 || full)) {
            z.next_out = out.data();
            z.avail_out = static_cast<uInt>(out.size());
            const int rc = inflate(&z, Z_NO_FLUSH);
            const std::size_t produced = out.size() - z.avail_out;
            full = z.avail_out == 0;
            if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
                return damaged("the deflate stream is corrupt near compressed byte " +
                               std::to_string(stats.compressed_used - z.avail_in) + " (zlib: " +
                               (z.msg ? std::string(z.msg) : std::to_string(rc)) + ")");
            if (produced > stats.uncompressed_size - stats.inflated)
                return damaged("it inflates to more than its recorded " +
                               std::to_string(stats.uncompressed_size) + " bytes");
            if (produced > 0) emit(out.data(), produced);
            if (rc == Z_STREAM_END) stream_end = true;
            if (rc == Z_BUF_ERROR) break;  // no progress: needs the next chunk
        }
        if (stopped) stats.compressed_used -= z.avail_in;  // what zlib did not need
        if (stream_end && (z.avail_in > 0 || stats.compressed_used < member.compressed_size))
            return damaged("its deflate stream ends at compressed byte " +
                           std::to_string(stats.compressed_used - z.avail_in) + " of " +
                           std::to_string(member.compressed_size));
        return std::nullopt;
    };

    // The data in the first chunk, then the rest.
    const std::uint64_t first_data_end = member.local_header_offset + first_len;
    if (begin < first_data_end) {
        std::uint64_t n = std::min(end, first_data_end) - begin;
        const auto* p = reinterpret_cast<const unsigned char*>(head.data()) +
                        (begin - member.local_header_offset);
        if (auto e = take(p, static_cast<std::size_t>(n))) return *e;
    } else {
        next_offset = begin;  // a header longer than a chunk (a huge extra field)
    }
    head = std::string();  // released before the next chunks arrive
    if (!stopped && !stream_end) launch();
    while (!stopped && !stream_end && !in_flight.empty()) {
        Chunk c = std::move(in_flight.front());
        in_flight.pop_front();
        launch();
        auto body = c.body.get();
        if (!body) {
            settle();
            return body.error();
        }
        stats.bytes_fetched += body->size();
        if (body->size() != c.length) {
            settle();
            return Error{ErrorKind::Environment, where + ": asked for " + std::to_string(c.length) +
                                                     " bytes at " + std::to_string(c.offset) +
                                                     ", got " + std::to_string(body->size())};
        }
        const std::uint64_t from = std::max(c.offset, begin);
        if (from < c.offset + c.length) {
            const auto* p =
                reinterpret_cast<const unsigned char*>(body->data()) + (from - c.offset);
            if (auto e = take(p, static_cast<std::size_t>(c.offset + c.length - from))) {
                settle();
                return *e;
            }
        }
    }
    settle();
    if (stopped) {
        stats.stopped_early = true;
        return stats;
    }
    if (member.method == 8 && !stream_end)
        return damaged("its deflate stream is cut off after " +
                       std::to_string(stats.compressed_used) + " of " +
                       std::to_string(member.compressed_size) + " compressed bytes");
    if (stats.inflated != stats.uncompressed_size)
        return damaged("inflates to " + std::to_string(stats.inflated) +
                       " bytes, not its recorded " + std::to_string(stats.uncompressed_size));
    if (crc != member.crc32) return damaged("fails its CRC-32 check");
    stats.crc_checked = true;
    return stats;
}

}  // namespace td::engine
