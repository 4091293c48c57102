#pragma once
// The CUDA runtime as the cuda, gemm and cudnn probes use it: dlopened by versioned soname
// (never linked), plus the classification of "why is there no usable GPU" that all three
// report. The toolkit headers give the types and enums only; every function is looked up
// with dlsym, and decltype(&::fn) keeps each pointer's type equal to the header's.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "probe.hpp"

namespace probe {
namespace cuda {

#define PROBE_CUDART_FN(name) decltype(&::name) name = nullptr

// The runtime functions the probes call. All of them exist, under these names, in every
// libcudart from 11.0 to 13.x (cudaGetDeviceProperties does not: 12.0 renamed it _v2 and
// changed cudaDeviceProp, which is why the probes read attributes instead).
struct Runtime {
    Library lib;
    PROBE_CUDART_FN(cudaRuntimeGetVersion);
    PROBE_CUDART_FN(cudaDriverGetVersion);
    PROBE_CUDART_FN(cudaGetDeviceCount);
    PROBE_CUDART_FN(cudaDeviceGetAttribute);
    PROBE_CUDART_FN(cudaSetDevice);
    PROBE_CUDART_FN(cudaMemGetInfo);
    PROBE_CUDART_FN(cudaMalloc);
    PROBE_CUDART_FN(cudaFree);
    PROBE_CUDART_FN(cudaMemcpy);
    PROBE_CUDART_FN(cudaMemset);
    PROBE_CUDART_FN(cudaDeviceSynchronize);
    PROBE_CUDART_FN(cudaEventCreate);
    PROBE_CUDART_FN(cudaEventRecord);
    PROBE_CUDART_FN(cudaEventSynchronize);
    PROBE_CUDART_FN(cudaEventElapsedTime);
    PROBE_CUDART_FN(cudaEventDestroy);
    PROBE_CUDART_FN(cudaGetErrorName);
    PROBE_CUDART_FN(cudaGetErrorString);
    PROBE_CUDART_FN(cudaGetLastError);
    std::string missing;  // the first function dlsym did not find

    // Loads `path` (the libcudart torch loaded), else the newest libcudart the loader finds.
    // False when none loads or a function is missing (then lib.error() or `missing` says
    // which).
    bool load(const std::string& path = {}) {
        lib = Library(
            path_or_sonames(path, {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}));
        if (!lib.ok()) return false;
#define PROBE_CUDART_LOAD(name)                  \
    name = lib.symbol<decltype(&::name)>(#name); \
    if (!name && missing.empty()) missing = #name;
        PROBE_CUDART_LOAD(cudaRuntimeGetVersion)
        PROBE_CUDART_LOAD(cudaDriverGetVersion)
        PROBE_CUDART_LOAD(cudaGetDeviceCount)
        PROBE_CUDART_LOAD(cudaDeviceGetAttribute)
        PROBE_CUDART_LOAD(cudaSetDevice)
        PROBE_CUDART_LOAD(cudaMemGetInfo)
        PROBE_CUDART_LOAD(cudaMalloc)
        PROBE_CUDART_LOAD(cudaFree)
        PROBE_CUDART_LOAD(cudaMemcpy)
        PROBE_CUDART_LOAD(cudaMemset)
        PROBE_CUDART_LOAD(cudaDeviceSynchronize)
        PROBE_CUDART_LOAD(cudaEventCreate)
        PROBE_CUDART_LOAD(cudaEventRecord)
        PROBE_CUDART_LOAD(cudaEventSynchronize)
        PROBE_CUDART_LOAD(cudaEventElapsedTime)
        PROBE_CUDART_LOAD(cudaEventDestroy)
        PROBE_CUDART_LOAD(cudaGetErrorName)
        PROBE_CUDART_LOAD(cudaGetErrorString)
        PROBE_CUDART_LOAD(cudaGetLastError)
#undef PROBE_CUDART_LOAD
        return missing.empty();
    }

    std::string path() const {
        std::string p = lib.path();
        return p.empty() ? lib.soname() : p;
    }

    std::string error_name(cudaError_t e) const {
        const char* n = cudaGetErrorName ? cudaGetErrorName(e) : nullptr;
        return n ? n : "cudaError " + std::to_string(static_cast<int>(e));
    }

    // "cudaMalloc: cudaErrorMemoryAllocation (2)" for reasons and logs.
    std::string describe(const char* what, cudaError_t e) const {
        return std::string(what) + ": " + error_name(e) + " (" +
               std::to_string(static_cast<int>(e)) + ")";
    }
};
#undef PROBE_CUDART_FN

// Why the runtime has no usable GPU, in the classes of probes/README.md.
inline const char* classify(int code, bool driver_library_loaded) {
    if (!driver_library_loaded) return "no_driver";
    switch (code) {
        case 34:
            return "no_driver";  // cudaErrorStubLibrary: the toolkit's stub libcuda, no driver
        case 35:
            return "insufficient_driver";  // cudaErrorInsufficientDriver
        case 804:
            return "forward_compat_unsupported";  // cudaErrorCompatNotSupportedOnDevice
        case 802:
            return "system_not_ready";  // cudaErrorSystemNotReady (fabric manager, ...)
        case 100:
            return "no_device";  // cudaErrorNoDevice
        default:
            return "other";
    }
}

// Whether libcuda.so.1 (the driver's user-space library) can be loaded at all. It stays
// loaded; the runtime would load the same file.
inline bool driver_library_present() {
    static const bool present = [] {
        Library driver({"libcuda.so.1"});
        return driver.ok();  // Library never unloads, so the handle stays valid for cudart
    }();
    return present;
}

// The outcome of asking the runtime for devices.
struct Gpus {
    int count = 0;
    int code = 0;      // cudaError_t of cudaGetDeviceCount (100 when it said 0 devices)
    std::string name;  // "cudaErrorInsufficientDriver"
    std::string cls;   // no_driver, insufficient_driver, ... ("" when usable)
    bool usable() const { return count > 0 && code == 0; }
    // {"code":35,"name":"cudaErrorInsufficientDriver","class":"insufficient_driver"} or null.
    Json error_json() const {
        if (usable()) return Json();
        return Json::object({{"code", code}, {"name", name}, {"class", cls}});
    }
    // The reason a probe gives when it waives for want of a GPU.
    std::string reason() const {
        return "no usable GPU: " + cls + " (cudaGetDeviceCount: " + name + ", " +
               std::to_string(code) + ")";
    }
};

inline Gpus query_gpus(const Runtime& rt) {
    Gpus g;
    int count = 0;
    cudaError_t e = rt.cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        g.count = 0;
        g.code = static_cast<int>(e);
        g.name = rt.error_name(e);
        rt.cudaGetLastError();  // clear the sticky-free error so later calls start clean
    } else if (count <= 0) {
        g.count = 0;
        g.code = static_cast<int>(cudaErrorNoDevice);
        g.name = "cudaErrorNoDevice";
    } else {
        g.count = count;
        return g;
    }
    g.cls = classify(g.code, driver_library_present());
    return g;
}

// The compute capability (9, 0) of a runtime device; false when the attributes cannot be read.
inline bool compute_capability(const Runtime& rt, int device, int& major, int& minor) {
    return rt.cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) ==
               cudaSuccess &&
           rt.cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) ==
               cudaSuccess;
}

// The device's name from the driver API (cuDeviceGetName), which needs no cudaDeviceProp
// and so no knowledge of that struct's layout in this runtime's CUDA major.
inline std::string device_name(int device) {
    static Library driver({"libcuda.so.1"});
    if (!driver.ok()) return {};
    auto init = driver.symbol<decltype(&::cuInit)>("cuInit");
    auto get = driver.symbol<decltype(&::cuDeviceGet)>("cuDeviceGet");
    auto name = driver.symbol<decltype(&::cuDeviceGetName)>("cuDeviceGetName");
    if (!init || !get || !name || init(0) != CUDA_SUCCESS) return {};
    CUdevice dev = 0;
    char buf[256] = {0};
    if (get(&dev, device) != CUDA_SUCCESS || name(buf, sizeof buf - 1, dev) != CUDA_SUCCESS)
        return {};
    return buf;
}

// The CUDA runtime's version as "13.0" (13000 -> 13.0, 12040 -> 12.4).
inline std::string version_text(int v) {
    if (v <= 0) return "none";
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// "580.159.03" from /proc/driver/nvidia/version, or "" when there is no NVIDIA kernel module.
// (stdio, not iostreams: a static libstdc++'s iostreams drag in std::random_device, which
// needs arc4random from glibc 2.36, newer than the oldest image's 2.35.)
inline std::string nvidia_driver_version(const char* path = "/proc/driver/nvidia/version") {
    std::FILE* f = std::fopen(path, "r");
    if (!f) return {};
    char buf[512] = {0};
    const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
    std::fclose(f);
    if (!got) return {};
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.03  Wed Jan 1 ..." or
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.03  Release Build ...":
    // the first word made of digits and dots, with a dot inside.
    const std::string line = buf;
    size_t pos = 0;
    while (pos < line.size()) {
        size_t start = line.find_first_not_of(" \t\r\n", pos);
        if (start == std::string::npos) break;
        size_t end = line.find_first_of(" \t\r\n", start);
        std::string w =
            line.substr(start, end == std::string::npos ? std::string::npos : end - start);
        bool digits_dots = w.find_first_not_of("0123456789.") == std::string::npos;
        if (digits_dots && w.find('.') != std::string::npos && w.front() != '.' && w.back() != '.')
            return w;
        pos = end;
    }
    return {};
}

}  // namespace cuda
}  // namespace probe
