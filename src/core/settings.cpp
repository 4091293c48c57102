#include "core/settings.hpp"

#include "core/json_reader.hpp"

namespace td {

Settings parse_settings(std::string_view text, Diagnostics& diags) {
    Settings settings;
    auto parsed = parse_source_json(text);
    for (const auto& e : parsed.errors) diags.add(e.pos, "", "syntax error: " + e.message);
    if (!parsed.errors.empty()) return settings;
    std::map<std::string, SourcePos> positions;
    JsonReader r(diags, positions);
    const JsonValue& root = parsed.value;
    if (!r.check_object(root, "$", {"schema", "mirrors"}, {"schema"})) return settings;
    if (const JsonValue* schema = root.find("schema"))
        if (auto s = r.integer(*schema, "$.schema", 0, 1000); s && *s != 1)
            r.error(*schema, "$.schema", "unsupported settings schema " + std::to_string(*s));
    if (const JsonValue* m = root.find("mirrors")) {
        if (!m->is_object()) {
            r.error(*m, "$.mirrors", "expected an object of registry -> mirror host");
            return settings;
        }
        for (const auto& member : m->members) {
            auto path = member_path("$.mirrors", member.key);
            auto to = r.string(member.value, path);
            if (!to) continue;
            auto parsed_mirror = parse_mirror(member.key + "=" + *to);
            if (!parsed_mirror) r.error(member.value, path, parsed_mirror.error().message);
            else settings.mirrors[parsed_mirror->first] = parsed_mirror->second;
        }
    }
    return settings;
}

}  // namespace td
