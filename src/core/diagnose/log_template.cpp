#include "core/diagnose/log_template.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace td {
namespace {

constexpr long k_match_budget =
    16 * static_cast<long>(k_max_log_line);  // bytes one template match may scan

bool is_word_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '-';
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool valid_name(std::string_view name) {
    if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
}

// ---- cause/fix templates ----------------------------------------------------------------

// Walks a template; calls `on_name(name, depth)` for each {name} (depth: [[ ]] nesting).
// Returns an error text, empty when the template is well formed.
}  // namespace

std::string scan_template(std::string_view t,
                          const std::function<void(std::string_view, int)>& on_name) {
    int depth = 0;
    for (std::size_t i = 0; i < t.size();) {
        const char c = t[i], next = i + 1 < t.size() ? t[i + 1] : '\0';
        if ((c == '{' && next == '{') || (c == '}' && next == '}')) {
            i += 2;
        } else if (c == '[' && next == '[') {
            ++depth;
            i += 2;
        } else if (c == ']' && next == ']') {
            if (depth == 0) return "']]' without '[['";
            --depth;
            i += 2;
        } else if (c == '{') {
            auto end = t.find('}', i);
            if (end == std::string_view::npos) return "unclosed '{'";
            auto name = t.substr(i + 1, end - i - 1);
            if (!valid_name(name)) return "bad fact name " + quote_value(name);
            on_name(name, depth);
            i = end + 1;
        } else if (c == '}') {
            return "'}' without '{' (write '}}' for a brace)";
        } else {
            ++i;
        }
    }
    if (depth != 0) return "'[[' without ']]'";
    return {};
}

namespace {

std::string render_seq(std::string_view t, std::size_t& pos,
                       const std::map<std::string, std::string>& facts, bool& ok, int depth) {
    std::string out;
    while (pos < t.size()) {
        if (depth > 0 && t.compare(pos, 2, "]]") == 0) {
            pos += 2;
            return out;
        }
        if (t.compare(pos, 2, "[[") == 0) {
            pos += 2;
            bool inner_ok = true;
            std::string inner = render_seq(t, pos, facts, inner_ok, depth + 1);
            if (inner_ok) out += inner;
        } else if (t.compare(pos, 2, "{{") == 0) {
            out += '{';
            pos += 2;
        } else if (t.compare(pos, 2, "}}") == 0) {
            out += '}';
            pos += 2;
        } else if (t[pos] == '{') {
            auto end = t.find('}', pos);
            if (end == std::string_view::npos) {
                ok = false;
                return out;
            }
            auto it = facts.find(std::string(t.substr(pos + 1, end - pos - 1)));
            if (it == facts.end() || it->second.empty())
                ok = false;
            else
                out += it->second;
            pos = end + 1;
        } else {
            out += t[pos++];
        }
    }
    return out;
}
}  // namespace

// ---- LineTemplate ---------------------------------------------------------------------------

Result<LineTemplate> LineTemplate::compile(std::string_view text) {
    LineTemplate t;
    std::string literal;
    auto flush = [&] {
        if (!literal.empty()) t.m_tokens.push_back({Kind::Literal, literal, {}});
        literal.clear();
    };
    std::size_t i = 0;
    while (i < text.size() && is_blank(text[i])) ++i;
    std::size_t end = text.size();
    while (end > i && is_blank(text[end - 1])) --end;
    for (; i < end;) {
        char c = text[i];
        if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) {
            literal += c;
            i += 2;
        } else if (c == '{') {
            auto close = text.find('}', i);
            if (close == std::string_view::npos || close >= end)
                return Error{ErrorKind::Config, "unclosed '{' in template " + quote_value(text)};
            std::string_view inner = text.substr(i + 1, close - i - 1);
            Token tok;
            tok.kind = Kind::Word;
            if (!inner.empty() && inner.back() == '*') {
                tok.kind = Kind::Text;
                inner.remove_suffix(1);
            } else if (!inner.empty() && inner.back() == '#') {
                tok.numeric = true;
                inner.remove_suffix(1);
            } else if (auto eq = inner.find('='); eq != std::string_view::npos) {
                tok.prefix = std::string(inner.substr(eq + 1));
                inner = inner.substr(0, eq);
                bool ok = !tok.prefix.empty();
                for (char p : tok.prefix) ok = ok && is_word_char(p);
                if (!ok)
                    return Error{ErrorKind::Config,
                                 "capture prefix must be [A-Za-z0-9._+-] characters in " +
                                     quote_value(text)};
            }
            if (!valid_name(inner))
                return Error{ErrorKind::Config,
                             "bad capture name " + quote_value(inner) + " in " + quote_value(text)};
            for (const auto& other : t.m_tokens)
                if (other.kind != Kind::Literal && other.value == inner)
                    return Error{ErrorKind::Config, "capture " + quote_value(inner) +
                                                        " appears twice in " + quote_value(text)};
            flush();
            if (!t.m_tokens.empty() && t.m_tokens.back().kind != Kind::Literal)
                return Error{ErrorKind::Config,
                             "two captures with no text between them in " + quote_value(text)};
            tok.value = std::string(inner);
            t.m_tokens.push_back(std::move(tok));
            i = close + 1;
        } else if (c == '}') {
            return Error{ErrorKind::Config,
                         "'}' without '{' in " + quote_value(text) + " (write '}}')"};
        } else if (is_blank(c)) {
            if (literal.empty() || literal.back() != ' ') literal += ' ';
            ++i;
        } else {
            literal += c;
            ++i;
        }
    }
    flush();
    t.m_text = std::string(text);
    std::size_t literal_bytes = 0;
    bool found_first = false;
    for (std::size_t k = 0; k < t.m_tokens.size(); ++k) {
        const Token& tok = t.m_tokens[k];
        if (tok.kind != Kind::Literal) continue;
        literal_bytes += tok.value.size();
        if (!found_first) {
            t.m_first_literal = k;
            found_first = true;
        }
        if (tok.value.size() > t.m_tokens[t.m_anchor].value.size() ||
            t.m_tokens[t.m_anchor].kind != Kind::Literal)
            t.m_anchor = k;
    }
    if (!found_first || literal_bytes < 4)
        return Error{ErrorKind::Config,
                     "template " + quote_value(text) + " needs at least 4 characters of text"};
    if (t.m_first_literal == 1 && t.m_tokens[0].kind == Kind::Text)
        return Error{ErrorKind::Config,
                     "template " + quote_value(text) + " may not start with a {name*} capture"};
    return t;
}

std::vector<std::string> LineTemplate::names() const {
    std::vector<std::string> out;
    for (const auto& tok : m_tokens)
        if (tok.kind != Kind::Literal) out.push_back(tok.value);
    return out;
}

bool LineTemplate::match_from(std::size_t i, std::size_t p, std::string_view line,
                              std::vector<std::pair<std::size_t, std::size_t>>& spans,
                              long& budget) const {
    if (--budget < 0) return false;
    if (i == m_tokens.size()) return true;
    const Token& tok = m_tokens[i];
    if (tok.kind == Kind::Literal) {
        budget -= static_cast<long>(tok.value.size());
        if (p > line.size() || line.compare(p, tok.value.size(), tok.value) != 0) return false;
        return match_from(i + 1, p + tok.value.size(), line, spans, budget);
    }
    bool last = i + 1 == m_tokens.size();
    if (tok.kind == Kind::Word) {
        std::size_t r = p;
        while (r < line.size() && is_word_char(line[r])) ++r;
        budget -= static_cast<long>(r - p);
        if (r == p) return false;
        if (tok.numeric && !(line[p] >= '0' && line[p] <= '9')) return false;
        if (!tok.prefix.empty() && line.compare(p, tok.prefix.size(), tok.prefix) != 0)
            return false;
        if (last) {
            spans[i] = {p, r};
            return true;
        }
        const std::string& next = m_tokens[i + 1].value;
        std::size_t min_end = p + std::max<std::size_t>(1, tok.prefix.size());
        for (std::size_t e = r; e >= min_end; --e) {  // longest value first
            if (--budget < 0) return false;
            if (line.compare(e, next.size(), next) == 0) {
                spans[i] = {p, e};
                if (match_from(i + 2, e + next.size(), line, spans, budget)) return true;
                if (budget < 0) return false;
            }
        }
        return false;
    }
    // Text: any characters, shortest first.
    if (p >= line.size()) return false;
    if (last) {
        spans[i] = {p, line.size()};
        return true;
    }
    const std::string& next = m_tokens[i + 1].value;
    std::size_t scanned_from = p;
    for (std::size_t e = line.find(next, p + 1); e != std::string_view::npos;
         e = line.find(next, e + 1)) {
        budget -= static_cast<long>(e - scanned_from) + 1;
        scanned_from = e;
        if (budget < 0) return false;
        spans[i] = {p, e};
        if (match_from(i + 2, e + next.size(), line, spans, budget)) return true;
        if (budget < 0) return false;
    }
    return false;
}

std::optional<std::map<std::string, std::string>> LineTemplate::match(std::string_view line) const {
    if (m_tokens.empty() || line.find(m_tokens[m_anchor].value) == std::string_view::npos)
        return std::nullopt;
    std::vector<std::pair<std::size_t, std::size_t>> spans(m_tokens.size());
    long budget = k_match_budget;
    const std::string& first = m_tokens[m_first_literal].value;
    std::size_t scanned_from = 0;
    for (std::size_t pos = line.find(first); pos != std::string_view::npos;
         pos = line.find(first, pos + 1)) {
        budget -= static_cast<long>(pos - scanned_from) + 1;
        scanned_from = pos;
        if (budget < 0) break;
        if (m_first_literal == 1) {  // a leading {name}: the run of word characters before the text
            std::size_t s = pos;
            while (s > 0 && is_word_char(line[s - 1])) --s;
            budget -= static_cast<long>(pos - s);
            const Token& lead = m_tokens[0];
            if (s == pos || pos - s < lead.prefix.size()) continue;
            if (!lead.prefix.empty() && line.compare(s, lead.prefix.size(), lead.prefix) != 0)
                continue;
            if (lead.numeric && !(line[s] >= '0' && line[s] <= '9')) continue;
            spans[0] = {s, pos};
        }
        if (!match_from(m_first_literal + 1, pos + first.size(), line, spans, budget)) {
            if (budget < 0) break;
            continue;
        }
        std::map<std::string, std::string> out;
        for (std::size_t k = 0; k < m_tokens.size(); ++k) {
            const Token& tok = m_tokens[k];
            if (tok.kind == Kind::Literal) continue;
            std::string value(line.substr(spans[k].first, spans[k].second - spans[k].first));
            if (tok.kind == Kind::Word)
                while (value.size() > 1 && value.back() == '.') value.pop_back();
            while (!value.empty() && value.back() == ' ') value.pop_back();
            out[tok.value] = value;
        }
        return out;
    }
    return std::nullopt;
}

// ---- text helpers ---------------------------------------------------------------------------

std::string normalize_log_line(std::string_view raw) {
    std::string out;
    normalize_log_line(raw, out);
    return out;
}

void normalize_log_line(std::string_view raw, std::string& out) {
    raw = raw.substr(0, std::min(raw.size(), k_max_log_line));
    out.clear();
    bool pending_blank = false;
    auto emit = [&](std::string_view bytes) {
        if (pending_blank && !out.empty()) out += ' ';
        pending_blank = false;
        out += bytes;
    };
    for (std::size_t i = 0; i < raw.size();) {
        auto c = static_cast<unsigned char>(raw[i]);
        if (c == 0x1b) {  // ANSI escape sequence
            ++i;
            if (i < raw.size() && raw[i] == '[') {
                ++i;
                while (i < raw.size() && !(raw[i] >= 0x40 && raw[i] <= 0x7e)) ++i;
                if (i < raw.size()) ++i;
            } else if (i < raw.size() && raw[i] == ']') {
                ++i;
                while (i < raw.size() && raw[i] != '\a' &&
                       !(raw[i] == 0x1b && i + 1 < raw.size() && raw[i + 1] == '\\'))
                    ++i;
                if (i < raw.size()) i += raw[i] == '\a' ? 1 : 2;
            } else if (i < raw.size() && raw[i] >= 0x40 && raw[i] <= 0x5f) {
                ++i;
            }
            continue;
        }
        if (c < 0x20 || c == 0x7f) {  // blanks and other control characters
            pending_blank = true;
            ++i;
            continue;
        }
        if (c < 0x80) {
            if (c == ' ')
                pending_blank = true;
            else
                emit(raw.substr(i, 1));
            ++i;
            continue;
        }
        // UTF-8: copy a valid sequence, replace an invalid byte with '?', drop C1 controls.
        std::size_t len = c >= 0xF0 && c <= 0xF4   ? 4
                          : c >= 0xE0              ? 3
                          : c >= 0xC2 && c <= 0xDF ? 2
                                                   : 0;
        bool ok = len > 0 && i + len <= raw.size();
        for (std::size_t k = 1; ok && k < len; ++k)
            ok = (static_cast<unsigned char>(raw[i + k]) & 0xC0) == 0x80;
        if (ok && len == 3) {
            auto c1 = static_cast<unsigned char>(raw[i + 1]);
            ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
        }
        if (ok && len == 4) {
            auto c1 = static_cast<unsigned char>(raw[i + 1]);
            ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
        }
        if (!ok) {
            emit("?");
            ++i;
        } else if (len == 2 && c == 0xC2 && static_cast<unsigned char>(raw[i + 1]) < 0xA0) {
            pending_blank = true;  // C1 control character
            i += 2;
        } else {
            emit(raw.substr(i, len));
            i += len;
        }
    }
}

std::optional<std::string> render_template(std::string_view tmpl,
                                           const std::map<std::string, std::string>& facts) {
    std::size_t pos = 0;
    bool ok = true;
    std::string out = render_seq(tmpl, pos, facts, ok, 0);
    if (!ok) return std::nullopt;
    return out;
}

}  // namespace td
