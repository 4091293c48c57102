// The driver and GPUs of a host, as its probe-cuda saw them (preflight --host, node-check).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace td {

struct HostGpus {
    std::string driver;             // "nvidia_driver"; "" when absent or not a string
    std::vector<std::string> gpus;  // the "name" of each object in "devices"
};

HostGpus host_gpus(const nlohmann::json& cuda_probe_data);

}  // namespace td
