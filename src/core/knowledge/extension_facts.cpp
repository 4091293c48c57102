#include "core/knowledge/extension_facts.hpp"

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/grammar/grammar.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

using ordered_json = nlohmann::ordered_json;
using Check = std::string (*)(std::string_view);

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw std::invalid_argument(path + ": " + why);
}

const ordered_json& member(const ordered_json& obj, const std::string& key, const std::string& at) {
    if (!obj.is_object()) refuse(at, "not an object");
    auto it = obj.find(key);
    if (it == obj.end()) refuse(at, "missing \"" + key + "\"");
    return *it;
}

std::string text(const ordered_json& obj, const std::string& key, const std::string& at,
                 Check check) {
    const ordered_json& v = member(obj, key, at);
    std::string path = at + "." + key;
    if (!v.is_string()) refuse(path, "not a string");
    std::string s = v.get<std::string>();
    if (auto why = check(s); !why.empty()) refuse(path, quote_value(s, 120) + " refused: " + why);
    return s;
}

const ordered_json& list(const ordered_json& obj, const std::string& key, const std::string& at) {
    const ordered_json& v = member(obj, key, at);
    if (!v.is_array()) refuse(at + "." + key, "not a list");
    return v;
}

std::string check_line(std::string_view s) { return grammar::check_plain_text(s, 400); }
std::string check_specifier_or_empty(std::string_view s) {
    return s.empty() ? std::string() : grammar::check_version_specifier(s);
}
std::string check_member_path(std::string_view s) {
    if (auto why = grammar::check_plain_text(s, 300); !why.empty()) return why;
    if (s.empty() || s.front() == '/' || s.find("..") != std::string_view::npos ||
        (!s.ends_with(".so") && s.find(".so.") == std::string_view::npos))
        return "not a relative path of a shared object inside a wheel";
    return {};
}
std::string check_target(std::string_view s) {
    auto ok = [&](std::string_view prefix) {
        if (!s.starts_with(prefix)) return false;
        std::string_view rest = s.substr(prefix.size());
        if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) rest.remove_suffix(1);
        return !rest.empty() && rest.size() <= 4 &&
               rest.find_first_not_of("0123456789") == std::string_view::npos;
    };
    return ok("sm_") || ok("compute_")
               ? std::string()
               : "not a fatbin target (\"sm_90\", \"sm_90a\", \"compute_90\")";
}

// A list of strings at `key`, each accepted by `check`.
std::vector<std::string> text_list(const ordered_json& obj, const std::string& key,
                                   const std::string& at, Check check) {
    std::vector<std::string> out;
    const ordered_json& items = list(obj, key, at);
    for (std::size_t i = 0; i < items.size(); ++i) {
        std::string path = at + "." + key + "[" + std::to_string(i) + "]";
        if (!items[i].is_string()) refuse(path, "not a string");
        std::string s = items[i].get<std::string>();
        if (auto why = check(s); !why.empty()) refuse(path, quote_value(s) + ": " + why);
        out.push_back(s);
    }
    return out;
}

ExtensionRelease load_release(const ordered_json& r, const std::string& at) {
    ExtensionRelease rel;
    rel.version = text(r, "version", at, grammar::check_pep440_version);
    rel.wheel = text(r, "wheel", at, check_line);
    rel.sha256 = text(r, "sha256", at, grammar::check_sha256_hex);
    rel.requires_torch = text(r, "requires_torch", at, check_specifier_or_empty);
    rel.source = text(r, "source", at, check_line);
    const ordered_json& objects = list(r, "objects", at);
    for (std::size_t i = 0; i < objects.size(); ++i) {
        std::string oat = at + ".objects[" + std::to_string(i) + "]";
        ExtensionObject o;
        o.path = text(objects[i], "path", oat, check_member_path);
        o.targets = text_list(objects[i], "targets", oat, check_target);
        const ordered_json& n = member(objects[i], "containers", oat);
        if (!n.is_number_unsigned()) refuse(oat + ".containers", "not a count");
        o.containers = n.get<std::uint64_t>();
        rel.objects.push_back(std::move(o));
    }
    return rel;
}

std::string check_cuda_minor(std::string_view s) {
    auto dot = s.find('.');
    bool ok = dot != std::string_view::npos && dot > 0 && dot + 1 < s.size() &&
              s.find_first_not_of("0123456789.") == std::string_view::npos &&
              s.find('.', dot + 1) == std::string_view::npos && s.size() <= 7;
    return ok ? std::string() : "not a CUDA major.minor (\"13.0\")";
}
std::string check_cuda_major(std::string_view s) {
    return !s.empty() && s.size() <= 3 &&
                   s.find_first_not_of("0123456789") == std::string_view::npos
               ? std::string()
               : "not a CUDA major (\"12\")";
}
std::string check_toolkit_home(std::string_view s) {
    if (auto why = grammar::check_plain_text(s, 100); !why.empty()) return why;
    if (s.empty() || s.front() == '/' || s.find("..") != std::string_view::npos ||
        s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_/") != std::string_view::npos)
        return "not a relative directory of lowercase letters, digits, '_' and '/'";
    return {};
}

// "pip_toolkits" and "no_pip_toolkit", both optional.
void load_toolkits(const ordered_json& doc, ExtensionFacts& facts) {
    if (doc.contains("pip_toolkits")) {
        const ordered_json& tks = list(doc, "pip_toolkits", "$");
        for (std::size_t i = 0; i < tks.size(); ++i) {
            std::string at = "$.pip_toolkits[" + std::to_string(i) + "]";
            PipToolkit t;
            t.cuda = text(tks[i], "cuda", at, check_cuda_minor);
            if (facts.toolkit(t.cuda)) refuse(at + ".cuda", t.cuda + " is listed twice");
            t.home = text(tks[i], "home", at, check_toolkit_home);
            t.packages = text_list(tks[i], "packages", at, grammar::check_pip_requirement);
            t.runtime_package = text(tks[i], "runtime_package", at, grammar::check_pip_name);
            t.source = text(tks[i], "source", at, check_line);
            facts.toolkits.push_back(std::move(t));
        }
    }
    if (doc.contains("no_pip_toolkit")) {
        const ordered_json& none = list(doc, "no_pip_toolkit", "$");
        for (std::size_t i = 0; i < none.size(); ++i) {
            std::string at = "$.no_pip_toolkit[" + std::to_string(i) + "]";
            facts.no_toolkits.push_back({text(none[i], "cuda_major", at, check_cuda_major),
                                         text(none[i], "source", at, check_line)});
        }
    }
}

}  // namespace

const ExtensionRelease* ExtensionInfo::release(const std::string& version) const {
    for (const auto& r : releases)
        if (r.version == version) return &r;
    return nullptr;
}

const ExtensionInfo* ExtensionFacts::find(const std::string& normalized_name) const {
    for (const auto& e : extensions)
        if (e.name == normalized_name) return &e;
    return nullptr;
}

const PipToolkit* ExtensionFacts::toolkit(const std::string& cuda_major_minor) const {
    for (const auto& t : toolkits)
        if (t.cuda == cuda_major_minor) return &t;
    return nullptr;
}

const NoPipToolkit* ExtensionFacts::no_toolkit(const std::string& cuda_major) const {
    for (const auto& t : no_toolkits)
        if (t.cuda_major == cuda_major) return &t;
    return nullptr;
}

std::vector<std::string> ExtensionFacts::names() const {
    std::vector<std::string> out;
    for (const auto& e : extensions) out.push_back(e.name);
    return out;
}

namespace {

ordered_json release_json(const ExtensionRelease& r) {
    ordered_json jr;
    jr["version"] = r.version;
    jr["wheel"] = r.wheel;
    jr["sha256"] = r.sha256;
    jr["requires_torch"] = r.requires_torch;
    ordered_json objs = ordered_json::array();
    for (const auto& o : r.objects)
        objs.push_back(
            ordered_json{{"path", o.path}, {"targets", o.targets}, {"containers", o.containers}});
    jr["objects"] = std::move(objs);
    jr["source"] = r.source;
    return jr;
}

}  // namespace

std::string extension_release_problem(const ExtensionRelease& release) {
    try {
        (void)load_release(release_json(release), "$.release");
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

std::string extension_facts_text(const ExtensionFacts& facts) {
    ordered_json doc;
    doc["schema"] = 1;
    doc["about"] =
        "CUDA extension packages: for each release in `track`, the Linux x86_64 wheel "
        "`torchdock kb refresh --extensions` read from the index, its Requires-Dist on torch "
        "and the fatbin targets of each shared object in it. Written by that command; edit "
        "`track` only. `pip_toolkits` and `no_pip_toolkit` (the CUDA toolkits pip installs for "
        "extensions built from source) are facts written by hand, each with its source, and "
        "kept as they are.";
    ordered_json exts = ordered_json::array();
    for (const auto& e : facts.extensions) {
        ordered_json je;
        je["name"] = e.name;
        je["index"] = e.index;
        je["track"] = e.track;
        ordered_json rels = ordered_json::array();
        for (const auto& r : e.releases) rels.push_back(release_json(r));
        je["releases"] = std::move(rels);
        exts.push_back(std::move(je));
    }
    doc["extensions"] = std::move(exts);
    if (!facts.toolkits.empty()) {
        ordered_json tks = ordered_json::array();
        for (const auto& t : facts.toolkits)
            tks.push_back(ordered_json{{"cuda", t.cuda},
                                       {"home", t.home},
                                       {"packages", t.packages},
                                       {"runtime_package", t.runtime_package},
                                       {"source", t.source}});
        doc["pip_toolkits"] = std::move(tks);
    }
    if (!facts.no_toolkits.empty()) {
        ordered_json none = ordered_json::array();
        for (const auto& t : facts.no_toolkits)
            none.push_back(ordered_json{{"cuda_major", t.cuda_major}, {"source", t.source}});
        doc["no_pip_toolkit"] = std::move(none);
    }
    return doc.dump(2) + "\n";
}

Result<ExtensionFacts> parse_extension_facts(const std::string& file_text) {
    ExtensionFacts facts;
    try {
        ordered_json doc = ordered_json::parse(file_text);
        if (!doc.is_object() || doc.value("schema", 0) != 1)
            return Error{ErrorKind::Config, "extensions.json: unsupported schema (expected 1)"};
        const ordered_json& exts = list(doc, "extensions", "$");
        std::set<std::string> seen;
        for (std::size_t i = 0; i < exts.size(); ++i) {
            std::string at = "$.extensions[" + std::to_string(i) + "]";
            ExtensionInfo info;
            info.name = text(exts[i], "name", at, grammar::check_pip_name);
            if (to_lower(info.name) != info.name || info.name.find('_') != std::string::npos ||
                info.name.find('.') != std::string::npos)
                refuse(at + ".name", quote_value(info.name) + " is not a normalized name");
            if (!seen.insert(info.name).second)
                refuse(at + ".name", quote_value(info.name) + " is listed twice");
            info.index = text(exts[i], "index", at, check_line);
            info.track = text_list(exts[i], "track", at, grammar::check_pep440_version);
            const ordered_json& rels = list(exts[i], "releases", at);
            for (std::size_t r = 0; r < rels.size(); ++r) {
                info.releases.push_back(
                    load_release(rels[r], at + ".releases[" + std::to_string(r) + "]"));
                if (info.release(info.releases.back().version) != &info.releases.back())
                    refuse(at + ".releases[" + std::to_string(r) + "].version",
                           info.releases.back().version + " is listed twice");
            }
            facts.extensions.push_back(std::move(info));
        }
        load_toolkits(doc, facts);
    } catch (const std::exception& e) {
        return Error{ErrorKind::Config,
                     std::string("knowledge base file extensions.json: ") + e.what()};
    }
    return facts;
}

}  // namespace td
