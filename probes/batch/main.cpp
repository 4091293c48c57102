// probe-batch: starts several probes at once inside one container and hands back what each
// printed and how it ended, framed, so torchdock pays for one container (about 0.2 CPU-s of
// the engine's work each) instead of one per probe. It judges nothing: every probe keeps its
// own contract (probes/README.md) and torchdock judges each frame as if the probe had been the
// container's only process. A static executable: the image's libc and loader take no part
// (the probes it starts run on them as before). See README.md beside this file.
//
//   probe-batch --timeout=SECONDS --probe=NAME:N ARG0 ... ARG(N-1) [--probe=NAME:N ...]
//
// Output, stdout only, one frame per probe in the order they end:
//   torchdock-batch NAME exit=E signal=S timed_out=0|1 overflow=0|1 seconds=X out=N err=M\n
//   <N bytes: the probe's stdout><M bytes: the last of its stderr>\n
// then `torchdock-batch-end K\n`. Exit 0 when every probe was started and framed, 3 on bad
// arguments (nothing started).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The engine reads a container's whole log up to 8 MiB (DockerApi::k_max_log_bytes): the
// frames together stay under that. A probe whose stdout does not fit is framed with
// overflow=1 and no stdout (torchdock runs it again alone).
constexpr std::size_t kTotalBudget = std::size_t{7} << 20;
constexpr std::size_t kErrKeep = 16 << 10;  // the end of stderr (a loader error, a traceback)
constexpr double kDrainSeconds = 1.0;       // after exit, for what is still in flight on a pipe

struct Child {
    std::string name;
    std::vector<std::string> argv;
    pid_t pid = -1;
    int out_fd = -1, err_fd = -1;
    std::string out, err;
    bool out_overflow = false;
    bool exited = false, timed_out = false, framed = false;
    int status = 0;
    double started = 0, ended = 0;
};

double now_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr,
                 "probe-batch: %s (usage: probe-batch --timeout=SECONDS --probe=NAME:N ARG0 ... "
                 "[--probe=NAME:N ...])\n",
                 what.c_str());
    std::exit(3);
}

bool parse_count(const std::string& s, long& out) {
    if (s.empty() || s.size() > 6) return false;
    out = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + (c - '0');
    }
    return true;
}

bool plain_name(const std::string& s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    return true;
}

void start(Child& c) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        c.err = std::string("probe-batch: pipe: ") + std::strerror(errno) + "\n";
        c.exited = true;
        c.status = 127 << 8;
        return;
    }
    c.started = now_seconds();
    c.pid = ::fork();
    if (c.pid == 0) {
        ::setpgid(0, 0);  // its own group: a timeout kills what it started too
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        std::vector<char*> args;
        for (auto& a : c.argv) args.push_back(a.data());
        args.push_back(nullptr);
        ::signal(SIGPIPE, SIG_DFL);
        ::execv(args[0], args.data());
        const int e = errno;
        std::string msg = "probe-batch: cannot run " + c.argv[0] + ": " + std::strerror(e) + "\n";
        (void)!::write(2, msg.data(), msg.size());
        ::_exit(e == ENOENT ? 127 : 126);
    }
    ::close(out[1]);
    ::close(err[1]);
    if (c.pid < 0) {
        ::close(out[0]);
        ::close(err[0]);
        c.err = std::string("probe-batch: fork: ") + std::strerror(errno) + "\n";
        c.exited = true;
        c.status = 127 << 8;
        return;
    }
    ::setpgid(c.pid, c.pid);
    c.out_fd = out[0];
    c.err_fd = err[0];
    ::fcntl(c.out_fd, F_SETFL, O_NONBLOCK);
    ::fcntl(c.err_fd, F_SETFL, O_NONBLOCK);
}

// Reads what is there; closes the pipe at EOF.
void drain(Child& c, int& fd, bool is_out) {
    char buf[65536];
    while (fd >= 0) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            if (is_out) {
                if (!c.out_overflow) c.out.append(buf, static_cast<std::size_t>(n));
                if (c.out.size() > kTotalBudget) {
                    c.out_overflow = true;
                    c.out.clear();
                    c.out.shrink_to_fit();
                }
            } else {
                c.err.append(buf, static_cast<std::size_t>(n));
                if (c.err.size() > 4 * kErrKeep) c.err.erase(0, c.err.size() - kErrKeep);
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
        ::close(fd);  // EOF or an error: nothing more will come
        fd = -1;
    }
}

void frame(Child& c, std::size_t& emitted) {
    if (c.out_fd >= 0) ::close(c.out_fd);
    if (c.err_fd >= 0) ::close(c.err_fd);
    c.out_fd = c.err_fd = -1;
    if (c.pid > 0) ::kill(-c.pid, SIGKILL);  // what it left running in its group
    if (c.err.size() > kErrKeep) c.err.erase(0, c.err.size() - kErrKeep);
    bool overflow = c.out_overflow;
    if (!overflow && emitted + c.out.size() + c.err.size() > kTotalBudget) overflow = true;
    if (overflow) c.out.clear();
    const int code = WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1;
    const int sig = WIFSIGNALED(c.status) ? WTERMSIG(c.status) : 0;
    std::printf(
        "torchdock-batch %s exit=%d signal=%d timed_out=%d overflow=%d seconds=%.3f out=%zu "
        "err=%zu\n",
        c.name.c_str(), code, sig, c.timed_out ? 1 : 0, overflow ? 1 : 0,
        c.ended > c.started ? c.ended - c.started : 0.0, c.out.size(), c.err.size());
    std::fwrite(c.out.data(), 1, c.out.size(), stdout);
    std::fwrite(c.err.data(), 1, c.err.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    emitted += c.out.size() + c.err.size();
    c.framed = true;
    c.out.clear();
    c.err.clear();
}

// Reaps every child that ended (and anything orphaned to us: we may be the container's
// process 1).
void reap(std::vector<Child>& children) {
    while (true) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid <= 0) return;
        for (auto& c : children)
            if (c.pid == pid && !c.exited) {
                c.exited = true;
                c.status = status;
                c.ended = now_seconds();
            }
    }
}

}  // namespace

int main(int argc, char** argv) {
    ::signal(SIGPIPE, SIG_IGN);
    long timeout = -1;
    std::vector<Child> children;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.rfind("--timeout=", 0) == 0) {
            if (!parse_count(a.substr(10), timeout) || timeout < 1)
                usage_error("--timeout wants whole seconds, got '" + a.substr(10) + "'");
        } else if (a.rfind("--probe=", 0) == 0) {
            const std::string spec = a.substr(8);
            const auto colon = spec.rfind(':');
            long n = 0;
            if (colon == std::string::npos || !plain_name(spec.substr(0, colon)) ||
                !parse_count(spec.substr(colon + 1), n) || n < 1 || n > argc - 1 - i)
                usage_error("bad --probe=NAME:N '" + spec + "'");
            Child c;
            c.name = spec.substr(0, colon);
            for (long k = 0; k < n; ++k) c.argv.push_back(argv[++i]);
            if (c.argv[0].empty() || c.argv[0][0] != '/')
                usage_error("a probe's program must be an absolute path: '" + c.argv[0] + "'");
            children.push_back(std::move(c));
        } else {
            usage_error("unknown argument '" + a + "'");
        }
    }
    if (timeout < 0 || children.empty()) usage_error("nothing to run");

    const double deadline = now_seconds() + static_cast<double>(timeout);
    for (auto& c : children) start(c);
    std::size_t emitted = 0, framed = 0;
    while (framed < children.size()) {
        std::vector<pollfd> fds;
        for (auto& c : children) {
            if (c.out_fd >= 0) fds.push_back({c.out_fd, POLLIN, 0});
            if (c.err_fd >= 0) fds.push_back({c.err_fd, POLLIN, 0});
        }
        ::poll(fds.data(), fds.size(), 50);
        reap(children);
        const double t = now_seconds();
        for (auto& c : children) {
            if (c.framed) continue;
            drain(c, c.out_fd, true);
            drain(c, c.err_fd, false);
            if (!c.exited && t > deadline) {
                c.timed_out = true;
                ::kill(-c.pid, SIGKILL);
                ::kill(c.pid, SIGKILL);
            }
            // Ended, and its pipes closed (or still held open by something it left behind,
            // a second after it ended).
            if (c.exited && ((c.out_fd < 0 && c.err_fd < 0) || t - c.ended > kDrainSeconds)) {
                frame(c, emitted);
                ++framed;
            }
        }
    }
    std::printf("torchdock-batch-end %zu\n", children.size());
    std::fflush(stdout);
    return 0;
}
