#pragma once
// Runs one command in a throwaway container and always removes it: the probes run this
// way, with --network=none, the probe directory bind-mounted read-only, a time limit, and
// a label that lets an interrupted run find and remove what it started; confined (every
// capability but DAC_OVERRIDE dropped, no-new-privileges, 4096 pids, 16 GiB of memory, a
// 16 MiB json log, a read-only root with a 1 GiB tmpfs at /tmp), so what an image does
// during a probe cannot fill the host's disk or reach beyond the container.
#include <chrono>
#include <string>
#include <vector>

#include "engine/docker_api.hpp"

namespace td::engine {

struct ContainerRunResult {
    int exit_code = -1;
    bool timed_out = false;
    bool interrupted = false;
    std::string out, err;
    std::string logs_error;  // why out/err could not be read (too much output, engine gone)
    double seconds = 0;
};

struct ContainerRunSpec {
    std::string image;
    std::vector<std::string> cmd;
    // The image's ENTRYPOINT never receives a probe's command (an app would run instead, or
    // answer for the probe): it is removed unless `keep_entrypoint` (only to capture what a
    // wrapper entrypoint sets up, engine/runtime_env).
    bool keep_entrypoint = false;
    std::vector<std::string> env;    // "NAME=value" over the image's Env
    std::vector<std::string> binds;  // "host:container:ro"
    int gpus = 0;                    // 0 none, -1 all, N
    int cpu_shares = 0;              // ContainerSpec::cpu_shares
    // No network ("none") unless the probe talks to other hosts: a multi-node all-reduce's
    // ranks rendezvous and exchange data over the host's network ("host").
    std::string network_mode = "none";
    std::chrono::milliseconds timeout{std::chrono::seconds(120)};
    std::string run_label;   // value of io.torchdock.run
    bool whole_log = false;  // DockerApi::container_logs(whole): not only the last lines
};

Result<ContainerRunResult> run_container(const DockerApi& api, const ContainerRunSpec& spec);

// A fresh value for io.torchdock.run, so one run's containers can be found and removed. It
// names this process (boot id, pid namespace, pid, start time) so a later run can tell
// whether the run that made a container is still alive.
std::string new_run_label();

// Removes every container labelled io.torchdock.run=<run_label> (after Ctrl-C; the requests
// are sent although an interrupt arrived).
void remove_run_containers(const DockerApi& api, const std::string& run_label);

// Removes the containers of earlier runs whose torchdock process is gone (SIGKILLed: it
// could not clean up). Runs of another machine or pid namespace are left alone. Returns
// how many were removed.
int sweep_dead_runs(const DockerApi& api);

}  // namespace td::engine
