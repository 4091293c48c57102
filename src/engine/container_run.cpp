#include "engine/container_run.hpp"

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "engine/interrupt.hpp"

namespace td::engine {

Result<ContainerRunResult> run_container(const DockerApi& api, const ContainerRunSpec& spec) {
    ContainerSpec c;
    c.image = spec.image;
    c.cmd = spec.cmd;
    c.binds = spec.binds;
    c.gpus = spec.gpus;
    c.network_mode = "none";
    c.labels = {{"io.torchdock.run", spec.run_label}};
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
        if (std::chrono::steady_clock::now() - start > spec.timeout) {
            result.timed_out = true;
            break;
        }
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (auto logs = api.container_logs(id.value())) {
        result.out = logs->first;
        result.err = logs->second;
    }
    return result;
}

std::string new_run_label() {
    std::random_device rd;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
    return buf;
}

void remove_run_containers(const DockerApi& api, const std::string& run_label) {
    auto ids = api.containers_with_label("io.torchdock.run=" + run_label);
    if (!ids) return;
    for (const auto& id : ids.value()) (void)api.remove_container(id);
}

}  // namespace td::engine
