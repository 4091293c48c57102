#include "core/render/extensions.hpp"

#include <algorithm>

#include "core/kernels/kernel_judge.hpp"
#include "core/pypi/pep440.hpp"
#include "core/pypi/wheel_name.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

std::optional<kernels::ComputeCapability> cc_of(const std::string& cc) {
    return kernels::parse_compute_capability(cc);
}

bool target_runs(const std::string& target, const kernels::ComputeCapability& cc) {
    if (auto sass = kernels::parse_arch(target, "sm_")) return kernels::sass_runs_on(*sass, cc);
    if (auto ptx = kernels::parse_arch(target, "compute_")) return kernels::ptx_jits_to(*ptx, cc);
    return false;
}

// Whether the release's torch pin admits `torch`; an empty pin admits every torch.
bool fits_torch(const ExtensionRelease& rel, const std::string& torch) {
    if (rel.requires_torch.empty()) return true;
    auto spec = pypi::SpecifierSet::parse(rel.requires_torch);
    auto v = pypi::Pep440Version::parse(torch);
    return spec && v && spec->contains(*v);
}

std::string release_pins(const ExtensionInfo& info) {
    std::vector<std::string> out;
    for (const auto& r : info.releases)
        out.push_back(r.version + " (torch" +
                      (r.requires_torch.empty() ? std::string(" any") : r.requires_torch) + ")");
    return out.empty() ? std::string("none") : join(out, ", ");
}

std::string refresh_hint(const std::string& name) {
    return "add the release to \"track\" of " + name +
           " in data/extensions.json and run `torchdock kb refresh --extensions`";
}

// The newest known release whose pin admits `torch`; nullptr when none does.
const ExtensionRelease* newest_fitting(const ExtensionInfo& info, const std::string& torch) {
    const ExtensionRelease* best = nullptr;
    std::optional<pypi::Pep440Version> best_v;
    for (const auto& r : info.releases) {
        auto v = pypi::Pep440Version::parse(r.version);
        if (!v || !fits_torch(r, torch)) continue;
        if (!best_v || *best_v < *v) best = &r, best_v = v;
    }
    return best;
}

std::string describe_objects(const ExtensionRelease& rel) {
    std::vector<std::string> out;
    for (const auto& o : rel.objects) out.push_back(o.path + " has " + join(o.targets, " "));
    return out.empty() ? std::string("no shared object with GPU code") : join(out, "; ");
}

}  // namespace

ExtensionGpuFit extension_gpu_fit(const ExtensionRelease& rel, const std::string& cc_text) {
    ExtensionGpuFit fit;
    auto cc = cc_of(cc_text);
    for (const auto& o : rel.objects) {
        bool runs = cc && std::any_of(o.targets.begin(), o.targets.end(),
                                      [&](const std::string& t) { return target_runs(t, *cc); });
        (runs ? fit.runs : fit.lacks).push_back(o.path);
    }
    return fit;
}

std::vector<VariantExtension> resolve_extensions(
    const Manifest& m, const std::string& variant, const std::string& torch,
    const std::string& python, const std::vector<std::string>& target_gpus, const KnowledgeBase& kb,
    const std::function<void(const std::string&, const std::string&)>& error) {
    std::vector<VariantExtension> out;
    for (const auto& spec : m.extensions) {
        const ExtensionInfo* info = kb.extensions().find(spec.name);
        VariantExtension ext;
        ext.name = spec.name;
        const ExtensionRelease* rel = nullptr;
        if (spec.from_url()) {
            std::string file = spec.wheel_url.substr(spec.wheel_url.rfind('/') + 1);
            auto wheel = pypi::parse_wheel_name(file);
            std::string at = spec.path + ".wheel.url";
            if (!wheel) {
                error(at, quote_value(file) +
                              " is not a wheel file name (NAME-VERSION-PY-ABI-PLATFORM.whl)");
                continue;
            }
            if (pypi::normalize_project_name(wheel->distribution) != spec.name) {
                error(at, "the wheel " + quote_value(file) + " is of " +
                              quote_value(wheel->distribution) + ", not " + spec.name);
                continue;
            }
            if (!wheel->linux_x86_64()) {
                error(at, "the wheel " + quote_value(file) + " does not install on Linux x86_64");
                continue;
            }
            auto pys = wheel->cpython_versions();
            bool abi3 = std::find(wheel->abi_tags.begin(), wheel->abi_tags.end(), "abi3") !=
                        wheel->abi_tags.end();
            if (!pys.empty() && !abi3 && std::find(pys.begin(), pys.end(), python) == pys.end()) {
                error(at, "the wheel " + quote_value(file) + " is for CPython " + join(pys, ", ") +
                              ", but variant " + variant + " has Python " + python);
                continue;
            }
            ext.version = wheel->version;
            ext.url = spec.wheel_url;
            ext.sha256 = spec.wheel_sha256;
            ext.requirement = spec.name + " @ " + spec.wheel_url + "#sha256=" + spec.wheel_sha256;
            if (info)
                if (const ExtensionRelease* r = info->release(ext.version);
                    r && r->sha256 == spec.wheel_sha256)
                    rel = r;
            if (!rel) {
                ext.notes.push_back(
                    "its torch pin and GPU code are not checked: data/extensions.json has no facts "
                    "about this wheel (sha256 " +
                    spec.wheel_sha256.substr(0, 12) + "...)");
                out.push_back(std::move(ext));
                continue;
            }
            if (!fits_torch(*rel, torch)) {
                error(spec.path + ".wheel.url", spec.name + " " + rel->version + " requires torch" +
                                                    rel->requires_torch + ", but variant " +
                                                    variant + " has torch " + torch);
                continue;
            }
        } else {
            if (!info) {
                error(spec.path + ".name",
                      spec.name + " is not in the knowledge base (data/extensions.json knows " +
                          (kb.extensions().names().empty() ? std::string("no extension")
                                                           : join(kb.extensions().names(), ", ")) +
                          "), so its torch pin and GPU code cannot be checked; add it with the "
                          "releases to track and run `torchdock kb refresh --extensions`");
                continue;
            }
            if (spec.version) {
                rel = info->release(*spec.version);
                if (!rel) {
                    error(spec.path + ".version", spec.name + " " + *spec.version +
                                                      " is not in the knowledge base; it knows " +
                                                      release_pins(*info) + "; " +
                                                      refresh_hint(spec.name));
                    continue;
                }
                if (!fits_torch(*rel, torch)) {
                    const ExtensionRelease* fit = newest_fitting(*info, torch);
                    error(spec.path + ".version",
                          spec.name + " " + rel->version + " requires torch" + rel->requires_torch +
                              " (Requires-Dist of " + rel->wheel + "), but variant " + variant +
                              " has torch " + torch + "; " +
                              (fit ? spec.name + " " + fit->version + " fits torch " + torch
                                   : "no release in the knowledge base fits torch " + torch + " (" +
                                         release_pins(*info) + ")"));
                    continue;
                }
            } else {
                rel = newest_fitting(*info, torch);
                if (!rel) {
                    error(spec.path + ".name",
                          "no release of " + spec.name + " in the knowledge base fits torch " +
                              torch + " of variant " + variant + ": " + release_pins(*info) +
                              "; if a newer one does, " + refresh_hint(spec.name));
                    continue;
                }
            }
            ext.version = rel->version;
            ext.requirement = spec.name + "==" + rel->version;
        }
        ext.facts_source = rel->source;
        bool refused = false;
        for (const auto& model : target_gpus) {
            const GpuModel* g = kb.gpu(model);
            if (!g) continue;
            ExtensionGpuFit fit = extension_gpu_fit(*rel, g->cc);
            std::string gpu = g->model + " (" + sm_name(g->cc) + ")";
            if (fit.runs.empty()) {
                error(spec.path, spec.name + " " + rel->version +
                                     " has no GPU code that runs on target GPU " + gpu + ": " +
                                     describe_objects(*rel) + " (variant " + variant + ")");
                refused = true;
            } else if (!fit.lacks.empty()) {
                ext.notes.push_back(join(fit.lacks, ", ") + " has no code for " + gpu +
                                    " (its kernels there fail if called)");
            }
        }
        if (!refused) out.push_back(std::move(ext));
    }
    return out;
}

}  // namespace td
