#pragma once
// What a file of the image is, read without running it: whether it exists, its type and real
// path, its ELF identity (machine and class), its `#!` line followed to the program that runs
// it, and for an ELF whether it is a CPython interpreter. The static probes (probe-env,
// probe-record) report these so torchdock can check what the image's code *says* (the python
// that answered, the torch file it imported, the platform in its config) against its files.
// Header-only, C++17, libc only.
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "probe.hpp"

namespace probe {

// The ELF identity in a file's first bytes: "x86_64/64", "aarch64/64", "i386/32",
// "e_machine 999/64"; "" when the bytes are not an ELF header.
inline std::string elf_identity(const unsigned char* b, std::size_t n) {
    if (n < 20 || std::memcmp(b,
                              "\x7f"
                              "ELF",
                              4) != 0)
        return "";
    const int cls = b[4] == 1 ? 32 : b[4] == 2 ? 64 : 0;
    // e_machine at offset 18, in the file's byte order (EI_DATA: 1 little, 2 big).
    const std::uint16_t m = b[5] == 2 ? static_cast<std::uint16_t>(b[18] << 8 | b[19])
                                      : static_cast<std::uint16_t>(b[19] << 8 | b[18]);
    static const std::map<std::uint16_t, const char*> names = {
        {3, "i386"}, {8, "mips"},    {20, "ppc"},      {21, "ppc64"},  {22, "s390"},
        {40, "arm"}, {62, "x86_64"}, {183, "aarch64"}, {243, "riscv"}, {258, "loongarch"}};
    auto it = names.find(m);
    const std::string machine = it != names.end() ? it->second : "e_machine " + std::to_string(m);
    return machine + "/" + (cls ? std::to_string(cls) : std::string("?"));
}

namespace identity_detail {

constexpr std::size_t kScanLimit = 256u << 20;  // CPython marks are searched in this much
constexpr int kMaxShebangDepth = 4;

inline std::string real_path(const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

inline const char* type_name(mode_t m) {
    return S_ISREG(m)    ? "regular"
           : S_ISDIR(m)  ? "directory"
           : S_ISLNK(m)  ? "symlink"
           : S_ISFIFO(m) ? "fifo"
           : S_ISCHR(m)  ? "char-device"
           : S_ISBLK(m)  ? "block-device"
           : S_ISSOCK(m) ? "socket"
                         : "other";
}

// Whether the mapped ELF names CPython's entry points or its library: an interpreter exports
// Py_BytesMain (3.8+) or Py_Main, or needs libpython3.X; a shell or `true` does neither.
inline bool has_cpython_marks(const char* data, std::size_t n) {
    for (const char* mark : {"Py_BytesMain", "Py_Main", "libpython3", "Py_InitializeEx"}) {
        const std::size_t len = std::strlen(mark);
        if (n >= len && ::memmem(data, n, mark, len) != nullptr) return true;
    }
    return false;
}

// The first bare name of PATH (the probe's own environment is the image's), as execvp.
inline std::string on_path(const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos) return name;
    const char* env = std::getenv("PATH");
    const std::string path =
        env ? env : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t colon = path.find(':', start);
        if (colon == std::string::npos) colon = path.size();
        std::string dir = path.substr(start, colon - start);
        const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        struct stat st;
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        start = colon + 1;
    }
    return {};
}

// `#!/usr/bin/env -S python3 -u` -> "/usr/bin/env" and, for env, the program it runs.
inline std::string shebang_program(const std::string& line) {
    std::size_t i = 2;
    auto word = [&]() {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
        return line.substr(start, i - start);
    };
    std::string program = word();
    const std::string base = program.substr(program.find_last_of('/') + 1);
    if (base != "env") return program;
    for (std::string next = word(); !next.empty(); next = word()) {
        if (next[0] == '-' || next.find('=') != std::string::npos) continue;  // -S, NAME=value
        return on_path(next);
    }
    return program;
}

inline Json identify(const std::string& path, int depth) {
    Json out = Json::object({{"path", path}});
    struct stat lst;
    if (path.empty() || ::lstat(path.c_str(), &lst) != 0) {
        out.set("exists", false);
        out.set("error", path.empty() ? "no path" : std::strerror(errno));
        return out;
    }
    const std::string real = real_path(path);
    struct stat st;
    const bool followed = ::stat(path.c_str(), &st) == 0;
    out.set("exists", followed);
    out.set("realpath", real.empty() ? Json() : Json(real));
    out.set("type", followed ? type_name(st.st_mode) : "dangling-symlink");
    if (!followed || !S_ISREG(st.st_mode)) return out;
    out.set("size", static_cast<long long>(st.st_size));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        out.set("error", std::strerror(errno));
        return out;
    }
    unsigned char head[512];
    const ssize_t n = ::pread(fd, head, sizeof head, 0);
    const std::size_t got = n > 0 ? static_cast<std::size_t>(n) : 0;
    const std::string elf = elf_identity(head, got);
    out.set("elf", elf.empty() ? Json() : Json(elf));
    if (!elf.empty()) {
        const std::size_t len = static_cast<std::size_t>(st.st_size) < kScanLimit
                                    ? static_cast<std::size_t>(st.st_size)
                                    : kScanLimit;
        void* map = len ? ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        out.set("cpython",
                map != MAP_FAILED && has_cpython_marks(static_cast<const char*>(map), len));
        if (map != MAP_FAILED) ::munmap(map, len);
    } else if (got >= 2 && head[0] == '#' && head[1] == '!') {
        std::string line(reinterpret_cast<const char*>(head), got);
        line = line.substr(0, line.find('\n'));
        if (!line.empty() && line.back() == '\r') line.pop_back();
        out.set("shebang", line);
        const std::string program = shebang_program(line);
        if (depth < kMaxShebangDepth) out.set("runs", identify(program, depth + 1));
    }
    ::close(fd);
    return out;
}

}  // namespace identity_detail

// {"path", "exists", "realpath", "type" (regular, directory, char-device, fifo,
// dangling-symlink, ...), "size", "elf" ("x86_64/64" or null), "cpython" (ELF only),
// "shebang" (the `#!` line) and "runs" (the same object for the program it names, `env`'s
// program resolved through PATH, 4 levels at most), "error"}.
inline Json identify_file(const std::string& path) { return identity_detail::identify(path, 0); }

}  // namespace probe
