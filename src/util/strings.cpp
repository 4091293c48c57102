#include "util/strings.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace td {

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        auto pos = s.find(sep, start);
        if (pos == std::string_view::npos) {
            out.emplace_back(s.substr(start));
            return out;
        }
        out.emplace_back(s.substr(start, pos - start));
        start = pos + 1;
    }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i) out += sep;
        out += parts[i];
    }
    return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }
bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

std::string to_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    // Optimal string alignment: a swap of two neighbours ("lsit" for "list") is one edit.
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                                d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    std::string lowered = to_lower(word);
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(lowered, to_lower(c));
        if (!best || d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    // A plausible typo: at most a third of the word changed (and at least one edit allowed).
    if (best && best_distance <= std::max<std::size_t>(1, (word.size() + 2) / 3)) return best;
    return std::nullopt;
}

std::size_t utf8_sequence_length(std::string_view s) {
    if (s.empty()) return 0;
    auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    unsigned char c = b(0);
    if (c < 0x80) return 1;
    std::size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                    : c >= 0xE0 && c <= 0xEF ? 3
                    : c >= 0xF0 && c <= 0xF4 ? 4
                                             : 0;
    if (n == 0 || s.size() < n) return 0;
    for (std::size_t i = 1; i < n; ++i)
        if ((b(i) & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // UTF-16 surrogates
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // past U+10FFFF
    return n;
}

bool is_valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = utf8_sequence_length(s.substr(i));
        if (n == 0) return false;
        i += n;
    }
    return true;
}

namespace {

unsigned code_point(std::string_view s, std::size_t n) {
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]) & 0x3Fu; };
    auto c = static_cast<unsigned char>(s[0]);
    if (n == 2) return ((c & 0x1Fu) << 6) | b(1);
    if (n == 3) return ((c & 0x0Fu) << 12) | (b(1) << 6) | b(2);
    return ((c & 0x07u) << 18) | (b(1) << 12) | (b(2) << 6) | b(3);
}

// Code points that move text around, hide, or end a line when shown, or that XML 1.0 does
// not allow: C1 controls, line and paragraph separators, bidirectional marks (U+061C, U+200E,
// U+200F) and overrides, zero-width characters and the byte-order mark, and the
// noncharacters U+FFFE and U+FFFF.
bool invisible_control(unsigned cp) {
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF || cp == 0xFFFE || cp == 0xFFFF;
}

// One character of `s` (a UTF-8 sequence of length n, or one stray byte when n is 0) as
// it is shown.
std::string escape_unit(std::string_view s, std::size_t n, bool quoted) {
    auto c = static_cast<unsigned char>(s[0]);
    char buf[16];
    if (n == 0) {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        return buf;
    }
    if (n == 1) {
        if (c == '\n') return "\\n";
        if (c == '\r') return "\\r";
        if (c == '\t') return "\\t";
        if (c < 0x20 || c == 0x7F) {
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            return buf;
        }
        if (quoted && (c == '"' || c == '\\')) return std::string("\\") + static_cast<char>(c);
        return std::string(1, static_cast<char>(c));
    }
    if (unsigned cp = code_point(s, n); invisible_control(cp)) {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
        return buf;
    }
    return std::string(s.substr(0, n));
}

// `text` escaped; cut to `max` shown characters (0: no cut) with "..." when cut.
std::string escape_text(std::string_view text, std::size_t max, bool quoted) {
    std::string out;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size();) {
        std::size_t n = utf8_sequence_length(text.substr(i));
        std::string unit = escape_unit(text.substr(i), n, quoted);
        // A character shown as itself counts one; an escape counts its length.
        std::size_t unit_chars = n > 1 && unit.front() != '\\' ? 1 : unit.size();
        if (max > 0 && chars + unit_chars > max) {
            out += "...";
            break;
        }
        out += unit;
        chars += unit_chars;
        i += n == 0 ? 1 : n;
    }
    return quoted ? "\"" + out + "\"" : out;
}

}  // namespace

std::string quote_value(std::string_view s, std::size_t max_chars) {
    return escape_text(s, max_chars, true);
}

std::string terminal_text(std::string_view s, std::size_t max_chars) {
    return escape_text(s, max_chars, false);
}

std::string url_encode(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~';
        if (unreserved) {
            out += static_cast<char>(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

std::string base_name(std::string_view path) {
    return std::string(path.substr(path.find_last_of('/') + 1));
}

std::string clip(std::string_view s, std::size_t n) {
    return s.size() <= n ? std::string(s) : std::string(s.substr(0, n - 3)) + "...";
}

bool glob_match(std::string_view pattern, std::string_view text) {
    std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

}  // namespace td
