#include "core/pypi/release_facts.hpp"

#include <algorithm>

#include "core/grammar/grammar.hpp"
#include "core/pypi/wheel_name.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

namespace td::pypi {
namespace {

// "3.13" -> 13 (the minor of a CPython 3 version); -1 when it is not one.
int minor_of(const std::string& py) {
    auto v = Version::parse(py);
    return v && v->major() == 3 ? v->minor() : -1;
}

bool glibc_less(const std::string& a, const std::string& b) {
    auto va = Version::parse(a), vb = Version::parse(b);
    return va && vb && *va < *vb;
}

// "nvidia-cudnn-cu13==9.19.0.56", "cuda-toolkit[cublas,cudart]==13.0.2": the requirement
// without its marker, as cited.
std::string short_requirement(const Requirement& r) {
    std::string out = r.name;
    if (!r.extras.empty()) out += "[" + join(r.extras, ",") + "]";
    return out + r.specifier.str();
}

// The applicable requirement whose project name starts with `prefix` ("nvidia-cudnn"
// matches nvidia-cudnn-cu12 and nvidia-cudnn).
const Requirement* requirement_with_prefix(const CoreMetadata& md, const MarkerEnvironment& env,
                                           const std::string& prefix) {
    for (const Requirement* r : md.applicable(env))
        if (r->name == prefix || starts_with(r->name, prefix + "-cu")) return r;
    return nullptr;
}

// A library pin is one "==VERSION" clause with a valid PEP 440 version (the grammar
// manifests use); anything else ("===text", a range, "==2.*") is no version fact: "".
std::string exact_pin(const SpecifierSet& s) {
    if (s.clauses().size() != 1) return {};
    const SpecifierClause& c = s.clauses()[0];
    // "==13.0.96.*" (cuda-toolkit's pins) names a patch-level version as well as "==13.0.96"
    // does; "==9.19.*" (a series), "===anything" and ranges are no facts.
    if (c.op != "==" || !grammar::check_pep440_version(c.version).empty()) return {};
    if (c.prefix && std::count(c.version.begin(), c.version.end(), '.') < 2) return {};
    return c.version;
}

Fact single(const std::string& path, const std::string& value, const std::string& source) {
    return Fact{path, {value}, false, source};
}

}  // namespace

std::string cite_wheel(const std::string& index_label, const std::string& project,
                       const IndexFile& file) {
    std::string version = file.wheel ? file.wheel->version : std::string("?");
    return index_label + " " + project + " " + version + " wheel " + file.filename + " (sha256 " +
           (file.sha256.empty() ? std::string("not given by the index") : file.sha256) + ")";
}

std::string metadata_mismatch(const CoreMetadata& md, const IndexFile& wheel) {
    if (!wheel.wheel) return "not a wheel: " + quote_value(wheel.filename, 200);
    const WheelName& w = *wheel.wheel;
    std::string where = "the METADATA of " + quote_value(wheel.filename, 200);
    if (normalize_project_name(md.name) != normalize_project_name(w.distribution))
        return where + " names the project " + quote_value(md.name, 120) + ", not " +
               quote_value(w.distribution, 120) + "; wheel refused";
    auto mv = Pep440Version::parse(md.version), wv = Pep440Version::parse(w.version);
    if (!mv || !wv || compare(*mv, *wv) != 0)
        return where + " says version " + quote_value(md.version, 120) + ", not " +
               quote_value(w.version, 120) + "; wheel refused";
    return {};
}

const std::string& Fact::value() const {
    static const std::string empty;
    return values.empty() ? empty : values.front();
}

const Fact* ReleaseFacts::find(const std::string& path) const {
    for (const auto& f : facts)
        if (f.path == path) return &f;
    return nullptr;
}

Result<ReleaseWheels> release_wheels(const ProjectIndex& torch, const std::string& version,
                                     const std::string& machine) {
    ReleaseWheels rw;
    rw.version = version;
    rw.machine = machine;
    rw.wheels = torch.linux_wheels(version, machine);
    if (rw.wheels.empty())
        return Error{ErrorKind::Config, torch.name + " " + version + " has no Linux " + machine +
                                            " wheel on the index"};
    int best = -1;
    for (const IndexFile* f : rw.wheels)
        for (const auto& py : f->wheel->cpython_versions())
            if (!ends_with(py, "t") && minor_of(py) > best) {
                best = minor_of(py);
                rw.metadata_wheel = f;
                rw.metadata_python = py;
            }
    if (!rw.metadata_wheel) {
        rw.metadata_wheel = rw.wheels.front();
        rw.metadata_python = "3.12";
    }
    return rw;
}

void add_platform_facts(const std::string& platform, const ReleaseFacts& platform_facts,
                        ReleaseFacts& out) {
    for (Fact f : platform_facts.facts) {
        if (f.path != "glibc" && f.path != "default_variant" && !starts_with(f.path, "variants."))
            continue;
        f.path = "platforms." + platform + "." + f.path;
        out.facts.push_back(std::move(f));
    }
    for (const auto& n : platform_facts.notes) out.notes.push_back(platform + ": " + n);
}

void wheel_name_facts(const std::string& label, const ReleaseWheels& rw, ReleaseFacts& out) {
    const IndexFile *lo = nullptr, *hi = nullptr, *glibc_wheel = nullptr;
    int lo_minor = 1000, hi_minor = -1;
    std::vector<std::pair<int, const IndexFile*>> free_threaded;
    std::string glibc;
    std::string project = rw.wheels.front()->wheel->distribution;
    for (const IndexFile* f : rw.wheels) {
        for (const auto& py : f->wheel->cpython_versions()) {
            int m = minor_of(ends_with(py, "t") ? py.substr(0, py.size() - 1) : py);
            if (m < 0) continue;
            if (ends_with(py, "t")) {
                free_threaded.emplace_back(m, f);
                continue;
            }
            if (m < lo_minor) lo_minor = m, lo = f;
            if (m > hi_minor) hi_minor = m, hi = f;
        }
        std::string floor = f->wheel->glibc_floor(rw.machine);
        if (!floor.empty() && (glibc.empty() || glibc_less(glibc, floor))) {
            glibc = floor;
            glibc_wheel = f;
        }
    }
    if (lo && hi) {
        out.facts.push_back(
            single("python.min", "3." + std::to_string(lo_minor), cite_wheel(label, project, *lo)));
        out.facts.push_back(
            single("python.max", "3." + std::to_string(hi_minor), cite_wheel(label, project, *hi)));
        std::sort(free_threaded.begin(), free_threaded.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        Fact ft{"python.free_threaded", {}, true, ""};
        std::vector<std::string> cites;
        for (const auto& [m, f] : free_threaded) {
            std::string v = "3." + std::to_string(m) + "t";
            if (std::find(ft.values.begin(), ft.values.end(), v) != ft.values.end()) continue;
            ft.values.push_back(v);
            cites.push_back(cite_wheel(label, project, *f));
        }
        ft.source = cites.empty() ? label + " " + project + " " + rw.version + ": none of its " +
                                        std::to_string(rw.wheels.size()) + " Linux " + rw.machine +
                                        " wheels is a free-threaded (cp3XYt) build"
                                  : join(cites, "; ");
        out.facts.push_back(std::move(ft));
    }
    if (glibc_wheel)
        out.facts.push_back(single("glibc", glibc,
                                   cite_wheel(label, project, *glibc_wheel) + ": platform tag " +
                                       join(glibc_wheel->wheel->platform_tags, ".")));
}

std::optional<ToolkitPin> toolkit_pin(const CoreMetadata& md, const MarkerEnvironment& env) {
    const Requirement* r = md.requirement_on("cuda-toolkit", env);
    if (!r || exact_pin(r->specifier).empty()) return std::nullopt;
    return ToolkitPin{exact_pin(r->specifier), r->extras, short_requirement(*r)};
}

void pin_facts(const std::string& torch_cite, const CoreMetadata& md, const MarkerEnvironment& env,
               const CoreMetadata* toolkit, const std::string& toolkit_cite, ReleaseFacts& out) {
    struct Pin {
        std::string value, source;  // value "": the requirement is not an exact pin
        std::string requirement;
    };
    auto direct = [&](const std::string& prefix) -> std::optional<Pin> {
        const Requirement* r = requirement_with_prefix(md, env, prefix);
        if (!r || r->specifier.empty()) return std::nullopt;
        return Pin{exact_pin(r->specifier), torch_cite + ": Requires-Dist " + short_requirement(*r),
                   short_requirement(*r)};
    };
    auto tk = toolkit_pin(md, env);
    // A library pinned through the cuda-toolkit meta-package: torch names the extra,
    // the toolkit's metadata pins the library under that extra.
    auto via_toolkit = [&](const std::string& extra,
                           const std::string& prefix) -> std::optional<Pin> {
        if (!tk || !toolkit ||
            std::find(tk->extras.begin(), tk->extras.end(), extra) == tk->extras.end())
            return std::nullopt;
        MarkerEnvironment with_extra = env;
        with_extra.extra = extra;
        const Requirement* r = requirement_with_prefix(*toolkit, with_extra, prefix);
        if (!r || r->specifier.empty()) return std::nullopt;
        return Pin{exact_pin(r->specifier),
                   torch_cite + ": Requires-Dist " + tk->text + "; " + toolkit_cite +
                       ": Requires-Dist " + short_requirement(*r) + " (extra " + extra + ")",
                   short_requirement(*r)};
    };
    auto runtime = direct("nvidia-cuda-runtime");
    if (!runtime) runtime = via_toolkit("cudart", "nvidia-cuda-runtime");
    auto cublas = direct("nvidia-cublas");
    if (!cublas) cublas = via_toolkit("cublas", "nvidia-cublas");
    auto cudnn = direct("nvidia-cudnn");
    auto nccl = direct("nvidia-nccl");

    // A requirement that is not "==VERSION" is reported and is not a fact.
    auto not_pinned = [&](const std::optional<Pin>& p, const std::string& what) {
        if (!p || !p->value.empty()) return false;
        out.notes.push_back(what + ": " + p->requirement +
                            " is not pinned (only ==VERSION with a PEP 440 version is a fact); "
                            "not taken (" +
                            p->source + ")");
        return true;
    };
    if (not_pinned(runtime, "the CUDA runtime")) return;
    auto rv = runtime ? Pep440Version::parse(runtime->value) : std::nullopt;
    if (!rv || rv->release().size() < 2) {
        out.facts.push_back(single("default_variant", "cpu",
                                   torch_cite + ": no nvidia-cuda-runtime or cuda-toolkit pin"));
        return;
    }
    std::string mm = std::to_string(rv->release()[0]) + "." + std::to_string(rv->release()[1]);
    std::string name = "cu" + std::to_string(rv->release()[0]) + std::to_string(rv->release()[1]);
    out.facts.push_back(single("default_variant", name, runtime->source));
    std::string base = "variants." + name + ".";
    out.facts.push_back(single(base + "cuda", mm, runtime->source));
    out.facts.push_back(single(base + "cuda_runtime", runtime->value, runtime->source));
    for (auto [pin, key] :
         {std::pair{&cublas, "cublas"}, std::pair{&cudnn, "cudnn"}, std::pair{&nccl, "nccl"}})
        if (*pin && !not_pinned(*pin, base + key))
            out.facts.push_back(single(base + key, (*pin)->value, (*pin)->source));
}

CompanionPicker::CompanionPicker(const std::string& torch_version)
    : m_torch(Pep440Version::parse(torch_version)) {}

void CompanionPicker::offer(const std::string& version, const Requirement* r,
                            const std::string& cite) {
    if (m_done || !m_torch || !r || r->specifier.empty()) return;
    Fact f{"", {version}, false, cite + ": Requires-Dist " + short_requirement(*r)};
    std::string pinned = r->specifier.pinned();
    auto pv = Pep440Version::parse(pinned);
    bool prefix = !r->specifier.clauses().empty() && r->specifier.clauses()[0].prefix;
    if (pv && !prefix && compare(*pv, *m_torch) == 0) {
        m_exact = f;
        m_done = true;
        return;
    }
    if (r->specifier.contains(*m_torch)) {
        if (!m_admits) m_admits = f;
        return;
    }
    if (pv && compare(pv->public_version(), *m_torch) < 0) m_done = true;
}

std::optional<Fact> CompanionPicker::result(const std::string& path) const {
    std::optional<Fact> f = m_exact ? m_exact : m_admits;
    if (f) f->path = path;
    return f;
}

}  // namespace td::pypi
