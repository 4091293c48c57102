#pragma once
// String helpers that know nothing of torchdock.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace td {

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string to_lower(std::string_view s);

// Edit distance (insertions, deletions, substitutions and swaps of neighbours); used for
// did-you-mean suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// Renders a value for an error message: quoted, with control characters (C0, DEL, C1),
// line separators, bidirectional overrides and bytes that are not UTF-8 escaped (\n, \x1b,
// \u202e, \xff), so a newline, escape sequence or binary junk in bad input is shown, never
// acted on; '"' and '\\' are escaped too. Cut to `max_chars` shown characters with "..."
// (0: no cut). The result is valid UTF-8.
std::string quote_value(std::string_view s, std::size_t max_chars = 0);

// Foreign text (a registry's message, a probe's reason, a log line) for a terminal or a
// log: the same escaping as quote_value, without the quotes.
std::string terminal_text(std::string_view s, std::size_t max_chars = 0);

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool is_valid_utf8(std::string_view s);

// The length of the well-formed UTF-8 sequence at the start of `s`, or 0 when there is none.
std::size_t utf8_sequence_length(std::string_view s);

// Percent-encodes everything but unreserved characters (RFC 3986), for URL queries.
std::string url_encode(std::string_view s);

// The last component of a '/'-separated path ("/usr/lib/libcuda.so.1" -> "libcuda.so.1").
std::string base_name(std::string_view path);

// `s` cut to `n` characters, its last three "..." when it was longer (n >= 3).
std::string clip(std::string_view s, std::size_t n);

// Glob match with '*' and '?' (used by --only PATTERN).
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace td
