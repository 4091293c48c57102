#include "core/build/settings.hpp"

#include "core/json/json_reader.hpp"

namespace td {

Settings parse_settings(std::string_view text, Diagnostics& diags) {
    Settings settings;
    auto parsed = parse_document(text, diags);
    if (!parsed) return settings;
    std::map<std::string, SourcePos> positions;
    JsonReader r(diags, positions);
    const JsonValue& root = *parsed;
    if (!r.check_object(root, "$", {"schema", "mirrors"}, {"schema"})) return settings;
    check_schema_one(r, root, "settings");
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
            if (!parsed_mirror)
                r.error(member.value, path, parsed_mirror.error().message);
            else
                settings.mirrors[parsed_mirror->first] = parsed_mirror->second;
        }
    }
    return settings;
}

}  // namespace td
