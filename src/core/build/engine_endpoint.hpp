#pragma once
// Which engine to talk to, and how, decided as the Docker CLI decides it
// (docker/cli cli/command/cli.go resolveContextName and its DOCKER_TLS_VERIFY handling):
//   DOCKER_HOST set            -> that host (the "default" context); else
//   DOCKER_CONTEXT set         -> that context; else
//   config.json currentContext -> that context; else
//   unix:///var/run/docker.sock.
// A host is unix://PATH, tcp://HOST:PORT (TLS with DOCKER_TLS_VERIFY=1 or DOCKER_TLS=1 and the
// certificates in DOCKER_CERT_PATH, or a context's TLS material; plain TCP only when the user
// asks, TORCHDOCK_ENGINE_PLAIN_TCP=1) or ssh://[USER@]HOST[:PORT] (the engine reached through
// `ssh HOST docker system dial-stdio`, as the Docker CLI does). Pure: the caller reads the
// environment and the files.
#include <map>
#include <optional>
#include <string>

#include "util/result.hpp"

namespace td {

struct EngineEndpoint {
    enum class Kind { Unix, Tcp, Ssh };
    Kind kind = Kind::Unix;
    std::string socket;  // Unix: the socket path
    std::string host;    // Tcp: "host:port"; Ssh: the host name
    std::string user;    // Ssh: may be ""
    int port = 0;        // Ssh: 0 = ssh's default
    bool tls = false;    // Tcp
    bool verify = true;  // Tcp with TLS: check the engine's certificate against ca_file
    std::string ca_file, cert_file, key_file;  // Tcp with TLS
    std::string context;  // the context it came from ("" for DOCKER_HOST or the default)
    // How it is named in messages: "unix:///run/docker.sock", "tcp://10.0.0.5:2376 (TLS)".
    std::string describe() const;
    bool remote() const { return kind != Kind::Unix; }
};

struct EngineSettings {
    std::map<std::string, std::string>
        env;                        // DOCKER_HOST, DOCKER_CONTEXT, DOCKER_TLS_VERIFY,
                                    // DOCKER_TLS, DOCKER_CERT_PATH, TORCHDOCK_ENGINE_PLAIN_TCP
    std::string docker_config_dir;  // $DOCKER_CONFIG or ~/.docker
    std::string config_json;        // its config.json ("" when absent)
    // Context name -> its meta.json text (contexts/meta/<context_key>/meta.json), and the
    // contexts whose TLS material exists (contexts/tls/<context_key>/docker/).
    std::map<std::string, std::string> context_meta;
    std::map<std::string, bool> context_tls;
};

// The directory name the Docker CLI stores a context under: the hex SHA-256 of its name.
std::string context_key(const std::string& name);

// The name of the context in use ("" when DOCKER_HOST decides or none is set).
std::string context_in_use(const EngineSettings& s);

// The endpoint; Usage error that names the variable or context and what would be accepted.
Result<EngineEndpoint> resolve_engine_endpoint(const EngineSettings& s);

// Parses one host ("unix:///x", "tcp://h:p", "ssh://u@h:p"); `tls_dir` holds ca.pem,
// cert.pem and key.pem when TLS is on.
Result<EngineEndpoint> parse_engine_host(const std::string& host, bool tls, bool verify,
                                         const std::string& tls_dir, bool plain_tcp_allowed,
                                         const std::string& where);

}  // namespace td
