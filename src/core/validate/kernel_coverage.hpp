#pragma once
// Which GPUs an image's kernels can run on, from probe-kernels' audit: every object with
// GPU code (torch's libraries, extension modules, the CUDA libraries) judged for each GPU by
// CUDA's rules (core/kernels/kernel_judge). Shared by validate (TD125, TD126), doctor and
// preflight, so all three give the same verdict per GPU. Pure.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace td {

struct GpuKernelVerdict {
    std::string gpu;                   // as named ("RTX 5090")
    std::string cc;                    // "12.0"
    std::size_t objects_judged = 0;    // objects with GPU code
    std::vector<std::string> failing;  // one line per object with no image for this GPU,
                                       // torch's own libraries first
    bool runs() const { return failing.empty(); }
};

struct KernelTarget {
    std::string name, cc;
};

// Judges the audit (probe-kernels' data) for each target. Judged are torch's libraries and
// extension modules (every object that is not a CUDA library), and the CUDA libraries in
// `loaded` (the ones torch really maps): a CUDA library nothing loads (the wheels carry
// libcufftw with only an sm_52 stub) is not a finding. Without `loaded` (no torch), every
// object is judged. An object whose fatbins could not be read completely counts as judged
// on what was read.
std::vector<GpuKernelVerdict> judge_kernel_audit(const nlohmann::json& audit,
                                                 const std::vector<KernelTarget>& targets,
                                                 const std::vector<std::string>* loaded = nullptr);

// judge_kernel_audit with what the torch probe reported (`torch`: its data, or the doctor
// fingerprint's "torch"): when it lists loaded_libraries, only those CUDA libraries count.
std::vector<GpuKernelVerdict> judge_kernels_for_torch(const nlohmann::json& audit,
                                                      const nlohmann::json& torch,
                                                      const std::vector<KernelTarget>& targets);

// The SASS and PTX targets probe-kernels found in torch's own CUDA library
// (torch/lib/libtorch_cuda.so), as "sm_80" / "compute_90" names; empty when absent.
std::vector<std::string> torch_binary_archs(const nlohmann::json& audit);

// Whether the audit read torch/lib/libtorch_cuda.so at all: "no GPU code in it" is a finding
// only then, never of an audit that had nothing to read.
bool audited_torch_binary(const nlohmann::json& audit);

// The archs torch reports (its "arch_list": "sm_90" for SASS, "compute_90" for PTX, the
// names the audit uses) that libtorch_cuda.so does not carry. Empty when either is unknown.
std::vector<std::string> torch_archs_missing_from_binary(const nlohmann::json& audit,
                                                         const nlohmann::json& torch);

// One line for a GPU's verdict: the first object without an image for it, and how many more.
std::string kernel_verdict_summary(const GpuKernelVerdict& v);

// The paths probe-libs resolved (its data's "libraries" and "roots"): what torch and the CUDA
// roots link, DT_NEEDED by DT_NEEDED. The files-only tier's stand-in for the libraries torch
// loads, when torch cannot be run.
std::vector<std::string> libraries_resolved(const nlohmann::json& libs);

// How messages name an object: its path below site-packages/dist-packages
// ("xformers/flash_attn_3/_C.so", "torch/lib/libtorch_cuda.so"), so an extension's "_C.so"
// says whose it is; else the file name ("a.so" for "/x/y/a.so").
std::string object_name(const std::string& path);

}  // namespace td
