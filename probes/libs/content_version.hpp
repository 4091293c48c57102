#pragma once
// Versions by content: what a CUDA library file says it is, asked in a short-lived child
// process per file (probe-libversion beside this probe, in its --ask-version mode: dlopen
// that file, call its version function, print, exit; probe-libs itself is static and cannot
// load the image's libraries), so one library cannot disturb another and a library that
// hangs or crashes on load is cut off. The child runs without LD_LIBRARY_PATH and
// LD_PRELOAD, so a file answers for itself: a cuDNN 9 front library whose sub-libraries
// would otherwise come from another cuDNN on LD_LIBRARY_PATH reports its own version. File
// names cannot be trusted for this: the pip wheels ship only soname-named files
// (libcudnn.so.9), so every copy of a family would look alike.
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace probe::libs {

struct ContentVersion {
    std::string version;  // "9.10.2", "12.8", "2.27.5"; empty when unknown
    std::string error;    // why it is unknown
};

namespace detail {

// Runs in the child: the version of `path` of `family`, or "!reason".
inline std::string ask_library(const std::string& family, const std::string& path) {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = ::dlerror();
        return std::string("!does not load: ") + (e ? e : "?");
    }
    char buf[64] = {};
    if (family == "cudart") {
        auto fn = reinterpret_cast<int (*)(int*)>(::dlsym(h, "cudaRuntimeGetVersion"));
        int v = 0;
        if (!fn || fn(&v) != 0 || v <= 0) return "!cudaRuntimeGetVersion failed";
        std::snprintf(buf, sizeof buf, "%d.%d", v / 1000, (v % 1000) / 10);
    } else if (family == "cudnn") {
        auto fn = reinterpret_cast<size_t (*)()>(::dlsym(h, "cudnnGetVersion"));
        if (!fn) return "!no cudnnGetVersion";
        size_t v = fn();
        // cuDNN 9: major*10000 + minor*100 + patch; before 9: major*1000 + minor*100 + patch.
        if (v >= 90000)
            std::snprintf(buf, sizeof buf, "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
        else
            std::snprintf(buf, sizeof buf, "%zu.%zu.%zu", v / 1000, (v % 1000) / 100, v % 100);
    } else if (family == "nccl") {
        auto fn = reinterpret_cast<int (*)(int*)>(::dlsym(h, "ncclGetVersion"));
        int v = 0;
        if (!fn || fn(&v) != 0 || v <= 0) return "!ncclGetVersion failed";
        // NCCL_VERSION_CODE: major*10000 + minor*100 + patch from 2.9 on, major*1000 before.
        if (v >= 20900)
            std::snprintf(buf, sizeof buf, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
        else
            std::snprintf(buf, sizeof buf, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
    } else if (family == "cublasLt") {
        auto fn = reinterpret_cast<size_t (*)()>(::dlsym(h, "cublasLtGetVersion"));
        if (!fn) return "!no cublasLtGetVersion";
        size_t v = fn();  // major*10000 + minor*100 + patch
        std::snprintf(buf, sizeof buf, "%zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
    } else if (family == "cublas") {
        // cublasGetProperty(libraryPropertyType: 0 major, 1 minor, 2 patch, int*)
        auto fn = reinterpret_cast<int (*)(int, int*)>(::dlsym(h, "cublasGetProperty"));
        int major = 0, minor = 0, patch = 0;
        if (!fn || fn(0, &major) != 0 || fn(1, &minor) != 0 || fn(2, &patch) != 0)
            return "!cublasGetProperty failed";
        std::snprintf(buf, sizeof buf, "%d.%d.%d", major, minor, patch);
    } else if (family == "nvJitLink") {
        // nvJitLinkVersion(unsigned* major, unsigned* minor); older copies do not export it
        // (PyPI nvidia-nvjitlink-cu12 12.1.105 does not, 12.8.93 does).
        auto fn = reinterpret_cast<int (*)(unsigned*, unsigned*)>(::dlsym(h, "nvJitLinkVersion"));
        unsigned major = 0, minor = 0;
        if (!fn) return "!the library reports no version (no nvJitLinkVersion)";
        if (fn(&major, &minor) != 0 || major == 0) return "!nvJitLinkVersion failed";
        std::snprintf(buf, sizeof buf, "%u.%u", major, minor);
    } else {
        return "!no version function known for " + family;
    }
    return buf;
}

}  // namespace detail

// The --ask-version=FAMILY:PATH mode: prints the answer for the parent and returns the exit
// code.
inline int answer_version_request(const std::string& request) {
    auto colon = request.find(':');
    std::string answer =
        colon == std::string::npos
            ? "!bad --ask-version request"
            : detail::ask_library(request.substr(0, colon), request.substr(colon + 1));
    std::fwrite(answer.data(), 1, answer.size(), stdout);
    std::fflush(stdout);
    return 0;
}

// Asks `path` (a library of `family`: cudart, cublas, cublasLt, cudnn, nccl, nvJitLink) for its
// version in a child process that has at most `timeout_ms` milliseconds. Set when the files belong
// to another machine (--machine): this machine cannot load them, so no child is started and every
// version is unknown, with this reason.
inline std::string& foreign_files_reason() {
    static std::string reason;
    return reason;
}

inline ContentVersion content_version(const std::string& family, const std::string& path,
                                      int timeout_ms = 5000) {
    if (!foreign_files_reason().empty()) return {"", foreign_files_reason()};
    int fds[2];
    if (::pipe(fds) != 0) return {"", std::string("pipe: ") + std::strerror(errno)};
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return {"", std::string("fork: ") + std::strerror(errno)};
    }
    if (pid == 0) {
        ::close(fds[0]);
        ::dup2(fds[1], STDOUT_FILENO);
        std::vector<std::string> env_strings;
        for (char** e = environ; *e; ++e)
            if (std::strncmp(*e, "LD_LIBRARY_PATH=", 16) != 0 &&
                std::strncmp(*e, "LD_PRELOAD=", 11) != 0)
                env_strings.push_back(*e);
        std::vector<char*> envp;
        for (auto& e : env_strings) envp.push_back(&e[0]);
        envp.push_back(nullptr);
        std::string request = "--ask-version=" + family + ":" + path;
        char name[] = "probe-libversion";
        char* argv[] = {name, &request[0], nullptr};
        char self[4096];
        ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
        std::string helper = n > 0 ? std::string(self, static_cast<size_t>(n)) : "";
        helper = helper.substr(0, helper.rfind('/') + 1) + "probe-libversion";
        ::execve(helper.c_str(), argv, envp.data());
        const char fail[] = "!cannot start a child to ask the library";
        (void)!::write(STDOUT_FILENO, fail, sizeof fail - 1);
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string answer;
    char buf[256];
    int waited = 0;
    bool timed_out = false;
    while (true) {
        pollfd p = {fds[0], POLLIN, 0};
        int n = ::poll(&p, 1, 100);
        if (n > 0) {
            ssize_t got = ::read(fds[0], buf, sizeof buf);
            if (got <= 0) break;
            answer.append(buf, static_cast<size_t>(got));
            continue;
        }
        if (n < 0 && errno != EINTR) break;
        waited += 100;
        if (waited >= timeout_ms) {
            timed_out = true;
            break;
        }
    }
    ::close(fds[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (timed_out)
        return {"", "loading it did not finish within " + std::to_string(timeout_ms) + " ms"};
    if (WIFSIGNALED(status))
        return {"", "loading it crashed (signal " + std::to_string(WTERMSIG(status)) + ")"};
    if (answer.empty()) return {"", "no answer from the library"};
    if (answer[0] == '!') return {"", answer.substr(1)};
    return {answer, ""};
}

}  // namespace probe::libs
