#pragma once
// Builds one rendered variant with BuildKit through a docker client: `docker buildx build
// --load` where the buildx plugin works, else a pre-23 client with DOCKER_BUILDKIT=1 (the
// Debian docker.io client has BuildKit built in). The plain progress stream goes to a log
// file; steps, cache hits and the failing step are read from it.
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace td::engine {

struct BuildBackend {
    std::string client;  // path of the docker client
    bool buildx = false;
    std::string describe() const;
};

// Environment error with the fix when no BuildKit-capable client is found, or when
// $DOCKER_HOST is Podman's API (no BuildKit there; builder.cpp says what was seen of Podman's
// own builder). The client may be forced with $TORCHDOCK_DOCKER.
Result<BuildBackend> detect_build_backend();

struct BuildRequest {
    std::string variant;
    std::string dockerfile_text;  // what to build (mirrors already applied)
    // Other files of the build context, staged beside the Dockerfile (its hash-locked
    // requirements.lock.txt): name -> content.
    std::map<std::string, std::string> context_files;
    std::vector<std::string> build_args;  // "K=V", passed as --build-arg
    std::string reference;                // image:tag to produce
    // --work-dir: <work_root>/<variant>/ holds the staged Dockerfile and build.log, created
    // without following symlinks (below the current directory when work_root is relative).
    std::string work_root;
    bool no_cache = false;
    std::string platform;  // --platform for BuildKit ("linux/arm64"); "": the engine's own
    // Set: the build's result is the files of its last stage, written into this directory
    // (--output type=local), not an image (`lock` reads apt's answer this way).
    std::string output_dir;
    // RUN steps on the host's network: only where the engine has no bridge network (they can
    // then reach the host's loopback services); otherwise BuildKit's own isolated network.
    bool host_network = true;
    std::string ca_cert;  // CA bundle handed to pip as the BuildKit secret "pip-ca"; empty: none
    std::string netrc;    // index credentials, the BuildKit secret "pip-netrc"; empty: none
    std::chrono::milliseconds timeout{std::chrono::hours(2)};
    // Progress: called with "[3/9] RUN ..." when a step starts.
    std::function<void(const std::string& step)> on_step;
};

struct BuildOutcome {
    bool ok = false;
    bool interrupted = false;
    bool timed_out = false;
    std::string image_id;  // sha256:...
    double seconds = 0;
    int steps = 0;                          // steps of the Dockerfile (the n of [i/n])
    int cached = 0;                         // steps answered from the cache
    std::string failed_step;                // "[4/8] RUN apt-get update ..."
    std::vector<std::string> failure_tail;  // last lines of the failing step
    std::string error;                      // BuildKit's final error line, or the client's
    std::string log_path;
};

BuildOutcome run_build(const BuildBackend& backend, const BuildRequest& request);

}  // namespace td::engine
