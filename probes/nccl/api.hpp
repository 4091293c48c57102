#pragma once
// The CUDA runtime and NCCL entry points the nccl probe uses, resolved through dlopen
// (probe::Library). The toolkit headers provide the types only; nothing links against
// a CUDA library, so one build serves CUDA 11.8, 12.x and 13.x images.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <string>

#include "probe.hpp"

namespace ncclprobe {

// Looks up one symbol; appends its name to `missing` when the library lacks it. Not named
// `bind`: with libc++ the std::string argument brings std::bind in by ADL, and it wins.
template <typename Fn>
inline void bind_symbol(const probe::Library& lib, Fn& fn, const char* name, std::string& missing) {
    fn = lib.symbol<Fn>(name);
    if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
}

struct Cudart {
    probe::Library lib;
    cudaError_t (*GetDeviceCount)(int*) = nullptr;
    cudaError_t (*SetDevice)(int) = nullptr;
    cudaError_t (*Malloc)(void**, size_t) = nullptr;
    cudaError_t (*Free)(void*) = nullptr;
    cudaError_t (*Memcpy)(void*, const void*, size_t, cudaMemcpyKind) = nullptr;
    cudaError_t (*Memset)(void*, int, size_t) = nullptr;
    cudaError_t (*StreamCreate)(cudaStream_t*) = nullptr;
    cudaError_t (*StreamDestroy)(cudaStream_t) = nullptr;
    cudaError_t (*StreamSynchronize)(cudaStream_t) = nullptr;
    cudaError_t (*EventCreate)(cudaEvent_t*) = nullptr;
    cudaError_t (*EventDestroy)(cudaEvent_t) = nullptr;
    cudaError_t (*EventRecord)(cudaEvent_t, cudaStream_t) = nullptr;
    cudaError_t (*EventSynchronize)(cudaEvent_t) = nullptr;
    cudaError_t (*EventElapsedTime)(float*, cudaEvent_t, cudaEvent_t) = nullptr;
    const char* (*GetErrorName)(cudaError_t) = nullptr;
    const char* (*GetErrorString)(cudaError_t) = nullptr;

    // Opens the newest CUDA runtime there is; false with `error` set when none loads or
    // a symbol is missing.
    bool load(std::string& error, const std::string& path = {}) {
        lib = probe::Library(probe::path_or_sonames(
            path, {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}));
        if (!lib.ok()) {
            error =
                "no CUDA runtime (libcudart.so.13, .so.12, .so.11.0) can be loaded: " + lib.error();
            return false;
        }
        std::string missing;
        bind_symbol(lib, GetDeviceCount, "cudaGetDeviceCount", missing);
        bind_symbol(lib, SetDevice, "cudaSetDevice", missing);
        bind_symbol(lib, Malloc, "cudaMalloc", missing);
        bind_symbol(lib, Free, "cudaFree", missing);
        bind_symbol(lib, Memcpy, "cudaMemcpy", missing);
        bind_symbol(lib, Memset, "cudaMemset", missing);
        bind_symbol(lib, StreamCreate, "cudaStreamCreate", missing);
        bind_symbol(lib, StreamDestroy, "cudaStreamDestroy", missing);
        bind_symbol(lib, StreamSynchronize, "cudaStreamSynchronize", missing);
        bind_symbol(lib, EventCreate, "cudaEventCreate", missing);
        bind_symbol(lib, EventDestroy, "cudaEventDestroy", missing);
        bind_symbol(lib, EventRecord, "cudaEventRecord", missing);
        bind_symbol(lib, EventSynchronize, "cudaEventSynchronize", missing);
        bind_symbol(lib, EventElapsedTime, "cudaEventElapsedTime", missing);
        bind_symbol(lib, GetErrorName, "cudaGetErrorName", missing);
        bind_symbol(lib, GetErrorString, "cudaGetErrorString", missing);
        if (!missing.empty()) {
            error = lib.soname() + " lacks " + missing;
            return false;
        }
        return true;
    }
    std::string error_name(cudaError_t e) const {
        const char* n = GetErrorName ? GetErrorName(e) : nullptr;
        return n ? n : "cudaError";
    }
    // "cudaErrorInsufficientDriver (35)"
    std::string describe(cudaError_t e) const {
        return error_name(e) + " (" + std::to_string(static_cast<int>(e)) + ")";
    }
};

struct Nccl {
    probe::Library lib;
    ncclResult_t (*GetVersion)(int*) = nullptr;
    ncclResult_t (*GetUniqueId)(ncclUniqueId*) = nullptr;
    ncclResult_t (*CommInitRank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
    ncclResult_t (*CommInitAll)(ncclComm_t*, int, const int*) = nullptr;
    ncclResult_t (*CommDestroy)(ncclComm_t) = nullptr;
    ncclResult_t (*AllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                              cudaStream_t) = nullptr;
    ncclResult_t (*GroupStart)() = nullptr;
    ncclResult_t (*GroupEnd)() = nullptr;
    const char* (*GetErrorString)(ncclResult_t) = nullptr;

    bool load(std::string& error, const std::string& path = {}) {
        lib = probe::Library(probe::path_or_sonames(path, {"libnccl.so.2"}));
        if (!lib.ok()) {
            error = "libnccl.so.2 cannot be loaded: " + lib.error();
            return false;
        }
        std::string missing;
        bind_symbol(lib, GetVersion, "ncclGetVersion", missing);
        bind_symbol(lib, GetUniqueId, "ncclGetUniqueId", missing);
        bind_symbol(lib, CommInitRank, "ncclCommInitRank", missing);
        bind_symbol(lib, CommInitAll, "ncclCommInitAll", missing);
        bind_symbol(lib, CommDestroy, "ncclCommDestroy", missing);
        bind_symbol(lib, AllReduce, "ncclAllReduce", missing);
        bind_symbol(lib, GroupStart, "ncclGroupStart", missing);
        bind_symbol(lib, GroupEnd, "ncclGroupEnd", missing);
        bind_symbol(lib, GetErrorString, "ncclGetErrorString", missing);
        if (!missing.empty()) {
            error = "libnccl.so.2 lacks " + missing;
            return false;
        }
        return true;
    }
    static const char* result_name(ncclResult_t r) {
        switch (static_cast<int>(r)) {
            case 0:
                return "ncclSuccess";
            case 1:
                return "ncclUnhandledCudaError";
            case 2:
                return "ncclSystemError";
            case 3:
                return "ncclInternalError";
            case 4:
                return "ncclInvalidArgument";
            case 5:
                return "ncclInvalidUsage";
            case 6:
                return "ncclRemoteError";
            case 7:
                return "ncclInProgress";
        }
        return "ncclResult";
    }
    // "unhandled system error (ncclSystemError, 2)"
    std::string describe(ncclResult_t r) const {
        const char* s = GetErrorString ? GetErrorString(r) : nullptr;
        return std::string(s ? s : "error") + " (" + result_name(r) + ", " +
               std::to_string(static_cast<int>(r)) + ")";
    }
};

// ncclGetVersion's code: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9 on (NCCL_VERSION).
inline std::string version_string(int code) {
    int major, minor, patch;
    if (code >= 10000) {
        major = code / 10000;
        minor = (code % 10000) / 100;
        patch = code % 100;
    } else {
        major = code / 1000;
        minor = (code % 1000) / 100;
        patch = code % 100;
    }
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

struct Api {
    Cudart cuda;
    Nccl nccl;
};

}  // namespace ncclprobe
