#include "core/render/extensions.hpp"

#include <algorithm>
#include <map>

#include "core/grammar/grammar.hpp"
#include "core/kernels/kernel_judge.hpp"
#include "core/pypi/pep440.hpp"
#include "core/pypi/wheel_name.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/variant.hpp"
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

// The version of `file`, a source archive "NAME-VERSION.tar.gz" (or .zip) of project `name`;
// "" when it is not one.
std::string sdist_version(const std::string& file, const std::string& name) {
    std::string stem;
    for (std::string suffix : {".tar.gz", ".zip"})
        if (file.ends_with(suffix)) stem = file.substr(0, file.size() - suffix.size());
    auto dash = stem.rfind('-');
    if (dash == std::string::npos || dash == 0) return {};
    std::string version = stem.substr(dash + 1);
    if (pypi::normalize_project_name(stem.substr(0, dash)) != name ||
        !grammar::check_pep440_version(version).empty())
        return {};
    return version;
}

// The toolkit a source build compiles with: the base image's own when it is a devel
// nvidia/cuda image, else the one pip installs for the variant's CUDA (the knowledge
// base's pip_toolkits); nullopt with the refusal reported when there is none.
std::optional<SourceBuild> source_toolkit(
    const Variant& v, const KnowledgeBase& kb, const std::string& at, const std::string& what,
    const std::function<void(const std::string&, const std::string&)>& error) {
    const BaseKind base = v.manifest->base;
    SourceBuild b;
    if ((base == BaseKind::NvidiaCuda || base == BaseKind::NvidiaCudaCudnn) &&
        v.flavor == "devel") {
        // The image's CUDA ("12.8.1" -> "12.8"), which is the wheel's on these bases.
        const auto parts = split(v.base_cuda, '.');
        b.cuda = parts.size() >= 2 ? parts[0] + "." + parts[1] : v.cuda;
        b.toolkit_source = "the base image " + v.base_ref + " (its devel flavor: nvcc in " +
                           k_base_cuda_home + ")";
        return b;
    }
    const ExtensionFacts& facts = kb.extensions();
    const PipToolkit* tk = facts.toolkit(v.cuda);
    if (!tk) {
        std::vector<std::string> known;
        for (const auto& t : facts.toolkits) known.push_back(t.cuda);
        std::string major = v.cuda.substr(0, v.cuda.find('.'));
        const NoPipToolkit* none = facts.no_toolkit(major);
        error(at, what + " with a CUDA toolkit pip installs, and variant " + v.name + " has CUDA " +
                      v.cuda + ": " +
                      (none ? "the index has no nvcc for CUDA " + major + " (" + none->source + ")"
                            : "data/extensions.json knows no pip toolkit for CUDA " + v.cuda) +
                      "; it knows one for CUDA " +
                      (known.empty() ? std::string("none") : join(known, ", ")) +
                      ", so build it for a variant with that CUDA, or on base nvidia-cuda with "
                      "flavor devel (the image's own nvcc)");
        return std::nullopt;
    }
    // The CUDA runtime torch pins (one exact version in torch.json), which the toolkit's
    // headers must match and pip must not replace.
    const TorchRelease* tr = kb.torch(v.torch);
    const TorchVariant* tv = tr ? tr->variant(v.wheel_variant) : nullptr;
    const std::string cuda_runtime =
        tv && grammar::check_pep440_version(tv->cuda_runtime).empty() ? tv->cuda_runtime : "";
    if (cuda_runtime.empty()) {
        error(at, what +
                      ", and the knowledge base does not know which nvidia-cuda-runtime torch "
                      "pins for variant " +
                      v.name +
                      ", which the toolkit's headers must match; run `torchdock kb refresh`");
        return std::nullopt;
    }
    b.cuda = tk->cuda;
    b.home = tk->home;
    b.toolkit_source = tk->source;
    b.requirements = tk->packages;
    b.requirements.push_back(tk->runtime_package + "==" + cuda_runtime);
    return b;
}

}  // namespace

std::optional<SourceBuild> plan_source_build(
    const Variant& v, const KnowledgeBase& kb,
    const std::function<void(const std::string&, const std::string&)>& error) {
    const Manifest& m = *v.manifest;
    const ExtensionSpec* first = nullptr;
    for (const auto& spec : m.extensions)
        if (spec.from_source() && !first) first = &spec;
    if (!first) return std::nullopt;
    const std::string at = first->path + ".source";
    const std::string what = first->name + " is built from source against the variant's torch";
    if (v.cuda.empty()) {
        error(at, what + ", but variant " + v.name + " is CPU-only");
        return std::nullopt;
    }
    if (v.target_gpus.empty()) {
        error(at, what +
                      " for the target GPUs (its TORCH_CUDA_ARCH_LIST), and the manifest "
                      "names none: add \"target_gpus\"");
        return std::nullopt;
    }
    auto b = source_toolkit(v, kb, at, what, error);
    if (!b) return std::nullopt;
    // nvcc must compile for each target GPU's exact architecture (data/cuda.json).
    const CudaMinor* toolkit = kb.cuda(b->cuda);
    if (toolkit) b->cudart_soname = toolkit->cudart_soname;
    std::vector<std::string> ccs;
    bool ok = true;
    for (const auto& model : v.target_gpus) {
        const GpuModel* g = kb.gpu(model);
        auto cc = g ? cc_of(g->cc) : std::nullopt;
        if (!cc) continue;
        if (!toolkit ||
            std::find(toolkit->sm.begin(), toolkit->sm.end(), cc->number()) == toolkit->sm.end()) {
            std::vector<std::string> sms;
            if (toolkit)
                for (int sm : toolkit->sm) sms.push_back("sm_" + std::to_string(sm));
            error(at, what + " for target GPU " + g->model + " (" + sm_name(g->cc) +
                          "), which the CUDA " + b->cuda + " toolkit does not compile for (" +
                          (sms.empty() ? std::string("data/cuda.json does not list its targets")
                                       : "it compiles for " + join(sms, " ")) +
                          ")");
            ok = false;
        }
        if (std::find(ccs.begin(), ccs.end(), g->cc) == ccs.end()) ccs.push_back(g->cc);
    }
    auto number = [](const std::string& cc) { return cc_of(cc) ? cc_of(cc)->number() : 0; };
    std::sort(ccs.begin(), ccs.end(),
              [&](const std::string& a, const std::string& c) { return number(a) < number(c); });
    b->arch_list = join(ccs, ";");
    std::map<std::string, std::string> pinned;  // build requirement name -> pin
    for (const auto& r : b->requirements) pinned[requirement_pin(r).first] = r;
    for (const auto& spec : m.extensions)
        for (const auto& req : spec.build_requires) {
            auto [it, fresh] = pinned.emplace(requirement_pin(req).first, req);
            if (fresh)
                b->requirements.push_back(req);
            else if (it->second != req) {
                error(spec.path + ".source.build_requires", quote_value(req) + " contradicts " +
                                                                quote_value(it->second) +
                                                                " of another extension's build");
                ok = false;
            }
        }
    if (!ok) return std::nullopt;
    return b;
}

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
        if (spec.from_source()) {
            std::string file = spec.source_url.substr(spec.source_url.rfind('/') + 1);
            std::string version = sdist_version(file, spec.name);
            if (version.empty()) {
                error(spec.path + ".source.url",
                      quote_value(file) + " is not a source archive of " + spec.name +
                          " (NAME-VERSION.tar.gz or .zip, VERSION a PEP 440 version)");
                continue;
            }
            ext.version = version;
            ext.url = spec.source_url;
            ext.sha256 = spec.source_sha256;
            ext.requirement = spec.name + " @ " + spec.source_url + "#sha256=" + spec.source_sha256;
            ext.from_source = true;
            ext.max_jobs = spec.max_jobs;
            ext.notes.push_back(
                "built from source for the target GPUs; its GPU code is audited in the image "
                "(validate's TD125)");
            out.push_back(std::move(ext));
            continue;
        }
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
