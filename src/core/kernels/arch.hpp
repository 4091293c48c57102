#pragma once
// GPU code targets as they appear in CUDA fatbins and on nvcc's command line: a number
// (compute capability times ten: 90 for 9.0, 120 for 12.0) and an optional suffix, `a`
// (architecture-specific, sm_90a) or `f` (family-specific, sm_100f, CUDA 12.9+).
//
// Part of the kernels domain: pure, C++17, no dependency beyond the standard library,
// because probes/kernels compiles these files too (see probes/README.md).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace td::kernels {

enum class ArchSuffix : std::uint8_t { none, arch_specific, family_specific };

struct Arch {
    int number = 0;  // 120 for sm_120; major = number / 10, minor = number % 10
    ArchSuffix suffix = ArchSuffix::none;

    int major() const { return number / 10; }
    int minor() const { return number % 10; }
    // "sm_90a" (prefix "sm_") or "compute_90a" (prefix "compute_").
    std::string name(std::string_view prefix) const;

    bool operator==(const Arch& o) const { return number == o.number && suffix == o.suffix; }
    bool operator!=(const Arch& o) const { return !(*this == o); }
    // By number, then none < a < f: the order the lists are printed in.
    bool operator<(const Arch& o) const {
        return number != o.number ? number < o.number : suffix < o.suffix;
    }
};

// "sm_90a", "compute_100f", "sm_75" (the prefix must be `prefix`); nothing on anything else.
std::optional<Arch> parse_arch(std::string_view text, std::string_view prefix);

// A GPU's compute capability, "12.0" or "9.0" as nvidia-smi and the knowledge base write it.
struct ComputeCapability {
    int major = 0;
    int minor = 0;
    int number() const { return major * 10 + minor; }
    std::string text() const;  // "12.0"
};

// "12.0", "8.6", "10.3"; nothing on anything else (minor is one digit, as in every CUDA
// compute capability so far).
std::optional<ComputeCapability> parse_compute_capability(std::string_view text);

// A PTX ISA version (".version 8.7" in PTX; in a fatbin's PTX entry header).
struct PtxIsa {
    int major = 0;
    int minor = 0;
    bool operator<(const PtxIsa& o) const {
        return major != o.major ? major < o.major : minor < o.minor;
    }
    bool operator==(const PtxIsa& o) const { return major == o.major && minor == o.minor; }
    std::string text() const;  // "8.7"
};

// "8.7", "9.0" (probe-kernels writes them so); nothing on anything else.
std::optional<PtxIsa> parse_ptx_isa(std::string_view text);

}  // namespace td::kernels
