#include "util/version.hpp"

#include "util/strings.hpp"

namespace td {

std::optional<Version> Version::parse(std::string_view text) {
    auto fields = split(text, '.');
    if (fields.empty() || fields.size() > 4) return std::nullopt;
    Version v;
    for (const auto& f : fields) {
        if (f.empty() || f.size() > 9) return std::nullopt;
        int n = 0;
        for (char c : f) {
            if (c < '0' || c > '9') return std::nullopt;
            n = n * 10 + (c - '0');
        }
        v.m_parts.push_back(n);
    }
    return v;
}

std::string Version::str() const {
    std::string out;
    for (std::size_t i = 0; i < m_parts.size(); ++i) {
        if (i) out += '.';
        out += std::to_string(m_parts[i]);
    }
    return out;
}

std::string Version::major_minor() const {
    return std::to_string(major()) + "." + std::to_string(minor());
}

int compare(const Version& a, const Version& b) {
    std::size_t n = std::max(a.m_parts.size(), b.m_parts.size());
    for (std::size_t i = 0; i < n; ++i) {
        int x = i < a.m_parts.size() ? a.m_parts[i] : 0;
        int y = i < b.m_parts.size() ? b.m_parts[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

std::string cuda_version_from_int(long long v) {
    if (v <= 0 || v > 1000000) return {};
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cudnn_version_from_int(long long v) {
    if (v <= 0 || v > 10000000) return {};
    long long major = v >= 10000 ? v / 10000 : v / 1000;
    long long rest = v >= 10000 ? v % 10000 : v % 1000;
    return std::to_string(major) + "." + std::to_string(rest / 100) + "." +
           std::to_string(rest % 100);
}

}  // namespace td
