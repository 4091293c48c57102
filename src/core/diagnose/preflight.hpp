#pragma once
// `torchdock preflight`: "will this image run there?" Judges what an image promises (its
// CUDA version, driver floors, arch list, NCCL) against a host's driver version and GPU
// models, with the knowledge base and NVIDIA's forward-compatibility matrix
// (data/forward_compat.json). Pure: strings in, a verdict out.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "util/result.hpp"

namespace td {

// One driver branch of NVIDIA's CUDA forward-compatibility support matrix.
struct ForwardCompatBranch {
    int branch = 0;                 // 535
    std::string min_driver;         // "535" (any 535.x) or "470.57.02"
    std::string native_cuda;        // the CUDA version the branch was released with, "12.2"
    std::vector<std::string> cuda;  // CUDA x.y whose cuda-compat package supports this branch
    bool end_of_life = false;       // no longer in NVIDIA's matrix: not a supported target
    bool unconfirmed = false;
    std::string note;
};

struct ForwardCompat {
    std::vector<ForwardCompatBranch> branches;
    std::string requirement;  // which GPUs forward compatibility works on, in words
    std::string source;

    // Parses data/forward_compat.json (schema 1). Errors name the JSON path.
    static Result<ForwardCompat> parse(const std::string& text);
    // Whether the cuda-compat package of CUDA `cuda_version` ("12.4" or "12.4.1") is a
    // supported way to run on driver `driver_version` ("535.104.05"): its branch is in the
    // matrix, not end of life, at least the branch's minimum, and lists that CUDA version.
    // Says nothing about the GPUs (forward compatibility needs data-center GPUs).
    bool supports(const std::string& driver_version, const std::string& cuda_version) const;
    // The matrix entry for the branch of `driver_version` (its first component), if any.
    const ForwardCompatBranch* branch_of(const std::string& driver_version) const;
};

struct PreflightTarget {
    std::string gpu;  // model as given
    std::string cc;
    bool ok = false;
    std::vector<std::string> reasons;
};

// What the image's environment tells the NVIDIA container toolkit.
struct ContainerRequirements {
    std::string require_cuda;      // NVIDIA_REQUIRE_CUDA, "" when the image sets none
    bool disable_require = false;  // NVIDIA_DISABLE_REQUIRE set in the image
    // "CUDA_VISIBLE_DEVICES=\"\"": what in the image's environment hides every GPU; "" none.
    std::string hides_gpus;
};

// Read from the image's environment ("NAME=value" entries, Config.Env).
ContainerRequirements container_requirements(const std::vector<std::string>& image_env);

// What the probes preflight ran in the image observed: the kernel audit (every GPU is then
// judged on the code the image really carries, as validate's TD125 and doctor's DR118 judge
// it) and torch's own facts (its CUDA version, when no label names one).
struct ImageProbes {
    nlohmann::json audit;     // probe-kernels' data; null when not audited
    nlohmann::json torch;     // the torch probe's data (loaded_libraries, arch_list) or null
    std::string not_audited;  // why there is no audit (shown as a note)
};

struct PreflightResult {
    // "yes", "no", or "unknown" when neither the driver nor the GPUs' kernels could be
    // checked (an image that names no CUDA, no driver floor and no arch list).
    std::string answer = "unknown";
    bool ok = false;
    bool driver_ok = false;
    std::string driver_verdict;
    std::vector<PreflightTarget> targets;
    std::vector<std::string> run_flags;
    std::vector<std::string> notes;
};

// `expect` holds the image's promises: "cuda" ("12.4"), "min-driver" ("550.54.15"),
// "min-driver-compat" ("525.60.13"), "arch-list" ("5.0;6.0;9.0+PTX" or "sm_90 compute_90"),
// "nccl", "target-gpus" ("H100,A100"). Missing driver floors come from the knowledge base.
// `probed`, when the probes ran, judges each GPU on the image's code as well as its labels.
// `requirements` is what the image's environment asks of the driver: a requirement the
// driver does not meet means the container toolkit refuses to start it (unless disabled).
PreflightResult preflight(const std::map<std::string, std::string>& expect,
                          const std::string& driver_version,
                          const std::vector<std::string>& gpu_models, const KnowledgeBase& kb,
                          const ForwardCompat& fc, const ContainerRequirements& requirements = {},
                          const ImageProbes& probed = {});

}  // namespace td
