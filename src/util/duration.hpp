#pragma once
// Durations on the command line: seconds, or a number with a unit (s, m, h).
#include <optional>
#include <string>
#include <string_view>

namespace td {

// "90" and "90s" are 90, "30m" 1800, "2h" 7200. Digits only before the unit (no sign, no
// fraction, no spaces); nothing over ten years. Else nothing.
std::optional<long long> parse_duration_seconds(std::string_view text);

// 7200 as "2h", 90 as "90s", 1800 as "30m": the largest unit that divides it.
std::string format_duration(long long seconds);

}  // namespace td
