#pragma once
// The machine whose loader probe-libs plays: the one it was built for, or another named by
// --machine (an arm64 image read on an x86 host: its loader rules, not this process's).
// Each architecture's facts: ELF e_machine, the default directories and the loader's
// soname and path (glibc sysdeps/unix/sysv/linux/<arch>/ldconfig.h and dl-cache.h), the
// Debian multiarch triplet, what $PLATFORM expands to, and ld.so.cache's entry flags
// (FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 0x0303, | FLAG_AARCH64_LIB64 0x0a03).
#include <elf.h>

#include <cstdint>
#include <string>
#include <vector>

namespace libsprobe {

struct Target {
    std::string name;  // "x86_64", "aarch64": the --machine value
    std::uint16_t machine = 0;
    std::vector<std::string> default_dirs;
    std::string rtld, rtld_path, multiarch, platform;
    std::int32_t cache_flags = 0;
};

inline const std::vector<Target>& known_targets() {
    static const std::vector<Target> all = {
        {"x86_64",
         EM_X86_64,
         {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
          "/usr/lib"},
         "ld-linux-x86-64.so.2",
         "/lib64/ld-linux-x86-64.so.2",
         "x86_64-linux-gnu",
         "x86_64",
         0x0303},
        {"aarch64",
         EM_AARCH64,
         {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
          "/usr/lib"},
         "ld-linux-aarch64.so.1",
         "/lib/ld-linux-aarch64.so.1",
         "aarch64-linux-gnu",
         "aarch64",
         0x0a03},
    };
    return all;
}

// nullptr when `name` is not a known machine.
inline const Target* target_named(const std::string& name) {
    for (const auto& t : known_targets())
        if (t.name == name) return &t;
    return nullptr;
}

inline const Target& native_target() {
#if defined(__x86_64__)
    return *target_named("x86_64");
#elif defined(__aarch64__)
    return *target_named("aarch64");
#else
#error "probe-libs knows x86_64 and aarch64"
#endif
}

}  // namespace libsprobe
