#pragma once
// Resolves a variant's whole Python set with uv (`uv pip compile --generate-hashes` for the
// variant's Python version and platform), the way `torchdock lock` pins it. uv is PyPI's
// `uv`, pinned by scripts/install-deps.sh; $TORCHDOCK_UV names another binary.
#include <chrono>
#include <cstdint>
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

// The cap on a wheel torchdock downloads to hash (far above any real one: torch's CUDA wheels
// are under 3 GiB).
inline constexpr std::uint64_t k_max_wheel_bytes = std::uint64_t{8} << 30;

struct UrlHash {
    std::string sha256;  // lowercase hex
    std::uint64_t bytes = 0;
};

// Downloads `url` (a wheel by URL: http or https, up to 5 redirects that stay http/https) and
// hashes it on the way with SHA-256; nothing is kept on disk or in memory but the hash. Timeouts:
// 15 s to connect, `total` for the whole download. Errors name the URL: Environment (refused,
// DNS, TLS, a status other than 200, interrupted), Timeout, Config (over `max_bytes`).
Result<UrlHash> hash_url(const std::string& url, std::chrono::milliseconds total,
                         std::uint64_t max_bytes = k_max_wheel_bytes);

}  // namespace td::engine
