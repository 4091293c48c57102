#include "core/json/json_reader.hpp"

#include <cmath>
#include <set>

#include "util/strings.hpp"

namespace td {

std::optional<JsonValue> parse_document(std::string_view text, Diagnostics& diags) {
    auto parsed = parse_source_json(text);
    for (const auto& e : parsed.errors) diags.add(e.pos, "", "syntax error: " + e.message);
    if (!parsed.errors.empty()) return std::nullopt;
    return std::move(parsed.value);
}

void check_schema_one(JsonReader& r, const JsonValue& root, const std::string& what) {
    if (const JsonValue* schema = root.find("schema"))
        if (auto s = r.integer(*schema, "$.schema", 0, 1000); s && *s != 1)
            r.error(*schema, "$.schema",
                    "unsupported " + (what.empty() ? "" : what + " ") + "schema " +
                        std::to_string(*s) + "; this torchdock reads schema 1");
}

std::string member_path(const std::string& parent, const std::string& key) {
    bool plain = !key.empty();
    for (char c : key)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            plain = false;
    return plain ? parent + "." + key : parent + "[" + quote_value(key) + "]";
}

std::string item_path(const std::string& parent, std::size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

bool JsonReader::check_object(const JsonValue& obj, const std::string& path,
                              const std::vector<std::string>& allowed,
                              const std::vector<std::string>& required) {
    record(path, obj.pos);
    if (!obj.is_object()) {
        error(obj, path, std::string("expected an object, found ") + kind_name(obj.kind));
        return false;
    }
    for (const auto& m : obj.members) {
        record(member_path(path, m.key), m.value.pos);
        bool known = false;
        for (const auto& a : allowed) known = known || a == m.key;
        if (known) continue;
        std::string msg = "unknown key " + quote_value(m.key);
        if (auto near = closest_match(m.key, allowed))
            msg += "; did you mean \"" + *near + "\"?";
        else
            msg += "; accepted keys: " + join(allowed, ", ");
        m_diags.add(m.key_pos, member_path(path, m.key), msg);
    }
    for (const auto& r : required)
        if (!obj.find(r))
            error(
                obj, path,
                "missing required key \"" + r + "\" (required here: " + join(required, ", ") + ")");
    return true;
}

std::optional<std::string> JsonReader::string(const JsonValue& v, const std::string& path) {
    record(path, v.pos);
    if (!v.is_string()) {
        error(v, path, std::string("expected a string, found ") + kind_name(v.kind));
        return std::nullopt;
    }
    return v.text;
}

std::optional<bool> JsonReader::boolean(const JsonValue& v, const std::string& path) {
    record(path, v.pos);
    if (!v.is_bool()) {
        error(v, path, std::string("expected true or false, found ") + kind_name(v.kind));
        return std::nullopt;
    }
    return v.boolean;
}

std::optional<long long> JsonReader::integer(const JsonValue& v, const std::string& path,
                                             long long min, long long max) {
    record(path, v.pos);
    if (!v.is_integer() || v.number < static_cast<double>(min) ||
        v.number > static_cast<double>(max)) {
        std::string found = v.is_number() ? v.text : kind_name(v.kind);
        error(v, path,
              "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                  ", found " + found);
        return std::nullopt;
    }
    return static_cast<long long>(v.number);
}

std::optional<double> JsonReader::number(const JsonValue& v, const std::string& path, double min,
                                         double max) {
    record(path, v.pos);
    if (!v.is_number() || v.number < min || v.number > max) {
        std::string found = v.is_number() ? v.text : kind_name(v.kind);
        char range[96];
        std::snprintf(range, sizeof range, "expected a number from %g to %g, found ", min, max);
        error(v, path, range + found);
        return std::nullopt;
    }
    return v.number;
}

std::vector<std::string> JsonReader::string_list(
    const JsonValue& v, const std::string& path,
    const std::function<std::string(std::string_view)>& check, bool allow_empty) {
    std::vector<std::string> out;
    record(path, v.pos);
    if (!v.is_array()) {
        error(v, path, std::string("expected an array of strings, found ") + kind_name(v.kind));
        return out;
    }
    if (v.items.empty() && !allow_empty) error(v, path, "expected at least one entry");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.items.size(); ++i) {
        auto p = item_path(path, i);
        auto s = string(v.items[i], p);
        if (!s) continue;
        if (auto e = check(*s); !e.empty()) {
            error(v.items[i], p, e);
            continue;
        }
        if (!seen.insert(*s).second) {
            error(v.items[i], p, "duplicate entry " + quote_value(*s));
            continue;
        }
        out.push_back(*s);
    }
    return out;
}

std::optional<std::string> JsonReader::choice(const JsonValue& v, const std::string& path,
                                              const std::vector<std::string>& choices) {
    auto s = string(v, path);
    if (!s) return std::nullopt;
    for (const auto& c : choices)
        if (c == *s) return s;
    std::string msg = quote_value(*s) + " is not one of: " + join(choices, ", ");
    if (auto near = closest_match(*s, choices)) msg += "; did you mean \"" + *near + "\"?";
    error(v, path, msg);
    return std::nullopt;
}

}  // namespace td
