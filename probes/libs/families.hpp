#pragma once
// CUDA library families by file name: those whose versions probe-libs asks by content and
// compares for duplicates (nvJitLink: its copies on LD_LIBRARY_PATH are a classic trap), and
// any CUDA library LD_PRELOAD may put first.
#include <cctype>
#include <string>

namespace libsprobe {

// "cudnn" for libcudnn.so.9.1.0, "cudart" for libcudart-d0da41ae.so.11.0 (auditwheel
// renames); "" for everything else (libcudnn_ops.so.9, libcudart_static.a, libnccl-net.so).
inline std::string family_of(const std::string& name) {
    static const char* const families[] = {"cublasLt", "cublas", "cudart",
                                           "cudnn",    "nccl",   "nvJitLink"};
    for (const char* f : families) {
        std::string prefix = std::string("lib") + f;
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        std::string rest = name.substr(prefix.size());
        if (rest.size() > 9 && rest[0] == '-') {  // -xxxxxxxx (8 hex digits)
            bool hex = true;
            for (size_t i = 1; i <= 8; ++i)
                hex = hex && std::isxdigit(static_cast<unsigned char>(rest[i]));
            if (!hex) return "";
            rest = rest.substr(9);
        }
        if (rest == ".so" || rest.compare(0, 4, ".so.") == 0) return f;
        return "";
    }
    return "";
}

// Any CUDA library's family, also those whose versions are not asked ("nvJitLink" for
// libnvJitLink.so.12): what LD_PRELOAD may put ahead of torch's own.
inline std::string any_cuda_family(const std::string& name) {
    if (std::string f = family_of(name); !f.empty()) return f;
    static const char* const families[] = {"nvJitLink", "cusparseLt",  "cusparse", "cusolver",
                                           "cufft",     "curand",      "nvrtc",    "cupti",
                                           "cufile",    "nvshmem_host"};
    for (const char* f : families) {
        std::string prefix = std::string("lib") + f + ".so";
        if (name.compare(0, prefix.size(), prefix) == 0) return f;
    }
    return "";
}

// "9.1.0" from libcudnn.so.9.1.0, "" from libcudnn.so.
inline std::string version_of(const std::string& name) {
    size_t p = name.find(".so.");
    return p == std::string::npos ? std::string() : name.substr(p + 4);
}

}  // namespace libsprobe
