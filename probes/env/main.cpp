// probe-env: the container's process environment as the image's processes see it (ids, cwd,
// argv, every environment variable, which python/python3 a bare name runs and every Python
// interpreter nearby), so torchdock can decide which Python the image runs. --nonce is echoed
// back so torchdock can tell its probe's line from whatever an image's ENTRYPOINT printed;
// --head returns the start of a file (the ENTRYPOINT script). A static executable: the
// image's libc, loader and LD_PRELOAD take no part. See README.md beside this file.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <set>
#include <string>

#include "file_identity.hpp"
#include "path_search.hpp"
#include "probe.hpp"

extern char** environ;

using probe::Json;
using namespace envprobe;

namespace {

const char kUsage[] = "probe-env takes --nonce=STR and --head=PATH; other arguments are recorded";
constexpr std::size_t kHeadBytes = 4096;

Json resolved_json(const std::string& name, const char* path_env) {
    const std::string path = resolve_command(name, path_env);
    if (path.empty()) return Json();
    const std::string real = real_path(path);
    return Json::object({{"path", path},
                         {"realpath", real.empty() ? Json() : Json(real)},
                         {"identity", probe::identify_file(path)}});
}

// The ELF identity of a file's first bytes ("x86_64/64"), null when it is not ELF.
Json elf_of(const std::string& path) {
    unsigned char head[64];
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return Json();
    const ssize_t n = ::pread(fd, head, sizeof head, 0);
    ::close(fd);
    const std::string elf = probe::elf_identity(head, n > 0 ? static_cast<std::size_t>(n) : 0);
    return elf.empty() ? Json() : Json(elf);
}

// {"path","text","size","error"} for the first kHeadBytes of `name` (a bare name through PATH).
Json head_json(const std::string& name, const char* path_env) {
    const std::string path = resolve_command(name, path_env);
    Json out = Json::object({{"path", path.empty() ? name : path}});
    auto failed = [&](const std::string& why) {
        out.set("text", Json());
        out.set("size", Json());
        out.set("error", why);
        return out;
    };
    if (path.empty()) return failed("not found in PATH");
    // O_NONBLOCK: a FIFO named by mistake must not hang the probe; anything but a regular
    // file is refused below anyway.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return failed(std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return failed("not a regular file");
    }
    std::string text(kHeadBytes, '\0');
    std::size_t got = 0;
    while (got < kHeadBytes) {
        const ssize_t n = ::read(fd, &text[got], kHeadBytes - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return failed(std::strerror(err));
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    text.resize(got);
    out.set("text", text);
    out.set("size", static_cast<long long>(st.st_size));
    out.set("error", Json());
    return out;
}

int run(int argc, char** argv) {
    std::string nonce, head;
    bool want_head = false;
    Json args = Json::array();
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        args.push(a);
        if (i == 0) continue;
        if (a == "--nonce" || a == "--head" || a == "--head=")
            return probe::finish("env", probe::kError, a + " needs a value (" + kUsage + ")",
                                 Json::object());
        if (a.rfind("--nonce=", 0) == 0) nonce = a.substr(8);
        if (a.rfind("--head=", 0) == 0) {
            head = a.substr(7);
            want_head = true;
        }
    }
    const char* path_env = std::getenv("PATH");
    Json data = Json::object({{"nonce", nonce}});
    data.set("uid", static_cast<long long>(::getuid()));
    data.set("gid", static_cast<long long>(::getgid()));
    data.set("euid", static_cast<long long>(::geteuid()));
    data.set("egid", static_cast<long long>(::getegid()));
    char cwd[PATH_MAX];
    const bool have_cwd = ::getcwd(cwd, sizeof cwd) != nullptr;
    data.set("cwd", have_cwd ? Json(cwd) : Json());
    data.set("argv", args);

    // Every variable once; for a name given twice, the first, as getenv(3) answers.
    Json env = Json::object();
    std::set<std::string> names;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        const std::size_t eq = entry.find('=');
        if (eq == std::string::npos || !names.insert(entry.substr(0, eq)).second) continue;
        env.set(entry.substr(0, eq), entry.substr(eq + 1));
    }
    data.set("env", env);

    const Json python = resolved_json("python", path_env);
    const Json python3 = resolved_json("python3", path_env);
    data.set("python", Json::object({{"python", python}, {"python3", python3}}));
    const InterpreterScan scan = find_interpreters(path_env);
    Json interpreters = Json::array();
    for (const auto& i : scan.found())
        interpreters.push(Json::object({{"path", i.path},
                                        {"realpath", i.realpath},
                                        {"via", i.via},
                                        {"elf", elf_of(i.realpath)}}));
    data.set("interpreters", interpreters);
    data.set("interpreters_truncated", scan.truncated());
    if (want_head) data.set("head", head_json(head, path_env));
    // The platform the image's files are built for, when no python says it: its shell.
    data.set("shell", probe::identify_file("/bin/sh"));
    // The size of /dev/shm this container got (a default `docker run`: NCCL and DataLoader
    // workers need more than Docker's 64 MiB), read without a shell.
    struct statvfs shm;
    if (::statvfs("/dev/shm", &shm) == 0)
        data.set("shm_bytes", static_cast<unsigned long long>(shm.f_blocks) * shm.f_frsize);
    else
        data.set("shm_bytes", Json());

    std::printf("uid %u gid %u (euid %u egid %u), cwd %s\n", ::getuid(), ::getgid(), ::geteuid(),
                ::getegid(), have_cwd ? cwd : "(unknown)");
    std::printf("PATH=%s%s\n", path_env ? path_env : kDockerDefaultPath,
                path_env ? "" : " (unset: Docker's default)");
    for (const char* name : {"python", "python3"}) {
        const std::string p = resolve_command(name, path_env);
        std::printf("%s: %s\n", name,
                    p.empty() ? "(not found)" : (p + " -> " + real_path(p)).c_str());
    }
    std::printf("%zu interpreter(s)%s\n", scan.found().size(),
                scan.truncated() ? " (truncated)" : "");
    return probe::finish("env", probe::kPass, "", data);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        return probe::finish("env", probe::kError, std::string("internal error: ") + e.what(),
                             Json::object());
    } catch (...) {
        return probe::finish("env", probe::kError, "internal error", Json::object());
    }
}
