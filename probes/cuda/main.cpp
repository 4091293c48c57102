// probe-cuda: which CUDA runtime and driver this environment has, and which GPUs they see.
//
// pass: at least one device; waived: no usable GPU (data.error.class says why: no_driver,
// insufficient_driver, forward_compat_unsupported, system_not_ready, no_device, other);
// error: no libcudart loads, or a device could not be queried.
//
// Layout independence: cudaDeviceProp changed between CUDA majors (and 12.0 renamed
// cudaGetDeviceProperties to _v2), so nothing here reads it. Compute capability and the
// multiprocessor count come from cudaDeviceGetAttribute (stable enum values), the name and
// memory size from the driver API (cuDeviceGetName, cuDeviceTotalMem_v2), with
// cudaMemGetInfo as the fallback for the size.
#include <cstdio>
#include <string>

#include "cudart.hpp"

namespace {

using probe::Json;

// Total memory of a device: the driver API's figure, else the runtime's (which makes a
// context on the device).
Json total_memory(const probe::cuda::Runtime& rt, int device) {
    static probe::Library driver({"libcuda.so.1"});
    if (driver.ok()) {
        auto get = driver.symbol<decltype(&::cuDeviceGet)>("cuDeviceGet");
        auto total = driver.symbol<decltype(&::cuDeviceTotalMem)>("cuDeviceTotalMem_v2");
        CUdevice dev = 0;
        size_t bytes = 0;
        if (get && total && get(&dev, device) == CUDA_SUCCESS && total(&bytes, dev) == CUDA_SUCCESS)
            return Json(static_cast<unsigned long long>(bytes));
    }
    size_t free_b = 0, total_b = 0;
    if (rt.cudaSetDevice(device) == cudaSuccess &&
        rt.cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        return Json(static_cast<unsigned long long>(total_b));
    return Json();
}

}  // namespace

int main(int argc, char** argv) {
    const char* kName = "cuda";
    auto flags = probe::parse_flags(argc, argv);
    Json data = Json::object();
    if (auto bad = probe::unknown_flag(flags, {"library"}, "probe-cuda takes --library=PATH");
        !bad.empty())
        return probe::finish(kName, probe::kError, bad, data);

    std::string nvidia = probe::cuda::nvidia_driver_version();
    probe::cuda::Runtime rt;
    if (!rt.load(flags.count("library") ? flags["library"] : "")) {
        std::string why = rt.lib.ok() ? "libcudart has no " + rt.missing
                                      : "no libcudart loads: " + rt.lib.error();
        std::printf("cuda: %s\n", why.c_str());
        data.set("runtime_library", rt.lib.ok() ? Json(rt.path()) : Json());
        data.set("runtime_version", Json());
        data.set("driver_version", Json());
        data.set("nvidia_driver", nvidia.empty() ? Json() : Json(nvidia));
        data.set("device_count", 0);
        data.set("devices", Json::array());
        data.set("error", Json());
        // No CUDA runtime at all is an observation (a CPU image), not a failure of the probe.
        return probe::finish(kName, rt.lib.absent() ? probe::kWaived : probe::kError, why, data);
    }

    int runtime_version = 0, driver_version = 0;
    rt.cudaRuntimeGetVersion(&runtime_version);
    // Succeeds with 0 when no driver is installed.
    if (rt.cudaDriverGetVersion(&driver_version) != cudaSuccess) driver_version = 0;
    probe::cuda::Gpus gpus = probe::cuda::query_gpus(rt);

    std::printf("cuda: runtime %s (%d) from %s\n",
                probe::cuda::version_text(runtime_version).c_str(), runtime_version,
                rt.path().c_str());
    std::printf("cuda: driver supports CUDA %s (%d); NVIDIA driver %s; libcuda.so.1 %s\n",
                driver_version > 0 ? probe::cuda::version_text(driver_version).c_str() : "-",
                driver_version,
                nvidia.empty() ? "not loaded (no /proc/driver/nvidia/version)" : nvidia.c_str(),
                probe::cuda::driver_library_present() ? "loads" : "does not load");

    Json devices = Json::array();
    std::string device_error;
    for (int i = 0; i < gpus.count; ++i) {
        int major = 0, minor = 0, sms = 0;
        bool cc_ok = probe::cuda::compute_capability(rt, i, major, minor);
        bool sm_ok =
            rt.cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, i) == cudaSuccess;
        std::string name = probe::cuda::device_name(i);
        Json memory = total_memory(rt, i);
        if (!cc_ok || !sm_ok || name.empty()) {
            if (device_error.empty()) device_error = "could not query device " + std::to_string(i);
        }
        std::string cc = cc_ok ? std::to_string(major) + "." + std::to_string(minor) : "";
        std::printf("cuda: device %d: %s, cc %s, %d SMs, %s bytes\n", i,
                    name.empty() ? "?" : name.c_str(), cc.empty() ? "?" : cc.c_str(), sms,
                    memory.text().c_str());
        devices.push(Json::object({{"index", i},
                                   {"name", name.empty() ? Json() : Json(name)},
                                   {"cc", cc_ok ? Json(cc) : Json()},
                                   {"memory_bytes", memory},
                                   {"multiprocessors", sm_ok ? Json(sms) : Json()}}));
    }
    if (!gpus.usable()) std::printf("cuda: %s\n", gpus.reason().c_str());

    data.set("runtime_library", rt.path());
    data.set("runtime_version", runtime_version);
    data.set("driver_version", driver_version > 0 ? Json(driver_version) : Json());
    data.set("nvidia_driver", nvidia.empty() ? Json() : Json(nvidia));
    data.set("device_count", gpus.count);
    data.set("devices", devices);
    data.set("error", gpus.error_json());

    if (!gpus.usable()) return probe::finish(kName, probe::kWaived, gpus.reason(), data);
    if (!device_error.empty()) return probe::finish(kName, probe::kError, device_error, data);
    return probe::finish(kName, probe::kPass, "", data);
}
