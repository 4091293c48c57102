#include "core/render/python_lock.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/grammar/grammar.hpp"
#include "core/pypi/pep440.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/render/platforms.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td {
namespace {

constexpr std::size_t k_max_packages = 5000;
constexpr std::size_t k_max_hashes = 1000;  // per package (torch has about 30 files a release)

// "name @ URL#sha256=HEX" -> {name, URL, HEX}; nullopt for anything else.
struct UrlRequirement {
    std::string name, url, sha256;
};
std::optional<UrlRequirement> url_requirement(std::string_view req) {
    auto at = req.find(" @ ");
    auto frag = req.rfind("#sha256=");
    if (at == std::string_view::npos || frag == std::string_view::npos || frag < at) return {};
    return UrlRequirement{std::string(req.substr(0, at)),
                          std::string(req.substr(at + 3, frag - at - 3)),
                          std::string(req.substr(frag + 8))};
}

// The version a wheel's file name (the last segment of its URL) says; "" when it is no wheel.
std::string wheel_url_version(const std::string& url) {
    auto w = pypi::parse_wheel_name(url.substr(url.rfind('/') + 1));
    return w ? w->version : std::string();
}

bool is_sha256_hash(std::string_view h) {
    if (!h.starts_with("sha256:") || h.size() != 7 + 64) return false;
    return std::all_of(h.begin() + 7, h.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string trim_blanks(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return std::string(s);
}

}  // namespace

std::pair<std::string, std::string> requirement_pin(std::string_view req) {
    if (auto u = url_requirement(req)) return {pypi::normalize_project_name(u->name), ""};
    auto eq = req.find("==");
    std::string_view name = req.substr(0, std::min(eq, req.find('[')));
    return {pypi::normalize_project_name(name),
            eq == std::string_view::npos ? std::string() : std::string(req.substr(eq + 2))};
}

std::vector<WheelByUrl> wheels_by_url(const PythonLockInputs& inputs) {
    std::vector<WheelByUrl> out;
    for (const auto& req : inputs.requirements)
        if (auto u = url_requirement(req)) out.push_back({u->name, u->url, u->sha256});
    return out;
}

std::string wheel_hash_mismatch(const WheelByUrl& w, const std::string& computed,
                                unsigned long long bytes) {
    if (to_lower(computed) == to_lower(w.sha256) && !computed.empty()) return {};
    return "the wheel " + quote_value(w.url) + " (" + std::to_string(bytes) +
           " bytes) has sha256 " + computed + ", but the manifest fixes " + w.sha256 + " for " +
           w.name +
           ": the file changed, or the manifest's hash is wrong; check where the wheel "
           "comes from before putting its real hash in the manifest";
}

std::string check_lock_requirement(std::string_view s) {
    auto u = url_requirement(s);
    if (!u) return grammar::check_pip_requirement(s);
    if (auto e = grammar::check_pip_name(u->name); !e.empty()) return e;
    if (auto e = grammar::check_wheel_url(u->url); !e.empty()) return e;
    if (auto e = grammar::check_sha256_hex(u->sha256); !e.empty()) return e;
    if (wheel_url_version(u->url).empty())
        return "the URL of " + quote_value(s) + " does not name a wheel file";
    return {};
}

std::string uv_platform_for_glibc(const std::string& glibc, const std::string& machine) {
    auto v = Version::parse(glibc);
    if (!v || v->parts().size() != 2 || v->major() != 2 || v->minor() < 17) return {};
    // uv 0.13.8's --python-platform `possible values`: x86_64- and aarch64-manylinux_2_17,
    // _2_28 and _2_31 to _2_40 (others are refused as invalid values).
    int minor = v->minor() >= 40 ? 40 : v->minor() >= 31 ? v->minor() : v->minor() >= 28 ? 28 : 17;
    return machine + "-manylinux_2_" + std::to_string(minor);
}

std::vector<std::string> torch_requirements(const Variant& v) {
    if (!v.pip_installs_torch()) return {};
    std::string local =
        v.torch_source == Variant::TorchSource::PytorchIndex ? "+" + v.wheel_variant : "";
    std::vector<std::string> reqs = {"torch==" + v.torch + local};
    if (!v.torchvision.empty()) reqs.push_back("torchvision==" + v.torchvision + local);
    if (!v.torchaudio.empty()) reqs.push_back("torchaudio==" + v.torchaudio + local);
    return reqs;
}

LockPlan python_lock_plan(const Variant& v, const KnowledgeBase& kb, const std::string& platform) {
    LockPlan plan;
    const Manifest& m = *v.manifest;
    if (!v.pip_installs_torch()) {
        plan.why_not = std::string("base \"") + base_kind_name(m.base) +
                       "\" brings torch and the Python packages around it, which the lock "
                       "cannot resolve";
        return plan;
    }
    const OsInfo* os = kb.os(v.os_id);
    if (!os || !Version::parse(os->glibc)) {
        plan.why_not = "the knowledge base has no glibc for " + v.os_id +
                       ", so the wheels' platform is unknown";
        return plan;
    }
    std::string uv_platform = uv_platform_for_glibc(os->glibc, wheel_machine(platform));
    if (uv_platform.empty()) {
        plan.why_not = v.os_id + " has glibc " + os->glibc +
                       ", older than manylinux2014's 2.17, the oldest platform a lock resolves for";
        return plan;
    }
    PythonLockInputs in;
    in.requirements = torch_requirements(v);
    in.requirements.insert(in.requirements.end(), m.pip.begin(), m.pip.end());
    if (m.jupyter) in.requirements.push_back("jupyterlab==" + *m.jupyter);
    for (const auto& ext : v.extensions)
        if (!ext.from_source) in.requirements.push_back(ext.requirement);
    in.python = v.python;
    in.platform = uv_platform;
    if (v.torch_source == Variant::TorchSource::PytorchIndex) in.torch_index = v.wheel_variant;
    plan.inputs = std::move(in);
    return plan;
}

LockPlan build_lock_plan(const Variant& v, const KnowledgeBase& kb) {
    if (!v.source_build || v.source_build->requirements.empty()) return {};
    LockPlan plan = python_lock_plan(v, kb);
    if (!plan.inputs) return plan;
    plan.inputs->requirements = v.source_build->requirements;
    plan.inputs->torch_index.clear();  // the toolkit and build requirements come from PyPI
    return plan;
}

Result<std::vector<LockedPackage>> parse_uv_requirements(std::string_view text) {
    std::vector<LockedPackage> out;
    auto lines = split(std::string(text), '\n');
    auto bad = [&](std::size_t i, const std::string& why) {
        return Error{ErrorKind::Config,
                     "uv's output, line " + std::to_string(i + 1) + ": " + why + " (" +
                         quote_value(i < lines.size() ? lines[i].substr(0, 120) : "") + ")"};
    };
    bool continued = false;  // the previous line ended with a backslash
    bool in_via = false;     // after "# via" alone: "#   name" lines follow
    // One "# via" item: "torch", "-r /tmp/x/requirements.in" (the inputs), "pkg[extra]",
    // "name (pyproject.toml)". A package name joins the last package's required_by.
    auto via_item = [&](std::size_t i, std::string item) -> std::optional<Error> {
        item = trim_blanks(item);
        if (item.empty()) return bad(i, "an empty \"# via\" item");
        if (item.front() == '-') return std::nullopt;  // -r/-c FILE: the inputs themselves
        item = item.substr(0, std::min(item.find('['), item.find(' ')));
        if (auto e = grammar::check_pip_name(item); !e.empty())
            return bad(i, "a \"# via\" item that is not a package name: " + e);
        if (out.empty()) return bad(i, "a \"# via\" line before any package");
        out.back().required_by.push_back(pypi::normalize_project_name(item));
        return std::nullopt;
    };
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string line = trim_blanks(lines[i]);
        bool continues = !line.empty() && line.back() == '\\';
        if (continues) line = trim_blanks(std::string_view(line).substr(0, line.size() - 1));
        if (line.empty() || line.front() == '#') {
            if (continued && line.empty()) return bad(i, "a continuation line is empty");
            std::string comment = line.empty() ? "" : trim_blanks(std::string_view(line).substr(1));
            if (!continued && !out.empty() && !comment.empty()) {
                if (comment == "via") {
                    in_via = true;
                } else if (comment.starts_with("via ")) {
                    in_via = false;
                    if (auto e = via_item(i, comment.substr(4))) return *e;
                } else if (in_via && line.size() > 2 && line[1] == ' ' && line[2] == ' ') {
                    if (auto e = via_item(i, comment)) return *e;  // "#   torch"
                } else {
                    in_via = false;
                }
            } else {
                in_via = false;
            }
            continued = continues;
            continue;
        }
        in_via = false;
        if (line.starts_with("--hash=")) {
            if (out.empty() || !continued) return bad(i, "a hash without its package");
            std::string h = line.substr(7);
            if (!is_sha256_hash(h)) return bad(i, "not a sha256 hash");
            if (out.back().hashes.size() == k_max_hashes) return bad(i, "too many hashes");
            out.back().hashes.push_back(h);
        } else {
            if (continued) return bad(i, "expected --hash=sha256:... after a continuation");
            if (!out.empty() && out.back().hashes.empty())
                return bad(i - 1, "package " + out.back().name + " has no hashes");
            if (auto at = line.find(" @ "); at != std::string::npos) {
                // A wheel by URL, as uv writes it: "name @ URL#sha256=HEX".
                std::string name = line.substr(0, at), url = line.substr(at + 3);
                if (auto frag = url.find("#sha256="); frag != std::string::npos) url.resize(frag);
                if (auto e = grammar::check_pip_name(name); !e.empty()) return bad(i, e);
                if (auto e = grammar::check_wheel_url(url); !e.empty()) return bad(i, e);
                std::string version = wheel_url_version(url);
                if (grammar::check_pep440_version(version) != "")
                    return bad(i, "the URL names no wheel with a version");
                if (out.size() == k_max_packages) return bad(i, "too many packages");
                out.push_back({pypi::normalize_project_name(name), version, {}, {}, url});
                continued = continues;
                continue;
            }
            auto eq = line.find("==");
            if (eq == std::string::npos || line.find_first_of(" ;@") != std::string::npos)
                return bad(
                    i, "not a NAME==VERSION pin or NAME @ URL (markers and ranges are refused)");
            std::string name = line.substr(0, eq), version = line.substr(eq + 2);
            if (auto e = grammar::check_pip_name(name); !e.empty()) return bad(i, e);
            if (auto e = grammar::check_pep440_version(version); !e.empty()) return bad(i, e);
            if (out.size() == k_max_packages) return bad(i, "too many packages");
            out.push_back({pypi::normalize_project_name(name), version, {}});
        }
        continued = continues;
    }
    if (continued) return bad(lines.size() - 1, "the output ends inside a continuation");
    if (!out.empty() && out.back().hashes.empty())
        return Error{ErrorKind::Config,
                     "uv's output: package " + out.back().name + " has no hashes"};
    std::sort(out.begin(), out.end(),
              [](const LockedPackage& a, const LockedPackage& b) { return a.name < b.name; });
    for (std::size_t i = 1; i < out.size(); ++i)
        if (out[i].name == out[i - 1].name)
            return Error{ErrorKind::Config, "uv's output names " + out[i].name + " twice"};
    for (auto& p : out) {
        std::sort(p.hashes.begin(), p.hashes.end());
        std::sort(p.required_by.begin(), p.required_by.end());
        p.required_by.erase(std::unique(p.required_by.begin(), p.required_by.end()),
                            p.required_by.end());
    }
    return out;
}

std::vector<OutsideClosure> check_lock_closure(const PythonLockInputs& inputs,
                                               const std::vector<LockedPackage>& packages) {
    std::map<std::string, const LockedPackage*> by_name;
    for (const auto& p : packages) by_name.emplace(pypi::normalize_project_name(p.name), &p);
    std::vector<OutsideClosure> out;
    // requirer -> the packages it required
    std::map<std::string, std::vector<std::string>> required;
    for (const auto& p : packages)
        for (const auto& by : p.required_by) {
            std::string n = pypi::normalize_project_name(by);
            if (!by_name.count(n)) {
                out.push_back({p.name, "package " + quote_value(p.name) + " says " +
                                           quote_value(by) +
                                           " required it, but the lock holds no such package; "
                                           "required_by may name only locked packages"});
                continue;
            }
            required[n].push_back(pypi::normalize_project_name(p.name));
        }
    std::set<std::string> reached;
    std::vector<std::string> todo;
    for (const auto& req : inputs.requirements) {
        auto name = requirement_pin(req).first;
        if (by_name.count(name) && reached.insert(name).second) todo.push_back(name);
    }
    while (!todo.empty()) {
        std::string n = std::move(todo.back());
        todo.pop_back();
        for (const auto& child : required[n])
            if (reached.insert(child).second) todo.push_back(child);
    }
    for (const auto& p : packages) {
        if (reached.count(pypi::normalize_project_name(p.name))) continue;
        bool named = false;
        for (const auto& o : out) named = named || o.name == p.name;
        if (named) continue;
        std::string by = p.required_by.empty() ? "no package" : join(p.required_by, ", ");
        out.push_back({p.name, "package " + quote_value(p.name) + " " + p.version +
                                   " is outside the resolved closure: nothing the inputs ask for "
                                   "requires it (required_by: " +
                                   by +
                                   "); a lock holds only what uv resolved from the inputs "
                                   "(run `torchdock lock` to re-resolve)"});
    }
    return out;
}

std::string check_lock_covers(const PythonLockInputs& inputs,
                              const std::vector<LockedPackage>& packages) {
    std::map<std::string, const LockedPackage*> by_name;
    for (const auto& p : packages)
        if (!by_name.emplace(pypi::normalize_project_name(p.name), &p).second)
            return "package " + quote_value(p.name) + " is locked twice";
    for (const auto& req : inputs.requirements) {
        auto [name, pinned] = requirement_pin(req);
        auto it = by_name.find(name);
        if (it == by_name.end())
            return "the lock has no " + name + ", which its inputs ask for (" + req + ")";
        if (auto u = url_requirement(req)) {
            const LockedPackage& p = *it->second;
            if (p.url != u->url)
                return "the lock has " + name + " from " +
                       (p.url.empty() ? std::string("an index") : quote_value(p.url)) +
                       ", but its inputs ask for the wheel " + quote_value(u->url);
            if (p.hashes != std::vector<std::string>{"sha256:" + u->sha256})
                return "the lock's hashes of " + name + " are not the sha256 its inputs fix (" +
                       u->sha256 + ")";
            continue;
        }
        auto want = pypi::Pep440Version::parse(pinned);
        auto have = pypi::Pep440Version::parse(it->second->version);
        if (!want || !have || !(*want == *have) || want->local() != have->local())
            return "the lock has " + name + " " + quote_value(it->second->version) +
                   ", but its inputs pin " + req;
    }
    return {};
}

std::string render_requirements_file(const Variant& v, const std::string& lock_path,
                                     const PythonLock& lock, bool build,
                                     const std::string& platform) {
    std::string out = "# Rendered by torchdock from " + lock_path + " (variant " + v.name +
                      (platform.empty() ? "" : ", " + platform) +
                      (build ? "): the build stage's Python set (CUDA toolkit, build "
                               "requirements),\n"
                             : "): the whole Python set,\n") +
                      "# every package pinned with the hashes of its files. Installed with pip "
                      "install --require-hashes --no-deps.\n";
    for (const auto& p : lock.packages) {
        out += p.url.empty() ? p.name + "==" + p.version : p.name + " @ " + p.url;
        for (const auto& h : p.hashes) out += " \\\n    --hash=" + h;
        out += "\n";
    }
    return out;
}

std::string PackageChange::describe() const {
    switch (kind) {
        case Kind::Moved:
            return name + " " + locked_version + " -> " + fresh_version;
        case Kind::Gone:
            return "gone: " + name + " " + locked_version;
        case Kind::New:
            return "new: " + name + " " + fresh_version;
        case Kind::FilesChanged:
            break;
    }
    return name + " " + locked_version + ": its files changed (" + std::to_string(locked_hashes) +
           " hashes -> " + std::to_string(fresh_hashes) + ")";
}

std::vector<PackageChange> diff_locked_packages(const std::vector<LockedPackage>& locked,
                                                const std::vector<LockedPackage>& fresh) {
    std::map<std::string, const LockedPackage*> before, after;
    for (const auto& p : locked) before[p.name] = &p;
    for (const auto& p : fresh) after[p.name] = &p;
    std::vector<PackageChange> out;
    for (const auto& [name, p] : before) {
        auto it = after.find(name);
        if (it == after.end())
            out.push_back({PackageChange::Kind::Gone, name, p->version, "", 0, 0});
        else if (it->second->version != p->version)
            out.push_back(
                {PackageChange::Kind::Moved, name, p->version, it->second->version, 0, 0});
        else if (it->second->hashes != p->hashes)
            out.push_back({PackageChange::Kind::FilesChanged, name, p->version, p->version,
                           p->hashes.size(), it->second->hashes.size()});
    }
    for (const auto& [name, p] : after)
        if (!before.count(name))
            out.push_back({PackageChange::Kind::New, name, "", p->version, 0, 0});
    return out;
}

}  // namespace td
