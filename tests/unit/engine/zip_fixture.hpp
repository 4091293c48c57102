#pragma once
// Builds small ZIP archives in memory for the wheel-reading tests: members stored or
// deflated (raw DEFLATE with zlib, as wheels are), no ZIP64.
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace td::test::zip {

struct Member {
    std::string name, data;
    int method = 8;  // 0 stored, 8 deflate
};

inline void put(std::string& b, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline std::string deflate_raw(const std::string& in, int level = 6) {
    z_stream z{};
    if (deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2");
    std::string out(deflateBound(&z, static_cast<uLong>(in.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

inline std::string archive(const std::vector<Member>& members) {
    std::string out, directory;
    for (const auto& m : members) {
        const std::string data = m.method == 8 ? deflate_raw(m.data) : m.data;
        const auto crc = crc32(0L, reinterpret_cast<const Bytef*>(m.data.data()),
                               static_cast<uInt>(m.data.size()));
        const std::uint64_t offset = out.size();
        put(out, 0x04034b50, 4);
        put(out, 20, 2);
        put(out, 0, 2);
        put(out, static_cast<std::uint64_t>(m.method), 2);
        put(out, 0, 4);
        put(out, crc, 4);
        put(out, data.size(), 4);
        put(out, m.data.size(), 4);
        put(out, m.name.size(), 2);
        put(out, 5, 2);  // an extra field, so data does not start right after the name
        out += m.name + "ABCDE" + data;
        put(directory, 0x02014b50, 4);
        put(directory, 20, 2);
        put(directory, 20, 2);
        put(directory, 0, 2);
        put(directory, static_cast<std::uint64_t>(m.method), 2);
        put(directory, 0, 4);
        put(directory, crc, 4);
        put(directory, data.size(), 4);
        put(directory, m.data.size(), 4);
        put(directory, m.name.size(), 2);
        put(directory, 0, 2);
        put(directory, 0, 2);
        put(directory, 0, 2);
        put(directory, 0, 2);
        put(directory, 0, 4);
        put(directory, offset, 4);
        directory += m.name;
    }
    const std::uint64_t at = out.size();
    out += directory;
    put(out, 0x06054b50, 4);
    put(out, 0, 2);
    put(out, 0, 2);
    put(out, members.size(), 2);
    put(out, members.size(), 2);
    put(out, directory.size(), 4);
    put(out, at, 4);
    put(out, 0, 2);
    return out;
}

}  // namespace td::test::zip
