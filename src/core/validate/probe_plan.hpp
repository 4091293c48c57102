#pragma once
// Which probes run, in which order, with which flags: decided from the image's own
// configuration and from what earlier probes found, never from fixed directory lists.
// Pure. The torch probe runs first and finds PyTorch the way the image would run it (its
// interpreters, torch's site directories, the CUDA libraries torch really loads); the
// library probes then look where torch looks and ask the files torch loaded.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/knowledge/knowledge_base.hpp"
#include "core/validate/probe_run.hpp"
#include "core/validate/runtime_env.hpp"

namespace td {

// The family of a CUDA library file name ("libcudnn_ops.so.9" -> "cudnn", "libcudart.so.12"
// -> "cudart", "libcublasLt.so.12" -> "cublasLt"); "" for anything else.
std::string cuda_library_family(const std::string& file_name);

// The CUDA libraries the torch probe saw mapped into torch's process, by family: the
// main library of each family first ("libcudnn.so.9" before "libcudnn_ops.so.9").
std::vector<std::string> loaded_library_paths(const ProbeRun& torch, const std::string& family);

// The requirement torch pins for the wheel that ships a library ("nvidia-nccl-cu12==2.27.5"
// for libnccl.so.2), from torch's metadata in the torch probe's data; "" when it pins none.
std::string wheel_pin_for(const nlohmann::json& torch_data, const std::string& soname);

// Flags of a probe that depend on earlier results:
//   libs:  --site-dirs=<torch's interpreter's import directories> --preload=<LD_PRELOAD>
//   record: --site-dirs=<the same>
//   kernels: --paths=<those directories and the directories of the libraries torch loaded>
//   cuda:  --library=<the libcudart torch loaded>
//   cudnn: --library=<the libcudnn torch loaded> --cudart=<its libcudart>
//   nccl:  --library=<the libnccl torch loaded> --cudart=<its libcudart>
//   gemm:  --peak-tflops=... for the GPU the cuda probe saw (gpus.json datasheet peaks)
std::vector<std::string> dynamic_probe_flags(const std::string& probe, const ProbeRun* torch,
                                             const ProbeRun* cuda, const KnowledgeBase& kb,
                                             const std::string& ld_preload = {});

// The files-only tier's flags, with no torch probe to learn from (`plan`'s static fields):
//   libs:   --site-dirs=<files_only_site_dirs> --machine=<files_only_machine>
//   record: --site-dirs=<the same> --text=torch:torch/version.py
//   kernels: --paths=<the same>
std::vector<std::string> files_only_probe_flags(const std::string& probe, const RuntimePlan& plan);

// The directories the interpreter `docker run IMAGE python` runs would import from, read from
// names only: the plan's first candidate, its realpath as probe-env (`env`) found it, and the
// process's environment (core/validate/platform files_only_site_dirs). Empty without a python.
std::vector<std::string> site_dirs_by_name_of(const RuntimePlan& plan, const ProbeRun* env);

// Flags a probe gets from the image's labels: probe-record checks every distribution
// (--dists=*) of an image that carries a hash-locked Python set (io.torchdock.python-set),
// so TD129 sees the whole installed set and TD112 every file of it.
std::vector<std::string> label_probe_flags(const std::string& probe,
                                           const std::map<std::string, std::string>& labels);

}  // namespace td
