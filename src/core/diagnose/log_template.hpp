#pragma once
// Log lines and the templates matched against them (for `explain`): a line is normalised
// (cut, ANSI escapes and control characters removed, blanks collapsed), then matched
// against literal text with {name} captures by a small backtracking matcher with a work
// budget, so any input is bounded; no std::regex. Cause/fix texts use the same {name}
// syntax, with [[ ... ]] parts dropped when a fact inside is unknown.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/result.hpp"

namespace td {

inline constexpr std::size_t k_max_log_line = 4096;  // bytes of a line that are matched

class LineTemplate {
  public:
    // Errors describe the template problem (the caller adds the JSON path).
    static Result<LineTemplate> compile(std::string_view text);

    // The captured values when the (normalised) line contains the template.
    std::optional<std::map<std::string, std::string>> match(std::string_view line) const;

    const std::string& text() const { return m_text; }
    std::vector<std::string> names() const;
    // The longest literal: a line can match only if it contains it (for AnchorIndex).
    const std::string& anchor() const { return m_tokens[m_anchor].value; }

  private:
    enum class Kind { Literal, Word, Text };
    struct Token {
        Kind kind = Kind::Literal;
        std::string value;     // literal text, or the capture name
        std::string prefix;    // Word captures: required start of the value
        bool numeric = false;  // Word captures: must start with a digit
    };
    bool match_from(std::size_t i, std::size_t p, std::string_view line,
                    std::vector<std::pair<std::size_t, std::size_t>>& spans, long& budget) const;

    std::string m_text;
    std::vector<Token> m_tokens;
    std::size_t m_first_literal = 0;  // index of the first literal token (0 or 1)
    std::size_t m_anchor = 0;         // index of the longest literal token (a fast reject)
};

// The line as it is matched: cut to 4096 bytes, ANSI escapes and control characters removed,
// invalid UTF-8 replaced by '?', blanks collapsed, trimmed.
std::string normalize_log_line(std::string_view raw);
// The same into `out` (cleared first), so a scanner can reuse one buffer for every line.
void normalize_log_line(std::string_view raw, std::string& out);

// Renders a cause/fix template; nullopt when a fact outside [[ ]] is unknown.
std::optional<std::string> render_template(std::string_view tmpl,
                                           const std::map<std::string, std::string>& facts);

// Walks a cause/fix template; calls `on_name(name, depth)` for each {name} (depth: [[ ]]
// nesting). Returns an error text, empty when the template is well formed.
std::string scan_template(std::string_view t,
                          const std::function<void(std::string_view, int)>& on_name);

}  // namespace td
