#include "engine/ssh_dial.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/process.hpp"

extern char** environ;

namespace td::engine {
namespace {

struct Bridge {
    std::string dir, socket;
};
std::mutex g_mutex;
std::map<std::string, Bridge> g_bridges;  // endpoint -> its bridge

void remove_bridges() {
    for (const auto& [key, b] : g_bridges) {
        ::unlink(b.socket.c_str());
        ::rmdir(b.dir.c_str());
    }
}

// One ssh for one connection: its stdin and stdout are `fd`.
pid_t start_ssh(const std::string& ssh, const EngineEndpoint& e, int fd) {
    std::vector<std::string> args = {ssh, "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"};
    if (const char* config = std::getenv("TORCHDOCK_SSH_CONFIG"); config && *config)
        args.insert(args.end(), {"-F", config});
    if (!e.user.empty()) args.insert(args.end(), {"-l", e.user});
    if (e.port) args.insert(args.end(), {"-p", std::to_string(e.port)});
    args.insert(args.end(), {"--", e.host, "docker", "system", "dial-stdio"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fd, 0);
    posix_spawn_file_actions_adddup2(&actions, fd, 1);
    pid_t pid = -1;
    if (::posix_spawn(&pid, ssh.c_str(), &actions, nullptr, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

bool pass(int from, int to) {
    char buf[65536];
    ssize_t n = ::read(from, buf, sizeof buf);
    if (n <= 0) return false;
    for (ssize_t done = 0; done < n;) {
        ssize_t w = ::write(to, buf + done, static_cast<std::size_t>(n - done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        done += w;
    }
    return true;
}

// Passes bytes between the client and ssh until one side ends, then ends ssh.
void serve(int client, std::string ssh, EngineEndpoint e) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        ::close(client);
        return;
    }
    pid_t pid = start_ssh(ssh, e, pair[1]);
    ::close(pair[1]);
    int remote = pair[0];
    bool client_open = true, remote_open = pid > 0;
    while (client_open && remote_open) {
        pollfd fds[2] = {{client, POLLIN, 0}, {remote, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) client_open = pass(client, remote);
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) remote_open = pass(remote, client);
    }
    ::close(client);
    ::close(remote);
    if (pid > 0) {
        for (int i = 0; i < 100; ++i) {
            if (::waitpid(pid, nullptr, WNOHANG) != 0) return;
            ::usleep(20000);
        }
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
    }
}

}  // namespace

Result<std::string> ssh_engine_socket(const EngineEndpoint& e) {
    std::lock_guard lock(g_mutex);
    std::string key = e.describe();
    if (auto it = g_bridges.find(key); it != g_bridges.end()) return it->second.socket;
    std::string ssh = find_program("ssh");
    if (ssh.empty())
        return Error{ErrorKind::Environment,
                     "DOCKER_HOST=ssh://... needs the ssh client, which is not on PATH "
                     "(apt-get install openssh-client)"};
    std::string tmp = (std::filesystem::temp_directory_path() / "torchdock-ssh-XXXXXX").string();
    if (!::mkdtemp(tmp.data()))
        return Error{ErrorKind::Environment,
                     "making a directory for the ssh bridge: " + std::string(std::strerror(errno))};
    Bridge b{tmp, tmp + "/engine.sock"};
    int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (listener < 0 || b.socket.size() >= sizeof addr.sun_path) {
        ::rmdir(tmp.c_str());
        return Error{ErrorKind::Environment, "cannot make the ssh bridge's socket"};
    }
    std::strncpy(addr.sun_path, b.socket.c_str(), sizeof addr.sun_path - 1);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener, 16) != 0) {
        ::close(listener);
        ::rmdir(tmp.c_str());
        return Error{ErrorKind::Environment,
                     "the ssh bridge's socket: " + std::string(std::strerror(errno))};
    }
    if (g_bridges.empty()) std::atexit(remove_bridges);
    g_bridges[key] = b;
    std::thread([listener, ssh, e] {
        while (true) {
            int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                return;
            }
            std::thread(serve, client, ssh, e).detach();
        }
    }).detach();
    return b.socket;
}

}  // namespace td::engine
