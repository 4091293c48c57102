#include "core/lockfile.hpp"

#include <nlohmann/json.hpp>

#include "core/grammar.hpp"
#include "core/json_reader.hpp"

namespace td {

LockDigests parse_lockfile(std::string_view text, Diagnostics& diags) {
    LockDigests out;
    auto parsed = parse_document(text, diags);
    if (!parsed) return out;
    std::map<std::string, SourcePos> positions;
    JsonReader r(diags, positions);
    const JsonValue& root = *parsed;
    if (!r.check_object(root, "$", {"schema", "images"}, {"schema", "images"})) return out;
    check_schema_one(r, root, "lock");
    if (!root.find("images")) return out;
    const JsonValue& images = *root.find("images");
    if (!images.is_object()) {
        r.error(images, "$.images", "expected an object of image reference -> {\"digest\": ...}");
        return out;
    }
    for (const auto& member : images.members) {
        auto path = member_path("$.images", member.key);
        if (auto e = grammar::check_image_reference(member.key); !e.empty()) {
            diags.add(member.key_pos, path, e);
            continue;
        }
        if (!r.check_object(member.value, path, {"digest", "media_type"}, {"digest"})) continue;
        const JsonValue* d = member.value.find("digest");
        if (!d) continue;
        auto digest = r.string(*d, path + ".digest");
        if (!digest) continue;
        if (auto e = grammar::check_digest(*digest); !e.empty()) {
            r.error(*d, path + ".digest", e);
            continue;
        }
        out[member.key] = *digest;
    }
    return out;
}

std::string render_lockfile(const std::map<std::string, LockEntry>& entries) {
    nlohmann::json images = nlohmann::json::object();
    for (const auto& [ref, e] : entries) {
        images[ref] = {{"digest", e.digest}};
        if (!e.media_type.empty()) images[ref]["media_type"] = e.media_type;
    }
    return nlohmann::json{{"schema", 1}, {"images", images}}.dump(2) + "\n";
}

}  // namespace td
