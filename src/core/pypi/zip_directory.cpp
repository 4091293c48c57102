#include "core/pypi/zip_directory.hpp"

#include "util/strings.hpp"

namespace td::pypi {
namespace {

constexpr std::uint32_t k_eocd_sig = 0x06054b50, k_eocd64_sig = 0x06064b50,
                        k_locator_sig = 0x07064b50, k_central_sig = 0x02014b50,
                        k_local_sig = 0x04034b50;

std::uint64_t le(std::string_view b, std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
    return v;
}
std::uint16_t le16(std::string_view b, std::size_t at) {
    return static_cast<std::uint16_t>(le(b, at, 2));
}
std::uint32_t le32(std::string_view b, std::size_t at) {
    return static_cast<std::uint32_t>(le(b, at, 4));
}
std::uint64_t le64(std::string_view b, std::size_t at) { return le(b, at, 8); }

Error bad(const std::string& what) { return Error{ErrorKind::Config, "zip archive: " + what}; }

// Applies the ZIP64 extended-information extra field to the fields saved as 0xFFFFFFFF.
bool apply_zip64(std::string_view extra, ZipEntry& e, bool usize64, bool csize64, bool off64) {
    std::size_t i = 0;
    while (i + 4 <= extra.size()) {
        std::uint16_t id = le16(extra, i), len = le16(extra, i + 2);
        if (i + 4 + len > extra.size()) return false;
        if (id == 0x0001) {
            std::size_t p = i + 4, end = i + 4 + len;
            auto take = [&](std::uint64_t& field, bool wanted) {
                if (!wanted) return true;
                if (p + 8 > end) return false;
                field = le64(extra, p);
                p += 8;
                return true;
            };
            return take(e.uncompressed_size, usize64) && take(e.compressed_size, csize64) &&
                   take(e.local_header_offset, off64);
        }
        i += 4 + len;
    }
    return !(usize64 || csize64 || off64);
}

}  // namespace

Result<CentralDirectoryLocation> locate_central_directory(std::string_view tail,
                                                          std::uint64_t archive_size) {
    if (tail.size() < 22 || tail.size() > archive_size) return bad("too short for an end record");
    std::size_t at = std::string_view::npos;
    for (std::size_t i = tail.size() - 22 + 1; i-- > 0;) {
        if (le32(tail, i) != k_eocd_sig) continue;
        // The comment must run exactly to the end of the archive.
        if (i + 22 + le16(tail, i + 20) == tail.size()) {
            at = i;
            break;
        }
    }
    if (at == std::string_view::npos) return bad("no end-of-central-directory record");
    CentralDirectoryLocation loc{le32(tail, at + 16), le32(tail, at + 12), le16(tail, at + 10)};
    bool zip64 = loc.offset == 0xFFFFFFFFu || loc.size == 0xFFFFFFFFu || loc.entries == 0xFFFFu;
    if (zip64) {
        if (at < 20 || le32(tail, at - 20) != k_locator_sig) return bad("ZIP64 locator missing");
        std::uint64_t eocd64 = le64(tail, at - 20 + 8);
        std::uint64_t tail_start = archive_size - tail.size();
        if (eocd64 < tail_start || eocd64 - tail_start + 56 > tail.size())
            return bad("ZIP64 end record lies outside the fetched tail");
        std::size_t p = static_cast<std::size_t>(eocd64 - tail_start);
        if (le32(tail, p) != k_eocd64_sig) return bad("ZIP64 end record signature");
        loc.entries = le64(tail, p + 32);
        loc.size = le64(tail, p + 40);
        loc.offset = le64(tail, p + 48);
    }
    if (loc.offset > archive_size || loc.size > archive_size - loc.offset)
        return bad("central directory lies outside the archive");
    return loc;
}

Result<std::vector<ZipEntry>> parse_central_directory(std::string_view b) {
    std::vector<ZipEntry> out;
    std::size_t i = 0;
    while (i + 46 <= b.size()) {
        if (le32(b, i) != k_central_sig) return bad("bad central directory entry signature");
        if (out.size() >= 1000000) return bad("more than 1,000,000 entries");
        ZipEntry e;
        e.method = le16(b, i + 10);
        e.crc32 = le32(b, i + 16);
        e.compressed_size = le32(b, i + 20);
        e.uncompressed_size = le32(b, i + 24);
        std::size_t name_len = le16(b, i + 28), extra_len = le16(b, i + 30),
                    comment_len = le16(b, i + 32);
        e.local_header_offset = le32(b, i + 42);
        if (i + 46 + name_len + extra_len + comment_len > b.size())
            return bad("central directory entry runs past its end");
        e.name = std::string(b.substr(i + 46, name_len));
        std::string_view extra = b.substr(i + 46 + name_len, extra_len);
        if (!apply_zip64(extra, e, e.uncompressed_size == 0xFFFFFFFFu,
                         e.compressed_size == 0xFFFFFFFFu, e.local_header_offset == 0xFFFFFFFFu))
            return bad("bad ZIP64 extra field for " + quote_value(e.name));
        out.push_back(std::move(e));
        i += 46 + name_len + extra_len + comment_len;
    }
    if (i != b.size()) return bad("trailing bytes after the central directory");
    return out;
}

Result<std::uint64_t> member_data_offset(std::string_view header, const ZipEntry& entry) {
    if (header.size() < 30 || le32(header, 0) != k_local_sig)
        return bad("bad local header for " + quote_value(entry.name));
    return entry.local_header_offset + 30 + le16(header, 26) + le16(header, 28);
}

const ZipEntry* find_wheel_metadata(const std::vector<ZipEntry>& entries) {
    const ZipEntry* best = nullptr;
    for (const auto& e : entries) {
        auto slash = e.name.find('/');
        if (slash == std::string::npos || e.name.substr(slash) != "/METADATA") continue;
        if (!ends_with(e.name.substr(0, slash), ".dist-info")) continue;
        if (!best || e.name.size() < best->name.size()) best = &e;
    }
    return best;
}

}  // namespace td::pypi
