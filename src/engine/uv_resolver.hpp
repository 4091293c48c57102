#pragma once
// Resolves a variant's whole Python set with uv (`uv pip compile --generate-hashes` for the
// variant's Python version and platform), the way `torchdock lock` pins it. uv is PyPI's
// `uv`, pinned by scripts/install-deps.sh; $TORCHDOCK_UV names another binary.
#include <chrono>
#include <string>

#include "core/build/settings.hpp"
#include "core/render/python_lock.hpp"
#include "util/result.hpp"

namespace td::engine {

// The pinned uv version the setup script installs (and the one the tests were run with).
inline constexpr const char* k_uv_version = "0.13.8";

// $TORCHDOCK_UV, else `uv` on PATH; an Environment error naming how to install it.
Result<std::string> find_uv();

struct UvAnswer {
    enum class Kind {
        Resolved,     // packages holds the set
        Unreachable,  // an index could not be reached (or none is set): not fully locked
        Conflict,     // the inputs cannot be satisfied: a manifest problem
        Failed,       // uv failed otherwise (or its output was not understood)
    } kind = Kind::Failed;
    std::vector<LockedPackage> packages;
    std::string message;  // uv's own words (its last error lines), or why it did not run
};

// Runs uv with no user configuration (--no-config, and the UV_* index variables cleared):
// only `indexes` decide where packages come from (PyPI by uv's default, or indexes.pypi; the
// PyTorch wheel index <indexes.pytorch>/<inputs.torch_index> first when the variant needs
// it, with uv's first-index rule so a package is never taken from a second index).
UvAnswer uv_resolve(const std::string& uv, const PythonLockInputs& inputs,
                    const IndexSettings& indexes, std::chrono::milliseconds timeout);

}  // namespace td::engine
