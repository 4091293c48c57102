#include "core/render/render_plan.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>

#include "core/json/json_reader.hpp"
#include "core/render/apt_lock.hpp"
#include "core/render/dockerfile.hpp"
#include "core/render/index.hpp"
#include "core/render/lockfile.hpp"
#include "core/render/manifest.hpp"
#include "core/render/matrix.hpp"
#include "core/render/python_lock.hpp"
#include "util/strings.hpp"

namespace td {

namespace {

// A lock file whose base images no longer fit its manifest is worth saying: a base it does
// not pin is rendered with a floating tag, an entry nothing uses is stale.
void check_lock_fit(const std::string& lock_path, const LockDigests& lock,
                    const std::vector<Variant>& variants, std::size_t first,
                    std::vector<Diagnostic>& warnings) {
    std::set<std::string> used;
    for (std::size_t i = first; i < variants.size(); ++i) {
        used.insert(variants[i].base_ref);
        if (!variants[i].base_digest)
            warnings.push_back({lock_path,
                                {},
                                "$.images",
                                "does not pin " + variants[i].base_ref + " (variant " +
                                    variants[i].name +
                                    " renders it unpinned); run `torchdock lock`"});
    }
    for (const auto& [ref, digest] : lock)
        if (!used.count(ref))
            warnings.push_back(
                {lock_path,
                 {},
                 "$.images",
                 "pins " + ref + ", which no variant uses any more; run `torchdock lock`"});
}

// A wheel build whose arch list the knowledge base lacks (a release `kb refresh` added from
// the index, a build seen only downstream) cannot be checked against target GPUs: say so
// rather than pass it silently.
void warn_unchecked_targets(const std::string& file, const Manifest& m,
                            const std::vector<Variant>& variants, std::size_t first,
                            std::vector<Diagnostic>& warnings) {
    if (m.target_gpus.empty()) return;
    for (std::size_t i = first; i < variants.size(); ++i) {
        const Variant& v = variants[i];
        if (v.wheel_variant.empty() || v.cuda.empty() || !v.arch_list.empty()) continue;
        warnings.push_back({file, m.pos_of("$.target_gpus"), "$.target_gpus",
                            "the knowledge base has no arch list for torch " + v.torch + "+" +
                                v.wheel_variant + ", so variant " + v.name +
                                " is not checked against the target GPUs"});
    }
}

// Gives each variant its Python lock (or, with `build`, its build stage's: extensions built
// from source) when the lock file has one resolved from the variant's current inputs, and
// says why not otherwise. A lock resolved from other inputs (the manifest changed a pin, the
// Python or the OS) is never used: it would install what the manifest no longer says.
// A lock that fits but records no dependency graph (written before torchdock recorded one)
// is an error: render could not tell a package nothing requested from one uv resolved.
// A variant built for several platforms needs a fitting lock for each (render/platforms.hpp
// keys them); with one missing or stale, none is used.
void attach_python_locks(const ManifestSource& src, const LockFile* lock, const KnowledgeBase& kb,
                         std::vector<Variant>& variants, std::size_t first, bool build,
                         std::vector<Diagnostic>& warnings, std::vector<Diagnostic>& errors) {
    const std::string key = build ? "$.build_python" : "$.python";
    const std::string set = build ? "build stage's Python set" : "Python set";
    const std::map<std::string, PythonLock>* locks =
        lock ? (build ? &lock->build_python : &lock->python) : nullptr;
    const std::string run_lock = "; run `torchdock lock` (it resolves the set with uv)";
    std::set<std::string> used;
    // The lock of one variant's set for one platform, or nullptr with why not.
    auto fitting = [&](const Variant& v, const std::string& platform,
                       std::string& why_not) -> const PythonLock* {
        const std::string name = build ? v.name : python_lock_key(v.name, platform);
        LockPlan plan = build ? build_lock_plan(v, kb) : python_lock_plan(v, kb, platform);
        if (!plan.inputs) {
            why_not = plan.why_not;
            if (locks && locks->count(name)) {
                used.insert(name);
                warnings.push_back({*src.lock_path,
                                    {},
                                    member_path(key, name),
                                    "is not used: variant " + v.name +
                                        (build ? std::string(" builds nothing from source")
                                               : " cannot be hash-locked (" + plan.why_not + ")") +
                                        "; run `torchdock lock` to drop it"});
            }
            return nullptr;
        }
        if (!locks) {
            why_not = "no lock file" + run_lock;
            return nullptr;
        }
        auto it = locks->find(name);
        if (it == locks->end()) {
            why_not = *src.lock_path + " has no " + (build ? "build stage lock" : "Python lock") +
                      " for it" + run_lock;
            return nullptr;
        }
        used.insert(name);
        if (!(it->second.inputs == *plan.inputs)) {
            why_not = std::string(build ? "the build stage lock in " : "the Python lock in ") +
                      *src.lock_path +
                      " was resolved from other inputs than the manifest now gives" + run_lock;
            warnings.push_back({*src.lock_path,
                                {},
                                member_path(key, name),
                                "was resolved from other requirements, Python or platform than "
                                "the manifest now gives; variant " +
                                    v.name + "'s " + set +
                                    " renders unlocked; run `torchdock lock`"});
            return nullptr;
        }
        if (!it->second.graph) {
            errors.push_back({*src.lock_path,
                              {},
                              member_path(key, name),
                              "records no dependency graph (no \"required_by\" on its packages: "
                              "it was written by an older torchdock), so render cannot check "
                              "that every locked package was requested by variant " +
                                  v.name + "'s inputs; run `torchdock lock` to re-lock it"});
            return nullptr;
        }
        return &it->second;
    };
    for (std::size_t i = first; i < variants.size(); ++i) {
        Variant& v = variants[i];
        const std::vector<std::string> platforms =
            build ? std::vector<std::string>{k_default_platform} : v.manifest->platforms;
        std::map<std::string, std::shared_ptr<const PythonLock>> found;
        std::string why_not;
        bool all = true;
        for (const auto& platform : platforms) {
            std::string why;
            if (const PythonLock* l = fitting(v, platform, why)) {
                found[platform] = std::make_shared<const PythonLock>(*l);
            } else {
                if (all && !why.empty())
                    why_not = platforms.size() > 1 ? platform + "'s set: " + why : why;
                all = false;
            }
        }
        (build ? v.build_not_locked : v.python_not_locked) = why_not;
        if (!all) continue;
        (build ? v.build_lock : v.python_lock) = found.at(platforms.front());
        (build ? v.build_lock_file : v.python_lock_file) = *src.lock_path;
        if (platforms.size() > 1) v.platform_locks = std::move(found);
    }
    if (locks)
        for (const auto& [name, l] : *locks)
            if (!used.count(name))
                warnings.push_back({*src.lock_path,
                                    {},
                                    member_path(key, name),
                                    "locks the " + set + " of variant " + name +
                                        ", which the manifest no longer renders; run `torchdock "
                                        "lock`"});
}

// The inputs of a variant's apt lock: its base by digest and its packages; none when it has
// no packages or its base is not locked by digest.
std::optional<AptLockInputs> apt_lock_inputs(const Variant& v) {
    if (v.apt.empty() || !v.base_digest) return std::nullopt;
    return AptLockInputs{v.base_ref + "@" + *v.base_digest, v.apt};
}

// Gives each variant with Debian packages its apt lock when the lock file has one resolved
// from the same base digest and packages; otherwise, when a package is unpinned, says why it
// renders unpinned (a warning: the build installs whatever the archive has that day).
void attach_apt_locks(const ManifestSource& src, const LockFile* lock,
                      std::vector<Variant>& variants, std::size_t first,
                      std::vector<Diagnostic>& warnings) {
    for (std::size_t i = first; i < variants.size(); ++i) {
        Variant& v = variants[i];
        if (v.apt.empty()) continue;
        auto inputs = apt_lock_inputs(v);
        const AptLock* found = nullptr;
        if (lock && inputs)
            if (auto it = lock->apt.find(v.name);
                it != lock->apt.end() && it->second.inputs == *inputs)
                found = &it->second;
        if (found) {
            v.apt_lock = std::make_shared<const AptLock>(*found);
            continue;
        }
        v.apt_not_locked =
            !lock     ? "no lock file"
            : !inputs ? "its base image is not locked by digest"
            : lock->apt.count(v.name)
                ? "the apt lock was resolved from other packages or another base digest"
                : *src.lock_path + " has no apt lock for it";
        if (has_unpinned(v.apt))
            warnings.push_back(
                {src.path,
                 {},
                 "$.apt",
                 "variant " + v.name + " installs Debian packages without a version (" +
                     v.apt_not_locked +
                     "): the build takes whatever the archive has; run `torchdock lock` "
                     "to resolve them in the pinned base"});
    }
}

}  // namespace

std::string requirements_lock_for(const std::string& platform) {
    return "requirements." + target_arch(platform) + ".lock.txt";
}

RenderPlan plan_render(const std::vector<ManifestSource>& sources, const KnowledgeBase& kb) {
    RenderPlan plan;
    std::map<std::string, std::string> family_file;
    for (const auto& src : sources) {
        Diagnostics diags(src.path);
        LockFile lock;
        if (src.lock_text) {
            Diagnostics lock_diags(*src.lock_path);
            lock = parse_lockfile(*src.lock_text, lock_diags);
            for (const auto& d : lock_diags.items()) plan.problems.push_back(d);
            plan.problem_count += lock_diags.count();
        }
        auto parsed = parse_manifest(src.path, src.text, diags);
        if (parsed) {
            auto manifest = std::make_shared<const Manifest>(std::move(*parsed));
            auto [it, fresh] = family_file.emplace(manifest->name, src.path);
            if (!fresh) {
                diags.add(
                    manifest->pos_of("$.name"), "$.name",
                    "family name \"" + manifest->name + "\" is already used by " + it->second);
            } else {
                std::size_t first = plan.variants.size();
                expand_manifest(manifest, kb, lock.images, plan.variants, diags);
                warn_unchecked_targets(src.path, *manifest, plan.variants, first, plan.warnings);
                if (src.lock_text)
                    check_lock_fit(*src.lock_path, lock.images, plan.variants, first,
                                   plan.warnings);
                std::vector<Diagnostic> lock_errors;
                for (bool build : {false, true})
                    attach_python_locks(src, src.lock_text ? &lock : nullptr, kb, plan.variants,
                                        first, build, plan.warnings, lock_errors);
                attach_apt_locks(src, src.lock_text ? &lock : nullptr, plan.variants, first,
                                 plan.warnings);
                plan.problems.insert(plan.problems.end(), lock_errors.begin(), lock_errors.end());
                plan.problem_count += lock_errors.size();
            }
        }
        // Report a file's problems in reading order, whichever check found them; the line
        // about the ones not kept (no position) stays last.
        std::vector<Diagnostic> found = diags.items();
        std::stable_sort(found.begin(), found.end(), [](const Diagnostic& a, const Diagnostic& b) {
            auto key = [](const Diagnostic& d) {
                return std::tuple(d.pos.line == 0, d.pos.line, d.pos.col);
            };
            return key(a) < key(b);
        });
        plan.problems.insert(plan.problems.end(), found.begin(), found.end());
        plan.problem_count += diags.count();
    }
    std::sort(plan.variants.begin(), plan.variants.end(),
              [](const Variant& a, const Variant& b) { return a.name < b.name; });
    for (std::size_t i = 1; i < plan.variants.size(); ++i)
        if (plan.variants[i].name == plan.variants[i - 1].name)
            plan.problems.push_back(
                {plan.variants[i].manifest->file,
                 {},
                 "$.name",
                 "variant name " + plan.variants[i].name + " is produced twice"});
    plan.problem_count = std::max(plan.problem_count, plan.problems.size());
    if (!plan.problems.empty()) return plan;
    for (const auto& v : plan.variants) {
        plan.files[v.name + "/Dockerfile"] = render_dockerfile(v);
        if (v.python_lock && v.platform_locks.empty())
            plan.files[v.name + "/" + k_requirements_lock] =
                render_requirements_file(v, v.python_lock_file, *v.python_lock);
        for (const auto& [platform, l] : v.platform_locks)
            plan.files[v.name + "/" + requirements_lock_for(platform)] =
                render_requirements_file(v, v.python_lock_file, *l, false, platform);
        if (v.build_lock)
            plan.files[v.name + "/" + k_build_requirements_lock] =
                render_requirements_file(v, v.build_lock_file, *v.build_lock, true);
    }
    plan.files["index.json"] = render_index(plan.variants);
    return plan;
}

void restrict_plan(RenderPlan& plan, const std::string& pattern) {
    std::vector<Variant> kept;
    std::map<std::string, std::string> files;
    for (auto& v : plan.variants) {
        if (!glob_match(pattern, v.name)) continue;
        for (const auto& [path, text] : plan.files)
            if (path.starts_with(v.name + "/")) files[path] = text;
        kept.push_back(std::move(v));
    }
    files["index.json"] = plan.files["index.json"];
    plan.variants = std::move(kept);
    plan.files = std::move(files);
}

TreeDiff diff_tree(const std::map<std::string, std::string>& want,
                   const std::map<std::string, std::string>& have) {
    TreeDiff d;
    for (const auto& [path, text] : want) {
        auto it = have.find(path);
        if (it == have.end())
            d.missing.push_back(path);
        else if (it->second != text)
            d.changed.push_back(path);
    }
    for (const auto& [path, text] : have)
        if (!want.count(path)) d.extra.push_back(path);
    return d;
}

}  // namespace td
