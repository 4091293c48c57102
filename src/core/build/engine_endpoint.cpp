#include "core/build/engine_endpoint.hpp"

#include <nlohmann/json.hpp>

#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace td {
namespace {

std::string env_of(const EngineSettings& s, const std::string& name) {
    auto it = s.env.find(name);
    return it == s.env.end() ? std::string() : it->second;
}

// Docker reads DOCKER_TLS_VERIFY as "set to anything but empty" (its cli/flags).
bool flag_set(const std::string& value) { return !value.empty() && value != "0"; }

Error usage(const std::string& message) { return Error{ErrorKind::Usage, message}; }

}  // namespace

std::string context_key(const std::string& name) { return sha256_hex(name); }

std::string EngineEndpoint::describe() const {
    std::string from = context.empty() ? "" : " (context " + context + ")";
    switch (kind) {
        case Kind::Unix:
            return "unix://" + socket + from;
        case Kind::Tcp:
            return "tcp://" + host +
                   (tls ? (verify ? " (TLS)" : " (TLS, unverified)") : " (plain TCP)") + from;
        case Kind::Ssh:
            return "ssh://" + (user.empty() ? "" : user + "@") + host +
                   (port ? ":" + std::to_string(port) : "") + from;
    }
    return socket;
}

Result<EngineEndpoint> parse_engine_host(const std::string& host, bool tls, bool verify,
                                         const std::string& tls_dir, bool plain_tcp_allowed,
                                         const std::string& where) {
    EngineEndpoint e;
    for (char c : host)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == ' ')
            return usage(where + "=" + quote_value(host) + " has a space or control character");
    if (starts_with(host, "unix://")) {
        e.kind = EngineEndpoint::Kind::Unix;
        e.socket = host.substr(7);
        if (e.socket.empty() || e.socket[0] != '/')
            return usage(where + "=" + quote_value(host) +
                         ": a unix:// host needs an absolute path");
        return e;
    }
    if (starts_with(host, "tcp://")) {
        e.kind = EngineEndpoint::Kind::Tcp;
        e.host = host.substr(6);
        while (!e.host.empty() && e.host.back() == '/') e.host.pop_back();
        auto colon = e.host.rfind(':');
        bool port_ok = colon != std::string::npos && colon + 1 < e.host.size() &&
                       e.host.find_first_not_of("0123456789", colon + 1) == std::string::npos;
        if (e.host.empty() || e.host.find('/') != std::string::npos ||
            e.host.find('@') != std::string::npos || !port_ok)
            return usage(where + "=" + quote_value(host) +
                         ": a tcp:// host is tcp://HOST:PORT (2376 for TLS, as dockerd listens)");
        e.tls = tls;
        e.verify = verify;
        if (tls) {
            e.ca_file = tls_dir + "/ca.pem";
            e.cert_file = tls_dir + "/cert.pem";
            e.key_file = tls_dir + "/key.pem";
        } else if (!plain_tcp_allowed) {
            return usage(
                where + "=" + quote_value(host) +
                " without TLS: anyone on the network could run containers through it. "
                "Set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem), "
                "or TORCHDOCK_ENGINE_PLAIN_TCP=1 to accept a plain TCP engine");
        }
        return e;
    }
    if (starts_with(host, "ssh://")) {
        e.kind = EngineEndpoint::Kind::Ssh;
        std::string rest = host.substr(6);
        while (!rest.empty() && rest.back() == '/') rest.pop_back();
        if (auto at = rest.find('@'); at != std::string::npos) {
            e.user = rest.substr(0, at);
            rest = rest.substr(at + 1);
        }
        if (auto colon = rest.rfind(':'); colon != std::string::npos) {
            std::string port = rest.substr(colon + 1);
            if (port.empty() || port.size() > 5 ||
                port.find_first_not_of("0123456789") != std::string::npos)
                return usage(where + "=" + quote_value(host) + ": the port is not a number");
            e.port = std::stoi(port);
            rest = rest.substr(0, colon);
        }
        auto plain = [](const std::string& v) {
            return !v.empty() && v[0] != '-' &&
                   v.find_first_not_of(
                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
                       std::string::npos;
        };
        // Nothing that ssh could take for an option ("-oProxyCommand=...").
        if (!plain(rest) || (!e.user.empty() && !plain(e.user)))
            return usage(
                where + "=" + quote_value(host) +
                ": an ssh:// host is ssh://[USER@]HOST[:PORT] with letters, digits and ._- only");
        e.host = rest;
        return e;
    }
    return usage(where + "=" + quote_value(host) +
                 " is not an engine address torchdock speaks (unix:///PATH, tcp://HOST:PORT, "
                 "ssh://[USER@]HOST[:PORT])");
}

std::string context_in_use(const EngineSettings& s) {
    if (!env_of(s, "DOCKER_HOST").empty()) return "";
    if (auto c = env_of(s, "DOCKER_CONTEXT"); !c.empty()) return c == "default" ? "" : c;
    auto j = nlohmann::json::parse(s.config_json, nullptr, false);
    if (j.is_object() && j.contains("currentContext") && j["currentContext"].is_string()) {
        std::string c = j["currentContext"].get<std::string>();
        return c == "default" ? "" : c;
    }
    return "";
}

Result<EngineEndpoint> resolve_engine_endpoint(const EngineSettings& s) {
    const bool plain_ok = flag_set(env_of(s, "TORCHDOCK_ENGINE_PLAIN_TCP"));
    std::string context = context_in_use(s);
    if (context.empty()) {
        std::string host = env_of(s, "DOCKER_HOST");
        if (host.empty()) host = "unix:///var/run/docker.sock";
        bool verify = flag_set(env_of(s, "DOCKER_TLS_VERIFY"));
        bool tls = verify || flag_set(env_of(s, "DOCKER_TLS"));
        std::string cert_path = env_of(s, "DOCKER_CERT_PATH");
        if (cert_path.empty()) cert_path = s.docker_config_dir;
        return parse_engine_host(host, tls, verify, cert_path, plain_ok, "DOCKER_HOST");
    }
    std::string where = "Docker context " + quote_value(context);
    auto meta = s.context_meta.find(context);
    if (meta == s.context_meta.end())
        return usage(where + " does not exist (no " + s.docker_config_dir + "/contexts/meta/" +
                     context_key(context) + "/meta.json; `docker context ls` lists them)");
    auto j = nlohmann::json::parse(meta->second, nullptr, false);
    std::string host;
    bool skip_verify = false;
    if (j.is_object() && j.contains("Endpoints") && j["Endpoints"].is_object() &&
        j["Endpoints"].contains("docker") && j["Endpoints"]["docker"].is_object()) {
        const auto& d = j["Endpoints"]["docker"];
        if (d.contains("Host") && d["Host"].is_string()) host = d["Host"].get<std::string>();
        if (d.contains("SkipTLSVerify") && d["SkipTLSVerify"].is_boolean())
            skip_verify = d["SkipTLSVerify"].get<bool>();
    }
    if (host.empty()) return usage(where + " has no docker endpoint Host in its meta.json");
    auto tls = s.context_tls.find(context);
    bool has_tls = tls != s.context_tls.end() && tls->second;
    auto e = parse_engine_host(
        host, has_tls, has_tls && !skip_verify,
        s.docker_config_dir + "/contexts/tls/" + context_key(context) + "/docker", plain_ok, where);
    if (e) e->context = context;
    return e;
}

}  // namespace td
