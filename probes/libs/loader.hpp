#pragma once
// The dynamic loader's search for a DT_NEEDED name (glibc elf/dl-load.c, _dl_map_object),
// done on files instead of a process:
//
//   1. a name with a '/' is a path;
//   2. DT_RPATH of the object that needs it, then of the object that loaded that one, and
//      on up, unless the needing object has DT_RUNPATH (objects with DT_RUNPATH have
//      their DT_RPATH ignored);
//   3. LD_LIBRARY_PATH (':' or ';' separated; an empty element is the current directory);
//   4. DT_RUNPATH of the needing object only;
//   5. /etc/ld.so.cache (unless DF_1_NODEFLIB keeps it out of the default directories);
//   6. the default directories (unless DF_1_NODEFLIB).
//
// $ORIGIN (the directory of the object, by the path it was found under: symlinks are not
// resolved), $LIB and $PLATFORM are expanded; every directory is tried with its
// glibc-hwcaps/x86-64-v4, v3, v2 subdirectories first where the CPU supports them. A file
// of the wrong class or machine is skipped and the search goes on, as ld.so does.
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "elf.hpp"
#include "ldcache.hpp"
#include "target.hpp"

namespace libsprobe {

struct Env {
    std::vector<std::string> ld_library_path;
    bool ld_library_path_set = false;
    std::vector<std::string> default_dirs;
    std::vector<std::string> hwcaps;  // glibc-hwcaps subdirectories this CPU can use, best first
    std::string lib_dst;              // what $LIB expands to
    std::string platform;             // what $PLATFORM expands to
    std::uint16_t machine = 0;        // the ELF e_machine this loader maps (target.hpp)
    std::int32_t cache_flags = 0;     // its ld.so.cache entry flags
    LdCache cache;
};

// glibc-hwcaps levels the CPU supports (x86-64 psABI levels), best first.
inline std::vector<std::string> supported_hwcaps() {
    std::vector<std::string> out;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return out;
    unsigned c1 = c;
    unsigned c81 = 0, b7 = 0;
    if (__get_cpuid(0x80000001, &a, &b, &c, &d)) c81 = c;
    if (__get_cpuid_max(0, nullptr) >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        b7 = b;
    }
    unsigned long long xcr0 = 0;
    if (c1 & (1u << 27)) {  // OSXSAVE
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    auto bit = [](unsigned v, int n) { return (v >> n) & 1u; };
    bool v2 = bit(c1, 0) && bit(c1, 9) && bit(c1, 13) && bit(c1, 19) && bit(c1, 20) &&
              bit(c1, 23) && bit(c81, 0);
    bool avx_os = (xcr0 & 6) == 6;
    bool v3 = v2 && avx_os && bit(c1, 28) && bit(c1, 12) && bit(c1, 22) && bit(c1, 29) &&
              bit(b7, 3) && bit(b7, 5) && bit(b7, 8) && bit(c81, 5);
    bool v4 = v3 && (xcr0 & 0xe6) == 0xe6 && bit(b7, 16) && bit(b7, 17) && bit(b7, 28) &&
              bit(b7, 30) && bit(b7, 31);
    if (v4) out.push_back("x86-64-v4");
    if (v3) out.push_back("x86-64-v3");
    if (v2) out.push_back("x86-64-v2");
#endif
    return out;
}

inline std::string current_dir() {
    char buf[4096];
    return ::getcwd(buf, sizeof buf) ? std::string(buf) : std::string(".");
}

// The directory $ORIGIN stands for: the object's directory as found, made absolute.
inline std::string origin_of(const std::string& path) {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? std::string() : path.substr(0, slash);
    if (slash == 0) dir = "/";
    if (dir.empty()) return current_dir();
    if (dir[0] != '/') return current_dir() + "/" + dir;
    return dir;
}

struct Found {
    std::string path;
    std::string via;  // "path", "rpath", "LD_LIBRARY_PATH", "runpath", "ld.so.cache", "default"
};

// An object in one load (one root and what it pulls in).
struct Node {
    std::string path;  // as found
    std::string name;  // the DT_NEEDED name it was loaded for (the path for a root)
    const ElfInfo* info = nullptr;
    int loader = -1;  // index of the object whose DT_NEEDED brought it in
    int depth = 0;
    dev_t dev = 0;
    ino_t ino = 0;
};

class Resolver {
  public:
    explicit Resolver(const Env& env) : m_env(env) {}

    // Parsed once per path.
    const ElfInfo& elf(const std::string& path) {
        auto it = m_elf.find(path);
        if (it != m_elf.end()) return it->second;
        return m_elf.emplace(path, read_elf(path, m_env.machine)).first->second;
    }

    // A loadable object at `path`: a regular file (after links) that is an ELF of ours.
    bool loadable(const std::string& path) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
        return elf(path).compatible;
    }

    // Replaces $ORIGIN, $LIB, $PLATFORM (also as ${...}) in one search-path element.
    std::string expand(const std::string& element, const std::string& origin) const {
        std::string out;
        for (size_t i = 0; i < element.size();) {
            if (element[i] == '$') {
                static const struct {
                    const char* name;
                    int which;
                } tokens[] = {{"ORIGIN", 0}, {"LIB", 1}, {"PLATFORM", 2}};
                bool done = false;
                for (const auto& t : tokens) {
                    std::string plain = t.name, braced = std::string("{") + t.name + "}";
                    const std::string* hit = nullptr;
                    if (element.compare(i + 1, braced.size(), braced) == 0)
                        hit = &braced;
                    else if (element.compare(i + 1, plain.size(), plain) == 0) {
                        char next = i + 1 + plain.size() < element.size()
                                        ? element[i + 1 + plain.size()]
                                        : '/';
                        if (!(std::isalnum(static_cast<unsigned char>(next)) || next == '_'))
                            hit = &plain;
                    }
                    if (hit) {
                        out += t.which == 0   ? origin
                               : t.which == 1 ? m_env.lib_dst
                                              : m_env.platform;
                        i += 1 + hit->size();
                        done = true;
                        break;
                    }
                }
                if (done) continue;
            }
            out += element[i++];
        }
        return out;
    }

    std::vector<std::string> expand_all(const std::vector<std::string>& elements,
                                        const std::string& owner_path) const {
        std::vector<std::string> out;
        std::string origin = origin_of(owner_path);
        for (const auto& e : elements) out.push_back(expand(e, origin));
        return out;
    }

    bool in_dirs(const std::vector<std::string>& dirs, const std::string& name, const char* via,
                 Found& out) {
        for (const auto& dir : dirs) {
            std::string base = dir.empty() ? std::string() : (dir.back() == '/' ? dir : dir + "/");
            for (const auto& hw : m_env.hwcaps) {
                std::string p = base + "glibc-hwcaps/" + hw + "/" + name;
                if (loadable(p)) {
                    out = Found{p, via};
                    return true;
                }
            }
            std::string p = base + name;
            if (loadable(p)) {
                out = Found{p, via};
                return true;
            }
        }
        return false;
    }

    bool in_default_dir(const std::string& path) const {
        for (const auto& d : m_env.default_dirs) {
            std::string base = d.back() == '/' ? d : d + "/";
            if (path.compare(0, base.size(), base) == 0) return true;
        }
        return false;
    }

    // Where the loader finds `name` for nodes[needer] (needer -1: a dlopen from a program
    // with neither RPATH nor RUNPATH).
    std::optional<Found> search(const std::string& name, const std::vector<Node>& nodes,
                                int needer) {
        Found f;
        if (name.find('/') != std::string::npos) {
            if (loadable(name)) return Found{name, "path"};
            return std::nullopt;
        }
        const ElfInfo* need = needer >= 0 ? nodes[static_cast<size_t>(needer)].info : nullptr;
        if (need && !need->has_runpath) {
            for (int l = needer; l >= 0; l = nodes[static_cast<size_t>(l)].loader) {
                const Node& n = nodes[static_cast<size_t>(l)];
                if (n.info->has_rpath &&
                    in_dirs(expand_all(n.info->rpath, n.path), name, "rpath", f))
                    return f;
            }
        }
        if (in_dirs(m_env.ld_library_path, name, "LD_LIBRARY_PATH", f)) return f;
        if (need && need->has_runpath &&
            in_dirs(expand_all(need->runpath, nodes[static_cast<size_t>(needer)].path), name,
                    "runpath", f))
            return f;
        bool nodeflib = need && need->nodeflib;
        if (m_env.cache.ok()) {
            if (const CacheEntry* e = m_env.cache.lookup(name, m_env.cache_flags)) {
                if (!(nodeflib && in_default_dir(e->value)) && loadable(e->value))
                    return Found{e->value, "ld.so.cache"};
            }
        }
        if (!nodeflib && in_dirs(m_env.default_dirs, name, "default", f)) return f;
        return std::nullopt;
    }

  private:
    const Env& m_env;
    std::map<std::string, ElfInfo> m_elf;
};

}  // namespace libsprobe
