// The checks' stable IDs, what each means and which probes it rests on; and the one rule
// that keeps a verdict from being better than that evidence.
#include <stdexcept>

#include "core/validate/checks.hpp"

namespace td {
namespace {

const std::vector<CheckInfo> k_catalog = {
    {"TD101",
     "cuda.runtime",
     "static",
     "the CUDA runtime in the image has the labelled major.minor",
     {"cuda", "torch"}},
    {"TD102",
     "cudnn.version",
     "static",
     "the cuDNN that torch (or the loader) finds is the labelled version",
     {"cudnn", "torch"}},
    {"TD103",
     "cudnn.cuda_major",
     "static",
     "cuDNN was built for the CUDA major the image runs",
     {"cudnn", "cuda", "torch"}},
    {"TD104",
     "nccl.version",
     "static",
     "the NCCL that torch (or the loader) finds is the labelled version",
     {"nccl", "torch"}},
    {"TD110",
     "libs.resolved",
     "static",
     "every shared library the CUDA stack and torch need resolves",
     {"libs"}},
    {"TD111",
     "libs.duplicates",
     "static",
     "no two different copies of cudart/cuBLAS/cuDNN/NCCL could shadow each other",
     {"libs"}},
    {"TD112",
     "files.intact",
     "static",
     "every file of torch, torchvision, torchaudio, triton and the nvidia-* wheels matches the "
     "size and sha256 its RECORD gives (torchdock's static reader, not the image's code)",
     {"record"}},
    {"TD113",
     "libs.preload",
     "static",
     "LD_PRELOAD puts no other copy of a CUDA library ahead of the one torch pins",
     {"libs"}},
    {"TD118",
     "python.version",
     "static",
     "the interpreter that runs torch is the labelled Python major.minor",
     {"torch"}},
    {"TD119",
     "torch.imports",
     "static",
     "PyTorch is found and `import torch` works (an image with neither torch nor labels fails)",
     {"torch"}},
    {"TD120", "torch.version", "static", "torch reports the labelled version", {"torch"}},
    {"TD121",
     "torch.cuda",
     "static",
     "torch was built for the image's CUDA major (or is a CPU build in a CPU image)",
     {"torch"}},
    {"TD122",
     "torch.arch_targets",
     "static",
     "torch's compiled arch list has every labelled arch and covers every target GPU",
     {"torch"}},
    {"TD123",
     "torch.distributed",
     "static",
     "a real multi-process all-reduce (gloo on CPU, NCCL on GPUs) gives the exact sum",
     {"torch"}},
    {"TD124",
     "torch.companions",
     "static",
     "torchvision and torchaudio are the labelled versions (from the installed distributions)",
     {"torch"}},
    {"TD125",
     "kernels.targets",
     "static",
     "every object with GPU code (torch, extensions, CUDA libraries) has an image each target "
     "GPU can run, by CUDA's rules",
     {"kernels"}},
    {"TD126",
     "torch.arch_binaries",
     "static",
     "every arch torch reports is compiled into libtorch_cuda.so",
     {"torch", "kernels"}},
    {"TD127",
     "python.interpreter",
     "static",
     "the interpreter judged is the one `docker run IMAGE python` runs (after a wrapper "
     "ENTRYPOINT); VIRTUAL_ENV and CONDA_PREFIX point at it; other interpreters with torch "
     "are listed",
     {"env"}},
    {"TD128",
     "torch.pins",
     "static",
     "the nvidia-* wheels and triton installed beside torch are the versions torch pins",
     {"torch"}},
    {"TD130",
     "shm.size",
     "static",
     "/dev/shm is large enough for NCCL and data loader workers",
     {}},
    {"TD131",
     "cuda.visible",
     "static",
     "the image does not hide every GPU (CUDA_VISIBLE_DEVICES=\"\", NVIDIA_VISIBLE_DEVICES=void)",
     {"env"}},
    {"TD140", "gpu.available", "gpu", "the probes see at least one GPU", {"cuda"}},
    {"TD141", "driver.floor", "gpu", "the host driver meets the image's minimum driver", {"cuda"}},
    {"TD142",
     "torch.arch_gpus",
     "gpu",
     "torch's arch list covers every GPU present",
     {"cuda", "torch"}},
    {"TD143", "gemm.correct", "gpu", "cuBLAS GEMM results match an FP64 host reference", {"gemm"}},
    {"TD144",
     "gemm.throughput",
     "gpu",
     "GEMM TFLOP/s at or above the manifest's threshold",
     {"gemm"}},
    {"TD145",
     "nccl.allreduce",
     "gpu",
     "NCCL all-reduce over all GPUs gives the exact sum",
     {"nccl"}},
    {"TD146",
     "nccl.busbw",
     "gpu",
     "all-reduce bus bandwidth at or above the manifest's threshold",
     {"nccl"}},
    {"TD147", "torch.matmul", "gpu", "torch.matmul on the GPU matches its reference", {"torch"}},
};

}  // namespace

const std::vector<CheckInfo>& check_catalog() { return k_catalog; }

const CheckInfo& check_info(const std::string& id) {
    for (const auto& c : k_catalog)
        if (id == c.id) return c;
    throw std::logic_error("check " + id + " is not in the catalog");
}

void apply_evidence_rule(std::vector<CheckResult>& results, const ValidationInput& in) {
    for (auto& r : results) {
        if (r.status == "fail" || r.status == "error") continue;
        const CheckInfo& info = check_info(r.id);
        if (info.tier == "gpu" && !in.gpu_tier) continue;
        for (const auto& name : info.evidence) {
            auto it = in.probes.find(name);
            std::string problem;
            if (it != in.probes.end())
                problem = it->second.problem();
            else if (r.status != "skip")
                problem = probe_program(name) + " was not run";
            if (problem.empty()) continue;
            r.status = "error";
            r.message = "cannot be judged: " + problem;
            r.fix = it != in.probes.end() && it->second.state == ProbeRun::State::TimedOut
                        ? "find what blocks the probe in this image, or raise --probe-timeout"
                        : "make the probe run to its end in this image (see the reason above)";
            break;
        }
    }
}

}  // namespace td
