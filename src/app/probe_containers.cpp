#include "app/probe_containers.hpp"

#include <iostream>

#include "app/exit_codes.hpp"
#include "app/output.hpp"
#include "engine/container_run.hpp"

namespace td::app {

void remove_leftovers_of_killed_runs(const engine::DockerApi& api) {
    if (int swept = engine::sweep_dead_runs(api); swept > 0)
        std::cerr << "torchdock: removed " << swept
                  << " probe container(s) left by an earlier torchdock that was killed\n";
}

int stop_interrupted_run(const engine::DockerApi& api, const std::string& run_label) {
    engine::remove_run_containers(api, run_label);
    auto left = api.containers_with_label("io.torchdock.run=" + run_label);
    if (!left)
        print_error("interrupted; could not check that the probe containers were removed (" +
                    left.error().message + ")");
    else if (!left->empty())
        print_error(
            "interrupted; " + std::to_string(left->size()) +
            " probe container(s) could not be removed (label io.torchdock.run=" + run_label + ")");
    else
        print_error("interrupted; the probe containers were removed");
    return k_exit_interrupted;
}

int stop_interrupted_sandbox_run() {
    print_error("interrupted; the sandbox's probes were stopped (their process groups killed)");
    return k_exit_interrupted;
}

}  // namespace td::app
