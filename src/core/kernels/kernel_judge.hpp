#pragma once
// Can an object's GPU code run on a given GPU? CUDA's rules, pure:
//
// * SASS sm_XY runs on compute capability X.Z with Z >= Y (same major): "a cubin
//   generated for compute capability X.y will only execute on devices of compute
//   capability X.z where z >= y" (CUDA C++ Programming Guide, "Binary Compatibility").
// * PTX compute_XY is JIT-compiled by the driver for any compute capability >= X.Y, if the
//   driver knows its PTX ISA version (Programming Guide, "PTX Compatibility";
//   "Application Compatibility").
// * Architecture-specific targets (sm_90a, compute_100a; CUDA 12.0+) run only on devices
//   of exactly that compute capability: no forward compatibility, SASS or PTX
//   (Programming Guide 5.1.2 "Feature Availability").
// * Family-specific targets (sm_100f, compute_120f; CUDA 12.9+) run on the devices of the
//   same family with an equal or higher minor: sm_100f / compute_100f on 10.0 and 10.3,
//   sm_103f on 10.3 only, sm_120f on 12.0 and 12.1, never on another major
//   (https://developer.nvidia.com/blog/nvidia-blackwell-and-nvidia-cuda-12-9-introduce-family-specific-architecture-features/,
//   restated in https://gitlab.com/eessi/support/-/issues/210: "compute_100f ... compatible
//   only with 10.0 and 10.3 cards"). Every family so far is one major version (11.0, the
//   renamed Thor 10.1, is its own).
//
// The driver prefers SASS that fits over JIT-compiling PTX; the verdict says which image
// would be used. Part of the kernels domain: pure, C++17, standard library only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernels/arch.hpp"
#include "core/kernels/kernel_audit.hpp"

namespace td::kernels {

struct GpuTarget {
    std::string name;  // "RTX 5090"; may be empty
    ComputeCapability cc;
    // Newest PTX ISA the driver can JIT (from the driver's CUDA version); unknown: any.
    std::optional<PtxIsa> max_ptx_isa;
};

bool sass_runs_on(const Arch& sass, const ComputeCapability& cc);
bool ptx_jits_to(const Arch& ptx, const ComputeCapability& cc);

enum class KernelRun : std::uint8_t {
    sass,        // a SASS image fits
    ptx_jit,     // no SASS fits; the driver JIT-compiles a PTX image
    no_image,    // nothing fits: "no kernel image is available for execution on the device"
    no_kernels,  // the object carries no GPU code at all: nothing to judge
};

struct KernelVerdict {
    KernelRun how = KernelRun::no_kernels;
    std::string image;    // "sm_120" or "compute_90" that would be used; empty otherwise
    std::string message;  // one line, names the object, what it has and what the GPU needs
    // Containers (of the profiles given) that have no image for this GPU although the
    // object runs: their kernels fail if they are called there. Information, not in the
    // message: NVIDIA's libraries keep kernels in per-architecture containers and pick them
    // by GPU (cuBLASLt 13: 1553 of 3165 lack sm_120 on an RTX 5090, as designed), while in
    // an extension built from several sources a container is a source file.
    // containers_complete is false when the profiles were cut (max_profiles).
    std::uint64_t containers_without_image = 0;
    std::uint64_t containers_judged = 0;
    bool containers_complete = true;

    bool runs() const { return how == KernelRun::sass || how == KernelRun::ptx_jit; }
};

// Judges `images` (usually ObjectKernels::runnable()) for `gpu`. `profiles` (may be
// empty) refine the verdict with the containers that lack an image.
KernelVerdict judge_kernels(std::string_view object_name, const KernelImages& images,
                            const GpuTarget& gpu,
                            const std::vector<ContainerProfile>& profiles = {},
                            bool profiles_complete = true);

// "sm_80, sm_90, compute_90 (PTX ISA 8.4)": what an object has, for messages.
std::string describe_images(const KernelImages& images);

// "sm_120 or PTX <= compute_120": what a GPU needs, for messages.
std::string describe_needs(const ComputeCapability& cc);

}  // namespace td::kernels
