#pragma once
// From manifest texts to the full set of files `render` writes, and the comparison
// `render --check` makes. Pure: texts in, texts out.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json/diagnostics.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/render/variant.hpp"

namespace td {

struct ManifestSource {
    std::string path;  // as shown in messages and labels, e.g. "manifests/cuda-pip.json"
    std::string text;
    std::optional<std::string> lock_path, lock_text;  // the manifest's lock file, if present
};

// The hash-locked requirements file of a locked variant, next to its Dockerfile.
inline constexpr const char* k_requirements_lock = "requirements.lock.txt";
// Its name for one platform's set of a variant built for several: "requirements.arm64.lock.txt".
std::string requirements_lock_for(const std::string& platform);
// The build stage's set (extensions built from source): the CUDA toolkit and build requirements.
inline constexpr const char* k_build_requirements_lock = "requirements.build.lock.txt";

struct RenderPlan {
    std::vector<Variant> variants;             // sorted by name
    std::map<std::string, std::string> files;  // relative path -> content
    std::vector<Diagnostic> problems;          // non-empty: nothing may be written
    std::size_t problem_count = 0;             // all problems found (problems keeps 100 a file)
    std::vector<Diagnostic> warnings;          // printed, not fatal (a lock that does not fit)
};

RenderPlan plan_render(const std::vector<ManifestSource>& sources, const KnowledgeBase& kb);

// Keeps only the variants whose name matches the glob `pattern` (and the index).
void restrict_plan(RenderPlan& plan, const std::string& pattern);

struct TreeDiff {
    std::vector<std::string> missing, changed, extra;
    bool empty() const { return missing.empty() && changed.empty() && extra.empty(); }
};

TreeDiff diff_tree(const std::map<std::string, std::string>& want,
                   const std::map<std::string, std::string>& have);

}  // namespace td
