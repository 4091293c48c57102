#include "core/diagnose/host_gpus.hpp"

namespace td {

HostGpus host_gpus(const nlohmann::json& cuda_probe_data) {
    HostGpus host;
    if (!cuda_probe_data.is_object()) return host;
    auto driver = cuda_probe_data.find("nvidia_driver");
    if (driver != cuda_probe_data.end() && driver->is_string()) host.driver = *driver;
    auto devices = cuda_probe_data.find("devices");
    if (devices == cuda_probe_data.end() || !devices->is_array()) return host;
    for (const auto& d : *devices) {
        if (!d.is_object()) continue;
        auto name = d.find("name");
        host.gpus.push_back(name != d.end() && name->is_string() ? name->get<std::string>() : "");
    }
    return host;
}

}  // namespace td
