#include "core/pypi/wheel_name.hpp"

#include <algorithm>
#include <cctype>

#include "util/strings.hpp"

namespace td::pypi {
namespace {

bool digits_only(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "cp312" -> "3.12"; "" when the tag is not a CPython 3 tag.
std::string cp_version(std::string_view tag) {
    if (!starts_with(tag, "cp3") || tag.size() < 4) return {};
    std::string_view minor = tag.substr(3);
    bool ft = !minor.empty() && minor.back() == 't';
    if (ft) minor.remove_suffix(1);
    if (!digits_only(minor)) return {};
    return "3." + std::string(minor) + (ft ? "t" : "");
}

}  // namespace

std::optional<WheelName> parse_wheel_name(std::string_view file_name) {
    if (!ends_with(file_name, ".whl") || file_name.size() > 512) return std::nullopt;
    auto parts = split(file_name.substr(0, file_name.size() - 4), '-');
    if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
    // Only the characters wheel names are made of (PEP 427 escapes everything else to
    // '_'): a name with controls, quotes or spaces is not a wheel.
    auto wheel_char = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '.' || c == '!' || c == '+';
    };
    for (const auto& p : parts) {
        if (p.empty()) return std::nullopt;
        for (char c : p)
            if (!wheel_char(c)) return std::nullopt;
    }
    WheelName w;
    w.distribution = parts[0];
    w.version = parts[1];
    std::size_t at = 2;
    if (parts.size() == 6) {
        std::string digits;
        for (char c : parts[2])
            if (c >= '0' && c <= '9')
                digits += c;
            else
                break;
        if (digits.empty() || digits.size() > 9) return std::nullopt;
        w.build = std::stoi(digits);
        at = 3;
    }
    w.python_tags = split(parts[at], '.');
    w.abi_tags = split(parts[at + 1], '.');
    w.platform_tags = split(parts[at + 2], '.');
    return w;
}

bool WheelName::linux_for(const std::string& machine) const {
    for (const auto& p : platform_tags)
        if (p == "any" || p == "linux_" + machine ||
            (starts_with(p, "manylinux") && ends_with(p, "_" + machine)))
            return true;
    return false;
}

std::string WheelName::glibc_floor(const std::string& machine) const {
    std::string best;
    const std::string suffix = "_" + machine;
    for (const auto& p : platform_tags) {
        if (!ends_with(p, suffix)) continue;
        std::string floor;
        if (p == "manylinux1" + suffix)
            floor = "2.5";
        else if (p == "manylinux2010" + suffix)
            floor = "2.12";
        else if (p == "manylinux2014" + suffix)
            floor = "2.17";
        else if (starts_with(p, "manylinux_")) {
            auto f = split(p.substr(10, p.size() - 10 - suffix.size()), '_');
            if (f.size() == 2 && digits_only(f[0]) && digits_only(f[1])) floor = f[0] + "." + f[1];
        }
        // A wheel tagged for several floors installs from the lowest of them.
        if (!floor.empty() &&
            (best.empty() || std::stoi(split(floor, '.')[1]) < std::stoi(split(best, '.')[1])))
            best = floor;
    }
    return best;
}

std::vector<std::string> WheelName::cpython_versions() const {
    std::vector<std::string> out;
    bool ft_abi = std::any_of(abi_tags.begin(), abi_tags.end(), [](const std::string& a) {
        return ends_with(a, "t") && starts_with(a, "cp3");
    });
    for (const auto& t : python_tags) {
        std::string v = cp_version(t);
        if (v.empty()) continue;
        if (ft_abi && !ends_with(v, "t")) v += "t";
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
}

std::string normalize_project_name(std::string_view name) {
    std::string out;
    for (char c : name) {
        if (c == '-' || c == '_' || c == '.') {
            if (out.empty() || out.back() != '-') out += '-';
        } else {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

}  // namespace td::pypi
