#include "engine/container_run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "engine/files.hpp"
#include "engine/interrupt.hpp"
#include "util/strings.hpp"

namespace td::engine {

Result<ContainerRunResult> run_container(const DockerApi& api, const ContainerRunSpec& spec) {
    ContainerSpec c;
    c.image = spec.image;
    c.cmd = spec.cmd;
    if (!spec.keep_entrypoint) c.entrypoint = std::vector<std::string>{};
    c.env = spec.env;
    c.binds = spec.binds;
    c.gpus = spec.gpus;
    c.cpu_shares = spec.cpu_shares;
    c.network_mode = spec.network_mode;
    c.labels = {{"io.torchdock.run", spec.run_label}};
    // What a probe may do to the host: nothing it does not need. Root keeps DAC_OVERRIDE
    // (a default `docker run` has it) so files are read as the image's USER would read them.
    c.confined = true;
    c.cap_add = {"DAC_OVERRIDE"};
    c.pids_limit = 4096;                      // threads count: torch starts one per core
    c.memory_bytes = std::int64_t{16} << 30;  // probe-gemm's operands and torch fit easily
    c.log_max_size = "16m";                   // torchdock reads the last 1000 lines anyway
    c.tmp_size = "1g";                        // the torch probe's rendezvous, LD_DEBUG logs
    // Each VOLUME the image declares gets the same bounded tmpfs (adversarial-3 row 64):
    // otherwise it is an anonymous volume on the engine's disk, writable past the read-only
    // root. Only absolute paths of plain characters are taken (they key a JSON map).
    if (auto info = api.inspect_image(spec.image); info && info.value())
        for (const auto& path : info.value()->volumes)
            if (!path.empty() && path[0] == '/' && path.size() < 256 &&
                path.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789/._-") == std::string::npos)
                c.tmpfs_over.push_back(path);
    auto id = api.create_container(c);
    if (!id) return id.error();
    // The container goes away however we leave: error, timeout or interruption.
    struct Remover {
        const DockerApi& api;
        std::string id;
        ~Remover() { (void)api.remove_container(id); }
    } remover{api, id.value()};

    auto start = std::chrono::steady_clock::now();
    if (auto st = api.start_container(id.value()); !st) return st.error();
    ContainerRunResult result;
    // Wait in short slices so a timeout or Ctrl-C is noticed promptly.
    while (true) {
        auto waited = api.wait_container(id.value(), std::chrono::seconds(1));
        if (waited) {
            result.exit_code = waited.value();
            break;
        }
        if (waited.error().kind != ErrorKind::Timeout) return waited.error();
        if (interrupted()) {
            result.interrupted = true;
            break;
        }
        // Its own time-out, or the deadline the engine calls run under (node-check's).
        if (std::chrono::steady_clock::now() - start > spec.timeout || api.deadline().passed()) {
            result.timed_out = true;
            break;
        }
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (auto logs = api.container_logs(id.value(), spec.whole_log)) {
        result.out = logs->first;
        result.err = logs->second;
    } else {
        result.logs_error = logs.error().message;
    }
    return result;
}

namespace {

std::string first_line_of(const std::string& path) {
    auto text = read_text_file(path, 4096);
    if (!text) return {};
    return text->substr(0, text->find('\n'));
}

// Field 22 of /proc/PID/stat: when the process started (clock ticks since boot). With the
// boot id and the pid namespace it names one process for as long as the machine is up.
std::string start_time(long pid) {
    std::string stat = first_line_of("/proc/" + std::to_string(pid) + "/stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos) return {};
    auto fields = split(stat.substr(close + 2), ' ');
    return fields.size() > 19 ? fields[19] : std::string();
}

std::string pid_namespace() {
    std::error_code ec;
    auto target = std::filesystem::read_symlink("/proc/self/ns/pid", ec);
    std::string s = target.string();  // "pid:[4026531836]"
    std::string digits;
    for (char c : s)
        if (c >= '0' && c <= '9') digits += c;
    return digits;
}

std::string this_process() {
    return first_line_of("/proc/sys/kernel/random/boot_id") + "." + pid_namespace() + "." +
           std::to_string(::getpid()) + "." + start_time(::getpid());
}

}  // namespace

std::string new_run_label() {
    std::random_device rd;
    char random[32];
    std::snprintf(random, sizeof random, "%08x", rd());
    // "<boot id>.<pid namespace>.<pid>.<start time>.<random>": who started the run, so a
    // later run can tell whether it is still alive.
    return this_process() + "." + random;
}

void remove_run_containers(const DockerApi& api, const std::string& run_label) {
    auto ids = api.containers_with_label("io.torchdock.run=" + run_label);
    if (!ids) return;
    for (const auto& [id, label] : ids.value()) (void)api.remove_container(id);
}

int sweep_dead_runs(const DockerApi& api) {
    auto found = api.containers_with_label("io.torchdock.run");
    if (!found) return 0;
    auto me = split(this_process(), '.');
    int removed = 0;
    for (const auto& [id, label] : found.value()) {
        auto parts = split(label, '.');
        // Only runs of this machine's kernel and pid namespace can be judged from here.
        if (parts.size() != 5 || me.size() != 4 || parts[0] != me[0] || parts[1] != me[1]) continue;
        char* end = nullptr;
        long pid = std::strtol(parts[2].c_str(), &end, 10);
        if (!end || *end || pid <= 0) continue;
        if (start_time(pid) == parts[3]) continue;  // that torchdock is still running
        if (api.remove_container(id)) ++removed;
    }
    return removed;
}

}  // namespace td::engine
