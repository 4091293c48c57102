// The manifest's "extensions": CUDA extension packages, each from the package index, as a
// wheel by URL with its sha256, or built from a source archive (URL and sha256). Every string is
// grammar-checked here; whether a release fits a variant's torch and GPUs is decided in
// render/extensions.cpp.
#include <set>

#include "core/grammar/grammar.hpp"
#include "core/json/json_reader.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/render/manifest.hpp"
#include "core/render/python_lock.hpp"
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

// "source": {"url", "sha256", "build_requires"?, "max_jobs"?}.
bool parse_source(JsonReader& r, const JsonValue& src, const std::string& at, ExtensionSpec& spec) {
    if (!r.check_object(src, at, {"url", "sha256", "build_requires", "max_jobs"},
                        {"url", "sha256"}))
        return false;
    auto url = checked(r, src, "url", at, grammar::check_sdist_url);
    auto sha = checked(r, src, "sha256", at, grammar::check_sha256_hex);
    if (!url || !sha) return false;
    spec.source_url = *url;
    spec.source_sha256 = *sha;
    if (const JsonValue* b = src.find("build_requires")) {
        std::string bat = member_path(at, "build_requires");
        spec.build_requires = r.string_list(*b, bat, grammar::check_pip_requirement);
        std::set<std::string> seen;
        for (const auto& req : spec.build_requires) {
            std::string name = requirement_pin(req).first;
            if (name == "torch" || name.starts_with("nvidia-"))
                r.error(*b, bat,
                        quote_value(req) +
                            ": torch and the CUDA toolkit's wheels come from the variant; "
                            "build_requires lists what else the build imports (setuptools, "
                            "ninja, ...)");
            else if (!seen.insert(name).second)
                r.error(*b, bat, quote_value(req) + " names " + name + " twice");
        }
    }
    if (const JsonValue* j = src.find("max_jobs"))
        if (auto n = r.integer(*j, member_path(at, "max_jobs"), 1, 256))
            spec.max_jobs = static_cast<int>(*n);
    return true;
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
        if (!r.check_object(item, at, {"name", "version", "wheel", "source"}, {"name"})) continue;
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
        if (const JsonValue* src = item.find("source")) {
            if (item.find("wheel")) {
                r.error(*src, member_path(at, "source"),
                        "an extension comes as a wheel or is built from source, not both");
                continue;
            }
            if (!parse_source(r, *src, member_path(at, "source"), spec)) continue;
            if (item.find("version"))
                r.error(*item.find("version"), member_path(at, "version"),
                        "a source archive has the version its file name says; leave \"version\" "
                        "out");
        }
        out.push_back(std::move(spec));
    }
    return out;
}

}  // namespace td
