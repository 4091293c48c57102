#pragma once
// Lock files (manifests/<name>.lock.json), written by `torchdock lock`, read by `render`:
// each base image reference -> its immutable digest (FROM name@sha256:...), and each
// variant's hash-locked Python set (python_lock.hpp).
// Format: {"schema": 1,
//          "images": {"nvidia/cuda:12.1.1-runtime-ubuntu22.04": {"digest": "sha256:<64 hex>",
//                     "media_type": "application/vnd.oci.image.index.v1+json"}},
//          "python": {"<variant>": {"inputs": {"requirements": ["torch==2.9.1", ...],
//                     "python": "3.11", "platform": "x86_64-manylinux_2_36", "torch_index": ""},
//                     "packages": {"torch": {"version": "2.9.1", "hashes": ["sha256:..."],
//                                            "required_by": ["torchvision"]}}}}}
//          "build_python": {"<variant>": ... as "python": the build stage's set},
//          "apt": {"<variant>": {"inputs": {"base": "debian:bookworm@sha256:...",
//                  "packages": ["curl"]}, "resolved": {"curl": "7.88.1-10+deb12u14", ...},
//                  "present": {}}}}
// "python" and "build_python" are optional (lock files written before it have none). "required_by"
// (the locked packages that required this one, from uv's `# via` annotations; [] for a package only
// the inputs ask for) is on every package or on none: a lock written before torchdock recorded the
// graph has none, parses (so `lock` can re-lock it) and is refused by render. With the graph, a
// package that nothing reachable from the inputs required is refused here.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/json/diagnostics.hpp"
#include "core/render/apt_lock.hpp"
#include "core/render/matrix.hpp"
#include "core/render/python_lock.hpp"

namespace td {

struct LockFile {
    LockDigests images;
    // image reference -> platform -> its manifest's digest in the index (LockEntry.platforms)
    std::map<std::string, std::map<std::string, std::string>> image_platforms;
    std::map<std::string, PythonLock> python;  // variant name -> its lock
    std::map<std::string, AptLock> apt;        // variant name -> its Debian packages
    // variant name -> the Python set of its build stage (extensions built from source)
    std::map<std::string, PythonLock> build_python;
};

// Parses a lock file; problems (bad JSON, bad references or digests, a package, version or
// hash that is not one) go to `diags`, with the JSON path of each.
LockFile parse_lockfile(std::string_view text, Diagnostics& diags);
struct LockEntry {
    std::string digest;
    std::string media_type;  // may be empty
    // A base of a manifest built for several platforms (or another than linux/amd64): each
    // of those platforms with its manifest's digest in the index (render/platforms.hpp).
    std::map<std::string, std::string> platforms = {};
};
std::string render_lockfile(const std::map<std::string, LockEntry>& images,
                            const std::map<std::string, PythonLock>& python = {},
                            const std::map<std::string, AptLock>& apt = {},
                            const std::map<std::string, PythonLock>& build_python = {});

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
