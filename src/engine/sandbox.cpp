#include "engine/sandbox.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "core/build/image_source.hpp"
#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "engine/layer_unpack.hpp"
#include "engine/process.hpp"
#include "util/strings.hpp"

namespace td::engine {
namespace {

constexpr long long k_tmp_bytes = 1LL << 30;                 // as the engine path's tmpfs at /tmp
constexpr long long k_shm_bytes = 64LL << 20;                // the engine's default /dev/shm
constexpr std::size_t k_max_output = std::size_t{16} << 20;  // as the engine path's json log

// A file of the root as text ("" when absent): read below the root without following links.
std::string root_text(const std::filesystem::path& root, const std::string& rel) {
    auto text = read_file_in_tree(root, rel, std::size_t{1} << 20);
    return text ? text.value() : std::string();
}

bool plain_path(const std::string& p) {
    return !p.empty() && p[0] == '/' && p.size() < 256 && p.find("..") == std::string::npos &&
           p.find_first_not_of(
               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-") ==
               std::string::npos;
}

// The mode of the tmpfs at /tmp ("1777"), or nullopt when the image's USER could not write the
// image's own /tmp (its mode and owner, read without following a link): then no tmpfs.
std::optional<std::string> tmp_mode_for(const std::filesystem::path& root, long uid, long gid) {
    struct stat st {};
    if (::fstatat(AT_FDCWD, (root / "tmp").c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode))
        return std::string("1777");
    bool writable = uid == 0 || (static_cast<long>(st.st_uid) == uid   ? (st.st_mode & S_IWUSR)
                                 : static_cast<long>(st.st_gid) == gid ? (st.st_mode & S_IWGRP)
                                                                       : (st.st_mode & S_IWOTH));
    if (!writable) return std::nullopt;
    char mode[8];
    std::snprintf(mode, sizeof mode, "%o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string(mode);
}

// "" when `uid`/`gid` may search every directory down to `path`, else the first that stops it.
std::string unreachable_by(const std::filesystem::path& path, long uid, long gid) {
    std::filesystem::path at;
    for (const auto& part : std::filesystem::absolute(path)) {
        at /= part;
        struct stat st {};
        if (::stat(at.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        bool x = static_cast<long>(st.st_uid) == uid   ? (st.st_mode & S_IXUSR)
                 : static_cast<long>(st.st_gid) == gid ? (st.st_mode & S_IXGRP)
                                                       : (st.st_mode & S_IXOTH);
        if (!x) {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%o", static_cast<unsigned>(st.st_mode & 07777));
            return at.string() + " is mode " + mode + " owned by uid " + std::to_string(st.st_uid);
        }
    }
    return "";
}

}  // namespace

Result<std::string> find_bwrap() {
    std::string found = find_program("bwrap");
    if (found.empty())
        return Error{ErrorKind::Environment,
                     "the sandbox tier needs bubblewrap (`bwrap`), which is not on PATH: install "
                     "Debian's package bubblewrap (apt-get install bubblewrap)"};
    return found;
}

SandboxHost::SandboxHost(std::filesystem::path root, ImageInfo info, std::string reference)
    : m_root(std::move(root)), m_info(std::move(info)), m_reference(std::move(reference)) {}

Result<std::optional<ImageInfo>> SandboxHost::inspect_image(const std::string& ref) const {
    if (ref != m_reference && ref != m_info.id) return std::optional<ImageInfo>{};
    return std::optional<ImageInfo>(m_info);
}

Status SandboxHost::ping() const {
    std::error_code ec;
    if (!std::filesystem::is_directory(m_root, ec))
        return Error{ErrorKind::Environment,
                     "the sandbox's root " + m_root.string() + " is gone (a cache prune?)"};
    return ok_status();
}

Result<ImageUser> SandboxHost::as_image_user() const {
    return resolve_image_user(m_info.user, root_text(m_root, "etc/passwd"),
                              root_text(m_root, "etc/group"));
}

Result<std::vector<std::string>> SandboxHost::bwrap_argv(const ContainerRunSpec& spec) const {
    if (spec.image != m_reference && spec.image != m_info.id)
        return Error{ErrorKind::Usage,
                     "the sandbox of " + m_reference + " cannot run " + spec.image};
    if (spec.gpus != 0)
        return Error{ErrorKind::Environment,
                     "the sandbox tier binds no GPU (the NVIDIA Container Toolkit's CDI devices "
                     "are not read yet); run the GPU tier through an engine"};
    auto bwrap = find_bwrap();
    if (!bwrap) return bwrap.error();
    auto user = as_image_user();
    if (!user) return user.error();
    std::string hostname = m_info.id.size() > 19 ? m_info.id.substr(7, 12) : "torchdock";
    std::vector<std::string> argv = {
        bwrap.value(), "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--uid",
        std::to_string(user->uid), "--gid", std::to_string(user->gid), "--hostname", hostname,
        // The root is bound writable only so that bwrap can make mount points in it; it is
        // read-only before anything of the image runs (--remount-ro below).
        "--bind", m_root.string(), "/", "--proc", "/proc", "--dev", "/dev", "--ro-bind-try", "/sys",
        "/sys", "--perms", "1777", "--size", std::to_string(k_shm_bytes), "--tmpfs", "/dev/shm"};
    // /tmp as the engine's tmpfs there: the image's own /tmp mode (copied up), so a USER that
    // cannot write the image's /tmp cannot write it here either (the root stays read-only).
    if (auto tmp = tmp_mode_for(m_root, user->uid, user->gid))
        for (const auto& a :
             {std::string("--perms"), *tmp, std::string("--size"), std::to_string(k_tmp_bytes),
              std::string("--tmpfs"), std::string("/tmp")})
            argv.push_back(a);
    if (spec.network_mode != "host") argv.push_back("--unshare-net");
    // Root keeps DAC_OVERRIDE, as in the engine path's probe containers (a default `docker run`
    // has it): files are read as the image's USER would read them.
    if (user->uid == 0)
        for (const char* a : {"--cap-add", "CAP_DAC_OVERRIDE"}) argv.push_back(a);
    for (const auto& vol : m_info.volumes)
        if (plain_path(vol) && vol != "/tmp")
            for (const auto& a :
                 {std::string("--perms"), std::string("1777"), std::string("--size"),
                  std::to_string(k_tmp_bytes), std::string("--tmpfs"), vol})
                argv.push_back(a);
    for (const auto& bind : spec.binds) {
        auto parts = split(bind, ':');
        if (parts.size() < 2 || !plain_path(parts[1]))
            return Error{ErrorKind::Usage,
                         "bind " + quote_value(bind) + " is not host:container[:ro]"};
        bool ro = parts.size() > 2 && parts[2] == "ro";
        for (const auto& a : {std::string(ro ? "--ro-bind" : "--bind"), parts[0], parts[1]})
            argv.push_back(a);
    }
    argv.push_back("--remount-ro");
    argv.push_back("/");
    std::string workdir = m_info.working_dir.empty() ? "/" : m_info.working_dir;
    argv.push_back("--chdir");
    argv.push_back(workdir);
    argv.push_back("--clearenv");
    for (const auto& kv : engine_environment(m_info.env, spec.env, hostname, user->home)) {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) continue;
        argv.push_back("--setenv");
        argv.push_back(kv.substr(0, eq));
        argv.push_back(kv.substr(eq + 1));
    }
    argv.push_back("--");
    std::vector<std::string> command;
    if (spec.keep_entrypoint) command = m_info.entrypoint;
    for (const auto& c : spec.cmd) command.push_back(c);
    if (command.empty())
        return Error{ErrorKind::Usage, "nothing to run in " + m_reference + " (no command)"};
    for (auto& c : command) argv.push_back(std::move(c));
    return argv;
}

Result<ContainerRunResult> SandboxHost::run(const ContainerRunSpec& spec) const {
    auto argv = bwrap_argv(spec);
    if (!argv) return argv.error();
    // Mount points bubblewrap would otherwise make itself (it cannot, as the image's user,
    // in a root that root owns): the binds' targets and the VOLUMEs.
    for (const auto& bind : spec.binds)
        if (auto parts = split(bind, ':'); parts.size() >= 2)
            (void)make_directories_in(m_root, parts[1]);
    for (const auto& vol : m_info.volumes)
        if (plain_path(vol)) (void)make_directories_in(m_root, vol);
    // As root, with an image USER that is not root: bubblewrap runs as that user
    // (`setpriv`), so the files keep the owners the layers gave them and the kernel judges
    // the image's USER against them as in a container. bubblewrap binds paths as that user,
    // so each must be reachable by it (bubblewrap 0.8's --bind-fd binds the path behind the
    // descriptor, which does not help).
    auto user = as_image_user();
    if (!user) return user.error();
    std::vector<std::string> cmd = std::move(argv.value());
    if (user->uid != 0 && ::geteuid() == 0) {
        std::string setpriv = find_program("setpriv");
        if (setpriv.empty())
            return Error{ErrorKind::Environment,
                         "the sandbox needs util-linux's setpriv to run as the image's USER"};
        for (std::size_t i = 0; i + 2 < cmd.size() && cmd[i] != "--"; ++i)
            if (cmd[i] == "--bind" || cmd[i] == "--ro-bind")
                if (auto why = unreachable_by(cmd[i + 1], user->uid, user->gid); !why.empty())
                    return Error{ErrorKind::Environment,
                                 "the sandbox runs " + m_reference + " as its USER (uid " +
                                     std::to_string(user->uid) + "), which cannot reach " +
                                     cmd[i + 1] + " (" + why +
                                     "); keep the image store (TORCHDOCK_CACHE_DIR) and the "
                                     "probes where others may enter"};
        cmd.insert(cmd.begin(), {setpriv, "--reuid=" + std::to_string(user->uid),
                                 "--regid=" + std::to_string(user->gid), "--clear-groups", "--"});
    }
    ProcessSpec p;
    p.argv = std::move(cmd);
    p.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};  // bwrap's own; the image's is --setenv'd
    p.timeout = spec.timeout;
    p.max_output = k_max_output;
    auto r = run_process(p);
    if (!r) return r.error();
    ContainerRunResult out;
    out.seconds = r->seconds;
    out.out = std::move(r->out);
    out.err = std::move(r->err);
    switch (r->outcome) {
        case ProcessResult::Outcome::Exited:
            out.exit_code = r->exit_code;
            break;
        case ProcessResult::Outcome::Signaled:
            out.exit_code = 128 + r->signal;
            break;
        case ProcessResult::Outcome::TimedOut:
            out.timed_out = true;
            break;
        case ProcessResult::Outcome::Interrupted:
            out.interrupted = true;
            break;
    }
    if (r->out_truncated || r->err_truncated)
        out.logs_error = "the output passed " + std::to_string(k_max_output >> 20) +
                         " MiB; only its end was kept";
    return out;
}

}  // namespace td::engine
