#include "core/render/render_plan.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>

#include "core/render/dockerfile.hpp"
#include "core/render/index.hpp"
#include "core/render/lockfile.hpp"
#include "core/render/manifest.hpp"
#include "core/render/matrix.hpp"
#include "util/strings.hpp"

namespace td {

namespace {

// A lock file that no longer fits its manifest is worth saying: a base it does not pin is
// rendered with a floating tag, an entry nothing uses is stale.
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

}  // namespace

RenderPlan plan_render(const std::vector<ManifestSource>& sources, const KnowledgeBase& kb) {
    RenderPlan plan;
    std::map<std::string, std::string> family_file;
    for (const auto& src : sources) {
        Diagnostics diags(src.path);
        LockDigests lock;
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
                expand_manifest(manifest, kb, lock, plan.variants, diags);
                warn_unchecked_targets(src.path, *manifest, plan.variants, first, plan.warnings);
                if (src.lock_text)
                    check_lock_fit(*src.lock_path, lock, plan.variants, first, plan.warnings);
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
    for (const auto& v : plan.variants) plan.files[v.name + "/Dockerfile"] = render_dockerfile(v);
    plan.files["index.json"] = render_index(plan.variants);
    return plan;
}

void restrict_plan(RenderPlan& plan, const std::string& pattern) {
    std::vector<Variant> kept;
    std::map<std::string, std::string> files;
    for (auto& v : plan.variants) {
        if (!glob_match(pattern, v.name)) continue;
        files[v.name + "/Dockerfile"] = plan.files[v.name + "/Dockerfile"];
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
