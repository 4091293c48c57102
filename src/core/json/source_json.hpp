#pragma once
// A JSON-with-comments parser that remembers where every value and key came from,
// so manifest errors can say file:line:col. Accepts // and /* */ comments and trailing
// commas; refuses duplicate keys, control characters in strings, and nesting deeper
// than 64. Pure: parses a string, never reads files.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace td {

struct SourcePos {
    int line = 1;  // 1-based
    int col = 1;   // 1-based, in bytes
};

class JsonValue {
  public:
    enum class Kind { Null, Bool, Number, String, Array, Object };
    struct Member;

    Kind kind = Kind::Null;
    SourcePos pos;
    bool boolean = false;
    double number = 0;
    std::string text;  // string contents, or the number exactly as written
    std::vector<JsonValue> items;
    std::vector<Member> members;

    bool is_null() const { return kind == Kind::Null; }
    bool is_bool() const { return kind == Kind::Bool; }
    bool is_number() const { return kind == Kind::Number; }
    bool is_string() const { return kind == Kind::String; }
    bool is_array() const { return kind == Kind::Array; }
    bool is_object() const { return kind == Kind::Object; }
    // An integer written without fraction or exponent.
    bool is_integer() const;
    const JsonValue* find(std::string_view key) const;
};

struct JsonValue::Member {
    std::string key;
    SourcePos key_pos;
    JsonValue value;
};

const char* kind_name(JsonValue::Kind kind);

struct JsonSyntaxError {
    SourcePos pos;
    std::string message;
};

struct JsonParseResult {
    JsonValue value;
    std::vector<JsonSyntaxError> errors;  // empty on success; parsing stops at the first
};

JsonParseResult parse_source_json(std::string_view text);

}  // namespace td
