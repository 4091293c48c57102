#include "core/kernels/elf_sections.hpp"

namespace td::kernels {

namespace {

// ELF64 layout (the System V gABI, "ELF Header" and "Sections"); offsets into the header.
constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kShdrSize = 64;
constexpr std::uint16_t kShnXindex = 0xffff;  // e_shstrndx lives in section 0's sh_link
constexpr std::size_t kMaxName = 256;

struct RawSection {
    std::uint32_t name = 0, type = 0, link = 0;
    std::uint64_t flags = 0, offset = 0, size = 0;
};

bool read_shdr(const ByteSource& src, std::uint64_t at, RawSection& out) {
    unsigned char b[kShdrSize];
    if (!src.read(at, b, sizeof b)) return false;
    out.name = le::u32(b + 0);
    out.type = le::u32(b + 4);
    out.flags = le::u64(b + 8);
    out.offset = le::u64(b + 24);
    out.size = le::u64(b + 32);
    out.link = le::u32(b + 40);
    return true;
}

// The NUL-terminated name at `off` of a string table [tab_off, tab_off + tab_size).
bool read_name(const ByteSource& src, std::uint64_t tab_off, std::uint64_t tab_size,
               std::uint32_t off, std::string& out) {
    out.clear();
    if (off >= tab_size) return false;
    std::uint64_t left = tab_size - off;
    std::size_t want = left < kMaxName ? static_cast<std::size_t>(left) : kMaxName;
    char buf[kMaxName];
    if (!src.read(tab_off + off, buf, want)) return false;
    for (std::size_t i = 0; i < want; ++i) {
        if (buf[i] == '\0') {
            out.assign(buf, i);
            return true;
        }
    }
    return false;  // unterminated or longer than kMaxName
}

}  // namespace

ElfSections read_elf_sections(const ByteSource& src) {
    ElfSections out;
    unsigned char eh[kEhdrSize];
    if (src.size() < 4 || !src.read(0, eh, 4)) {
        out.error = "too short for an ELF header";
        return out;
    }
    if (eh[0] != 0x7f || eh[1] != 'E' || eh[2] != 'L' || eh[3] != 'F') {
        out.error = "not an ELF file";
        return out;
    }
    out.is_elf = true;
    if (!src.read(0, eh, sizeof eh)) {
        out.error = "truncated ELF header";
        return out;
    }
    if (eh[4] != 2) {
        out.error = eh[4] == 1 ? "ELF32 object (only ELF64 is read)" : "unknown ELF class";
        return out;
    }
    if (eh[5] != 1) {
        out.error = "big-endian ELF object (only little-endian is read)";
        return out;
    }
    out.machine = le::u16(eh + 18);
    const std::uint64_t shoff = le::u64(eh + 40);
    const std::uint16_t shentsize = le::u16(eh + 58);
    std::uint64_t shnum = le::u16(eh + 60);
    std::uint32_t shstrndx = le::u16(eh + 62);
    if (shoff == 0) return out;  // no section table
    if (shentsize != kShdrSize) {
        out.error = "section header size " + std::to_string(shentsize) + " is not 64";
        return out;
    }
    // Extended numbering (gABI): counts that do not fit 16 bits live in section 0.
    if (shnum == 0 || shstrndx == kShnXindex) {
        RawSection zero;
        if (!read_shdr(src, shoff, zero)) {
            out.error = "section table outside the file";
            return out;
        }
        if (shnum == 0) shnum = zero.size;
        if (shstrndx == kShnXindex) shstrndx = zero.link;
    }
    if (shnum > kMaxSections) {
        out.error = "too many sections (" + std::to_string(shnum) + ")";
        return out;
    }
    if (shoff > src.size() || shnum * kShdrSize > src.size() - shoff) {
        out.error = "section table outside the file";
        return out;
    }
    if (shstrndx >= shnum) {
        out.error = "section name table index out of range";
        return out;
    }
    RawSection names;
    if (!read_shdr(src, shoff + std::uint64_t{shstrndx} * kShdrSize, names) ||
        names.type == kShtNobits || names.offset > src.size() ||
        names.size > src.size() - names.offset) {
        out.error = "section name table outside the file";
        return out;
    }
    out.sections.reserve(static_cast<std::size_t>(shnum));
    for (std::uint64_t i = 0; i < shnum; ++i) {
        RawSection raw;
        if (!read_shdr(src, shoff + i * kShdrSize, raw)) {
            out.error = "section header " + std::to_string(i) + " cannot be read";
            return out;
        }
        ElfSection s;
        if (i != 0 && !read_name(src, names.offset, names.size, raw.name, s.name)) {
            out.error = "section " + std::to_string(i) + " has a bad name";
            return out;
        }
        s.type = raw.type;
        s.flags = raw.flags;
        s.offset = raw.offset;
        s.size = raw.type == kShtNobits ? 0 : raw.size;
        // A section whose bytes are not in the file (a truncated copy) has nothing to read.
        if (s.offset > src.size() || s.size > src.size() - s.offset) {
            s.size = 0;
            s.outside_file = true;
        }
        out.sections.push_back(std::move(s));
    }
    return out;
}

}  // namespace td::kernels
