// Keeps a probe's glibc requirement at or below 2.35 (Ubuntu 22.04, the oldest bundled image)
// when it is built with the system's g++ on a newer glibc (TORCHDOCK_PROBE_COMPILER=system,
// or no zig found). probes/CMakeLists.txt compiles it into every probe (probe_options), once
// per executable, in that case only: zig builds target glibc 2.17 and use libc++, which does
// not reach arc4random.
//
// Why: the probes link libstdc++ statically. GCC 12's libstdc++.a, built on glibc 2.36,
// implements std::random_device with arc4random (GLIBC_2.36), and any use of std::string
// reaches random.o through std::__throw_logic_error -> stdexcept -> cow-string-inst.o.
// No probe uses std::random_device, so the reference is dead code, but the dynamic loader of
// a glibc 2.35 image would still refuse the binary ("version `GLIBC_2.36' not found").
// Defining arc4random here satisfies the static reference inside the executable, so no
// versioned import is left. Hidden visibility keeps it out of the dynamic symbol table, so
// it interposes nothing: glibc and the dlopened CUDA libraries keep using glibc's own.
//
// On a build host whose glibc predates 2.36 the definition is harmless: nothing else
// declares the name.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

extern "C" __attribute__((visibility("hidden"))) std::uint32_t arc4random(void) noexcept {
    std::uint32_t v = 0;
    // getrandom(2) through syscall(): the getrandom() wrapper would need GLIBC_2.25, which
    // every supported image has, but the raw call keeps this file free of any versioned name.
    if (::syscall(SYS_getrandom, &v, sizeof v, 0) != static_cast<long>(sizeof v)) {
        if (std::FILE* f = std::fopen("/dev/urandom", "rb")) {
            if (std::fread(&v, sizeof v, 1, f) != 1) v = 0;
            std::fclose(f);
        }
    }
    return v;
}
