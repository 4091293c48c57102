#include "core/diagnose/finding_catalog.hpp"

#include <stdexcept>

namespace td {
namespace {

const char* const k_untrusted =
    "it says the evidence itself is missing or untrusted, so the other findings may not "
    "describe the environment; it cannot be waived";

// Entries leave `not_waivable` out unless it applies.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const std::vector<FindingInfo> k_findings = {
    {"DR101", "info", "no NVIDIA driver",
     "libcuda.so.1 cannot be loaded: CUDA calls fail, only the static checks apply",
     "a GPU host without a driver cannot run a CUDA job; a CI runner is expected to have none",
     "probe-cuda's error class (cudaErrorInsufficientDriver, no libcuda)",
     "on a GPU host, install the NVIDIA driver (and nvidia-container-toolkit for containers)"},
    {"DR102", "error", "driver too old for the CUDA runtime",
     "the driver supports an older CUDA than the runtime in the environment",
     "every CUDA call fails with error 35 (CUDA driver version is insufficient)",
     "probe-cuda's driver and runtime versions, data/cuda.json's driver floors",
     "upgrade the driver to the floor of that CUDA (or use a runtime the driver supports)"},
    {"DR103", "error", "forward compatibility on unsupported hardware (error 804)",
     "a cuda-compat package is loaded on a GPU that is not a data-center GPU",
     "forward compatibility works only on data-center GPUs; elsewhere CUDA fails with 804",
     "probe-cuda's error class", "remove the cuda-compat libraries from the library path"},
    {"DR104", "error", "shared libraries that do not resolve",
     "a soname needed by torch or a CUDA library resolves nowhere",
     "the import or the first CUDA call fails with 'cannot open shared object file'",
     "probe-libs: DT_NEEDED entries resolved by ld.so's rules; torch's Requires-Dist",
     "pip install the wheel torch pins for it, or fix LD_LIBRARY_PATH"},
    {"DR105", "warning", "several versions of a library",
     "two different versions (by content) of cudart, cuBLAS, cuDNN or NCCL are present",
     "which copy loads depends on the search path and import order",
     "probe-libs: every copy in the search paths, with its version read from its content",
     "make sure the intended copy wins, or remove the other"},
    {"DR106", "warning", "torch and the system CUDA runtime differ in major",
     "the loader finds a CUDA runtime of another major than torch was built for",
     "libraries loaded by name from the system path do not match torch's",
     "torch.version.cuda and the loader's libcudart version (probe-cuda)",
     "use torch's own CUDA libraries (nvidia-* wheels), or a torch for that CUDA"},
    {"DR107", "error", "torch has no kernels for a GPU",
     "a GPU present has a compute capability outside torch's arch list",
     "kernels fail with 'no kernel image is available for execution on the device'",
     "torch.cuda.get_arch_list() and each GPU's compute capability",
     "install a torch build whose arch list covers the GPU"},
    {"DR108", "warning", "CPU-only torch on a GPU host", "torch has no CUDA but GPUs are present",
     "the GPUs go unused", "torch.version.cuda and the GPUs probe-cuda sees",
     "install a CUDA build of torch"},
    {"DR110", "warning", "/dev/shm is small", "/dev/shm is under 1 GiB",
     "NCCL and DataLoader workers use /dev/shm and fail or hang when it is small",
     "the size of /dev/shm",
     "containers: --ipc=host or --shm-size; Kubernetes: an emptyDir "
     "with medium: Memory at /dev/shm"},
    {"DR111", "warning", "CUDA_VISIBLE_DEVICES is empty",
     "CUDA_VISIBLE_DEVICES is set to the empty string", "it hides every GPU from CUDA",
     "the environment", "unset it, or list the GPUs to use"},
    {"DR112", "warning", "LD_LIBRARY_PATH points at another CUDA",
     "a cuda-X directory on LD_LIBRARY_PATH is of another major than torch's CUDA",
     "LD_LIBRARY_PATH wins over RUNPATH, so another CUDA's libraries shadow torch's",
     "LD_LIBRARY_PATH and torch.version.cuda", "remove that directory from LD_LIBRARY_PATH"},
    {"DR113", "info", "no torch", "no PyTorch is installed for the interpreter inspected",
     "nothing about torch can be judged", "the torch probe under the environment's python",
     "install torch if this environment should run it"},
    {"DR114", "error", "cuDNN needs a CUDA runtime the environment does not have",
     "the cuDNN found was built for a CUDA major whose runtime is absent",
     "the first convolution fails to load libcudart.so.N",
     "cudnnGetCudartVersion (probe-cudnn) and the runtime found (probe-cuda)",
     "install that CUDA runtime, or the cuDNN build for the CUDA in use"},
    {"DR115", "error", "torch cannot use its cuDNN", "torch reports a cuDNN error",
     "convolutions fail or fall back", "torch.backends.cudnn in the torch probe",
     "let torch load the cuDNN it was built with (see the cause explain gives)"},
    {"DR116", "error", "torch does not import", "import torch fails with an error",
     "nothing that uses torch runs", "the torch probe's import error, matched by explain",
     "what the matched signature says, else the library the error names"},
    {"DR117", "warning", "torch loads a newer CUDA runtime than it was built with",
     "the runtime torch loads is a newer minor of its build's major",
     "compatible, but it needs that runtime's driver floor",
     "torch.version.cuda and the runtime torch loaded (probe-cuda)",
     "pin the runtime torch was built with, or make sure hosts meet that floor"},
    {"DR118", "error", "code without an image for a GPU",
     "an object with GPU code that torch uses has no SASS or PTX a GPU present runs (TD125's "
     "rule)",
     "'no kernel image is available' on that GPU",
     "probe-kernels' audit of the objects torch "
     "loads, and the GPUs present",
     "rebuild or reinstall those objects for that compute capability"},
    {"DR119", "warning", "torch reports archs its binary lacks",
     "torch's arch list names archs that libtorch_cuda.so has no code for",
     "torch promises GPUs its binary cannot run", "torch's arch list and probe-kernels' audit",
     "reinstall torch"},
    {"DR120", "error", "torch's process died",
     "the torch probe's child died (signal, stage, library)",
     "the environment cannot run torch at all", "the torch probe's crash report",
     "find what is wrong with the library named; reinstall damaged wheels (DR122)"},
    {"DR121", "error", "torch could not be probed",
     "the torch probe did not answer, or torch is installed but not found under the python "
     "the environment runs",
     "no evidence is not evidence of absence: doctor cannot say whether torch works",
     "the torch probe's run", "make the torch probe run to its end (see the reason)", k_untrusted},
    {"DR122", "error", "installed files differ from their wheels' RECORD",
     "files of torch or its wheels differ in size or sha256 from RECORD",
     "the environment runs other code than the wheels that were installed",
     "probe-record: the wheels' RECORD and each file's sha256",
     "pip install --force-reinstall --no-deps the wheels named", k_untrusted},
    {"DR123", "error", "the fingerprint holds a value of an unexpected type",
     "a fingerprint value has another type than doctor writes; judging stopped there",
     "the findings after it were not judged", "the fingerprint file or the probes' answers",
     "re-run doctor; an image's answers of that shape are not evidence", k_untrusted},
    {"DR124", "error", "locked memory is limited on an InfiniBand host",
     "the host has /dev/infiniband devices and a finite RLIMIT_MEMLOCK (ulimit -l)",
     "InfiniBand verbs pin (lock) the buffers they register; NCCL's IB transport then fails to "
     "register memory or falls back to sockets, and multi-node jobs slow down or fail",
     "getrlimit(RLIMIT_MEMLOCK) of the process and the entries of /dev/infiniband",
     "set memlock unlimited for jobs (limits.conf, slurmd's LimitMEMLOCK=infinity, or "
     "--ulimit memlock=-1 for containers), and PropagateResourceLimitsExcept=MEMLOCK in "
     "slurm.conf"},
    {"DR125", "error", "torch is built for another Python",
     "the torch the interpreter finds (or the one in a site directory of its prefix named for "
     "another python3.X) carries another Python's ABI tag",
     "import torch fails (\"No module named 'torch'\", or torch's misleading \"Failed to load "
     "PyTorch C extensions\"): a venv copied into a stage with another Python, a PYTHONPATH "
     "to another version's site directory",
     "the torch probe: lib/python3.X directories under the interpreter's prefixes and the "
     "cpython-3XY tag of torch's _C extension on sys.path",
     "copy the venv with its interpreter (the same base in both stages), or install torch for "
     "the Python the image runs"},
};
#pragma GCC diagnostic pop

}  // namespace

const std::vector<FindingInfo>& finding_catalog() { return k_findings; }

const FindingInfo* find_finding(const std::string& id) {
    for (const auto& f : k_findings)
        if (f.id == id) return &f;
    return nullptr;
}

const FindingInfo& finding_info(const std::string& id) {
    if (const FindingInfo* f = find_finding(id)) return *f;
    throw std::logic_error("finding " + id + " is not in the catalog");
}

}  // namespace td
