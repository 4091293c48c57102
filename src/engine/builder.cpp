#include "engine/builder.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "core/build/build_progress.hpp"
#include "engine/files.hpp"
#include "engine/process.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace fs = std::filesystem;

std::string BuildBackend::describe() const {
    return client + (buildx ? " buildx build" : " build (DOCKER_BUILDKIT=1)");
}

Result<BuildBackend> detect_build_backend() {
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

BuildOutcome run_build(const BuildBackend& backend, const BuildRequest& request) {
    BuildOutcome outcome;
    std::error_code ec;
    fs::create_directories(request.work_dir, ec);
    fs::path dockerfile = fs::path(request.work_dir) / "Dockerfile";
    outcome.log_path = (fs::path(request.work_dir) / "build.log").string();
    fs::path iidfile = fs::path(request.work_dir) / "image-id";
    fs::remove(iidfile, ec);
    std::ofstream staged(dockerfile, std::ios::binary);
    staged << request.dockerfile_text;
    staged.close();
    if (!staged) {
        outcome.error = "cannot write " + dockerfile.string() + " (is --work-dir writable?)";
        return outcome;
    }

    std::vector<std::string> argv = {backend.client};
    if (backend.buildx)
        argv.insert(argv.end(), {"buildx", "build", "--load"});
    else
        argv.push_back("build");
    argv.insert(argv.end(), {"--progress=plain", "--network=host", "-f", dockerfile.string(), "-t",
                             request.reference, "--iidfile", iidfile.string()});
    if (request.no_cache) argv.push_back("--no-cache");
    if (!request.ca_cert.empty())
        argv.insert(argv.end(), {"--secret", "id=pip-ca,src=" + request.ca_cert});
    argv.push_back(request.work_dir);  // context: only the Dockerfile (rendered files copy nothing)

    std::ofstream log(outcome.log_path, std::ios::binary);
    if (!log) {
        outcome.error = "cannot write the build log " + outcome.log_path;
        return outcome;
    }
    BuildProgress progress;
    std::mutex log_mutex;
    ProcessSpec spec;
    spec.argv = argv;
    spec.env = environment_with({{"DOCKER_BUILDKIT", "1"}, {"BUILDKIT_PROGRESS", "plain"}});
    spec.timeout = request.timeout;
    spec.on_line = [&](const std::string& line, bool) {
        std::lock_guard lock(log_mutex);
        log << line << '\n';
        if (auto started = progress.feed(line); started && request.on_step)
            request.on_step(*started);
    };
    auto result = run_process(spec);
    log.flush();
    if (!result) {
        outcome.error = result.error().message;
        return outcome;
    }
    outcome.seconds = result->seconds;
    outcome.steps = progress.steps();
    outcome.cached = progress.cached();
    outcome.interrupted = result->outcome == ProcessResult::Outcome::Interrupted;
    outcome.timed_out = result->outcome == ProcessResult::Outcome::TimedOut;
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
