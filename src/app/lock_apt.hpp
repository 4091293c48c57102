#pragma once
// The Debian half of `torchdock lock`: each variant's apt packages resolved in its pinned
// base (engine/apt_resolver) and compared with what the lock file holds
// (core/render/apt_lock.hpp).
#include <map>
#include <string>
#include <vector>

#include "core/build/image_ref.hpp"
#include "core/render/apt_lock.hpp"
#include "core/render/lockfile.hpp"
#include "core/render/variant.hpp"

namespace td::app {

struct AptLockResult {
    std::map<std::string, AptLock> locks;        // what the lock file gets
    std::vector<std::vector<std::string>> rows;  // VARIANT, APT PACKAGES, STATUS
    int drifted = 0;     // --check: a version moved, or the packages are stale or not locked
    int not_locked = 0;  // no BuildKit client, or the build or the archive could not be reached:
                         // the previous lock is kept while it fits (under --check: unknown)
    int unresolved = 0;  // apt cannot install what the manifest asks for (a manifest problem)
};

// `digests`: the base references just resolved (ref -> digest). A variant whose base has no
// digest is left as it was (the base's own failure is reported with the images).
AptLockResult lock_apt_sets(const std::vector<Variant>& variants,
                            const std::map<std::string, LockEntry>& digests,
                            const std::map<std::string, AptLock>& previous, const Mirrors& mirrors,
                            bool check);

}  // namespace td::app
