// The checks' stable IDs and their reference pages (`torchdock checks ID`, docs/checks.md):
// the one place a check ID is defined. `CheckContext::add` looks every emitted ID up here.
#include <stdexcept>

#include "core/validate/checks.hpp"

namespace td {
namespace {

// Checks whose failure means the other verdicts describe something else than the image
// runs (another interpreter, files that are not the wheels'), or that nothing was judged.
const char* const k_untrusted =
    "its failure means the other verdicts may not describe what the image runs, so it "
    "cannot be waived";

// Entries leave `not_waivable` out unless it applies.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const std::vector<CheckInfo> k_checks = {
    {.id = "TD101",
     .name = "cuda.runtime",
     .tier = "static",
     .meaning = "the CUDA runtime torch loads (else the loader's) has the labelled major.minor "
                "and fits the CUDA torch was built with (a newer minor: warning)",
     .evidence = {"cuda", "torch"},
     .why = "a runtime of another major fails at import or first CUDA call "
            "(libcudart.so.N: cannot open shared object file), and a label that lies about it "
            "misleads preflight and the driver floor",
     .reads = "the version probe-cuda gets from cudaRuntimeGetVersion of the libcudart torch "
              "loaded (else the loader's), torch.version.cuda, the cuda label or --expect",
     .fix = "a base with that CUDA, or pin the runtime torch was built with"},
    {.id = "TD102",
     .name = "cudnn.version",
     .tier = "static",
     .meaning = "torch can use its cuDNN, and it (or the loader's) is the labelled version; a "
                "wheel's full version when torch loads from that wheel",
     .evidence = {"cudnn", "torch"},
     .why = "another cuDNN than torch was built with gives CUDNN_STATUS errors or silent "
            "slow paths",
     .reads = "cudnnGetVersion of the libcudnn torch loaded (probe-cudnn), "
              "torch.backends.cudnn.version(), the cudnn label or --expect",
     .fix = "a different cuDNN shadows it: see TD111 and LD_LIBRARY_PATH"},
    {.id = "TD103",
     .name = "cudnn.cuda_major",
     .tier = "static",
     .meaning = "cuDNN was built for the CUDA major the image runs (cudnnGetCudartVersion); "
                "names the libcudart.so.N it needs",
     .evidence = {"cudnn", "cuda", "torch"},
     .why = "a cuDNN for another CUDA major loads a libcudart the image does not have and "
            "fails at the first convolution",
     .reads = "cudnnGetCudartVersion (probe-cudnn) and the CUDA runtime's major (probe-cuda)",
     .fix = "install that runtime or the matching cuDNN build"},
    {.id = "TD104",
     .name = "nccl.version",
     .tier = "static",
     .meaning = "the NCCL that torch (or the loader) finds is the labelled version",
     .evidence = {"nccl", "torch"},
     .why = "ranks with different NCCL versions hang or fail in collectives",
     .reads = "ncclGetVersion of the libnccl torch loaded (probe-nccl), the nccl label or "
              "--expect",
     .fix = "check which libnccl.so.2 wins (TD111), or correct the label"},
    {.id = "TD110",
     .name = "libs.resolved",
     .tier = "static",
     .meaning = "every soname the CUDA libraries and torch need resolves as ld.so would "
                "(RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache, default dirs, pip nvidia/*/lib)",
     .evidence = {"libs"},
     .why = "an unresolved soname is an ImportError or a dlopen failure at run time",
     .reads = "probe-libs: the ELF DT_NEEDED entries of torch's and the CUDA libraries, "
              "resolved by ld.so's rules inside the image",
     .fix = "install what provides the missing soname"},
    {.id = "TD111",
     .name = "libs.duplicates",
     .tier = "static",
     .meaning = "no two different versions (by content) of cudart, cuBLAS, cuDNN, NCCL or "
                "nvJitLink are mixed by torch; another version beside the one torch loads, "
                "the same version twice, or copies whose versions cannot all be read: warning",
     .evidence = {"libs"},
     .why = "two copies of a CUDA library shadow each other depending on the search path, "
            "so the one that loads changes with LD_LIBRARY_PATH or import order",
     .reads = "probe-libs: every copy of those libraries in the search paths and pip wheels, "
              "with the version read from its content",
     .fix = "remove one copy"},
    {.id = "TD112",
     .name = "files.intact",
     .tier = "static",
     .meaning = "every file of torch, torchvision, torchaudio, triton and the nvidia-* wheels "
                "(of every distribution when the image carries a hash-locked set, TD129) "
                "has the size and sha256 its RECORD gives (torchdock's static reader); an "
                "unreadable one is named with its mode and owner",
     .evidence = {"record"},
     .why = "a damaged or altered file means the image runs other code than the wheels "
            "torchdock judged",
     .reads = "probe-record (static, no code of the image runs): the wheels' RECORD files and "
              "the sha256 of each file they list",
     .fix = "pip install --force-reinstall --no-deps NAME==VERSION",
     .not_waivable = k_untrusted},
    {.id = "TD113",
     .name = "libs.preload",
     .tier = "static",
     .meaning = "LD_PRELOAD puts no other version of a CUDA library ahead of the one torch "
                "pins (another copy of the same version, or an entry that cannot load: "
                "warning)",
     .evidence = {"libs"},
     .why = "a preloaded library wins over every search path, whatever torch pins",
     .reads = "the image's LD_PRELOAD and the versions probe-libs reads from each entry",
     .fix = "remove it from LD_PRELOAD"},
    {.id = "TD118",
     .name = "python.version",
     .tier = "static",
     .meaning = "the interpreter that runs torch is the labelled Python major.minor",
     .evidence = {"torch"},
     .why = "wheels and extensions are built per Python minor; another one does not import "
            "them",
     .reads = "sys.version_info in the torch probe, the python label or --expect",
     .fix = "torch for that Python, or correct the label"},
    {.id = "TD119",
     .name = "torch.imports",
     .tier = "static",
     .meaning = "PyTorch is found under the interpreter the image runs and import torch works, "
                "and the image's files back what its python said: the interpreter exists and "
                "is a CPython ELF for the image's platform (a #! script followed to its "
                "program), torch.__file__ exists and is listed by a RECORD probe-record "
                "verified (or an egg-info beside it: an OS package); the import error, or the "
                "signal, stage and library of a crash, is shown when it does not; an image with "
                "neither torch nor labels fails; in the files-only tier an image with no torch "
                "files fails",
     .evidence = {"torch", "record"},
     .why = "every torch check rests on it; an image with nothing to judge must not pass, and "
            "a python is the image's own code: a script at /usr/bin/python3 can print any "
            "answer, so the answer counts only where torchdock's reading of the files backs it",
     .reads = "the torch probe (import torch in a forked child) under the python the image "
              "runs; probe-record --inspect (static) on the interpreter and torch.__file__",
     .fix = "install what the import error names (see torchdock explain)",
     .not_waivable = k_untrusted},
    {.id = "TD120",
     .name = "torch.version",
     .tier = "static",
     .meaning = "torch reports the labelled version (torch-reports where the distribution's "
                "build says otherwise)",
     .evidence = {"torch"},
     .why = "a torch other than the promised one breaks code and pins built for it",
     .reads = "torch.__version__ and the torch distribution's metadata, the torch label or "
              "--expect",
     .fix = "install the labelled torch"},
    {.id = "TD121",
     .name = "torch.cuda",
     .tier = "static",
     .meaning = "torch was built for the image's CUDA major (or is a CPU build in a CPU image)",
     .evidence = {"torch"},
     .why = "a CPU build or another CUDA major cannot use the GPUs the image is for",
     .reads = "torch.version.cuda and the image's CUDA (label, probe-cuda)",
     .fix = "the wheel from the matching index"},
    {.id = "TD122",
     .name = "torch.arch_targets",
     .tier = "static",
     .meaning = "torch's compiled arch list has every labelled arch and covers every target GPU",
     .evidence = {"torch"},
     .why = "a GPU without SASS or compatible PTX gets 'no kernel image is available'",
     .reads = "torch.cuda.get_arch_list(), the arch label and the manifest's target GPUs",
     .fix = "a torch build compiled for them"},
    {.id = "TD123",
     .name = "torch.distributed",
     .tier = "static",
     .meaning = "a real 2-process all-reduce (gloo on CPU, NCCL on GPUs) gives the exact sum",
     .evidence = {"torch"},
     .why = "distributed training fails or hangs when the backend cannot communicate",
     .reads = "the torch probe's two-process all-reduce inside a --network=none container",
     .fix = "check NCCL and gloo, and NCCL_* variables"},
    {.id = "TD124",
     .name = "torch.companions",
     .tier = "static",
     .meaning = "torchvision and torchaudio import (torchvision's operators registered and "
                "run), are the release that pairs with this torch (data/torch.json) and the "
                "labelled versions",
     .evidence = {"torch"},
     .why = "a companion built for another torch fails with undefined symbols or missing "
            "operators",
     .reads = "the installed distributions' versions, an import and one operator of each, "
              "data/torch.json's pairs",
     .fix = "the versions that pair with this torch"},
    {.id = "TD125",
     .name = "kernels.targets",
     .tier = "static",
     .meaning = "every object with GPU code that torch uses (its libraries, extension modules, "
                "the CUDA libraries it loads) has SASS or PTX each target GPU runs, by CUDA's "
                "rules",
     .evidence = {"kernels"},
     .why = "one object without code for a GPU is 'no kernel image is available' on it",
     .reads = "probe-kernels (static): the fatbin headers of each object torch loads",
     .fix = "an extension wheel built for those GPUs"},
    {.id = "TD126",
     .name = "torch.arch_binaries",
     .tier = "static",
     .meaning = "every arch torch reports is compiled into libtorch_cuda.so",
     .evidence = {"torch", "kernels"},
     .why = "torch would promise GPUs its binary cannot run",
     .reads = "torch.cuda.get_arch_list() against probe-kernels' audit of libtorch_cuda.so",
     .fix = "reinstall torch"},
    {.id = "TD127",
     .name = "python.interpreter",
     .tier = "static",
     .meaning = "the interpreter judged is the one docker run IMAGE python runs (after a "
                "wrapper ENTRYPOINT); VIRTUAL_ENV or CONDA_PREFIX naming another environment: "
                "warning; the other interpreters with torch are listed",
     .evidence = {"env"},
     .why = "the torch checks judge one interpreter; if the image runs another, they judge "
            "the wrong one",
     .reads = "probe-env: the image's ENTRYPOINT, PATH, VIRTUAL_ENV and CONDA_PREFIX",
     .fix = "point the variable at the environment the image runs",
     .not_waivable = k_untrusted},
    {.id = "TD128",
     .name = "torch.pins",
     .tier = "static",
     .meaning = "the nvidia-* wheels and triton beside torch are the versions torch's "
                "Requires-Dist pins (not installed: warning)",
     .evidence = {"torch"},
     .why = "unpinned CUDA wheels give undefined symbols or another cuDNN than torch expects",
     .reads = "torch's Requires-Dist and the installed distributions' versions",
     .fix = "reinstall the pinned wheel"},
    {.id = "TD129",
     .name = "python.locked",
     .tier = "static",
     .meaning = "the Python distributions installed are exactly the hash-locked set the image "
                "was built from (its io.torchdock.python-set label, written by render from the "
                "lock): none missing, none at another version, none added (the environment's "
                "own pip, setuptools and wheel are named, not failed; the extensions built from "
                "source in its build stage, its io.torchdock.built-extensions label, belong "
                "beside the set); with TD112 every file of every distribution is then checked "
                "against its RECORD",
     .evidence = {"record"},
     .why = "a package installed or upgraded after the locked layer (a later RUN pip install, "
            "a derived image) runs code nobody locked, hashed or audited",
     .reads = "probe-record over every distribution in torch's site directories, and the "
              "image's io.torchdock.python-set label",
     .fix = "rebuild from the lock, or lock what was added (`torchdock lock`)"},
    {.id = "TD130",
     .name = "shm.size",
     .tier = "static",
     .meaning = "/dev/shm of a default docker run is at least validate.shm_min_mb (default "
                "1024 MiB, a warning when not set by the manifest)",
     .evidence = {},
     .why = "NCCL and DataLoader workers use /dev/shm; 64 MB makes them fail or hang",
     .reads = "the size of /dev/shm in a container of the image (probe-env, else df)",
     .fix = "run with --ipc=host or --shm-size"},
    {.id = "TD131",
     .name = "cuda.visible",
     .tier = "static",
     .meaning = "the image does not hide every GPU (CUDA_VISIBLE_DEVICES=\"\", "
                "NVIDIA_VISIBLE_DEVICES=void): warning",
     .evidence = {"env"},
     .why = "a variable baked into the image hides the GPUs from every job",
     .reads = "the image's environment (probe-env)",
     .fix = "remove the variable from the image"},
    {.id = "TD132",
     .name = "platform.objects",
     .tier = "static",
     .meaning = "the image config's architecture is the platform its files are built for (the "
                "ELF machine of its python, else its shell), and every distribution "
                "probe-record reads was built for that platform: "
                "its wheel tags (WHEEL Tag:, NVIDIA's sbsa read as aarch64) and the ELF machine "
                "and class of every file it installed",
     .evidence = {"record"},
     .why = "an x86_64 wheel copied into an arm64 image installs, and fails only when the "
            "loader skips its objects on the node",
     .reads = "probe-env (static): the ELF header of the python PATH runs and of /bin/sh, "
              "against the config's architecture; probe-record: each dist-info's WHEEL and the "
              "first bytes of every file its RECORD lists, against that platform",
     .fix = "install the wheels for the image's platform"},
    {.id = "TD133",
     .name = "torch.build_files",
     .tier = "static",
     .meaning = "torch/version.py says what the running torch reports; where torch was not "
                "run (the files-only tier) or does not import, it says the labelled torch version "
                "and a build for the labelled CUDA major, and a CUDA build's libtorch_cuda.so "
                "carries GPU code",
     .evidence = {"record"},
     .why = "a CPU-only wheel behind CUDA labels (a linux/arm64 torch from an index that has "
            "no CUDA build of that release) is found before the image reaches a GPU node; "
            "files that disagree with the running torch mean the other file checks judged "
            "another copy",
     .reads = "torch/version.py (what torch.__version__ and torch.version.cuda report) read "
              "by probe-record, and probe-kernels' audit of libtorch_cuda.so",
     .fix = "install the torch wheel built for the labelled CUDA on this platform"},
    {.id = "TD134",
     .name = "user.writable_dirs",
     .tier = "static",
     .meaning = "the image's USER has a writable temporary directory (a failure without one) "
                "and a writable HOME (a warning without one)",
     .evidence = {"torch"},
     .why = "`import torch` works without them, but torchvision's import, torch.compile and "
            "torch.distributed's file rendezvous need a temporary directory, and torch.hub and "
            "triton cache under HOME: `USER nobody` over a /tmp of mode 755 fails there",
     .reads = "tempfile.gettempdir() and access(HOME, W_OK) in the torch probe, run as the "
              "image's USER",
     .fix = "chmod 1777 /tmp in the image (or set TMPDIR), and give the USER a writable HOME"},
    {.id = "TD140",
     .name = "gpu.available",
     .tier = "gpu",
     .meaning = "the probes see at least one GPU",
     .evidence = {"cuda"},
     .why = "without a GPU the GPU tier judges nothing",
     .reads = "cudaGetDeviceCount in probe-cuda, in a container given the GPUs",
     .fix = "the driver and nvidia-container-toolkit"},
    {.id = "TD141",
     .name = "driver.floor",
     .tier = "gpu",
     .meaning = "the host driver meets the image's minimum driver (min-driver label)",
     .evidence = {"cuda"},
     .why = "a driver older than the runtime needs gives CUDA error 35",
     .reads = "cudaDriverGetVersion and the driver version probe-cuda reports, the label",
     .fix = "upgrade the driver (or cuda-compat on data-center GPUs)"},
    {.id = "TD142",
     .name = "torch.arch_gpus",
     .tier = "gpu",
     .meaning = "torch's arch list covers every GPU present",
     .evidence = {"cuda", "torch"},
     .why = "a GPU outside the arch list gets 'no kernel image is available'",
     .reads = "the compute capability of each GPU (probe-cuda) and torch's arch list",
     .fix = "a build for those GPUs"},
    {.id = "TD143",
     .name = "gemm.correct",
     .tier = "gpu",
     .meaning = "cuBLAS GEMM results match an FP64 host reference within the derived "
                "tolerance",
     .evidence = {"gemm"},
     .why = "wrong results from a broken GPU or cuBLAS are worse than a crash",
     .reads = "probe-gemm's results against its FP64 host reference",
     .fix = "check the GPU and cuBLAS"},
    {.id = "TD144",
     .name = "gemm.throughput",
     .tier = "gpu",
     .meaning = "GEMM TFLOP/s per precision at or above validate.gemm_tflops_min: the median "
                "over 10 s of back-to-back GEMMs after 2 s of warm-up",
     .evidence = {"gemm"},
     .why = "a throttled or wrong GPU makes jobs slow without failing them",
     .reads = "probe-gemm's timed runs (probes/gemm/README.md)",
     .fix = "clocks, power, the right GPU"},
    {.id = "TD145",
     .name = "nccl.allreduce",
     .tier = "gpu",
     .meaning = "NCCL all-reduce over all GPUs gives the exact sum",
     .evidence = {"nccl"},
     .why = "a wrong all-reduce corrupts training silently",
     .reads = "probe-nccl's all-reduce results, compared exactly",
     .fix = "NCCL settings and /dev/shm"},
    {.id = "TD146",
     .name = "nccl.busbw",
     .tier = "gpu",
     .meaning = "all-reduce bus bandwidth at or above validate.allreduce_busbw_min_gbps",
     .evidence = {"nccl"},
     .why = "a slow interconnect path makes multi-GPU jobs slow",
     .reads = "probe-nccl's best bus bandwidth (nccl-tests' busbw formula)",
     .fix = "topology, NCCL_P2P and NCCL_IB settings"},
    {.id = "TD147",
     .name = "torch.matmul",
     .tier = "gpu",
     .meaning = "torch.matmul on the GPU matches its reference",
     .evidence = {"torch"},
     .why = "torch's own GPU path can be broken while cuBLAS alone works",
     .reads = "the torch probe's GPU matmul against its reference",
     .fix = "the GPU, torch's cuBLAS build"},
};
#pragma GCC diagnostic pop

}  // namespace

const std::vector<CheckInfo>& check_catalog() { return k_checks; }

const CheckInfo* find_check(const std::string& id) {
    for (const auto& c : k_checks)
        if (id == c.id) return &c;
    return nullptr;
}

const CheckInfo& check_info(const std::string& id) {
    if (const CheckInfo* c = find_check(id)) return *c;
    throw std::logic_error("check " + id + " is not in the catalog");
}

}  // namespace td
