#include "engine/apt_resolver.hpp"

#include <filesystem>

#include "core/render/apt_lock.hpp"
#include "engine/files.hpp"
#include "util/strings.hpp"

namespace td::engine {

Result<std::string> resolve_apt_packages(const BuildBackend& backend,
                                         const AptResolveRequest& req) {
    BuildRequest build;
    build.variant = req.variant + "-apt";
    build.dockerfile_text = apt_resolution_dockerfile(req.base_from, req.packages);
    build.work_root = req.work_root;
    build.timeout = req.timeout;
    // apt-get update reaches the distribution's archive (or the mirror the base names), and
    // does so every time: a cached step would answer with the archive of an earlier day.
    build.host_network = true;
    build.no_cache = true;
    std::filesystem::path out = std::filesystem::path(req.work_root) / build.variant / "out";
    std::error_code ec;
    std::filesystem::remove_all(out, ec);
    build.output_dir = out.string();
    BuildOutcome outcome = run_build(backend, build);
    if (outcome.timed_out)
        return Error{ErrorKind::Timeout, "resolving the apt packages of " + req.variant +
                                             " ran past its time limit (log: " + outcome.log_path +
                                             ")"};
    if (!outcome.ok) {
        std::string tail =
            outcome.failure_tail.empty() ? outcome.error : join(outcome.failure_tail, " | ");
        return Error{ErrorKind::Environment, "resolving the apt packages of " + req.variant +
                                                 " in " + req.base_from + " failed: " + tail +
                                                 " (log: " + outcome.log_path + ")"};
    }
    return read_text_file(out / k_apt_resolution_file);
}

}  // namespace td::engine
