#pragma once
// The Python half of `torchdock lock`: each variant's whole Python set resolved with uv and
// compared with what the lock file holds (core/render/python_lock.hpp).
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/build/settings.hpp"
#include "core/knowledge/knowledge_base.hpp"
#include "core/render/python_lock.hpp"
#include "core/render/variant.hpp"

namespace td::app {

struct PythonLockRun {
    const KnowledgeBase& kb;
    const IndexSettings& indexes;
    std::string uv;  // empty: uv was not found (uv_missing says why)
    std::string uv_missing;
    std::chrono::steady_clock::time_point deadline;
    bool check = false;
    // " (2.1 is yanked on the index)" for a locked release the index now yanks, else "".
    std::function<std::string(const std::string& name, const std::string& version)> yank_note;
    // The sha256 torchdock computed of each wheel by URL, by URL ("" + why: not fetched), so
    // a wheel several sets ask for is downloaded once a run. Optional.
    std::map<std::string, std::pair<std::string, std::string>>* wheel_hashes = nullptr;
};

struct PythonLockResult {
    std::map<std::string, PythonLock> locks;     // what the lock file gets
    std::vector<std::vector<std::string>> rows;  // VARIANT, PACKAGES, STATUS
    int drifted = 0;                             // --check: a set moved, is stale, or is not locked
    int unchecked = 0;   // --check: uv or an index could not answer, so drift is unknown
    int not_locked = 0;  // an index could not be reached (or none is set, or no uv)
    int conflicts = 0;   // uv: the inputs cannot be satisfied (a manifest problem)
    int failed = 0;      // uv failed otherwise
    // A wheel by URL whose file does not have the sha256 the manifest fixes (lock; in
    // --check it counts as drifted).
    int wheel_mismatches = 0;
};

// Locks the Python sets of `variants` (one family), `previous` being its lock file's, or
// with `build` the sets of their build stages (extensions built from source). A set that cannot be
// resolved keeps its previous lock while that still fits the manifest.
PythonLockResult lock_python_sets(const std::vector<Variant>& variants,
                                  const std::map<std::string, PythonLock>& previous,
                                  const PythonLockRun& run, bool build = false);

}  // namespace td::app
