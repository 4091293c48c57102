#include "core/render/lockfile.hpp"

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "core/grammar/grammar.hpp"
#include "core/json/json_reader.hpp"
#include "core/json/json_text.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/render/platforms.hpp"
#include "core/render/python_lock.hpp"
#include "util/strings.hpp"

namespace td {

namespace {

// "x86_64-manylinux_2_NN" or "aarch64-manylinux_2_NN", as python_lock_plan writes it.
std::string check_platform(std::string_view s) {
    std::string_view rest = s;
    bool ok = false;
    for (std::string_view machine : {"x86_64", "aarch64"})
        if (s.starts_with(machine)) {
            rest = s.substr(machine.size());
            ok = rest.starts_with("-manylinux_2_");
        }
    const std::string_view prefix = "-manylinux_2_";
    ok = ok && rest.size() > prefix.size() && rest.size() <= prefix.size() + 2;
    for (char c : rest.substr(std::min(rest.size(), prefix.size())))
        ok = ok && c >= '0' && c <= '9';
    return ok ? std::string()
              : "platform " + quote_value(s) +
                    " is not like \"x86_64-manylinux_2_36\" or \"aarch64-manylinux_2_28\"";
}

// "" or a wheel index directory like "cu126" or "cpu".
std::string check_torch_index(std::string_view s) {
    if (s.empty() || s == "cpu") return {};
    bool ok = s.size() >= 4 && s.size() <= 6 && s.starts_with("cu");
    for (char c : s.substr(std::min<std::size_t>(2, s.size()))) ok = ok && c >= '0' && c <= '9';
    return ok ? std::string()
              : "torch_index " + quote_value(s) + " is not a wheel variant like \"cu126\"";
}

// True when every `keys` member is present (check_object has named the missing ones).
bool has_keys(const JsonValue& v, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
        if (!v.find(k)) return false;
    return true;
}

std::optional<PythonLockInputs> parse_inputs(JsonReader& r, const JsonValue& v,
                                             const std::string& path) {
    if (!r.check_object(v, path, {"requirements", "python", "platform", "torch_index"},
                        {"requirements", "python", "platform", "torch_index"}))
        return std::nullopt;
    if (!has_keys(v, {"requirements", "python", "platform", "torch_index"})) return std::nullopt;
    std::size_t before = r.diags().count();
    PythonLockInputs in;
    in.requirements =
        r.string_list(*v.find("requirements"), path + ".requirements", check_lock_requirement);
    auto text = [&](const char* key, std::string (*check)(std::string_view), std::string& out) {
        const JsonValue& value = *v.find(key);
        auto s = r.string(value, path + "." + key);
        if (!s) return;
        if (auto e = check(*s); !e.empty()) return r.error(value, path + "." + key, e);
        out = *s;
    };
    text("python", grammar::check_python_minor, in.python);
    text("platform", check_platform, in.platform);
    text("torch_index", check_torch_index, in.torch_index);
    if (r.diags().count() != before) return std::nullopt;
    return in;
}

// A package name in a lock: a pip name in its PEP 503 form ("" when it is one).
std::string check_locked_name(std::string_view name) {
    if (auto e = grammar::check_pip_name(name); !e.empty()) return e;
    if (auto norm = pypi::normalize_project_name(name); norm != name)
        return "package name " + quote_value(name) +
               " is not in its normalized form (PEP 503): " + quote_value(norm);
    return {};
}

struct ParsedPackage {
    LockedPackage package;
    bool has_required_by = false;
    const JsonValue::Member* member = nullptr;
};

std::optional<ParsedPackage> parse_package(JsonReader& r, const JsonValue::Member& member,
                                           const std::string& path) {
    std::size_t before = r.diags().count();
    if (auto e = check_locked_name(member.key); !e.empty()) r.diags().add(member.key_pos, path, e);
    if (!r.check_object(member.value, path, {"version", "hashes", "required_by", "url"},
                        {"version", "hashes"}) ||
        !has_keys(member.value, {"version", "hashes"}))
        return std::nullopt;
    ParsedPackage out{LockedPackage{member.key, "", {}}, false, &member};
    LockedPackage& p = out.package;
    const JsonValue& version = *member.value.find("version");
    if (auto s = r.string(version, path + ".version")) {
        if (auto e = grammar::check_pep440_version(*s); !e.empty())
            r.error(version, path + ".version", e);
        p.version = *s;
    }
    p.hashes =
        r.string_list(*member.value.find("hashes"), path + ".hashes", [](std::string_view h) {
            return grammar::check_digest(h).empty()
                       ? std::string()
                       : "hash " + quote_value(h) + " is not sha256:<64 hex digits>";
        });
    if (const JsonValue* url = member.value.find("url")) {
        if (auto s = r.string(*url, path + ".url")) {
            if (auto e = grammar::check_wheel_url(*s); !e.empty()) r.error(*url, path + ".url", e);
            p.url = *s;
        }
    }
    if (const JsonValue* by = member.value.find("required_by")) {
        out.has_required_by = true;
        p.required_by =
            r.string_list(*by, path + ".required_by", check_locked_name, /*allow_empty=*/true);
    }
    if (r.diags().count() != before) return std::nullopt;
    std::sort(p.hashes.begin(), p.hashes.end());
    std::sort(p.required_by.begin(), p.required_by.end());
    return out;
}

// "python" or "build_python" (`at` is its path): variant -> its Python lock.
void parse_python(JsonReader& r, const JsonValue& python, const std::string& key,
                  std::map<std::string, PythonLock>& out) {
    if (!python.is_object())
        return r.error(
            python, key,
            std::string("expected an object of variant (or variant@platform) -> its Python lock "
                        "{\"inputs\": ..., \"packages\": ...}, found ") +
                kind_name(python.kind));
    for (const auto& member : python.members) {
        auto path = member_path(key, member.key);
        if (auto e = check_python_lock_key(member.key); !e.empty()) {
            r.diags().add(member.key_pos, path, e);
            continue;
        }
        if (!r.check_object(member.value, path, {"inputs", "packages"}, {"inputs", "packages"}))
            continue;
        std::optional<PythonLockInputs> inputs;
        if (const JsonValue* in = member.value.find("inputs"))
            inputs = parse_inputs(r, *in, path + ".inputs");
        const std::string platform = python_lock_key_platform(member.key);
        if (inputs && !inputs->platform.starts_with(wheel_machine(platform) + "-")) {
            r.error(*member.value.find("inputs"), path + ".inputs.platform",
                    "resolved for " + quote_value(inputs->platform) + ", but its key is for " +
                        platform + " (" + wheel_machine(platform) + " wheels)");
            inputs.reset();
        }
        const JsonValue* packages = member.value.find("packages");
        if (!packages) continue;
        if (!packages->is_object()) {
            r.error(*packages, path + ".packages",
                    std::string("expected an object of package -> {\"version\": ..., "
                                "\"hashes\": [...], \"required_by\": [...]}, found ") +
                        kind_name(packages->kind));
            continue;
        }
        PythonLock lock;
        bool ok = inputs.has_value();
        std::vector<ParsedPackage> parsed;
        for (const auto& p : packages->members) {
            auto pkg = parse_package(r, p, member_path(path + ".packages", p.key));
            if (pkg)
                parsed.push_back(std::move(*pkg));
            else
                ok = false;
        }
        // The dependency graph: every package says which locked packages required it, or
        // none does (a lock written before torchdock recorded it; render refuses to use it).
        std::size_t with_graph = 0;
        for (const auto& p : parsed) with_graph += p.has_required_by ? 1 : 0;
        if (with_graph != 0 && with_graph != parsed.size()) {
            ok = false;
            for (const auto& p : parsed)
                if (!p.has_required_by)
                    r.error(p.member->value, member_path(path + ".packages", p.member->key),
                            "missing key \"required_by\": the other packages of this lock "
                            "record which packages required them, so each must (an empty list "
                            "for a package the inputs ask for)");
        }
        lock.graph = with_graph != 0;
        for (auto& p : parsed) lock.packages.push_back(std::move(p.package));
        std::sort(lock.packages.begin(), lock.packages.end(),
                  [](const LockedPackage& a, const LockedPackage& b) { return a.name < b.name; });
        if (!ok) continue;
        if (lock.packages.empty()) {
            r.error(*packages, path + ".packages", "a Python lock with no packages locks nothing");
            continue;
        }
        if (auto uncovered = check_lock_covers(*inputs, lock.packages); !uncovered.empty()) {
            r.error(*packages, path + ".packages", uncovered);
            continue;
        }
        if (lock.graph) {
            auto outside = check_lock_closure(*inputs, lock.packages);
            for (const auto& o : outside) {
                const JsonValue::Member* at = nullptr;
                for (const auto& p : packages->members)
                    if (p.key == o.name) at = &p;
                if (at)
                    r.diags().add(at->key_pos, member_path(path + ".packages", o.name), o.why);
                else
                    r.error(*packages, path + ".packages", o.why);
            }
            if (!outside.empty()) continue;
        }
        lock.inputs = std::move(*inputs);
        out[member.key] = std::move(lock);
    }
}

// "apt": variant -> {"inputs": {"base", "packages"}, "resolved": {name: version},
// "present": {name: version}}; every name and version as a Dockerfile pin would take it.
void parse_apt(JsonReader& r, const JsonValue& apt, std::map<std::string, AptLock>& out) {
    if (!apt.is_object())
        return r.error(apt, "$.apt", "expected an object of variant -> its Debian packages");
    for (const auto& member : apt.members) {
        auto path = member_path("$.apt", member.key);
        if (auto e = grammar::check_variant_name(member.key); !e.empty()) {
            r.diags().add(member.key_pos, path, e);
            continue;
        }
        if (!r.check_object(member.value, path, {"inputs", "resolved", "present"},
                            {"inputs", "resolved", "present"}) ||
            !has_keys(member.value, {"inputs", "resolved", "present"}))
            continue;
        std::size_t before = r.diags().count();
        AptLock lock;
        const JsonValue& in = *member.value.find("inputs");
        if (r.check_object(in, path + ".inputs", {"base", "packages"}, {"base", "packages"}) &&
            has_keys(in, {"base", "packages"})) {
            if (auto b = r.string(*in.find("base"), path + ".inputs.base")) {
                if (auto e = grammar::check_image_reference(*b);
                    !e.empty() || b->find("@sha256:") == std::string::npos)
                    r.error(*in.find("base"), path + ".inputs.base",
                            e.empty() ? "not a reference by digest (NAME@sha256:...)" : e);
                lock.inputs.base = *b;
            }
            lock.inputs.packages = r.string_list(*in.find("packages"), path + ".inputs.packages",
                                                 grammar::check_apt_package);
        }
        for (const char* key : {"resolved", "present"}) {
            const JsonValue& map = *member.value.find(key);
            std::string mpath = path + "." + key;
            if (!map.is_object()) {
                r.error(map, mpath, "expected an object of package -> version");
                continue;
            }
            for (const auto& pkg : map.members) {
                auto version = r.string(pkg.value, member_path(mpath, pkg.key));
                if (!version) continue;
                if (auto e = grammar::check_apt_requirement(pkg.key + "=" + *version); !e.empty()) {
                    r.error(pkg.value, member_path(mpath, pkg.key), e);
                    continue;
                }
                (std::string(key) == "resolved" ? lock.resolved : lock.present)[pkg.key] = *version;
            }
        }
        if (r.diags().count() == before) out[member.key] = std::move(lock);
    }
}

}  // namespace

LockFile parse_lockfile(std::string_view text, Diagnostics& diags) {
    LockFile out;
    auto parsed = parse_document(text, diags);
    if (!parsed) return out;
    std::map<std::string, SourcePos> positions;
    JsonReader r(diags, positions);
    const JsonValue& root = *parsed;
    if (!r.check_object(root, "$", {"schema", "images", "python", "build_python", "apt"},
                        {"schema", "images"}))
        return out;
    check_schema_one(r, root, "lock");
    if (const JsonValue* python = root.find("python"))
        parse_python(r, *python, "$.python", out.python);
    if (const JsonValue* build = root.find("build_python"))
        parse_python(r, *build, "$.build_python", out.build_python);
    if (const JsonValue* apt = root.find("apt")) parse_apt(r, *apt, out.apt);
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
        if (!r.check_object(member.value, path, {"digest", "media_type", "platforms"}, {"digest"}))
            continue;
        const JsonValue* d = member.value.find("digest");
        if (!d) continue;
        auto digest = r.string(*d, path + ".digest");
        if (!digest) continue;
        if (auto e = grammar::check_digest(*digest); !e.empty()) {
            r.error(*d, path + ".digest", e);
            continue;
        }
        out.images[member.key] = *digest;
        if (const JsonValue* p = member.value.find("platforms")) {
            if (!p->is_object()) {
                r.error(*p, path + ".platforms",
                        "expected an object of platform -> its manifest's digest");
                continue;
            }
            for (const auto& platform : p->members) {
                auto at = member_path(path + ".platforms", platform.key);
                if (auto e = check_build_platform(platform.key); !e.empty()) {
                    r.diags().add(platform.key_pos, at, e);
                    continue;
                }
                auto pd = r.string(platform.value, at);
                if (!pd) continue;
                if (auto e = grammar::check_digest(*pd); !e.empty()) {
                    r.error(platform.value, at, e);
                    continue;
                }
                out.image_platforms[member.key][platform.key] = *pd;
            }
        }
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

namespace {

nlohmann::json python_locks_json(const std::map<std::string, PythonLock>& python) {
    nlohmann::json locks = nlohmann::json::object();
    for (const auto& [variant, lock] : python) {
        nlohmann::json packages = nlohmann::json::object();
        for (const auto& p : lock.packages) {
            packages[p.name] = {{"version", p.version}, {"hashes", p.hashes}};
            if (!p.url.empty()) packages[p.name]["url"] = p.url;
            if (lock.graph) packages[p.name]["required_by"] = p.required_by;
        }
        locks[variant] = {{"inputs",
                           {{"requirements", lock.inputs.requirements},
                            {"python", lock.inputs.python},
                            {"platform", lock.inputs.platform},
                            {"torch_index", lock.inputs.torch_index}}},
                          {"packages", packages}};
    }
    return locks;
}

}  // namespace

std::string render_lockfile(const std::map<std::string, LockEntry>& entries,
                            const std::map<std::string, PythonLock>& python,
                            const std::map<std::string, AptLock>& apt,
                            const std::map<std::string, PythonLock>& build_python) {
    nlohmann::json images = nlohmann::json::object();
    for (const auto& [ref, e] : entries) {
        images[ref] = {{"digest", e.digest}};
        if (!e.media_type.empty()) images[ref]["media_type"] = e.media_type;
        for (const auto& [platform, digest] : e.platforms)
            images[ref]["platforms"][platform] = digest;
    }
    nlohmann::json doc = {{"schema", 1}, {"images", images}};
    if (!python.empty()) doc["python"] = python_locks_json(python);
    if (!build_python.empty()) doc["build_python"] = python_locks_json(build_python);
    if (!apt.empty()) {
        nlohmann::json locks = nlohmann::json::object();
        for (const auto& [variant, lock] : apt)
            locks[variant] = {
                {"inputs", {{"base", lock.inputs.base}, {"packages", lock.inputs.packages}}},
                {"resolved", lock.resolved},
                {"present", lock.present}};
        doc["apt"] = locks;
    }
    return json_text(doc);
}

}  // namespace td
