#include "engine/builder.hpp"

#include <filesystem>
#include <map>
#include <mutex>

#include "core/build/build_progress.hpp"
#include "engine/docker_api.hpp"
#include "engine/files.hpp"
#include "engine/process.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;

std::string BuildBackend::describe() const {
    return client + (buildx ? " buildx build" : " build (DOCKER_BUILDKIT=1)");
}

namespace {

// Podman's Docker-compatible API serves no BuildKit (a docker client's BuildKit session is
// answered 404: "failed to dial gRPC: unable to upgrade to h2c"), and Podman's own builder
// does not build the rendered Dockerfiles as written: seen with Podman 4.3.1 (buildah 1.28),
// the second RUN with a `sharing=locked` cache mount waits forever, a `sharing=shared` one
// finds apt's http method gone, and SHELL is dropped in its default OCI format.
Error podman_refusal(const DockerApi& api) {
    auto v = api.version();
    return Error{ErrorKind::Environment,
                 "DOCKER_HOST is Podman's Docker-compatible API (" + api.socket() +
                     (v ? ", Podman " + v->version : std::string()) +
                     "), which serves no BuildKit, and Podman's own builder does not build the "
                     "rendered Dockerfiles as written (RUN --mount caches with sharing=locked "
                     "hang on their second use; SHELL is dropped): build with a Docker engine, "
                     "then move the image (`docker save IMAGE | podman load`, or push and "
                     "pull); validate, doctor, preflight, node-check, fleet and allreduce work "
                     "through Podman's API"};
}

}  // namespace

Result<BuildBackend> detect_build_backend() {
    if (auto api = DockerApi::from_environment(); api && api->is_podman())
        return podman_refusal(api.value());
    std::vector<std::string> candidates;
    if (const char* forced = std::getenv("TORCHDOCK_DOCKER"); forced && *forced)
        candidates.push_back(forced);
    else
        candidates = {"/usr/bin/docker", "docker"};
    auto env = environment_with({});
    for (const auto& c : candidates) {
        std::string client = find_program(c);
        if (client.empty()) continue;
        auto buildx =
            run_process({{client, "buildx", "version"}, env, std::chrono::seconds(20), {}, {}});
        if (buildx && buildx->ok()) return BuildBackend{client, true};
        // Clients before 23.0 run BuildKit themselves when DOCKER_BUILDKIT=1.
        auto ver = run_process({{client, "version", "--format", "{{.Client.Version}}"},
                                env,
                                std::chrono::seconds(20),
                                {},
                                {}});
        if (ver && !ver->out.empty()) {
            int major = std::atoi(ver->out.c_str());
            if (major > 0 && major < 23) return BuildBackend{client, false};
        }
    }
    return Error{ErrorKind::Environment, "no BuildKit-capable docker client found (tried " +
                                             join(candidates, ", ") +
                                             "): install Debian's docker.io (its client has "
                                             "BuildKit built in) or the docker-buildx plugin, "
                                             "or point $TORCHDOCK_DOCKER at one"};
}

namespace {

// Where a variant's build files go: (root, path below it). A relative --work-dir is taken
// below the current directory, so no component of it may be a symlink either.
std::pair<fs::path, std::string> work_location(const BuildRequest& request) {
    fs::path root = fs::path(request.work_root).lexically_normal();
    bool climbs = false;
    for (const auto& part : root) climbs = climbs || part == "..";
    if (root.is_relative() && !climbs) return {".", (root / request.variant).generic_string()};
    return {fs::absolute(root), request.variant};
}

}  // namespace

BuildOutcome run_build(const BuildBackend& backend, const BuildRequest& request) {
    BuildOutcome outcome;
    auto [root, rel] = work_location(request);
    fs::path work_dir = root == "." ? fs::path(rel) : root / rel;
    fs::path dockerfile = work_dir / "Dockerfile";
    fs::path iidfile = work_dir / "image-id";
    std::map<std::string, std::string> staged = {{rel + "/Dockerfile", request.dockerfile_text}};
    for (const auto& [name, text] : request.context_files) staged[rel + "/" + name] = text;
    if (auto st = write_files(root, staged, MissingDir::Create); !st) {
        outcome.error = st.error().message;
        if (st.error().message.find("Permission denied") != std::string::npos ||
            st.error().message.find("Read-only") != std::string::npos)
            outcome.error += " (is --work-dir writable?)";
        return outcome;
    }
    std::error_code ec;
    fs::remove(iidfile, ec);
    auto log = OutputFile::create(root, rel + "/build.log");
    if (!log) {
        outcome.error = log.error().message;
        return outcome;
    }
    outcome.log_path = log->path();

    const bool to_files = !request.output_dir.empty();
    std::vector<std::string> argv = {backend.client};
    if (backend.buildx)
        argv.insert(argv.end(), {"buildx", "build"});
    else
        argv.push_back("build");
    if (backend.buildx && !to_files) argv.push_back("--load");
    argv.push_back("--progress=plain");
    if (request.host_network) argv.push_back("--network=host");
    argv.insert(argv.end(), {"-f", dockerfile.string()});
    if (to_files)
        argv.insert(argv.end(), {"--output", "type=local,dest=" + request.output_dir});
    else
        argv.insert(argv.end(), {"-t", request.reference, "--iidfile", iidfile.string()});
    if (request.no_cache) argv.push_back("--no-cache");
    if (!request.platform.empty()) argv.insert(argv.end(), {"--platform", request.platform});
    if (!request.ca_cert.empty())
        argv.insert(argv.end(), {"--secret", "id=pip-ca,src=" + request.ca_cert});
    if (!request.netrc.empty())
        argv.insert(argv.end(), {"--secret", "id=pip-netrc,src=" + request.netrc});
    for (const auto& arg : request.build_args) argv.insert(argv.end(), {"--build-arg", arg});
    // The context: the Dockerfile and its context files (rendered files copy nothing else).
    argv.push_back(work_dir.string());

    BuildProgress progress;
    std::mutex log_mutex;
    ProcessSpec spec;
    spec.argv = argv;
    spec.env = environment_with({{"DOCKER_BUILDKIT", "1"}, {"BUILDKIT_PROGRESS", "plain"}});
    spec.timeout = request.timeout;
    spec.on_line = [&](const std::string& line, bool) {
        std::lock_guard lock(log_mutex);
        (void)log->write(line + '\n');
        if (auto started = progress.feed(line); started && request.on_step)
            request.on_step(*started);
    };
    auto result = run_process(spec);
    if (!result) {
        outcome.error = result.error().message;
        return outcome;
    }
    outcome.seconds = result->seconds;
    outcome.steps = progress.steps();
    outcome.cached = progress.cached();
    outcome.interrupted = result->outcome == ProcessResult::Outcome::Interrupted;
    outcome.timed_out = result->outcome == ProcessResult::Outcome::TimedOut;
    if (result->ok() && to_files) {
        outcome.ok = true;
        return outcome;
    }
    if (result->ok()) {
        auto id = read_text_file(iidfile);
        if (id) outcome.image_id = id.value();
        while (!outcome.image_id.empty() &&
               std::isspace(static_cast<unsigned char>(outcome.image_id.back())))
            outcome.image_id.pop_back();
        outcome.ok = !outcome.image_id.empty();
        if (!outcome.ok) outcome.error = "the build finished but wrote no image id";
        return outcome;
    }
    outcome.failed_step = progress.failed_step();
    outcome.failure_tail = progress.failure_tail(15);
    outcome.error = progress.final_error();
    if (outcome.error.empty()) {
        std::string err = result->err.empty() ? result->out : result->err;
        auto lines = split(err, '\n');
        while (!lines.empty() && lines.back().empty()) lines.pop_back();
        outcome.error = lines.empty() ? result->describe() : lines.back();
    }
    if (outcome.interrupted) outcome.error = "interrupted";
    if (outcome.timed_out)
        outcome.error = "timed out after " + std::to_string(request.timeout.count() / 1000) + " s";
    return outcome;
}

}  // namespace td::engine
