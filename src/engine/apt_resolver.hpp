#pragma once
// Resolves a variant's Debian packages inside its pinned base image: a BuildKit build of
// core/render/apt_lock's resolution Dockerfile (`apt-get update`, then `apt-get install
// --simulate`) whose only output is apt's answer, read back as text. The base's own package
// index decides, as it will when the image is built.
#include <chrono>
#include <string>
#include <vector>

#include "engine/builder.hpp"
#include "util/result.hpp"

namespace td::engine {

struct AptResolveRequest {
    std::string variant;
    std::string base_from;  // what FROM names: the base by digest, through a mirror if set
    std::vector<std::string> packages;
    std::string work_root = ".torchdock/lock";  // <work_root>/<variant>/ holds its files
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
};

// apt's output. Errors: Environment when the build could not run or apt failed (with the
// last lines of its log), Timeout past the time limit.
Result<std::string> resolve_apt_packages(const BuildBackend& backend, const AptResolveRequest& req);

}  // namespace td::engine
