#include "engine/environment_facts.hpp"

#include <gnu/libc-version.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "engine/files.hpp"
#include "engine/probe_exec.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace td::engine {
namespace fs = std::filesystem;

namespace {

std::string detect_container_runtime() {
    std::error_code ec;
    if (fs::exists("/.dockerenv", ec)) return "docker";
    if (fs::exists("/run/.containerenv", ec)) return "podman";
    if (std::getenv("KUBERNETES_SERVICE_HOST")) return "kubernetes";
    if (auto cg = read_text_file("/proc/1/cgroup")) {
        if (cg->find("kubepods") != std::string::npos) return "kubernetes";
        if (cg->find("docker") != std::string::npos) return "docker";
    }
    return "none";
}

// `stat -f -c '%b %S'` output: blocks and block size.
std::optional<long long> parse_statfs(const std::string& line) {
    auto parts = split(line.substr(0, line.find('\n')), ' ');
    if (parts.size() != 2) return std::nullopt;
    return std::atoll(parts[0].c_str()) * std::atoll(parts[1].c_str());
}

}  // namespace

Result<long long> shm_bytes_in_image(const ImageHost& api, const std::string& image,
                                     const std::string& run_label) {
    auto out = run_shell_in_image(api, image, "stat -f -c '%b %S' /dev/shm", run_label);
    if (!out) return out.error();
    auto bytes = parse_statfs(out.value());
    if (!bytes)
        return Error{ErrorKind::Environment,
                     "`stat -f /dev/shm` in the image printed " + quote_value(out->substr(0, 80))};
    return *bytes;
}

EnvironmentFacts host_facts() {
    EnvironmentFacts f;
    f.kind = "host";
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    f.subject = host;
    if (auto os = read_text_file("/etc/os-release")) f.os_release = parse_os_release(os.value());
    f.glibc = gnu_get_libc_version();
    for (char** e = environ; *e; ++e) f.env.emplace_back(*e);
    struct statvfs st {};
    if (::statvfs("/dev/shm", &st) == 0)
        f.shm_bytes = static_cast<long long>(st.f_blocks) * static_cast<long long>(st.f_frsize);
    f.container_runtime = detect_container_runtime();
    struct rlimit lock {};
    if (::getrlimit(RLIMIT_MEMLOCK, &lock) == 0)
        f.memlock_bytes =
            lock.rlim_cur == RLIM_INFINITY ? -1 : static_cast<long long>(lock.rlim_cur);
    std::error_code ec;
    for (fs::directory_iterator it("/dev/infiniband", ec), end; !ec && it != end; it.increment(ec))
        f.infiniband.push_back(it->path().filename().string());
    std::sort(f.infiniband.begin(), f.infiniband.end());
    return f;
}

HostReading read_host(const KnowledgeBase& kb, const fs::path& probes_dir,
                      const std::optional<std::string>& python, int timeout_s) {
    HostReading r;
    r.facts = host_facts();
    RuntimePlan plan = plan_runtime(r.facts.env, {}, nullptr, nullptr, "", python);
    r.facts.interpreter_why = plan.why;
    Prober on_host{[&](const ProbeSpec& p) { return run_probe_on_host(p, probes_dir, timeout_s); },
                   {}};
    r.probes = run_probes(doctor_probes(), plan, kb, on_host);
    return r;
}

bool host_emulates(const std::string& elf_machine) {
    if (elf_machine.empty() || elf_machine.find('/') != std::string::npos) return false;
    const fs::path dir = "/proc/sys/fs/binfmt_misc";
    auto first_line = [](const fs::path& p) {
        auto text = read_text_file(p, 1 << 16);
        return text ? text.value().substr(0, text.value().find('\n')) : std::string();
    };
    return first_line(dir / "status") == "enabled" &&
           first_line(dir / ("qemu-" + elf_machine)) == "enabled";
}

Result<EnvironmentFacts> image_facts(const ImageHost& api, const std::string& image,
                                     const std::string& run_label) {
    auto info = api.inspect_image(image);
    if (!info) return info.error();
    if (!info.value())
        return Error{ErrorKind::Config, "no such image: " + image + " (build or pull it first)"};
    EnvironmentFacts f;
    f.kind = "image";
    f.subject = image;
    f.env = info.value()->env;
    f.labels = info.value()->labels;
    f.container_runtime = "docker (default run: no --ipc, no --shm-size)";
    // One container for the rest; markers keep the sections apart.
    auto out =
        run_shell_in_image(api, image,
                           "cat /etc/os-release 2>/dev/null; echo '@@glibc'; (getconf "
                           "GNU_LIBC_VERSION || ldd --version | head -1) "
                           "2>/dev/null; echo '@@shm'; stat -f -c '%b %S' /dev/shm 2>/dev/null",
                           run_label);
    if (!out) return f;  // no shell: facts stay empty, the probes still tell the rest
    const std::string& t = out.value();
    auto glibc_at = t.find("@@glibc"), shm_at = t.find("@@shm");
    f.os_release = parse_os_release(t.substr(0, glibc_at));
    if (glibc_at != std::string::npos) {
        std::string g = t.substr(glibc_at + 8, shm_at - glibc_at - 8);
        auto last_space = g.find_last_of(' ');
        g = last_space == std::string::npos ? g : g.substr(last_space + 1);
        while (!g.empty() && std::isspace(static_cast<unsigned char>(g.back()))) g.pop_back();
        f.glibc = g;
    }
    if (shm_at != std::string::npos) f.shm_bytes = parse_statfs(t.substr(shm_at + 6));
    return f;
}

}  // namespace td::engine
