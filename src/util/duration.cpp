#include "util/duration.hpp"

namespace td {

std::optional<long long> parse_duration_seconds(std::string_view text) {
    constexpr long long k_max = 10LL * 366 * 24 * 3600;
    long long unit = 1;
    if (!text.empty()) {
        switch (text.back()) {
            case 's':
                unit = 1;
                text.remove_suffix(1);
                break;
            case 'm':
                unit = 60;
                text.remove_suffix(1);
                break;
            case 'h':
                unit = 3600;
                text.remove_suffix(1);
                break;
            default:
                break;
        }
    }
    if (text.empty() || text.size() > 12) return std::nullopt;
    long long n = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
    }
    if (n > k_max / unit) return std::nullopt;
    return n * unit;
}

std::string format_duration(long long seconds) {
    if (seconds != 0 && seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
    if (seconds != 0 && seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
    return std::to_string(seconds) + "s";
}

}  // namespace td
