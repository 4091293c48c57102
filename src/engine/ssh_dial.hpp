#pragma once
// An engine over ssh, as the Docker CLI reaches one (its connhelper): `ssh [-l USER] [-p PORT]
// -- HOST docker system dial-stdio` carries one connection to the far engine's API. torchdock
// serves a private UNIX socket (in a 0700 directory of its own, removed at exit) that the
// Engine API client talks to; each connection to it starts one such ssh and the bytes are
// passed both ways until either side closes. ssh runs with BatchMode (no password prompt: a
// key or an agent), so a login it cannot make fails at once with ssh's own message on
// stderr. $TORCHDOCK_SSH_CONFIG names an ssh configuration file (`ssh -F`; ssh reads ~/.ssh
// from the passwd entry, not $HOME).
#include <string>

#include "core/build/engine_endpoint.hpp"
#include "util/result.hpp"

namespace td::engine {

// The local socket that reaches the engine behind `e` (Kind::Ssh); started on first use, one
// per process and endpoint. Environment error when ssh is missing or the socket cannot be made.
Result<std::string> ssh_engine_socket(const EngineEndpoint& e);

}  // namespace td::engine
