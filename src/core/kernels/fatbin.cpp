#include "core/kernels/fatbin.hpp"

#include <algorithm>

namespace td::kernels {

namespace {

constexpr std::size_t kContainerHeader = kContainerHeaderBytes;

std::string hex(std::uint64_t v) { return hex_offset(v); }

EntryKind kind_of(std::uint16_t raw) {
    switch (raw) {
        case 1:
            return EntryKind::ptx;
        case 2:
            return EntryKind::sass;
        case 8:
            return EntryKind::ltoir;
        default:
            return EntryKind::other;
    }
}

// Kinds seen in fatbins: 1 PTX, 2 ELF, 4 (old cubin), 8 LTO-IR, 0x10 and 0x40 (named by
// public readers, not seen here). While searching, anything else means "not a container".
bool known_kind(std::uint16_t raw) {
    return raw == 1 || raw == 2 || raw == 4 || raw == 8 || raw == 0x10 || raw == 0x40;
}

void add_problem(RegionScan& scan, std::string text) {
    if (scan.problems.size() < kMaxProblems) scan.problems.push_back(std::move(text));
}

bool parse_entries(const ByteSource& src, std::uint64_t q, std::uint64_t end, bool strict,
                   const FatbinLimits& limits, FatbinContainer& out, std::string& why) {
    while (q < end) {
        if (end - q < kMinEntryHeader) {
            why = "entry at " + hex(q) + " is cut off by the container's end";
            return false;
        }
        unsigned char e[kMinEntryHeader];
        if (!src.read(q, e, sizeof e)) {
            why = "entry at " + hex(q) + " cannot be read";
            return false;
        }
        const FatbinEntry entry = decode_entry(e, q);
        if (!check_entry(entry, end - q, strict, why)) return false;
        if (out.entries.size() >= limits.max_entries_per_container) {
            // The container's extent is known from its header: stop reading entries.
            out.entries_truncated = true;
            return true;
        }
        out.entries.push_back(entry);
        q += entry.header_size + entry.payload_size;
    }
    return true;
}

bool parse_container_impl(const ByteSource& src, std::uint64_t offset, std::uint64_t end,
                          bool strict, const FatbinLimits& limits, FatbinContainer& out,
                          std::string& why) {
    out = FatbinContainer{};
    unsigned char h[kContainerHeader];
    if (end < offset || end - offset < kContainerHeader || !src.read(offset, h, sizeof h)) {
        why = "container header at " + hex(offset) + " is cut off";
        return false;
    }
    const std::uint64_t size = check_container_header(h, offset, end - offset, why);
    if (size == 0) return false;
    out.offset = offset;
    out.size = size;
    return parse_entries(src, offset + le::u16(h + 6), offset + out.size, strict, limits, out, why);
}

std::uint64_t align8(std::uint64_t v) { return v > ~std::uint64_t{0} - 7 ? v : (v + 7) & ~7ull; }

}  // namespace

std::string hex_offset(std::uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    do {
        out.insert(out.begin(), digits[v & 0xf]);
        v >>= 4;
    } while (v != 0);
    return "0x" + out;
}

std::uint64_t check_container_header(const unsigned char* h, std::uint64_t offset,
                                     std::uint64_t room, std::string& why) {
    if (le::u32(h) != kFatbinMagic) {
        why = "no fatbin magic at " + hex(offset);
        return 0;
    }
    const std::uint16_t version = le::u16(h + 4);
    const std::uint16_t header_size = le::u16(h + 6);
    const std::uint64_t body = le::u64(h + 8);
    if (version != 1) {
        why = "container at " + hex(offset) + " has version " + std::to_string(version);
        return 0;
    }
    if (header_size < kContainerHeader || header_size > kMaxContainerHeader || header_size > room) {
        why =
            "container at " + hex(offset) + " has a header size of " + std::to_string(header_size);
        return 0;
    }
    if (body > room - header_size) {
        why = "container at " + hex(offset) + " (" + std::to_string(body) +
              " bytes) runs past the end of its section";
        return 0;
    }
    return header_size + body;
}

FatbinEntry decode_entry(const unsigned char* e, std::uint64_t offset) {
    FatbinEntry entry;
    entry.offset = offset;
    entry.raw_kind = le::u16(e + 0);
    entry.kind = kind_of(entry.raw_kind);
    entry.header_size = le::u32(e + 4);
    entry.payload_size = le::u64(e + 8);
    entry.version.minor = le::u16(e + 24);
    entry.version.major = le::u16(e + 26);
    entry.raw_arch = le::u32(e + 28);
    entry.flags = le::u64(e + 40);
    entry.arch.number = entry.raw_arch > 9999 ? 0 : static_cast<int>(entry.raw_arch);
    if (entry.flags & kFlagFamilySpecific)
        entry.arch.suffix = ArchSuffix::family_specific;
    else if (entry.flags & kFlagArchSpecific)
        entry.arch.suffix = ArchSuffix::arch_specific;
    entry.compressed = (entry.flags & (kFlagCompressedLz4 | kFlagCompressedZstd)) != 0;
    return entry;
}

bool check_entry(const FatbinEntry& entry, std::uint64_t room, bool strict, std::string& why) {
    const std::uint64_t q = entry.offset;
    if (entry.header_size < kMinEntryHeader || entry.header_size > kMaxEntryHeader) {
        why = "entry at " + hex(q) + " has a header size of " + std::to_string(entry.header_size);
        return false;
    }
    if (entry.header_size > room || entry.payload_size > room - entry.header_size) {
        why = "entry at " + hex(q) + " runs past the container's end";
        return false;
    }
    if (strict && (!known_kind(entry.raw_kind) || entry.raw_arch < 10 || entry.raw_arch > 999)) {
        why = "entry at " + hex(q) + " has kind " + std::to_string(entry.raw_kind) + " and arch " +
              std::to_string(entry.raw_arch);
        return false;
    }
    return true;
}

bool parse_container(const ByteSource& src, std::uint64_t offset, std::uint64_t end,
                     const FatbinLimits& limits, FatbinContainer& out, std::string& why) {
    return parse_container_impl(src, offset, end, false, limits, out, why);
}

RegionScan scan_region(const ByteSource& src, std::uint64_t offset, std::uint64_t size,
                       RegionMode mode, const FatbinLimits& limits,
                       const std::function<void(const FatbinContainer&)>& visit) {
    RegionScan scan;
    const std::uint64_t total = src.size();
    if (offset > total) return scan;
    if (size > total - offset) {
        add_problem(scan, "region at " + hex(offset) + " runs past the end of the file");
        size = total - offset;
    }
    const std::uint64_t end = offset + size;
    const bool strict = mode == RegionMode::search;
    // The search window: bytes [chunk_at, chunk_at + chunk.size()) of the source, read once.
    std::vector<unsigned char> chunk;
    std::uint64_t chunk_at = 0;
    FatbinContainer container;
    std::string why;
    std::uint64_t p = offset;
    // In a fatbin section the next container is expected right where the last one ended.
    bool expect_here = mode == RegionMode::sequence;
    auto found = [&](std::uint64_t at) {
        ++scan.containers;
        visit(container);
        p = at + container.size;
        expect_here = mode == RegionMode::sequence;
    };
    while (p < end && end - p >= kContainerHeader) {
        if (scan.containers >= limits.max_containers) {
            scan.truncated = true;
            add_problem(scan, "stopped after " + std::to_string(scan.containers) +
                                  " containers (the limit)");
            break;
        }
        if (expect_here) {
            if (parse_container_impl(src, p, end, strict, limits, container, why)) {
                found(p);
                continue;
            }
            unsigned char m[4];
            if (src.read(p, m, sizeof m) && le::u32(m) == kFatbinMagic) {
                add_problem(scan, why);
                p += 8;
            }
            expect_here = false;
            continue;
        }
        // Searching: the magic at 8-aligned offsets, through the window.
        std::uint64_t q = align8(p);
        if (q >= end || end - q < kContainerHeader) break;
        if (q < chunk_at || q - chunk_at + 4 > chunk.size()) {
            if (scan.bytes_searched >= limits.max_search_bytes) {
                scan.truncated = true;
                add_problem(scan, "stopped searching after " + std::to_string(scan.bytes_searched) +
                                      " bytes (the limit)");
                break;
            }
            std::uint64_t want = std::min<std::uint64_t>(kScanChunk, end - q);
            want = std::min<std::uint64_t>(want, limits.max_search_bytes - scan.bytes_searched);
            chunk.resize(static_cast<std::size_t>(want));
            if (!src.read(q, chunk.data(), chunk.size())) {
                add_problem(scan, "bytes at " + hex(q) + " cannot be read");
                break;
            }
            chunk_at = q;
            scan.bytes_searched += want;
        }
        std::size_t i = static_cast<std::size_t>(q - chunk_at);
        while (i + 4 <= chunk.size() && le::u32(chunk.data() + i) != kFatbinMagic) i += 8;
        if (i + 4 > chunk.size()) {  // none in the window: go on after it
            p = chunk_at + align8(chunk.size());
            continue;
        }
        const std::uint64_t at = chunk_at + i;
        if (parse_container_impl(src, at, end, strict, limits, container, why)) {
            found(at);
            continue;
        }
        if (mode == RegionMode::sequence) add_problem(scan, why);
        p = at + 8;
    }
    return scan;
}

}  // namespace td::kernels
