#include "engine/docker_api.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/files.hpp"
#include "engine/ssh_dial.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

using json = nlohmann::json;
constexpr const char* k_api = "/v1.41";

// Docker's log stream without a TTY: frames of [stream(1), 0,0,0, size(4, big endian)] + payload.
std::pair<std::string, std::string> demux(const std::string& raw) {
    std::pair<std::string, std::string> out;
    std::size_t i = 0;
    while (i + 8 <= raw.size()) {
        unsigned char stream = static_cast<unsigned char>(raw[i]);
        std::size_t len = (std::size_t(static_cast<unsigned char>(raw[i + 4])) << 24) |
                          (std::size_t(static_cast<unsigned char>(raw[i + 5])) << 16) |
                          (std::size_t(static_cast<unsigned char>(raw[i + 6])) << 8) |
                          std::size_t(static_cast<unsigned char>(raw[i + 7]));
        if (i + 8 + len > raw.size()) break;
        (stream == 2 ? out.second : out.first) += raw.substr(i + 8, len);
        i += 8 + len;
    }
    return out;
}

}  // namespace

Result<EngineEndpoint> engine_endpoint_from_environment() {
    EngineSettings s;
    for (const char* name : {"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_TLS_VERIFY", "DOCKER_TLS",
                             "DOCKER_CERT_PATH", "TORCHDOCK_ENGINE_PLAIN_TCP"})
        if (const char* v = std::getenv(name); v && *v) s.env[name] = v;
    if (const char* d = std::getenv("DOCKER_CONFIG"); d && *d)
        s.docker_config_dir = d;
    else if (const char* h = std::getenv("HOME"); h && *h)
        s.docker_config_dir = std::string(h) + "/.docker";
    if (!s.docker_config_dir.empty())
        if (auto text = read_text_file(s.docker_config_dir + "/config.json", std::size_t{1} << 20))
            s.config_json = text.value();
    if (std::string context = context_in_use(s); !context.empty()) {
        std::string key = context_key(context);
        if (auto meta = read_text_file(s.docker_config_dir + "/contexts/meta/" + key + "/meta.json",
                                       std::size_t{1} << 20))
            s.context_meta[context] = meta.value();
        struct stat st {};
        s.context_tls[context] =
            ::stat((s.docker_config_dir + "/contexts/tls/" + key + "/docker").c_str(), &st) == 0;
    }
    auto e = resolve_engine_endpoint(s);
    // TLS material named but absent: said now, not as a TLS failure of the first request.
    if (e && e->tls)
        for (const auto& file : {e->verify ? e->ca_file : std::string(), e->cert_file, e->key_file})
            if (struct stat st{}; !file.empty() && ::stat(file.c_str(), &st) != 0)
                return Error{ErrorKind::Environment,
                             "the engine at " + e->describe() + " is TLS and " + file +
                                 " does not exist (DOCKER_CERT_PATH names the directory with "
                                 "ca.pem, cert.pem and key.pem)"};
    return e;
}

Result<DockerApi> DockerApi::from_environment() {
    auto endpoint = engine_endpoint_from_environment();
    if (!endpoint) return endpoint.error();
    return DockerApi(endpoint.value());
}

HttpRequest DockerApi::request(const std::string& path) const {
    HttpRequest req;
    switch (m_endpoint.kind) {
        case EngineEndpoint::Kind::Unix:
            req.url = "http://localhost" + path;
            req.unix_socket = m_endpoint.socket;
            break;
        case EngineEndpoint::Kind::Tcp:
            req.url = (m_endpoint.tls ? "https://" : "http://") + m_endpoint.host + path;
            if (m_endpoint.tls) {
                req.protocols = "https";
                req.tls_ca_file = m_endpoint.verify ? m_endpoint.ca_file : "";
                req.tls_cert_file = m_endpoint.cert_file;
                req.tls_key_file = m_endpoint.key_file;
                req.tls_verify = m_endpoint.verify;
            }
            break;
        case EngineEndpoint::Kind::Ssh: {
            // The engine's API through `ssh HOST docker system dial-stdio` (engine/ssh_dial),
            // reached as a local socket; one that cannot be made fails the request.
            req.url = "http://localhost" + path;
            auto socket = ssh_engine_socket(m_endpoint);
            req.unix_socket = socket ? socket.value() : std::string("/nonexistent/ssh-bridge");
            break;
        }
    }
    return req;
}

DockerApi DockerApi::with_deadline(const Deadline& deadline) const {
    DockerApi copy = *this;
    copy.m_deadline = deadline;
    return copy;
}

Result<std::chrono::milliseconds> DockerApi::budget(std::chrono::milliseconds wanted, bool cleanup,
                                                    const std::string& what) const {
    auto t = cleanup ? m_deadline.cap_cleanup(wanted) : m_deadline.cap(wanted);
    if (m_deadline.bounded() && t <= std::chrono::milliseconds{0})
        return Error{ErrorKind::Timeout, what + " was not sent to the engine at " +
                                             m_endpoint.describe() +
                                             ": the deadline left no time for it"};
    return t;
}

Result<HttpResponse> DockerApi::call(const std::string& method, const std::string& path,
                                     const std::string& body, std::chrono::milliseconds timeout,
                                     std::vector<std::string> headers, bool cleanup) const {
    auto time = budget(timeout, cleanup, method + " " + path.substr(0, path.find('?')));
    if (!time) return time.error();
    HttpRequest req = request(k_api + path);
    req.cleanup = cleanup;
    req.method = method;
    req.body = body;
    req.timeouts.total = time.value();
    req.timeouts.connect = std::chrono::milliseconds(5000);
    if (time.value().count() > 0)
        req.timeouts.connect = std::min(req.timeouts.connect, time.value());
    req.headers = std::move(headers);
    bool typed = false;
    for (const auto& h : req.headers) typed = typed || to_lower(h.substr(0, 13)) == "content-type:";
    if (!body.empty() && !typed) req.headers.push_back("Content-Type: application/json");
    auto r = http_request(req);
    if (!r && r.error().kind == ErrorKind::Environment) {
        if (auto st = ping(); !st) return st.error();
    }
    return r;
}

Error DockerApi::api_error(const HttpResponse& r, const std::string& what) const {
    std::string message;
    try {
        message = json::parse(r.body).value("message", "");
    } catch (const json::exception&) {
        message = r.body;
    }
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Error{ErrorKind::Environment, what + ": engine answered " + std::to_string(r.status) +
                                             (message.empty() ? "" : ": " + message)};
}

Result<bool> DockerApi::exists(const std::string& kind, const std::string& name) const {
    auto r = call("GET", "/" + kind + "s/" + url_encode(name));
    if (!r) return r.error();
    if (r->status == 404) return false;
    if (r->status != 200) return api_error(r.value(), "inspect " + kind + " " + name);
    return true;
}

Result<bool> DockerApi::has_volume(const std::string& name) const { return exists("volume", name); }

Status DockerApi::create_volume(const std::string& name,
                                const std::map<std::string, std::string>& labels) const {
    json body = {{"Name", name}, {"Labels", labels}};
    auto r = call("POST", "/volumes/create", body.dump());
    if (!r) return r.error();
    if (r->status != 201 && r->status != 200) return api_error(r.value(), "create volume " + name);
    return ok_status();
}

Status DockerApi::remove_volume(const std::string& name) const {
    auto r = call("DELETE", "/volumes/" + url_encode(name) + "?force=1", {},
                  std::chrono::seconds(30), {}, true);
    if (!r) return r.error();
    if (r->status != 204 && r->status != 404) return api_error(r.value(), "remove volume " + name);
    return ok_status();
}

Status DockerApi::put_archive(const std::string& id, const std::string& path,
                              const std::string& tar) const {
    auto r = call("PUT", "/containers/" + id + "/archive?path=" + url_encode(path), tar,
                  std::chrono::minutes(5), {"Content-Type: application/x-tar"});
    if (!r) return r.error();
    if (r->status != 200) return api_error(r.value(), "copy into container " + id.substr(0, 12));
    return ok_status();
}

Status DockerApi::ping() const {
    const std::string& m_socket = m_endpoint.socket;
    struct stat st {};
    if (m_endpoint.kind == EngineEndpoint::Kind::Ssh) {
        if (auto bridge = ssh_engine_socket(m_endpoint); !bridge) return bridge.error();
    } else if (m_endpoint.kind == EngineEndpoint::Kind::Tcp) {
        // A remote engine: only its answer tells.
    } else if (::stat(m_socket.c_str(), &st) != 0)
        return Error{
            ErrorKind::Environment,
            "no Docker engine: " + m_socket +
                " does not exist (start dockerd, or set DOCKER_HOST=unix:///path/to/docker.sock)"};
    else if (!S_ISSOCK(st.st_mode))
        return Error{ErrorKind::Environment, "no Docker engine: " + m_socket + " is not a socket"};
    else if (::access(m_socket.c_str(), R_OK | W_OK) != 0)
        return Error{ErrorKind::Environment,
                     "no permission on " + m_socket +
                         " (run as root, or add your user to the docker group and log in again)"};
    auto time = budget(std::chrono::seconds(10), false, "GET /_ping");
    if (!time) return time.error();
    HttpRequest req = request("/_ping");
    req.timeouts.total = time.value();
    req.timeouts.connect =
        std::min<std::chrono::milliseconds>(std::chrono::seconds(3), time.value());
    auto r = http_request(req);
    if (!r)
        return Error{ErrorKind::Environment,
                     m_endpoint.kind == EngineEndpoint::Kind::Ssh
                         ? "the Docker engine at " + m_endpoint.describe() +
                               " is not answering through `ssh " + m_endpoint.host +
                               " docker system dial-stdio` (ssh's own message, if any, is above; "
                               "the remote user needs the docker CLI and access to its engine)"
                         : "the Docker engine at " + m_endpoint.describe() + " is not answering (" +
                               r.error().message + "); is dockerd running?"};
    if (r->status != 200) return api_error(r.value(), "ping");
    return ok_status();
}

Result<EngineVersion> parse_engine_version(const std::string& body) {
    try {
        auto j = json::parse(body);
        EngineVersion v{j.value("Version", ""), j.value("ApiVersion", ""), j.value("Os", ""),
                        j.value("Arch", "")};
        if (j.contains("Components") && j["Components"].is_array() && !j["Components"].empty() &&
            j["Components"][0].is_object() &&
            j["Components"][0].value("Name", "") == "Podman Engine")
            v.name = "podman";
        return v;
    } catch (const json::exception& e) {
        return Error{ErrorKind::Environment,
                     std::string("version: unreadable answer: ") + e.what()};
    }
}

Result<EngineVersion> DockerApi::version() const {
    auto r = call("GET", "/version");
    if (!r) return r.error();
    if (r->status != 200) return api_error(r.value(), "version");
    return parse_engine_version(r->body);
}

bool DockerApi::is_podman() const {
    std::call_once(m_kind->asked, [this] {
        auto v = version();
        m_kind->podman = v && v->name == "podman";
    });
    return m_kind->podman;
}

Result<EngineInfo> DockerApi::info() const {
    auto r = call("GET", "/info");
    if (!r) return r.error();
    if (r->status != 200) return api_error(r.value(), "info");
    EngineInfo out;
    try {
        auto j = json::parse(r->body);
        if (j.contains("Runtimes") && j["Runtimes"].is_object())
            for (const auto& [name, value] : j["Runtimes"].items()) out.runtimes.push_back(name);
        if (j.contains("Architecture") && j["Architecture"].is_string())
            out.architecture = j["Architecture"].get<std::string>();
    } catch (const json::exception& e) {
        return Error{ErrorKind::Environment, std::string("info: unreadable answer: ") + e.what()};
    }
    return out;
}

Result<bool> DockerApi::has_network(const std::string& name) const {
    return exists("network", name);
}

Result<std::optional<ImageInfo>> DockerApi::inspect_image(const std::string& ref) const {
    auto r = call("GET", "/images/" + ref + "/json");
    if (!r) return r.error();
    if (r->status == 404) return std::optional<ImageInfo>{};
    if (r->status != 200) return api_error(r.value(), "inspect " + ref);
    try {
        auto j = json::parse(r->body);
        ImageInfo info;
        info.id = j.value("Id", "");
        info.size = j.value("Size", 0LL);
        if (j.contains("Config") && j["Config"].contains("Labels") &&
            j["Config"]["Labels"].is_object())
            info.labels = j["Config"]["Labels"].get<std::map<std::string, std::string>>();
        if (j.contains("RepoTags") && j["RepoTags"].is_array())
            info.repo_tags = j["RepoTags"].get<std::vector<std::string>>();
        if (j.contains("Config") && j["Config"].contains("Env") && j["Config"]["Env"].is_array())
            info.env = j["Config"]["Env"].get<std::vector<std::string>>();
        if (j.contains("Config") && j["Config"].contains("Volumes") &&
            j["Config"]["Volumes"].is_object())
            for (const auto& [path, unused] : j["Config"]["Volumes"].items())
                info.volumes.push_back(path);
        auto strings = [](const json& parent, const char* key) {
            std::vector<std::string> out;
            if (parent.is_object() && parent.contains(key) && parent[key].is_array())
                for (const auto& x : parent[key])
                    if (x.is_string()) out.push_back(x.get<std::string>());
            return out;
        };
        const json config = j.value("Config", json::object());
        info.entrypoint = strings(config, "Entrypoint");
        info.cmd = strings(config, "Cmd");
        if (config.is_object() && config.contains("User") && config["User"].is_string())
            info.user = config["User"].get<std::string>();
        if (config.is_object() && config.contains("WorkingDir") && config["WorkingDir"].is_string())
            info.working_dir = config["WorkingDir"].get<std::string>();
        info.layers = strings(j.value("RootFS", json::object()), "Layers");
        info.repo_digests = strings(j, "RepoDigests");
        auto text = [&](const char* key) {
            return j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                         : std::string();
        };
        info.os = text("Os");
        info.architecture = text("Architecture");
        info.variant = text("Variant");
        return std::optional<ImageInfo>(info);
    } catch (const json::exception& e) {
        return Error{ErrorKind::Environment, "inspect " + ref + ": unreadable answer: " + e.what()};
    }
}

std::string ImageInfo::platform() const {
    if (architecture.empty()) return {};
    return (os.empty() ? std::string("linux") : os) + "/" + architecture +
           (variant.empty() ? "" : "/" + variant);
}

Status DockerApi::remove_image(const std::string& ref) const {
    auto r = call("DELETE", "/images/" + ref);
    if (!r) return r.error();
    if (r->status != 200 && r->status != 404) return api_error(r.value(), "remove " + ref);
    return ok_status();
}

Status DockerApi::tag_image(const std::string& ref, const std::string& repo,
                            const std::string& tag) const {
    auto r = call("POST",
                  "/images/" + ref + "/tag?repo=" + url_encode(repo) + "&tag=" + url_encode(tag));
    if (!r) return r.error();
    if (r->status != 201) return api_error(r.value(), "tag " + ref);
    return ok_status();
}

Status DockerApi::push_image(const std::string& repo, const std::string& tag) const {
    // X-Registry-Auth is required by the API even for anonymous pushes: base64("{}").
    auto r = call("POST", "/images/" + repo + "/push?tag=" + url_encode(tag), {},
                  std::chrono::minutes(30), {"X-Registry-Auth: e30="});
    if (!r) return r.error();
    if (r->status != 200) return api_error(r.value(), "push " + repo + ":" + tag);
    for (const auto& line : split(r->body, '\n')) {
        if (line.empty()) continue;
        try {
            auto j = json::parse(line);
            if (j.contains("error"))
                return Error{ErrorKind::Environment,
                             "push " + repo + ":" + tag + ": " + j["error"].get<std::string>()};
        } catch (const json::exception&) {
        }
    }
    return ok_status();
}

std::string container_create_body(const ContainerSpec& spec) {
    json body = {{"Image", spec.image},
                 {"Cmd", spec.cmd},
                 {"Env", spec.env},
                 {"Labels", spec.labels},
                 {"HostConfig", {{"NetworkMode", spec.network_mode}, {"Binds", spec.binds}}}};
    // The Engine API removes an image's ENTRYPOINT only for [""] (what `--entrypoint ""`
    // sends); an empty array would keep it.
    if (spec.entrypoint)
        body["Entrypoint"] = spec.entrypoint->empty() ? json::array({""}) : json(*spec.entrypoint);
    json& host = body["HostConfig"];
    if (spec.shm_size > 0) host["ShmSize"] = spec.shm_size;
    if (spec.cpu_shares > 0) host["CpuShares"] = spec.cpu_shares;
    if (spec.gpus != 0)
        host["DeviceRequests"] =
            json::array({{{"Driver", ""}, {"Count", spec.gpus}, {"Capabilities", {{"gpu"}}}}});
    if (spec.confined) {
        host["CapDrop"] = json::array({"ALL"});
        host["CapAdd"] = spec.cap_add;
        host["SecurityOpt"] = json::array({"no-new-privileges"});
        if (spec.pids_limit > 0) host["PidsLimit"] = spec.pids_limit;
        if (spec.memory_bytes > 0) host["Memory"] = spec.memory_bytes;
        if (!spec.log_max_size.empty())
            host["LogConfig"] = {{"Type", "json-file"},
                                 {"Config", {{"max-size", spec.log_max_size}, {"max-file", "1"}}}};
        host["ReadonlyRootfs"] = true;
        if (!spec.tmp_size.empty()) {
            host["Tmpfs"] = {{"/tmp", "rw,nosuid,nodev,mode=1777,size=" + spec.tmp_size}};
            for (const auto& path : spec.tmpfs_over)
                if (path != "/tmp")
                    host["Tmpfs"][path] = "rw,nosuid,nodev,mode=1777,size=" + spec.tmp_size;
        }
    }
    return body.dump();
}

Result<std::string> DockerApi::create_container(const ContainerSpec& spec) const {
    auto r = call("POST", "/containers/create", container_create_body(spec));
    if (!r) return r.error();
    if (r->status != 201) return api_error(r.value(), "create container from " + spec.image);
    try {
        return json::parse(r->body).at("Id").get<std::string>();
    } catch (const json::exception& e) {
        return Error{ErrorKind::Environment,
                     std::string("create container: unreadable answer: ") + e.what()};
    }
}

Status DockerApi::start_container(const std::string& id) const {
    auto r = call("POST", "/containers/" + id + "/start");
    if (!r) return r.error();
    if (r->status != 204 && r->status != 304)
        return api_error(r.value(), "start container " + id.substr(0, 12));
    return ok_status();
}

Result<int> DockerApi::wait_container(const std::string& id,
                                      std::chrono::milliseconds timeout) const {
    auto r = call("POST", "/containers/" + id + "/wait", {}, timeout);
    if (!r) return r.error();
    if (r->status != 200) return api_error(r.value(), "wait for container " + id.substr(0, 12));
    try {
        return json::parse(r->body).at("StatusCode").get<int>();
    } catch (const json::exception& e) {
        return Error{ErrorKind::Environment, std::string("wait: unreadable answer: ") + e.what()};
    }
}

Result<std::pair<std::string, std::string>> DockerApi::container_logs(const std::string& id,
                                                                      bool whole) const {
    // Bounded: the last lines only (a probe's result is its last line), and at most
    // k_max_log_bytes of them, however much the container printed.
    auto time = budget(std::chrono::seconds(30), false, "GET /containers/" + id + "/logs");
    if (!time) return time.error();
    HttpRequest req = request(
        std::string(k_api) + "/containers/" + id + "/logs?stdout=1&stderr=1" +
        (is_podman() || whole ? std::string() : "&tail=" + std::to_string(k_max_log_lines)));
    req.timeouts.total = time.value();
    req.timeouts.connect =
        std::min<std::chrono::milliseconds>(std::chrono::seconds(5), time.value());
    req.max_body = k_max_log_bytes;
    auto r = http_request(req);
    if (!r) return r.error();
    if (r->status != 200) return api_error(r.value(), "logs of container " + id.substr(0, 12));
    if (r->truncated)
        return Error{ErrorKind::Environment,
                     "the container printed more than " + std::to_string(k_max_log_bytes >> 20) +
                         " MiB" +
                         (whole ? std::string()
                                : " in its last " + std::to_string(k_max_log_lines) + " lines") +
                         "; its output was not read"};
    return demux(r->body);
}

Status DockerApi::remove_container(const std::string& id) const {
    auto r = call("DELETE", "/containers/" + id + "?force=1&v=1", {}, std::chrono::seconds(30), {},
                  true);
    if (!r) return r.error();
    if (r->status != 204 && r->status != 404)
        return api_error(r.value(), "remove container " + id.substr(0, 12));
    return ok_status();
}

Result<std::vector<std::pair<std::string, std::string>>> DockerApi::containers_with_label(
    const std::string& label) const {
    json filters = {{"label", {label}}};
    auto r = call("GET", "/containers/json?all=1&filters=" + url_encode(filters.dump()), {},
                  std::chrono::seconds(30), {}, true);
    if (!r) return r.error();
    if (r->status != 200) return api_error(r.value(), "list containers");
    std::string key = label.substr(0, label.find('='));
    std::vector<std::pair<std::string, std::string>> ids;
    try {
        for (const auto& c : json::parse(r->body)) {
            std::string value;
            if (c.contains("Labels") && c["Labels"].is_object() && c["Labels"].contains(key) &&
                c["Labels"][key].is_string())
                value = c["Labels"][key].get<std::string>();
            ids.emplace_back(c.at("Id").get<std::string>(), value);
        }
    } catch (const json::exception& e) {
        return Error{ErrorKind::Environment,
                     std::string("list containers: unreadable answer: ") + e.what()};
    }
    return ids;
}

}  // namespace td::engine
