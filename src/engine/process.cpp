#include "engine/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "engine/interrupt.hpp"

extern char** environ;

namespace td::engine {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto k_kill_grace = std::chrono::seconds(5);

struct Pipe {
    int fd[2] = {-1, -1};
    ~Pipe() {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
};

// Descriptors a forked child may have inherited (for closing them all).
int open_fd_limit() {
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 4096;
    return static_cast<int>(std::min<rlim_t>(rl.rlim_cur, 65536));
}

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// Appends to `out`, keeping at most its last `cap` bytes (trimmed when twice over, so the
// work stays linear).
void keep_tail(std::string& out, bool& truncated, const char* data, std::size_t n,
               std::size_t cap) {
    out.append(data, n);
    if (cap > 0 && out.size() > 2 * cap) {
        out.erase(0, out.size() - cap);
        truncated = true;
    }
}

constexpr std::size_t k_max_line = std::size_t{1} << 20;

// Splits newly read bytes into lines for the callback; keeps the partial tail (a line over
// 1 MiB is handed over in pieces, so the tail stays bounded).
void feed(std::string& pending, const char* data, std::size_t n, bool is_stderr,
          const ProcessSpec& spec) {
    if (!spec.on_line) return;
    pending.append(data, n);
    std::size_t start = 0, nl;
    while ((nl = pending.find('\n', start)) != std::string::npos) {
        spec.on_line(pending.substr(start, nl - start), is_stderr);
        start = nl + 1;
    }
    pending.erase(0, start);
    while (pending.size() > k_max_line) {
        spec.on_line(pending.substr(0, k_max_line), is_stderr);
        pending.erase(0, k_max_line);
    }
}

}  // namespace

std::string ProcessResult::describe() const {
    switch (outcome) {
        case Outcome::Exited:
            return "exit code " + std::to_string(exit_code);
        case Outcome::Signaled:
            return std::string("killed by signal ") + std::to_string(signal) + " (" +
                   strsignal(signal) + ")";
        case Outcome::TimedOut: {
            char buf[64];
            std::snprintf(buf, sizeof buf, "timed out after %g s", timeout_seconds);
            return buf;
        }
        case Outcome::Interrupted:
            return "interrupted";
    }
    return "?";
}

std::string find_program(const std::string& program) {
    if (program.find('/') != std::string::npos)
        return ::access(program.c_str(), X_OK) == 0 ? program : "";
    const char* path = std::getenv("PATH");
    std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= p.size()) {
        std::size_t end = p.find(':', start);
        if (end == std::string::npos) end = p.size();
        std::string candidate = p.substr(start, end - start) + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    return "";
}

std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides) {
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) {
        std::string entry = *e;
        std::string name = entry.substr(0, entry.find('='));
        if (!overrides.count(name)) out.push_back(entry);
    }
    for (const auto& [k, v] : overrides) out.push_back(k + "=" + v);
    return out;
}

Result<ProcessResult> run_process(const ProcessSpec& spec) {
    if (spec.argv.empty()) return Error{ErrorKind::Usage, "run_process: empty argv"};
    if (spec.timeout.count() <= 0)
        return Error{ErrorKind::Usage, "run_process: a timeout is required"};
    std::string program = find_program(spec.argv[0]);
    if (program.empty()) return Error{ErrorKind::Environment, "program not found: " + spec.argv[0]};

    Pipe out, err, exec_status;
    if (::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0 ||
        ::pipe2(exec_status.fd, O_CLOEXEC) != 0)
        return Error{ErrorKind::Environment, std::string("pipe: ") + std::strerror(errno)};

    std::vector<char*> argv, envp;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    auto start = Clock::now();
    pid_t pid = ::fork();
    if (pid < 0) return Error{ErrorKind::Environment, std::string("fork: ") + std::strerror(errno)};
    if (pid == 0) {
        ::setpgid(0, 0);
        ::dup2(out.fd[1], STDOUT_FILENO);
        ::dup2(err.fd[1], STDERR_FILENO);
        int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
        // Default signal dispositions for the child, whatever the parent installed.
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        ::signal(SIGPIPE, SIG_DFL);
        if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
            int e = errno;
            (void)!::write(exec_status.fd[1], &e, sizeof e);
            ::_exit(127);
        }
        ::execve(program.c_str(), argv.data(), envp.data());
        int e = errno;
        (void)!::write(exec_status.fd[1], &e, sizeof e);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also from the parent, so the group exists before we may kill it
    close_fd(out.fd[1]);
    close_fd(err.fd[1]);
    close_fd(exec_status.fd[1]);
    int exec_errno = 0;
    if (::read(exec_status.fd[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
        ::waitpid(pid, nullptr, 0);
        return Error{ErrorKind::Environment,
                     "cannot run " + program + ": " + std::strerror(exec_errno)};
    }

    // The guard: a second child in the same process group that waits for us to go away. If
    // torchdock itself is SIGKILLed (a CI job's time-out), nothing else would stop the
    // group, and an orphaned `docker build` would tag an image minutes later; the guard
    // sees its pipe reach end-of-file (the kernel closes our end when we die) and kills
    // the whole group, grandchildren included. On a normal return we kill the guard first.
    Pipe guard_pipe;
    pid_t guard = -1;
    const int max_fd = open_fd_limit();
    if (::pipe2(guard_pipe.fd, O_CLOEXEC) == 0) {
        // The guard must not run our signal handlers (a test framework's, the interrupt
        // flag's): block signals across the fork, give the guard default dispositions.
        sigset_t all, previous;
        ::sigfillset(&all);
        ::pthread_sigmask(SIG_SETMASK, &all, &previous);
        guard = ::fork();
        if (guard == 0) {
            for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
            ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
            ::setpgid(0, pid);
            // Hold no other descriptor: another thread's child pipes must see end-of-file.
            for (int fd = 0; fd < max_fd; ++fd)
                if (fd != guard_pipe.fd[0]) ::close(fd);
            char byte = 0;
            ssize_t n;
            while ((n = ::read(guard_pipe.fd[0], &byte, 1)) < 0 && errno == EINTR) {
            }
            ::kill(-pid, SIGKILL);
            ::_exit(0);
        }
        ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        if (guard > 0) ::setpgid(guard, pid);
        close_fd(guard_pipe.fd[0]);
    }
    struct GuardRelease {
        pid_t guard;
        ~GuardRelease() {
            if (guard <= 0) return;
            ::kill(guard, SIGKILL);
            ::waitpid(guard, nullptr, 0);
        }
    } guard_release{guard};

    ProcessResult result;
    std::string pending_out, pending_err;
    bool killing = false;
    Clock::time_point kill_sent{};
    // On timeout or Ctrl-C: TERM the whole group, KILL it if it lingers.
    auto enforce_deadline = [&] {
        auto now = Clock::now();
        if (!killing && (now - start > spec.timeout || interrupted())) {
            result.outcome = interrupted() ? ProcessResult::Outcome::Interrupted
                                           : ProcessResult::Outcome::TimedOut;
            ::kill(-pid, SIGTERM);
            killing = true;
            kill_sent = now;
        } else if (killing && now - kill_sent > k_kill_grace) {
            ::kill(-pid, SIGKILL);
        }
    };
    char buf[65536];
    int status = 0;
    bool reaped = false;
    Clock::time_point exited_at{};
    // Kill and reap the child on any exit from here, an exception in on_line included.
    struct Reaper {
        pid_t pid;
        bool& reaped;
        ~Reaper() {
            if (reaped) return;
            ::kill(-pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    } reaper{pid, reaped};
    while (out.fd[0] >= 0 || err.fd[0] >= 0) {
        enforce_deadline();
        // The child exited but a background process of its own still holds the pipes:
        // read what is there for a moment, then stop waiting for them.
        if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            exited_at = Clock::now();
        }
        if (reaped && Clock::now() - exited_at > std::chrono::milliseconds(500)) break;
        pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
        int n = ::poll(fds, 2, 100);
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
            if (got <= 0) {
                close_fd(i == 0 ? out.fd[0] : err.fd[0]);
                continue;
            }
            keep_tail(i == 0 ? result.out : result.err,
                      i == 0 ? result.out_truncated : result.err_truncated, buf,
                      static_cast<std::size_t>(got), spec.max_output);
            feed(i == 0 ? pending_out : pending_err, buf, static_cast<std::size_t>(got), i == 1,
                 spec);
        }
    }
    for (auto [stream, truncated] : {std::pair{&result.out, &result.out_truncated},
                                     std::pair{&result.err, &result.err_truncated}})
        if (spec.max_output > 0 && stream->size() > spec.max_output) {
            stream->erase(0, stream->size() - spec.max_output);
            *truncated = true;
        }
    if (spec.on_line) {
        if (!pending_out.empty()) spec.on_line(pending_out, false);
        if (!pending_err.empty()) spec.on_line(pending_err, true);
    }
    while (!reaped) {
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            break;
        }
        enforce_deadline();
        ::usleep(20000);
    }
    // Whatever the child left behind in its group (a background process holding the
    // pipes) goes with it.
    ::kill(-pid, SIGKILL);
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.timeout_seconds = std::chrono::duration<double>(spec.timeout).count();
    if (!killing) {
        if (WIFEXITED(status)) {
            result.outcome = ProcessResult::Outcome::Exited;
            result.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            result.outcome = ProcessResult::Outcome::Signaled;
            result.signal = WTERMSIG(status);
        }
    }
    return result;
}

}  // namespace td::engine
