#pragma once
// Lock files (manifests/<name>.lock.json): base image reference -> immutable digest.
// Written by `torchdock lock`, read by `render` to emit FROM name@sha256:...
// Format: {"schema": 1, "images": {"nvidia/cuda:12.1.1-runtime-ubuntu22.04":
//          {"digest": "sha256:<64 hex>", "media_type": "application/vnd.oci.image.index.v1+json"}}}
#include <optional>
#include <string>
#include <string_view>

#include "core/json/diagnostics.hpp"
#include "core/render/matrix.hpp"

namespace td {

// Parses a lock file; problems (bad JSON, bad references or digests) go to `diags`.
LockDigests parse_lockfile(std::string_view text, Diagnostics& diags);
struct LockEntry {
    std::string digest;
    std::string media_type;  // may be empty
};
std::string render_lockfile(const std::map<std::string, LockEntry>& entries);

// What the registry said about one locked reference, and what that means for the lock.
struct RegistryAnswer {
    // TimedOut: a request ran past its time limit, or was not sent because the overall
    // deadline had passed.
    enum class Kind { Found, NotFound, Failed, TimedOut } kind = Kind::Failed;
    std::string digest;   // Found
    std::string message;  // NotFound, Failed, TimedOut: the registry's (or the network's) words
};
struct LockVerdict {
    std::string status;  // "locked", "unchanged", "updated", "ok", "NOT LOCKED", "CHANGED upstream
                         // ...", "GONE: ...", "ERROR: ..."
    bool drift = false;  // `lock --check`: the lock no longer holds
    bool failure = false;  // the reference could not be resolved: its lock file stays as it was
};
// `previous` is the locked digest, if any; `check` is `lock --check`.
LockVerdict judge_lock(const RegistryAnswer& answer, const std::optional<std::string>& previous,
                       bool check);

}  // namespace td
