#include "core/kernels/arch.hpp"

namespace td::kernels {

namespace {

// Digits at the start of `s` as a number (at most 4 digits); nothing when there are none.
std::optional<int> leading_number(std::string_view s, std::size_t& used) {
    int value = 0;
    used = 0;
    while (used < s.size() && used < 4 && s[used] >= '0' && s[used] <= '9') {
        value = value * 10 + (s[used] - '0');
        ++used;
    }
    if (used == 0 || (used < s.size() && s[used] >= '0' && s[used] <= '9')) return std::nullopt;
    return value;
}

}  // namespace

std::string Arch::name(std::string_view prefix) const {
    std::string out(prefix);
    out += std::to_string(number);
    if (suffix == ArchSuffix::arch_specific) out += 'a';
    if (suffix == ArchSuffix::family_specific) out += 'f';
    return out;
}

std::optional<Arch> parse_arch(std::string_view text, std::string_view prefix) {
    if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
    text.remove_prefix(prefix.size());
    std::size_t used = 0;
    auto number = leading_number(text, used);
    if (!number || *number < 10) return std::nullopt;
    Arch arch;
    arch.number = *number;
    std::string_view rest = text.substr(used);
    if (rest == "a")
        arch.suffix = ArchSuffix::arch_specific;
    else if (rest == "f")
        arch.suffix = ArchSuffix::family_specific;
    else if (!rest.empty())
        return std::nullopt;
    return arch;
}

std::string ComputeCapability::text() const {
    return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
    std::size_t used = 0;
    auto major = leading_number(text, used);
    if (!major || *major < 1 || *major > 99 || used + 2 != text.size() || text[used] != '.')
        return std::nullopt;
    char m = text[used + 1];
    if (m < '0' || m > '9') return std::nullopt;
    return ComputeCapability{*major, m - '0'};
}

std::optional<PtxIsa> parse_ptx_isa(std::string_view text) {
    const auto dot = text.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    std::size_t used = 0;
    auto major = leading_number(text.substr(0, dot), used);
    if (!major || used != dot) return std::nullopt;
    auto minor = leading_number(text.substr(dot + 1), used);
    if (!minor || used != text.size() - dot - 1) return std::nullopt;
    return PtxIsa{*major, *minor};
}

std::string PtxIsa::text() const { return std::to_string(major) + "." + std::to_string(minor); }

}  // namespace td::kernels
