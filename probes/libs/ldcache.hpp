#pragma once
// Reads /etc/ld.so.cache the way glibc's dl-cache.c does (elf/dl-cache.h formats):
//
//  * new format "glibc-ld.so.cache" "1.1": a 48-byte header {magic[17], version[3],
//    nlibs, len_strings, flags (endianness), pad[3], extension_offset, unused[3]} and
//    nlibs 24-byte entries {int32 flags, uint32 key, uint32 value, uint32 osversion,
//    uint64 hwcap}; key/value are offsets from the start of that header;
//  * old format "ld.so-1.7.0": {magic[11], nlibs} and nlibs 12-byte entries {int32 flags,
//    uint32 key, uint32 value} whose offsets count from the end of the entries; ldconfig
//    of glibc < 2.32 wrote both, the new part hidden (8-byte aligned) in the old one's
//    string table, and ld.so then uses the new part.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace libsprobe {

struct CacheEntry {
    std::string key;    // the soname, e.g. "libz.so.1"
    std::string value;  // the path, e.g. "/lib/x86_64-linux-gnu/libz.so.1"
    std::int32_t flags = 0;
    std::uint64_t hwcap = 0;
};

class LdCache {
  public:
    bool ok() const { return m_ok; }
    const std::string& path() const { return m_path; }
    const std::string& format() const { return m_format; }
    const std::string& error() const { return m_error; }
    const std::vector<CacheEntry>& entries() const { return m_entries; }

    bool load(const std::string& path) {
        m_path = path;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return fail("cannot open " + path + ": " + std::strerror(errno));
        std::string data;
        char buf[65536];
        for (;;) {
            ssize_t got = ::read(fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            data.append(buf, static_cast<size_t>(got));
            if (data.size() > (64u << 20)) break;  // no real cache is that large
        }
        ::close(fd);
        return parse(data);
    }

    bool parse(const std::string& data) {
        m_ok = false;
        m_entries.clear();
        static const char kOld[] = "ld.so-1.7.0";           // 11 bytes
        static const char kNew[] = "glibc-ld.so.cache1.1";  // magic + version, 20 bytes
        const size_t old_len = sizeof kOld - 1, new_len = sizeof kNew - 1;
        if (data.size() >= old_len && data.compare(0, old_len, kOld) == 0) {
            // struct cache_file { char magic[11]; unsigned nlibs; file_entry libs[]; } (nlibs at
            // 12)
            std::uint32_t nlibs;
            if (!u32(data, 12, nlibs) || (data.size() - 16) / 12 < nlibs)
                return fail("truncated old-format cache");
            size_t old_end = 16 + static_cast<size_t>(nlibs) * 12;
            size_t new_off = (old_end + 7) & ~static_cast<size_t>(7);  // ALIGN_CACHE
            if (data.size() >= new_off + 48 && data.compare(new_off, new_len, kNew) == 0) {
                m_format = "ld.so-1.7.0 + glibc-ld.so.cache1.1";
                return parse_new(data, new_off);
            }
            m_format = "ld.so-1.7.0";
            for (std::uint32_t i = 0; i < nlibs; ++i) {
                size_t e = 16 + static_cast<size_t>(i) * 12;
                std::uint32_t flags = 0, key = 0, value = 0;
                u32(data, e, flags);
                u32(data, e + 4, key);
                u32(data, e + 8, value);
                CacheEntry ce;
                ce.flags = static_cast<std::int32_t>(flags);
                if (!str(data, old_end, key, ce.key) || !str(data, old_end, value, ce.value))
                    return fail("string offset out of range in old-format cache");
                m_entries.push_back(ce);
            }
            m_ok = true;
            return true;
        }
        if (data.size() >= new_len && data.compare(0, new_len, kNew) == 0) {
            m_format = "glibc-ld.so.cache1.1";
            return parse_new(data, 0);
        }
        return fail("unknown ld.so.cache format");
    }

    // The path ld.so takes from the cache for `name`: the first entry with this key and
    // the architecture's flags (`flags`, target.hpp), preferring the baseline (hwcap 0) over
    // glibc-hwcaps ones.
    const CacheEntry* lookup(const std::string& name, std::int32_t flags) const {
        const CacheEntry* any = nullptr;
        for (const auto& e : m_entries) {
            if (e.key != name || e.flags != flags) continue;
            if (e.hwcap == 0) return &e;
            if (!any) any = &e;
        }
        return any;
    }

  private:
    bool fail(const std::string& why) {
        m_error = why;
        m_entries.clear();
        return false;
    }
    static bool u32(const std::string& d, size_t off, std::uint32_t& out) {
        if (off + 4 > d.size()) return false;
        std::memcpy(&out, d.data() + off, 4);
        return true;
    }
    static bool u64(const std::string& d, size_t off, std::uint64_t& out) {
        if (off + 8 > d.size()) return false;
        std::memcpy(&out, d.data() + off, 8);
        return true;
    }
    static bool str(const std::string& d, size_t base, std::uint32_t off, std::string& out) {
        size_t at = base + off;
        if (at >= d.size()) return false;
        size_t nul = d.find('\0', at);
        if (nul == std::string::npos) return false;
        out.assign(d, at, nul - at);
        return true;
    }
    bool parse_new(const std::string& data, size_t base) {
        std::uint32_t nlibs = 0;
        if (!u32(data, base + 20, nlibs) || base + 48 > data.size())
            return fail("truncated cache header");
        unsigned char flags = static_cast<unsigned char>(data[base + 28]);
        if ((flags & 3) == 3 || (flags & 3) == 1)  // big endian / invalid: not ours
            return fail("ld.so.cache is not little-endian");
        if ((data.size() - base - 48) / 24 < nlibs) return fail("truncated cache entries");
        for (std::uint32_t i = 0; i < nlibs; ++i) {
            size_t e = base + 48 + static_cast<size_t>(i) * 24;
            std::uint32_t fl = 0, key = 0, value = 0;
            CacheEntry ce;
            u32(data, e, fl);
            u32(data, e + 4, key);
            u32(data, e + 8, value);
            u64(data, e + 16, ce.hwcap);
            ce.flags = static_cast<std::int32_t>(fl);
            if (!str(data, base, key, ce.key) || !str(data, base, value, ce.value))
                return fail("string offset out of range in cache entry " + std::to_string(i));
            m_entries.push_back(ce);
        }
        m_ok = true;
        return true;
    }

    bool m_ok = false;
    std::string m_path, m_format, m_error;
    std::vector<CacheEntry> m_entries;
};

}  // namespace libsprobe
