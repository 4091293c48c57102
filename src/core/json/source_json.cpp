#include "core/json/source_json.hpp"

#include <charconv>
#include <cmath>
#include <set>

#include "util/strings.hpp"

namespace td {
namespace {

constexpr int k_max_depth = 64;

class Parser {
  public:
    explicit Parser(std::string_view text) : m_text(text) {}

    JsonParseResult run() {
        JsonParseResult result;
        // A UTF-8 byte order mark (editors on Windows write one) is not content (RFC 8259
        // section 8.1 lets a parser ignore it); columns start after it, as editors show them.
        if (m_text.substr(0, 3) == "\xEF\xBB\xBF") m_at = 3;
        skip_space();
        if (!m_failed) result.value = parse_value(0);
        skip_space();
        if (!m_failed && m_at < m_text.size()) fail("unexpected text after the top-level value");
        if (m_failed) result.errors.push_back(m_error);
        return result;
    }

  private:
    std::string_view m_text;
    std::size_t m_at = 0;
    SourcePos m_pos;
    bool m_failed = false;
    JsonSyntaxError m_error;

    bool at_end() const { return m_at >= m_text.size(); }
    char peek() const { return at_end() ? '\0' : m_text[m_at]; }

    void advance() {
        if (at_end()) return;
        if (m_text[m_at] == '\n') {
            ++m_pos.line;
            m_pos.col = 1;
        } else {
            ++m_pos.col;
        }
        ++m_at;
    }

    void fail(std::string message) { fail_at(m_pos, std::move(message)); }
    void fail_at(SourcePos pos, std::string message) {
        if (m_failed) return;
        m_failed = true;
        m_error = {pos, std::move(message)};
    }

    std::string describe_next() const {
        if (at_end()) return "end of file";
        return quote_value(m_text.substr(m_at, 1));
    }

    void skip_space() {
        while (!m_failed && !at_end()) {
            char c = peek();
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                advance();
            } else if (c == '/' && m_at + 1 < m_text.size() && m_text[m_at + 1] == '/') {
                while (!at_end() && peek() != '\n') advance();
            } else if (c == '/' && m_at + 1 < m_text.size() && m_text[m_at + 1] == '*') {
                SourcePos start = m_pos;
                advance();
                advance();
                while (!at_end() &&
                       !(peek() == '*' && m_at + 1 < m_text.size() && m_text[m_at + 1] == '/'))
                    advance();
                if (at_end()) return fail_at(start, "unterminated /* comment");
                advance();
                advance();
            } else {
                return;
            }
        }
    }

    JsonValue parse_value(int depth) {
        JsonValue v;
        v.pos = m_pos;
        if (depth > k_max_depth) {
            fail("nesting deeper than 64 levels");
            return v;
        }
        char c = peek();
        if (c == '{') {
            parse_object(v, depth);
        } else if (c == '[') {
            parse_array(v, depth);
        } else if (c == '"') {
            v.kind = JsonValue::Kind::String;
            v.text = parse_string();
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            parse_number(v);
        } else if (literal("true")) {
            v.kind = JsonValue::Kind::Bool;
            v.boolean = true;
        } else if (literal("false")) {
            v.kind = JsonValue::Kind::Bool;
        } else if (literal("null")) {
            v.kind = JsonValue::Kind::Null;
        } else {
            fail("expected a value, found " + describe_next());
        }
        return v;
    }

    bool literal(std::string_view word) {
        if (m_text.substr(m_at, word.size()) != word) return false;
        for (std::size_t i = 0; i < word.size(); ++i) advance();
        return true;
    }

    void parse_object(JsonValue& v, int depth) {
        v.kind = JsonValue::Kind::Object;
        advance();  // {
        std::set<std::string, std::less<>> seen;
        skip_space();
        while (!m_failed) {
            if (peek() == '}') {
                advance();
                return;
            }
            if (peek() != '"')
                return fail("expected a quoted key or '}', found " + describe_next());
            JsonValue::Member member;
            member.key_pos = m_pos;
            member.key = parse_string();
            if (m_failed) return;
            if (!seen.insert(member.key).second)
                return fail_at(member.key_pos, "duplicate key " + quote_value(member.key));
            skip_space();
            if (peek() != ':') return fail("expected ':' after key, found " + describe_next());
            advance();
            skip_space();
            member.value = parse_value(depth + 1);
            if (m_failed) return;
            v.members.push_back(std::move(member));
            skip_space();
            if (peek() == ',') {
                advance();
                skip_space();
            } else if (peek() != '}') {
                return fail("expected ',' or '}' in object, found " + describe_next());
            }
        }
    }

    void parse_array(JsonValue& v, int depth) {
        v.kind = JsonValue::Kind::Array;
        advance();  // [
        skip_space();
        while (!m_failed) {
            if (peek() == ']') {
                advance();
                return;
            }
            v.items.push_back(parse_value(depth + 1));
            if (m_failed) return;
            skip_space();
            if (peek() == ',') {
                advance();
                skip_space();
            } else if (peek() != ']') {
                return fail("expected ',' or ']' in array, found " + describe_next());
            }
        }
    }

    static void append_utf8(std::string& out, std::uint32_t cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    bool hex4(std::uint32_t& out) {
        out = 0;
        for (int i = 0; i < 4; ++i) {
            char c = peek();
            int d = (c >= '0' && c <= '9')   ? c - '0'
                    : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                             : -1;
            if (d < 0) {
                fail("invalid \\u escape: expected 4 hex digits");
                return false;
            }
            out = out * 16 + static_cast<std::uint32_t>(d);
            advance();
        }
        return true;
    }

    std::string parse_string() {
        std::string out;
        SourcePos start = m_pos;
        advance();  // opening quote
        while (!m_failed) {
            if (at_end()) {
                fail_at(start, "unterminated string");
                break;
            }
            char c = peek();
            if (c == '"') {
                advance();
                break;
            }
            if (static_cast<unsigned char>(c) < 0x20) {
                fail("control character " + quote_value(std::string(1, c)) +
                     " inside a string (write it as an escape, or leave it out)");
                break;
            }
            if (c != '\\') {
                out += c;
                advance();
                continue;
            }
            advance();
            char e = peek();
            advance();
            switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    std::uint32_t cp = 0;
                    if (!hex4(cp)) break;
                    if (cp >= 0xD800 && cp <= 0xDBFF && peek() == '\\') {
                        advance();
                        if (peek() != 'u') {
                            fail("invalid surrogate pair");
                            break;
                        }
                        advance();
                        std::uint32_t low = 0;
                        if (!hex4(low)) break;
                        if (low < 0xDC00 || low > 0xDFFF) {
                            fail("invalid surrogate pair");
                            break;
                        }
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                        fail("unpaired surrogate in \\u escape");
                        break;
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    fail("invalid escape " +
                         quote_value(std::string("\\") +
                                     (e ? std::string(1, e) : std::string("end of file"))));
                    break;
            }
        }
        return out;
    }

    void parse_number(JsonValue& v) {
        v.kind = JsonValue::Kind::Number;
        std::size_t start = m_at;
        auto digits = [&] {
            std::size_t n = 0;
            while (peek() >= '0' && peek() <= '9') {
                advance();
                ++n;
            }
            return n;
        };
        if (peek() == '-') advance();
        if (peek() == '0') {
            advance();
        } else if (digits() == 0) {
            return fail("invalid number");
        }
        if (peek() == '.') {
            advance();
            if (digits() == 0) return fail("invalid number: digits expected after '.'");
        }
        if (peek() == 'e' || peek() == 'E') {
            advance();
            if (peek() == '+' || peek() == '-') advance();
            if (digits() == 0) return fail("invalid number: digits expected in exponent");
        }
        v.text = std::string(m_text.substr(start, m_at - start));
        auto [ptr, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), v.number);
        if (ec != std::errc() || !std::isfinite(v.number)) fail_at(v.pos, "number out of range");
    }
};

}  // namespace

bool JsonValue::is_integer() const {
    return kind == Kind::Number && text.find_first_of(".eE") == std::string::npos;
}

const JsonValue* JsonValue::find(std::string_view key) const {
    for (const auto& m : members)
        if (m.key == key) return &m.value;
    return nullptr;
}

const char* kind_name(JsonValue::Kind kind) {
    switch (kind) {
        case JsonValue::Kind::Null:
            return "null";
        case JsonValue::Kind::Bool:
            return "a boolean";
        case JsonValue::Kind::Number:
            return "a number";
        case JsonValue::Kind::String:
            return "a string";
        case JsonValue::Kind::Array:
            return "an array";
        case JsonValue::Kind::Object:
            return "an object";
    }
    return "?";
}

JsonParseResult parse_source_json(std::string_view text) { return Parser(text).run(); }

}  // namespace td
