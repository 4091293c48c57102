#pragma once
// Reads the index that `render` writes (dockerfiles/index.json): what `build` builds.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace td {

struct IndexEntry {
    std::string name, image, tag, dockerfile, base, family;
    std::string torch_source;     // "pytorch-index" | "pypi" | "base"
    std::string torch_index_dir;  // the PyTorch wheel index directory ("cu126"), if any
    std::string python_lock;      // "<name>/requirements.lock.txt" when hash-locked
    std::string build_lock;       // "<name>/requirements.build.lock.txt": its build stage
    // The platforms it is built for (manifest "platforms"), and built for several, each
    // one's hash-locked set: platform -> "<name>/requirements.<arch>.lock.txt".
    std::vector<std::string> platforms = {"linux/amd64"};
    std::map<std::string, std::string> python_locks;
    std::string reference() const { return image + ":" + tag; }
};

Result<std::vector<IndexEntry>> parse_build_index(const std::string& text, const std::string& path);

// Rewrites the base of every FROM line through `rewrite` (used for registry mirrors),
// except a stage an earlier FROM named ("FROM python-set" after "FROM x AS python-set");
// other lines are kept byte for byte.
std::string rewrite_from_lines(const std::string& dockerfile,
                               const std::function<std::string(const std::string&)>& rewrite);

}  // namespace td
