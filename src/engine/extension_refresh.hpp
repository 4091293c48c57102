#pragma once
// `torchdock kb refresh --extensions`: reads the releases data/extensions.json tracks from
// a package index. For each, its Linux x86_64 wheel's METADATA (PEP 658 when served, else
// by range) gives the torch it requires, and every shared object in the wheel is streamed
// by range (zip_member_stream) and scanned for fatbin containers (core/kernels/fatbin_stream)
// as `--arch-lists` does for torch: the targets each object carries become its facts.
#include <functional>
#include <string>
#include <vector>

#include "core/knowledge/extension_facts.hpp"
#include "engine/wheel_arch_reader.hpp"
#include "util/result.hpp"

namespace td::engine {

struct ExtensionRefreshResult {
    ExtensionFacts facts;              // the file's facts with every tracked release read
    std::vector<std::string> changes;  // "xformers 0.0.33.post2: new", "...: sha256 changed"
    std::vector<std::string> scans;    // one line per object read: targets and cost
    // Releases the index gave facts for that the loader would refuse (a Requires-Dist
    // specifier or member name outside its grammar), each with the reason: not taken; the
    // release keeps the facts the file had (or stays out, when it had none).
    std::vector<std::string> refused;
    long requests = 0;
    long long bytes = 0;
};

// `current` is data/extensions.json as it is; `only` limits the reading to these projects
// (empty: all). Errors name the project, release and wheel. Every release read is checked with
// the loader's own rules (extension_release_problem) before it is taken.
Result<ExtensionRefreshResult> refresh_extension_facts(
    const ExtensionFacts& current, const std::string& index_url, const std::string& index_label,
    const std::vector<std::string>& only,
    const std::function<void(const std::string&)>& on_progress = {});

}  // namespace td::engine
