#pragma once
// Reads what the dynamic loader reads from a shared object, without loading it: the ELF
// header (class, byte order, machine) and, through the program headers, the dynamic
// section (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH, DT_FLAGS_1). Only the bytes needed
// are read (pread), so a 500 MB libcublasLt costs a few kilobytes. Malformed files give
// an error, never a crash.
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace libsprobe {

struct ElfInfo {
    bool opened = false;      // the file could be opened and read
    bool compatible = false;  // ELF64, little endian, this machine, ET_DYN or ET_EXEC
    std::string why;          // why not compatible / why parsing stopped
    std::string soname;
    std::vector<std::string> needed;
    std::vector<std::string>
        rpath;  // DT_RPATH entries (empty when DT_RUNPATH exists: ld.so ignores it)
    std::vector<std::string> runpath;  // DT_RUNPATH entries
    bool has_rpath = false;
    bool has_runpath = false;
    bool nodeflib = false;  // DF_1_NODEFLIB: no ld.so.cache, no default dirs
};

namespace detail {

class File {
  public:
    explicit File(const std::string& path) : m_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
    ~File() {
        if (m_fd >= 0) ::close(m_fd);
    }
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    bool ok() const { return m_fd >= 0; }
    bool read(std::uint64_t off, void* buf, size_t n) const {
        auto* p = static_cast<unsigned char*>(buf);
        while (n > 0) {
            if (off > static_cast<std::uint64_t>(INT64_MAX)) return false;
            ssize_t got = ::pread(m_fd, p, n, static_cast<off_t>(off));
            if (got <= 0) return false;
            p += got;
            n -= static_cast<size_t>(got);
            off += static_cast<std::uint64_t>(got);
        }
        return true;
    }
    // A NUL-terminated string at off, at most max bytes long.
    bool string_at(std::uint64_t off, std::uint64_t max, std::string& out) const {
        out.clear();
        char chunk[256];
        while (out.size() < max) {
            size_t want = sizeof chunk;
            if (max - out.size() < want) want = static_cast<size_t>(max - out.size());
            ssize_t got = ::pread(m_fd, chunk, want, static_cast<off_t>(off + out.size()));
            if (got <= 0) return false;
            const void* nul = std::memchr(chunk, 0, static_cast<size_t>(got));
            if (nul) {
                out.append(chunk, static_cast<const char*>(nul) - chunk);
                return true;
            }
            out.append(chunk, static_cast<size_t>(got));
        }
        return false;
    }

  private:
    int m_fd;
};

inline std::vector<std::string> split_path_list(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t p = s.find(':', start);
        out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
        if (p == std::string::npos) break;
        start = p + 1;
    }
    return out;
}

}  // namespace detail

// `machine`: the e_machine the loader being played accepts (target.hpp).
inline ElfInfo read_elf(const std::string& path, std::uint16_t machine) {
    ElfInfo info;
    detail::File f(path);
    if (!f.ok()) {
        info.why = std::string("cannot open: ") + std::strerror(errno);
        return info;
    }
    unsigned char ident[EI_NIDENT];
    if (!f.read(0, ident, sizeof ident)) {
        info.why = "too short for an ELF header";
        return info;
    }
    info.opened = true;
    if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
        info.why = "not an ELF file";
        return info;
    }
    if (ident[EI_CLASS] != ELFCLASS64) {
        info.why = ident[EI_CLASS] == ELFCLASS32 ? "ELF32 (wrong class)" : "unknown ELF class";
        return info;
    }
    if (ident[EI_DATA] != ELFDATA2LSB) {
        info.why = "big-endian ELF";
        return info;
    }
    Elf64_Ehdr eh;
    if (!f.read(0, &eh, sizeof eh)) {
        info.why = "truncated ELF header";
        return info;
    }
    if (eh.e_machine != machine) {
        info.why = "ELF machine " + std::to_string(eh.e_machine) + " is not the loader's (" +
                   std::to_string(machine) + ")";
        return info;
    }
    if (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) {
        info.why = "ELF type " + std::to_string(eh.e_type) + " cannot be loaded";
        return info;
    }
    info.compatible = true;
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0) {
        info.why = "no program headers";
        return info;
    }
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    if (!f.read(eh.e_phoff, ph.data(), ph.size() * sizeof(Elf64_Phdr))) {
        info.why = "truncated program headers";
        return info;
    }
    const Elf64_Phdr* dyn = nullptr;
    for (const auto& p : ph)
        if (p.p_type == PT_DYNAMIC) dyn = &p;
    if (!dyn) return info;  // statically linked: needs nothing
    std::uint64_t ndyn = dyn->p_filesz / sizeof(Elf64_Dyn);
    if (ndyn > 65536) ndyn = 65536;
    std::vector<Elf64_Dyn> d(static_cast<size_t>(ndyn));
    if (!f.read(dyn->p_offset, d.data(), d.size() * sizeof(Elf64_Dyn))) {
        info.why = "truncated dynamic section";
        return info;
    }
    std::uint64_t strtab = 0, strsz = 0;
    bool have_strtab = false;
    std::vector<std::uint64_t> needed;
    std::uint64_t soname = 0, rpath = 0, runpath = 0;
    bool have_soname = false;
    for (const auto& e : d) {
        if (e.d_tag == DT_NULL) break;
        switch (e.d_tag) {
            case DT_STRTAB:
                strtab = e.d_un.d_ptr;
                have_strtab = true;
                break;
            case DT_STRSZ:
                strsz = e.d_un.d_val;
                break;
            case DT_NEEDED:
                needed.push_back(e.d_un.d_val);
                break;
            case DT_SONAME:
                soname = e.d_un.d_val;
                have_soname = true;
                break;
            case DT_RPATH:
                rpath = e.d_un.d_val;
                info.has_rpath = true;
                break;  // the last one wins, as in ld.so
            case DT_RUNPATH:
                runpath = e.d_un.d_val;
                info.has_runpath = true;
                break;
            case DT_FLAGS_1:
                info.nodeflib = (e.d_un.d_val & DF_1_NODEFLIB) != 0;
                break;
            default:
                break;
        }
    }
    if (!have_strtab) {
        if (!needed.empty() || have_soname) info.why = "DT_STRTAB missing";
        return info;
    }
    // DT_STRTAB is an address: map it to a file offset through the PT_LOAD segments.
    std::uint64_t str_off = 0;
    bool mapped = false;
    for (const auto& p : ph) {
        if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab - p.p_vaddr < p.p_filesz) {
            str_off = strtab - p.p_vaddr + p.p_offset;
            mapped = true;
            break;
        }
    }
    if (!mapped) {
        info.why = "DT_STRTAB is outside every PT_LOAD segment";
        return info;
    }
    auto str = [&](std::uint64_t off, std::string& out) {
        if (strsz && off >= strsz) return false;
        std::uint64_t max = strsz ? strsz - off : 4096;
        if (max > 4096) max = 4096;
        return f.string_at(str_off + off, max, out);
    };
    std::string s;
    for (std::uint64_t off : needed) {
        if (!str(off, s)) {
            info.why = "bad DT_NEEDED string";
            return info;
        }
        info.needed.push_back(s);
    }
    if (have_soname && str(soname, s)) info.soname = s;
    if (info.has_runpath) {
        if (str(runpath, s)) info.runpath = detail::split_path_list(s);
        info.has_rpath =
            false;  // "If both RUNPATH and RPATH are given, the latter is ignored" (ld.so)
    } else if (info.has_rpath && str(rpath, s)) {
        info.rpath = detail::split_path_list(s);
    }
    return info;
}

}  // namespace libsprobe
