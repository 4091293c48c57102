// The manifest's "extensions": CUDA extension packages, each from the package index or as
// a wheel by URL with its sha256. Every string is grammar-checked here; whether a release
// fits a variant's torch and GPUs is decided in render/extensions.cpp.
#include <set>

#include "core/grammar/grammar.hpp"
#include "core/json/json_reader.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/render/manifest.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

std::optional<std::string> checked(JsonReader& r, const JsonValue& obj, const char* key,
                                   const std::string& at, std::string (*check)(std::string_view)) {
    const JsonValue* v = obj.find(key);
    if (!v) return std::nullopt;
    std::string path = member_path(at, key);
    auto s = r.string(*v, path);
    if (!s) return std::nullopt;
    if (auto why = check(*s); !why.empty()) {
        r.error(*v, path, why);
        return std::nullopt;
    }
    return s;
}

}  // namespace

std::vector<ExtensionSpec> parse_extensions(JsonReader& r, const JsonValue& v) {
    std::vector<ExtensionSpec> out;
    r.record("$.extensions", v.pos);
    if (!v.is_array()) {
        r.error(v, "$.extensions",
                "expected an array of objects like {\"name\": \"xformers\", \"version\": "
                "\"0.0.33.post2\"}");
        return out;
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < v.items.size(); ++i) {
        const JsonValue& item = v.items[i];
        std::string at = item_path("$.extensions", i);
        r.record(at, item.pos);
        if (!r.check_object(item, at, {"name", "version", "wheel"}, {"name"})) continue;
        ExtensionSpec spec;
        spec.path = at;
        auto name = checked(r, item, "name", at, grammar::check_pip_name);
        if (!name) continue;
        spec.name = pypi::normalize_project_name(*name);
        if (spec.name == "torch" || spec.name == "torchvision" || spec.name == "torchaudio")
            r.error(*item.find("name"), member_path(at, "name"),
                    spec.name + " is the variant's own; extensions are packages built against it");
        if (!seen.insert(spec.name).second)
            r.error(*item.find("name"), member_path(at, "name"),
                    quote_value(*name) + " is listed twice");
        if (item.find("version")) {
            spec.version = checked(r, item, "version", at, grammar::check_pep440_version);
            if (spec.version && spec.version->find('+') != std::string::npos) {
                r.error(*item.find("version"), member_path(at, "version"),
                        "a local version (" + quote_value(*spec.version) +
                            ") names no release on a package index; use its public version");
                spec.version.reset();
            }
        }
        if (const JsonValue* w = item.find("wheel")) {
            std::string wat = member_path(at, "wheel");
            if (!r.check_object(*w, wat, {"url", "sha256"}, {"url", "sha256"})) continue;
            if (item.find("version"))
                r.error(*item.find("version"), member_path(at, "version"),
                        "a wheel by URL has the version its file name says; leave \"version\" out");
            auto url = checked(r, *w, "url", wat, grammar::check_wheel_url);
            auto sha = checked(r, *w, "sha256", wat, grammar::check_sha256_hex);
            if (!url || !sha) continue;
            spec.wheel_url = *url;
            spec.wheel_sha256 = *sha;
        }
        out.push_back(std::move(spec));
    }
    return out;
}

}  // namespace td
