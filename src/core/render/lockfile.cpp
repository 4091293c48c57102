#include "core/render/lockfile.hpp"

#include <nlohmann/json.hpp>

#include "core/json/json_reader.hpp"
#include "core/json/json_text.hpp"
#include "core/render/grammar.hpp"

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

LockVerdict judge_lock(const RegistryAnswer& a, const std::optional<std::string>& previous,
                       bool check) {
    auto short_digest = [](const std::string& d) { return d.size() > 19 ? d.substr(0, 19) : d; };
    switch (a.kind) {
        case RegistryAnswer::Kind::Found:
            if (check) {
                if (!previous) return {"NOT LOCKED", true, false};
                if (*previous != a.digest)
                    return {"CHANGED upstream (locked " + short_digest(*previous) + ")", true,
                            false};
                return {"ok", false, false};
            }
            return {!previous               ? "locked"
                    : *previous == a.digest ? "unchanged"
                                            : "updated",
                    false, false};
        case RegistryAnswer::Kind::NotFound:
            // An end-of-life tag was deleted: drift for --check, a failure to lock otherwise.
            return {"GONE: the tag no longer exists (" + a.message + ")", check, !check};
        case RegistryAnswer::Kind::Failed:
        case RegistryAnswer::Kind::TimedOut:
            break;
    }
    return {"ERROR: " + a.message, false, true};
}

std::string render_lockfile(const std::map<std::string, LockEntry>& entries) {
    nlohmann::json images = nlohmann::json::object();
    for (const auto& [ref, e] : entries) {
        images[ref] = {{"digest", e.digest}};
        if (!e.media_type.empty()) images[ref]["media_type"] = e.media_type;
    }
    return json_text(nlohmann::json{{"schema", 1}, {"images", images}});
}

}  // namespace td
