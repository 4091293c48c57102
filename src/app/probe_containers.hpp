#pragma once
// The throwaway probe containers of validate and doctor --image: what happens to them when
// a run starts (leftovers of killed runs are removed) and when it is interrupted.
#include <string>

#include "engine/docker_api.hpp"

namespace td::app {

// Removes the containers of earlier torchdock runs that were killed, and says so.
void remove_leftovers_of_killed_runs(const engine::DockerApi& api);

// After Ctrl-C or SIGTERM: removes this run's containers, says truthfully whether that
// worked (it lists them again), and returns the exit code (130).
int stop_interrupted_run(const engine::DockerApi& api, const std::string& run_label);
// The same for a run with no engine: the sandbox's processes died with their process group.
int stop_interrupted_sandbox_run();

}  // namespace td::app
