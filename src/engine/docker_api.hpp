#pragma once
// The Docker Engine API over its UNIX socket (default /var/run/docker.sock), TCP with TLS
// (tcp://HOST:2376, client certificates), or ssh (ssh://USER@HOST: `docker system
// dial-stdio` on the far side, engine/ssh_dial), chosen as the Docker CLI chooses
// (DOCKER_HOST, contexts; core/build/engine_endpoint). Podman's Docker-compatible socket
// speaks the same API.
// Every call has a named timeout, cut to what a Deadline leaves (`with_deadline`: node-check
// bounds every engine call by its --deadline); the engine's own error message is decoded.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/build/engine_endpoint.hpp"
#include "engine/http.hpp"
#include "util/deadline.hpp"
#include "util/result.hpp"

namespace td::engine {

struct EngineVersion {
    std::string version, api_version, os, arch;
    // "podman" when the first component is "Podman Engine" (Podman's Docker-compatible API),
    // else "docker".
    std::string name = "docker";
};

struct ImageInfo {
    std::string id;  // sha256:...
    long long size = 0;
    std::map<std::string, std::string> labels;
    std::vector<std::string> env;
    std::vector<std::string> repo_tags;
    std::vector<std::string> entrypoint;    // Config.Entrypoint; empty when the image sets none
    std::vector<std::string> cmd;           // Config.Cmd
    std::string user;                       // Config.User ("" = root)
    std::string working_dir;                // Config.WorkingDir ("" = /)
    std::vector<std::string> layers;        // RootFS.Layers: the diff IDs, bottom first
    std::vector<std::string> repo_digests;  // RepoDigests: "repo@sha256:..." it was pulled as
    std::string os, architecture, variant;  // "linux", "arm64", "v8" ("" when not recorded)
    std::vector<std::string> volumes;       // Config.Volumes: paths a container gets a volume at
    // "linux/arm64" ("linux/arm64/v8" with a variant); "" when the image records no
    // architecture.
    std::string platform() const;
};

// What GET /info says of the engine: its runtimes ("runc", "nvidia") and the architecture of
// the host it runs on ("x86_64", "aarch64": uname's name).
struct EngineInfo {
    std::vector<std::string> runtimes;
    std::string architecture;
};

struct ContainerSpec {
    std::string image;
    std::vector<std::string> cmd;
    // nullopt keeps the image's ENTRYPOINT; an empty vector removes it (the command runs as
    // given); otherwise it replaces it.
    std::optional<std::vector<std::string>> entrypoint;
    std::vector<std::string> env;  // "NAME=value", over the image's own Env
    std::map<std::string, std::string> labels;
    std::vector<std::string> binds;  // "host:container:ro"
    std::string network_mode = "none";
    long long shm_size = 0;  // bytes; 0 = engine default
    int gpus = 0;            // GPUs to request (DeviceRequests): 0 none, -1 all, N the first N
    int cpu_shares =
        0;  // relative CPU weight (CpuShares; the engine's default is 1024); 0 = default
    // Confinement (probe containers, engine/container_run): every capability dropped but
    // those listed, no-new-privileges, a pids and a memory limit, a bounded json log, a
    // read-only root with a bounded tmpfs at /tmp. Off (0, false, empty) by default.
    bool confined = false;
    std::vector<std::string> cap_add;
    long long pids_limit = 0;
    long long memory_bytes = 0;
    std::string log_max_size;  // "16m"
    std::string tmp_size;      // "512m"
    // A bounded tmpfs at each of these (the image's VOLUMEs: without it each would be an
    // anonymous volume on the engine's disk, writable past the read-only root).
    std::vector<std::string> tmpfs_over;
};

// The JSON body of POST /containers/create for `spec` (exposed for tests).
std::string container_create_body(const ContainerSpec& spec);
// GET /version's answer; Environment error when it is not the JSON object the API gives.
Result<EngineVersion> parse_engine_version(const std::string& body);

// The engine the Docker CLI would use (core/build/engine_endpoint): DOCKER_HOST, else
// DOCKER_CONTEXT, else config.json's currentContext, read from $DOCKER_CONFIG or ~/.docker.
Result<EngineEndpoint> engine_endpoint_from_environment();

class DockerApi {
  public:
    // The engine from the environment (engine_endpoint_from_environment); Usage error for an
    // address torchdock does not speak, or plain TCP not asked for.
    static Result<DockerApi> from_environment();
    explicit DockerApi(std::string socket_path) : m_kind(std::make_shared<Kind>()) {
        m_endpoint.socket = std::move(socket_path);
    }
    explicit DockerApi(EngineEndpoint endpoint)
        : m_endpoint(std::move(endpoint)), m_kind(std::make_shared<Kind>()) {}

    // How the engine is reached, for messages ("unix:///run/docker.sock", "tcp://h:2376 (TLS)").
    std::string socket() const { return m_endpoint.describe(); }
    const EngineEndpoint& endpoint() const { return m_endpoint; }

    // A copy (sharing what was learnt of the engine) whose every request, connection and ping
    // included, has its time-out cut to what `deadline` leaves; cleanup requests (removing a
    // container, listing them for removal) may also use half its reserve. A request with no
    // time left is not sent: an ErrorKind::Timeout that says so.
    DockerApi with_deadline(const Deadline& deadline) const;
    const Deadline& deadline() const { return m_deadline; }

    // One clear line when the engine cannot be reached: missing socket, no permission,
    // nothing listening; ErrorKind::Environment.
    Status ping() const;
    Result<EngineVersion> version() const;
    // Whether the socket is Podman's Docker-compatible API (GET /version, asked once per
    // DockerApi and its copies); false when the engine cannot say.
    bool is_podman() const;
    // The OCI runtimes the engine offers ("runc", "nvidia", ...) and its host's architecture.
    Result<EngineInfo> info() const;
    // Whether the engine has a network of that name ("bridge": dockerd started with
    // --bridge=none has none, and a build's RUN steps then need the host's network).
    Result<bool> has_network(const std::string& name) const;
    Result<std::optional<ImageInfo>> inspect_image(
        const std::string& ref) const;  // nullopt: no such image
    Status remove_image(const std::string& ref) const;
    Status tag_image(const std::string& ref, const std::string& repo, const std::string& tag) const;
    // Pushes repo:tag; the engine's streamed error, if any, becomes the Error.
    Status push_image(const std::string& repo, const std::string& tag) const;

    // Named volumes (a remote engine's copy of the probes, engine/remote_probes).
    Result<bool> has_volume(const std::string& name) const;
    Status create_volume(const std::string& name,
                         const std::map<std::string, std::string>& labels) const;
    Status remove_volume(const std::string& name) const;
    // Unpacks `tar` at `path` in a (created, not started) container: PUT .../archive.
    Status put_archive(const std::string& id, const std::string& path,
                       const std::string& tar) const;

    Result<std::string> create_container(const ContainerSpec& spec) const;  // container id
    Status start_container(const std::string& id) const;
    Result<int> wait_container(const std::string& id,
                               std::chrono::milliseconds timeout) const;  // exit code
    // stdout and stderr of the last k_max_log_lines lines; an Error when they exceed
    // k_max_log_bytes (a container flooding its output cannot fill memory). Podman 4's `tail`
    // counts each 8 KiB piece of a long line as a line (a probe's JSON result would come back
    // cut), so from Podman the whole log is read, under the same byte bound; `whole` reads
    // the whole log from Docker too (probe-batch's frames: it bounds its own output).
    static constexpr int k_max_log_lines = 1000;
    static constexpr std::size_t k_max_log_bytes = std::size_t{8} << 20;
    Result<std::pair<std::string, std::string>> container_logs(const std::string& id,
                                                               bool whole = false) const;
    // Force-removes a container; also after Ctrl-C (the request is not aborted).
    Status remove_container(const std::string& id) const;
    // Containers (all states) carrying `label` ("key=value" or "key"): id and that label's
    // value; also after Ctrl-C.
    Result<std::vector<std::pair<std::string, std::string>>> containers_with_label(
        const std::string& label) const;

  private:
    EngineEndpoint m_endpoint;
    struct Kind {
        std::once_flag asked;
        bool podman = false;
    };
    std::shared_ptr<Kind> m_kind;
    Deadline m_deadline;  // unbounded unless with_deadline
    // `wanted` cut by the deadline; an Error when none is left for `what`.
    Result<std::chrono::milliseconds> budget(std::chrono::milliseconds wanted, bool cleanup,
                                             const std::string& what) const;
    Result<HttpResponse> call(const std::string& method, const std::string& path,
                              const std::string& body = {},
                              std::chrono::milliseconds timeout = std::chrono::seconds(30),
                              std::vector<std::string> headers = {}, bool cleanup = false) const;
    Error api_error(const HttpResponse& r, const std::string& what) const;
    // Whether GET /<kind>s/<name> finds it ("network", "volume").
    Result<bool> exists(const std::string& kind, const std::string& name) const;
    // A request to `path` on this engine, over its transport (socket, TLS, ssh).
    HttpRequest request(const std::string& path) const;
};

}  // namespace td::engine
