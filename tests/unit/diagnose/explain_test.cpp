// explain_log reads failure logs and names the root cause from data/error_signatures.json.
// Every log below is written here, after the messages the named programs print (torch's
// warnings and exceptions, the CUDA runtime's error strings, nvidia-container-cli, NCCL's
// NCCL_DEBUG lines, nvidia-smi), with the noise real logs carry around them.
#include "core/diagnose/explain.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "diagnose/explain_corpus.hpp"
#include "engine/files.hpp"
#include "engine/project_loader.hpp"
#include "test_support.hpp"

using namespace td;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace {

std::vector<Explanation> explain(const std::string& log, const nlohmann::json* fp = nullptr) {
    return explain_log(log, test::real_signatures(), fp, test::real_kb());
}

std::string ids(const std::vector<Explanation>& ex) {
    std::string out;
    for (const auto& e : ex) out += (out.empty() ? "" : ",") + e.id;
    return out;
}

std::string fact(const Explanation& e, const std::string& name) {
    auto it = e.facts.find(name);
    return it == e.facts.end() ? std::string("<none>") : it->second;
}

std::string all_evidence(const Explanation& e) {
    std::string out;
    for (const auto& l : e.evidence) out += l + "\n";
    return out;
}

// Rendered text must never show template syntax.
void check_rendered(const Explanation& e) {
    for (const std::string* text : {&e.cause, &e.fix}) {
        CHECK_THAT(*text, !ContainsSubstring("[["));
        CHECK_THAT(*text, !ContainsSubstring("]]"));
        CHECK_THAT(*text, !ContainsSubstring("{"));
        CHECK_THAT(*text, !ContainsSubstring("}"));
        CHECK_FALSE(text->empty());
    }
}

// Explains `log` and requires exactly the signatures `want` (comma-separated, in order).
std::vector<Explanation> expect(const std::string& log, const std::string& want,
                                const nlohmann::json* fp = nullptr) {
    auto ex = explain(log, fp);
    REQUIRE(ids(ex) == want);
    for (const auto& e : ex) check_rendered(e);
    return ex;
}

nlohmann::json fp(const char* text) { return nlohmann::json::parse(text); }

// ---- sample logs, one or more per signature -------------------------------------------------

const std::string k_cudart_log =
    "$ python -m apex_train --config configs/base.yaml\n"
    "2024-03-02 10:11:12,001 INFO loading config configs/base.yaml\n"
    "Traceback (most recent call last):\n"
    "  File \"/usr/lib/python3.10/runpy.py\", line 196, in _run_module_as_main\n"
    "    return _run_code(code, main_globals, None,\n"
    "  File \"/workspace/apex_train/__main__.py\", line 4, in <module>\n"
    "    from apex import amp\n"
    "  File \"/opt/venv/lib/python3.10/site-packages/apex/amp/__init__.py\", line 1, in <module>\n"
    "    import amp_C\n"
    "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
    "$ echo $?\n"
    "1\n";

// Collected on Windows, so every line ends in CR LF.
const std::string k_cudnn_crlf_log =
    "[2023-11-20 08:00:01] epoch 0 starting\r\n"
    "[2023-11-20 08:00:02] building model resnet50\r\n"
    "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open "
    "shared "
    "object file: No such file or directory\r\n"
    "Please make sure libcudnn_cnn_infer.so.8 is in your library path!\r\n"
    "Aborted (core dumped)\r\n";

const std::string k_cudnn_preload_log =
    "Traceback (most recent call last):\n"
    "  File \"<string>\", line 1, in <module>\n"
    "  File \"/app/.venv/lib/python3.11/site-packages/torch/__init__.py\", line 290, in <module>\n"
    "    _load_global_deps()\n"
    "  File \"/app/.venv/lib/python3.11/site-packages/torch/__init__.py\", line 245, in "
    "_load_global_deps\n"
    "    _preload_cuda_deps(lib_folder, lib_name)\n"
    "  File \"/app/.venv/lib/python3.11/site-packages/torch/__init__.py\", line 211, in "
    "_preload_cuda_deps\n"
    "    raise ValueError(f\"{lib_name} not found in the system path {sys.path}\")\n"
    "ValueError: libcudnn.so.*[0-9] not found in the system path ['', '/usr/lib/python311.zip', "
    "'/app/.venv/lib/python3.11/site-packages']\n";

const std::string k_nccl_log =
    "W0612 09:14:03.118000 140112 torch/distributed/run.py:779] \n"
    "W0612 09:14:03.118000 140112 torch/distributed/run.py:779] "
    "*****************************************\n"
    "[rank0]: Traceback (most recent call last):\n"
    "[rank0]:   File \"/workspace/train_ddp.py\", line 2, in <module>\n"
    "[rank0]:     import torch\n"
    "[rank0]:   File \"/opt/conda/lib/python3.11/site-packages/torch/__init__.py\", line 367, in "
    "<module>\n"
    "[rank0]:     from torch._C import *  # noqa: F403\n"
    "[rank0]: OSError: libnccl.so.2: cannot open shared object file: No such file or directory\n"
    "E0612 09:14:04.502000 140112 torch/distributed/elastic/multiprocessing/api.py:833] failed "
    "(exitcode: 1)\n";

const std::string k_cublas_log =
    ">>> import torch\n"
    "Traceback (most recent call last):\n"
    "  File \"<stdin>\", line 1, in <module>\n"
    "  File \"/home/ci/.local/lib/python3.12/site-packages/torch/__init__.py\", line 405, in "
    "<module>\n"
    "    from torch._C import *  # noqa: F403\n"
    "ImportError: libcublasLt.so.12: cannot open shared object file: No such file or directory\n"
    ">>> \n";

const std::string k_libcuda_log =
    "Run pytest tests/gpu -x\n"
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.10.14, pytest-8.2.0, pluggy-1.5.0\n"
    "collected 12 items / 1 error\n"
    "==================================== ERRORS ====================================\n"
    "___________________ ERROR collecting tests/gpu/test_kernels.py ___________________\n"
    "tests/gpu/test_kernels.py:3: in <module>\n"
    "    import cupy\n"
    "E   OSError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    "=========================== short test summary info ============================\n";

const std::string k_no_kernel_log =
    "INFO:root:compiling custom ops\n"
    "Traceback (most recent call last):\n"
    "  File \"/workspace/bench.py\", line 41, in <module>\n"
    "    out = fused_layernorm(x, w, b)\n"
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
    "below might be "
    "incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n";

// torch's warning (with ANSI colours from a coloured logger), then the first kernel launch failing.
const std::string k_sm_log =
    "\x1b[32m2025-05-03 12:00:00\x1b[0m | \x1b[1mINFO\x1b[0m | starting ComfyUI\n"
    "/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:230: "
    "\x1b[33mUserWarning\x1b[0m: \n"
    "NVIDIA GeForce RTX 5090 with CUDA capability \x1b[1msm_120\x1b[0m is not compatible with the "
    "current PyTorch "
    "installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 "
    "sm_90.\n"
    "If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the "
    "instructions at "
    "https://pytorch.org/get-started/locally/\n"
    "\n"
    "  warnings.warn(\n"
    "Traceback (most recent call last):\n"
    "  File \"/app/main.py\", line 12, in <module>\n"
    "    x = torch.ones(4, device=\"cuda\") * 2\n"
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";

const std::string k_old_gpu_log =
    "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:173: UserWarning: \n"
    "    Found GPU0 Tesla K80 which is of cuda capability 3.7.\n"
    "    PyTorch no longer supports this GPU because it is too old.\n"
    "    The minimum cuda capability supported by this library is 5.0.\n"
    "    \n"
    "  warnings.warn(old_gpu_warn % (d, name, major, minor, min_arch // 10, min_arch % 10))\n";

const std::string k_insufficient_log =
    "Collecting environment information...\n"
    "PyTorch version: 2.5.1+cu124\n"
    "Is debug build: False\n"
    "CUDA used to build PyTorch: 12.4\n"
    "ROCM used to build PyTorch: N/A\n"
    "\n"
    "OS: Ubuntu 22.04.4 LTS (x86_64)\n"
    "Is CUDA available: False\n"
    "CUDA runtime version: Could not collect\n"
    "\n"
    "Traceback (most recent call last):\n"
    "  File \"/srv/app/warmup.py\", line 8, in <module>\n"
    "    torch.zeros(1).cuda()\n"
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n";

// A CUDA sample on a GPU-less CI runner.
const std::string k_device_query_log =
    "./deviceQuery Starting...\n"
    "\n"
    " CUDA Device Query (Runtime API) version (CUDART static linking)\n"
    "\n"
    "cudaGetDeviceCount returned 35\n"
    "-> CUDA driver version is insufficient for CUDA runtime version\n"
    "Result = FAIL\n";

const std::string k_too_old_log =
    "PyTorch version: 2.9.0+cu130\n"
    "/root/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py:180: UserWarning: CUDA "
    "initialization: The "
    "NVIDIA driver on your system is too old (found version 12040). Please update your GPU driver "
    "by downloading and "
    "installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
    "Alternatively, go to: "
    "https://pytorch.org to install a PyTorch version that has been compiled with your version of "
    "the CUDA driver. "
    "(Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:119.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    "cuda available: False\n";

// GitHub Actions log lines carry a timestamp.
const std::string k_no_driver_log =
    "2024-05-01T10:00:00.1234567Z ##[group]Run python -c 'import torch; torch.cuda.init()'\n"
    "2024-05-01T10:00:00.1234568Z ##[endgroup]\n"
    "2024-05-01T10:00:02.5554321Z Traceback (most recent call last):\n"
    "2024-05-01T10:00:02.5554322Z   File \"<string>\", line 1, in <module>\n"
    "2024-05-01T10:00:02.5554323Z   File "
    "\"/opt/hostedtoolcache/Python/3.11.9/x64/lib/python3.11/site-packages/torch/"
    "cuda/__init__.py\", line 314, in _lazy_init\n"
    "2024-05-01T10:00:02.5554324Z     torch._C._cuda_init()\n"
    "2024-05-01T10:00:02.5554325Z RuntimeError: Found no NVIDIA driver on your system. Please "
    "check that you have an "
    "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n"
    "2024-05-01T10:00:02.6000000Z ##[error]Process completed with exit code 1.\n";

const std::string k_804_log =
    "INFO 03-26 05:25:01 cuda.py:230] Using Flash Attention backend.\n"
    "ERROR 03-26 05:25:01 engine.py:389] Unexpected error from cudaGetDeviceCount(). Did you run "
    "some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error 804: forward "
    "compatibility was "
    "attempted on non supported HW\n"
    "ERROR 03-26 05:25:01 engine.py:389] Traceback (most recent call last):\n"
    "ERROR 03-26 05:25:01 engine.py:389]   File "
    "\"/usr/local/lib/python3.10/dist-packages/vllm/engine/"
    "multiprocessing/engine.py\", line 380, in run_mp_engine\n";

// Coloured by the launcher.
const std::string k_802_log =
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |\n"
    "|-----------------------------------------+------------------------+----------------------+\n"
    "[warmup] fabric manager never reported Completed; trying anyway\n"
    "\x1b[31mRuntimeError\x1b[0m: Unexpected error from cudaGetDeviceCount(). Did you run some "
    "cuda functions before "
    "calling NumCudaDevices() that might have already set an error? Error 802: system not yet "
    "initialized\n"
    "[warmup] cuda probe failed (rc=1); sleep 10s\n";

const std::string k_ptx_log =
    "+-----------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 550.163.01             Driver Version: 550.163.01     CUDA Version: 12.4     |\n"
    "+-----------------------------------------------------------------------------------------+\n"
    "PyTorch version: 2.10.0+cu128\n"
    "step 0: compiling kernels\n"
    "Traceback (most recent call last):\n"
    "  File \"/work/train_gpt.py\", line 512, in <module>\n"
    "    model = torch.compile(model)\n"
    "torch.AcceleratorError: CUDA error: the provided PTX was compiled with an unsupported "
    "toolchain.\n";

const std::string k_cudnn_mismatch_log =
    "Traceback (most recent call last):\n"
    "  File \"/home/u/proj/infer.py\", line 20, in <module>\n"
    "    y = model(x)\n"
    "  File "
    "\"/home/u/.conda/envs/p/lib/python3.10/site-packages/torch/backends/cudnn/__init__.py\", line "
    "95, in "
    "_init\n"
    "    raise RuntimeError(\n"
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but "
    "found runtime version "
    "(8, 9, 2). PyTorch already comes bundled with cuDNN. One option to resolving this error is to "
    "ensure PyTorch can "
    "find the bundled cuDNN. Looks like your LD_LIBRARY_PATH contains incompatible version of "
    "cudnn. Please either "
    "remove it from the path or install cudnn (9, 1, 0)\n";

const std::string k_container_cli_log =
    "$ nvidia-smi | head -4\n"
    "+---------------------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
    "|-----------------------------------------+----------------------+----------------------+\n"
    "$ docker run --rm --gpus all nvcr.io/nvidia/pytorch:24.05-py3 nvidia-smi\n"
    "docker: Error response from daemon: failed to create task for container: failed to create "
    "shim task: OCI runtime "
    "create failed: runc create failed: unable to start container process: error during container "
    "init: error running "
    "hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update "
    "your driver to a newer "
    "version, or use an earlier cuda container: unknown.\n";

const std::string k_container_nvml_log =
    "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n"
    "docker: Error response from daemon: failed to create task for container: failed to create "
    "shim task: OCI runtime "
    "create failed: runc create failed: unable to start container process: error during container "
    "init: error running "
    "hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot "
    "open shared object "
    "file: no such file or directory: unknown.\n";

const std::string k_no_gpu_runtime_log =
    "$ docker run --rm --gpus all ubuntu nvidia-smi\n"
    "docker: Error response from daemon: could not select device driver \"\" with capabilities: "
    "[[gpu]].\n"
    "ERRO[0000] error waiting for container: context canceled\n";

const std::string k_nccl_shm_log =
    "node1:2451:2451 [0] NCCL INFO Bootstrap : Using eth0:172.17.0.2<0>\n"
    "node1:2451:2451 [0] NCCL INFO NCCL version 2.20.5+cuda12.4\n"
    "node1:2451:2509 [0] NCCL INFO Channel 00/02 :    0   1\n"
    "\n"
    "node1:2451:2509 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend "
    "/dev/shm/nccl-UG3QwZ to 9637892 "
    "bytes\n"
    "\n"
    "node1:2451:2509 [0] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment "
    "/dev/shm/nccl-UG3QwZ (size 9637888)\n"
    "node1:2451:2509 [0] NCCL INFO transport/shm.cc:114 -> 2\n"
    "node1:2451:2509 [0] NCCL INFO init.cc:1089 -> 2\n"
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), "
    "NCCL version 2.20.5\n"
    "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
    "or device error. \n"
    "[rank0]: Last error:\n"
    "[rank0]: Error while creating shared memory segment /dev/shm/nccl-UG3QwZ (size 9637888)\n";

const std::string k_nccl_fallocate_log =
    "gpu-node-7:118:190 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct\n"
    "\n"
    "gpu-node-7:118:190 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space "
    "left on device\n"
    "gpu-node-7:118:190 [1] NCCL INFO include/shm.h:41 -> 2\n";

const std::string k_nccl_generic_log =
    "Epoch 1/10\n"
    "Traceback (most recent call last):\n"
    "  File \"train.py\", line 88, in <module>\n"
    "    dist.barrier()\n"
    "RuntimeError: NCCL error in: "
    "/opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3\n";

const std::string k_nvml_log =
    "$ nvidia-smi\n"
    "Failed to initialize NVML: Driver/library version mismatch\n"
    "NVML library version: 535.183\n"
    "$ sudo dmesg | grep NVRM | tail -4\n"
    "[ 5121.104032] NVRM: API mismatch: the client has the version 535.183.01, but\n"
    "[ 5121.104033] NVRM: this kernel module has the version 535.161.08.  Please\n"
    "[ 5121.104034] NVRM: make sure that this kernel module and all NVIDIA driver\n"
    "[ 5121.104035] NVRM: components have the same version.\n";

const std::string k_undefined_symbol_log =
    ">>> import flash_attn\n"
    "Traceback (most recent call last):\n"
    "  File \"<stdin>\", line 1, in <module>\n"
    "  File \"/usr/local/lib/python3.10/dist-packages/flash_attn/__init__.py\", line 3, in "
    "<module>\n"
    "    from flash_attn.flash_attn_interface import (\n"
    "  File \"/usr/local/lib/python3.10/dist-packages/flash_attn/flash_attn_interface.py\", line "
    "10, in <module>\n"
    "    import flash_attn_2_cuda as flash_attn_cuda\n"
    "ImportError: "
    "/usr/local/lib/python3.10/dist-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
    "undefined symbol: _ZN3c104cuda9SetDeviceEi\n";

const std::string k_nvcc_log =
    "  Building wheel for causal-conv1d (pyproject.toml) ... error\n"
    "  error: subprocess-exited-with-error\n"
    "  \n"
    "  × Building wheel for causal-conv1d (pyproject.toml) did not run successfully.\n"
    "  │ exit code: 1\n"
    "  ╰─> [112 lines of output]\n"
    "      Traceback (most recent call last):\n"
    "        File "
    "\"/tmp/pip-build-env-2kq1/overlay/lib/python3.10/site-packages/torch/utils/"
    "cpp_extension.py\", "
    "line 413, in _check_cuda_version\n"
    "          raise RuntimeError(CUDA_MISMATCH_MESSAGE.format(cuda_str_version, "
    "torch.version.cuda))\n"
    "      RuntimeError:\n"
    "      The detected CUDA version (12.4) mismatches the version that was used to compile\n"
    "      PyTorch (11.8). Please make sure to use the same CUDA versions.\n"
    "      \n"
    "      [end of output]\n";

const std::string k_device_count_log =
    "/opt/conda/lib/python3.11/site-packages/torch/cuda/__init__.py:128: UserWarning: CUDA "
    "initialization: "
    "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that "
    "might have already set an error? Error 46: all CUDA-capable devices are busy or unavailable "
    "(Triggered internally at "
    "../c10/cuda/CUDAFunctions.cpp:108.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    "False\n";

// Samples for signatures the corpus (tests/data/explain_corpus) has no log for yet, written
// after the messages the named loaders and libraries print.
const std::string k_curand_log =
    "OSError: libcurand.so.10: cannot open shared object file: No such file or directory\n";
const std::string k_cusolver_log =
    "ImportError: libcusolver.so.11: cannot open shared object file: No such file or directory\n";
const std::string k_nvrtc_log =
    "RuntimeError: Error in dlopen: libnvrtc.so.12: cannot open shared object file: No such file "
    "or directory\n";
const std::string k_nvjitlink_missing_log =
    "ImportError: libnvJitLink.so.12: cannot open shared object file: No such file or "
    "directory\n";
const std::string k_nvml_missing_log =
    "pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found\n";
const std::string k_cusparselt_log =
    "ValueError: libcusparseLt.so.*[0-9] not found in the system path ['/app', "
    "'/usr/lib/python3.12']\n";
const std::string k_cufile_log =
    "OSError: libcufile.so.0: cannot open shared object file: No such file or directory\n";
const std::string k_nvshmem_log =
    "OSError: libnvshmem_host.so.3: cannot open shared object file: No such file or directory\n";
const std::string k_nccl_version_skew_log =
    "node-b:4242:4300 [0] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 1 "
    "version 22105 rank 0 version 21903\n"
    "node-b:4242:4300 [0] NCCL INFO init.cc:1422 -> 5\n";

// One sample per signature; the signature it names must come first.
const std::map<std::string, std::string>& samples() {
    static const std::map<std::string, std::string> m = {
        {"EX101", k_cudart_log},
        {"EX102", k_cudnn_crlf_log},
        {"EX103", k_nccl_log},
        {"EX104", k_cublas_log},
        {"EX105", k_libcuda_log},
        {"EX110", k_no_kernel_log},
        {"EX111", k_sm_log},
        {"EX112", k_old_gpu_log},
        {"EX120", k_insufficient_log},
        {"EX121", k_too_old_log},
        {"EX122", k_no_driver_log},
        {"EX123", k_804_log},
        {"EX124", k_802_log},
        {"EX125", k_ptx_log},
        {"EX130", k_cudnn_mismatch_log},
        {"EX140", k_container_cli_log},
        {"EX141", k_container_nvml_log},
        {"EX142", k_no_gpu_runtime_log},
        {"EX150", k_nccl_shm_log},
        {"EX151", k_nccl_generic_log},
        {"EX160", k_nvml_log},
        {"EX170", k_undefined_symbol_log},
        {"EX171", k_nvcc_log},
        {"EX190", k_device_count_log},
        {"EX201", k_curand_log},
        {"EX203", k_cusolver_log},
        {"EX204", k_nvrtc_log},
        {"EX206", k_nvjitlink_missing_log},
        {"EX209", k_nvml_missing_log},
        {"EX217", k_cusparselt_log},
        {"EX218", k_cufile_log},
        {"EX219", k_nvshmem_log},
        {"EX605", k_nccl_version_skew_log},
        // Real texts of ../shared/reports/real-images-3.md (cases 6, 17, 14, 5).
        {"EX506",
         "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
         "  File \"/app/.venv/lib/python3.11/site-packages/torch/__init__.py\", line 416, in "
         "<module>\n    raise ImportError(\nImportError: Failed to load PyTorch C extensions:\n"
         "    It appears that PyTorch has loaded the `torch/_C` folder\n"
         "    of the PyTorch repository rather than the C extensions which\n"
         "    are expected in the `torch._C` namespace.\n"},
        {"EX507",
         "  File \"/app/.venv/lib/python3.11/site-packages/torchvision/_meta_registrations.py\", "
         "line 163, in <module>\n    @torch.library.register_fake(\"torchvision::nms\")\n"
         "RuntimeError: operator torchvision::nms does not exist\n"},
        {"EX508",
         "  File \"/usr/lib/python3.11/tempfile.py\", line 222, in _get_default_tempdir\n"
         "    raise FileNotFoundError(_errno.ENOENT,\nFileNotFoundError: [Errno 2] No usable "
         "temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp', '/app']\n"},
        {"EX509",
         "Traceback (most recent call last):\n  File \"/app/main.py\", line 1, in <module>\n"
         "    import torch\nModuleNotFoundError: No module named 'torch'\n"},
    };
    return m;
}

}  // namespace

// ---- the data file ------------------------------------------------------------------------------

TEST_CASE("error_signatures.json parses and every signature is sourced") {
    const auto& s = test::real_signatures();
    REQUIRE(s.signatures.size() >= 20);
    std::set<std::string> seen;
    for (const auto& sig : s.signatures) {
        INFO(sig.id);
        CHECK(seen.insert(sig.id).second);
        CHECK_FALSE(sig.title.empty());
        REQUIRE_FALSE(sig.source.empty());
        // A document URL, or a package cited by name (never a package index's host); a
        // vocabulary entry may also cite the header or C library it was generated from.
        for (const auto& src : sig.source) {
            bool cited = src.rfind("https://", 0) == 0 || src.rfind("PyPI ", 0) == 0;
            for (const char* p : {"Debian ", "CUDA toolkit ", "glibc ", "GCC "})
                cited = cited || (sig.vocabulary && src.rfind(p, 0) == 0);
            // a catalog entry: "<tool> <version> <file>"
            // (tests/unit/diagnose/explain_catalogs_test)
            cited = cited || (sig.catalog && std::count(src.begin(), src.end(), ' ') >= 2);
            CHECK(cited);
        }
        CHECK_FALSE(sig.patterns.empty());
    }
}

TEST_CASE("every signature has a sample log that it explains first") {
    // A real log from the corpus where there is one, else a sample written here.
    std::map<std::string, std::string> corpus_logs;
    for (const auto& c : test::load_corpus(test::source_path("tests/data/explain_corpus")))
        corpus_logs.emplace(c.expect, c.log);
    for (const auto& sig : test::real_signatures().signatures) {
        if (sig.vocabulary) continue;  // vocabularies: "a vocabulary answers only when ..."
        INFO(sig.id);
        std::string log;
        if (auto c = corpus_logs.find(sig.id); c != corpus_logs.end()) {
            log = c->second;
        } else {
            auto it = samples().find(sig.id);
            REQUIRE(it != samples().end());
            log = it->second;
        }
        auto ex = explain(log);
        REQUIRE_FALSE(ex.empty());
        CHECK(ex.front().id == sig.id);
        CHECK(ex.front().title == sig.title);
        CHECK_FALSE(ex.front().evidence.empty());
        check_rendered(ex.front());
    }
}

// ---- missing libraries
// ----------------------------------------------------------------------------

TEST_CASE("missing libcudart.so.11.0 names CUDA 11 and the torch wheels built for it") {
    auto ex = expect(k_cudart_log, "EX101");
    const auto& e = ex[0];
    CHECK(fact(e, "soname") == "libcudart.so.11.0");
    CHECK(fact(e, "major") == "11");
    CHECK_THAT(e.cause, ContainsSubstring("libcudart.so.11.0 cannot be loaded"));
    CHECK_THAT(e.cause, ContainsSubstring("built for CUDA 11"));
    CHECK_THAT(e.fix, ContainsSubstring("Install the CUDA 11 runtime"));
    CHECK_THAT(e.fix, ContainsSubstring("cu118 (torch 2.0.0 to 2.7.1)"));
    REQUIRE(e.evidence.size() == 1);
    CHECK(e.evidence[0] ==
          "L10: ImportError: libcudart.so.11.0: cannot open shared object file: No such file or "
          "directory");
    CHECK(e.verdict.empty());
}

TEST_CASE("missing libcudart: the fingerprint's unresolved list confirms or rules out") {
    auto yes = fp(R"({"driver": {"version": "535.104.05", "cuda": "12.2"},
                      "unresolved": [{"soname": "libcudart.so.11.0",
                                      "needed_by": "/opt/venv/lib/python3.10/site-packages/amp_C.so"}]})");
    auto ex = expect(k_cudart_log, "EX101", &yes);
    CHECK_THAT(ex[0].verdict,
               StartsWith("confirmed: libcudart.so.11.0 is unresolved in the fingerprint"));
    CHECK_THAT(ex[0].verdict, ContainsSubstring("amp_C.so"));

    auto no = fp(R"({"driver": {"version": "535.104.05", "cuda": "12.2"}, "unresolved": []})");
    ex = expect(k_cudart_log, "EX101", &no);
    CHECK_THAT(ex[0].verdict, StartsWith("ruled out: libcudart.so.11.0 is not among"));

    auto silent = fp(R"({"driver": {"version": "535.104.05", "cuda": "12.2"}})");
    ex = expect(k_cudart_log, "EX101", &silent);
    CHECK(ex[0].verdict.empty());
}

TEST_CASE("missing cuDNN 8 in a CRLF log: soname, major and the torch releases built against it") {
    auto ex = expect(k_cudnn_crlf_log, "EX102");
    const auto& e = ex[0];
    CHECK(fact(e, "soname") == "libcudnn_cnn_infer.so.8");
    CHECK(fact(e, "major") == "8");
    CHECK_THAT(e.cause,
               ContainsSubstring("cuDNN 8 cannot be loaded (libcudnn_cnn_infer.so.8 is not on"));
    CHECK_THAT(e.fix, ContainsSubstring("torch releases built against cuDNN 8: 1.13.0 to 2.3.1"));
    REQUIRE(e.evidence.size() == 1);
    CHECK_THAT(e.evidence[0], StartsWith("L3: Could not load library libcudnn_cnn_infer.so.8."));
    CHECK_THAT(e.evidence[0], !ContainsSubstring("\r"));

    auto unresolved = fp(
        R"({"unresolved": [{"soname": "libcudnn_cnn_infer.so.8", "needed_by": "libtorch_cuda.so"}]})");
    ex = expect(k_cudnn_crlf_log, "EX102", &unresolved);
    CHECK_THAT(ex[0].verdict, StartsWith("confirmed: libcudnn_cnn_infer.so.8 is unresolved"));
}

TEST_CASE("torch's preload ValueError for cuDNN has no soname; optional text drops out") {
    auto ex = expect(k_cudnn_preload_log, "EX102");
    const auto& e = ex[0];
    CHECK(fact(e, "soname") == "<none>");
    CHECK_THAT(e.cause, StartsWith("cuDNN cannot be loaded. torch's pip wheels"));
    CHECK_THAT(e.fix, !ContainsSubstring("torch releases built against"));
    auto unresolved = fp(R"({"unresolved": [{"soname": "libcudnn.so.9", "needed_by": "x"}]})");
    ex = expect(k_cudnn_preload_log, "EX102", &unresolved);
    CHECK(ex[0].verdict.empty());  // nothing in the log names the soname to compare
}

TEST_CASE("missing libnccl.so.2 under torchrun") {
    auto ex = expect(k_nccl_log, "EX103");
    CHECK(fact(ex[0], "soname") == "libnccl.so.2");
    CHECK(fact(ex[0], "major") == "2");
    CHECK_THAT(ex[0].cause, StartsWith("NCCL (libnccl.so.2) cannot be loaded"));
    CHECK_THAT(ex[0].fix, ContainsSubstring("nvidia-nccl-cu12==<that version>"));
    CHECK(ex[0].evidence[0].rfind("L8: [rank0]: OSError: libnccl.so.2", 0) == 0);
}

TEST_CASE("missing libcublasLt.so.12 names CUDA 12 wheels") {
    auto ex = expect(k_cublas_log, "EX104");
    CHECK(fact(ex[0], "soname") == "libcublasLt.so.12");
    CHECK(fact(ex[0], "major") == "12");
    CHECK_THAT(ex[0].cause, StartsWith("cuBLAS for CUDA 12 cannot be loaded (libcublasLt.so.12)"));
    CHECK_THAT(ex[0].fix, ContainsSubstring("cu126 (torch 2.6.0 to 2.14.0)"));
}

TEST_CASE("missing libcuda.so.1: no driver visible; the fingerprint's driver decides") {
    auto ex = expect(k_libcuda_log, "EX105");
    CHECK(fact(ex[0], "soname") == "libcuda.so.1");
    CHECK_THAT(ex[0].cause, ContainsSubstring("GPU-less CI runner"));
    CHECK_THAT(ex[0].fix, ContainsSubstring("--gpus all"));

    auto none =
        fp(R"({"gpus": [], "unresolved": [{"soname": "libcuda.so.1", "needed_by": "cupy"}]})");
    ex = expect(k_libcuda_log, "EX105", &none);
    CHECK(ex[0].verdict == "confirmed: the fingerprint shows no NVIDIA driver");

    auto some = fp(R"({"driver": {"version": "550.54.15", "cuda": "12.4"}})");
    ex = expect(k_libcuda_log, "EX105", &some);
    CHECK(ex[0].verdict == "ruled out: the fingerprint shows NVIDIA driver 550.54.15");
}

// ---- architectures
// ----------------------------------------------------------------------------------

TEST_CASE(
    "no kernel image alone: generic architecture mismatch, fingerprint tells torch from "
    "extension") {
    auto ex = expect(k_no_kernel_log, "EX110");
    CHECK_THAT(ex[0].cause, ContainsSubstring("TORCH_CUDA_ARCH_LIST"));
    CHECK(ex[0].evidence[0].rfind("L5: RuntimeError: CUDA error: no kernel image", 0) == 0);

    auto uncovered = fp(R"({"gpus": [{"name": "NVIDIA B200", "cc": "10.0"}],
                            "torch": {"version": "2.4.1+cu121", "cuda": "12.1",
                                      "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}})");
    ex = expect(k_no_kernel_log, "EX110", &uncovered);
    CHECK_THAT(ex[0].verdict,
               StartsWith("confirmed: NVIDIA B200 (compute capability 10.0) is not covered"));

    auto covered = fp(R"({"gpus": [{"name": "NVIDIA A100-SXM4-80GB"}],
                          "torch": {"arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}})");
    ex = expect(k_no_kernel_log, "EX110", &covered);
    CHECK_THAT(ex[0].verdict,
               StartsWith("ruled out: NVIDIA A100-SXM4-80GB (compute capability 8.0) is covered"));
    CHECK_THAT(ex[0].verdict, ContainsSubstring("comes from an extension"));
}

TEST_CASE(
    "sm_120 not in the torch build (ANSI colours): names the GPU, the list and fitting wheels") {
    auto ex = expect(k_sm_log, "EX111");  // the 'no kernel image' error folds into it
    const auto& e = ex[0];
    CHECK(fact(e, "sm") == "120");
    CHECK(fact(e, "sm_cc") == "12.0");
    CHECK(fact(e, "gpu") == "NVIDIA GeForce RTX 5090");
    CHECK(fact(e, "supported") == "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90");
    CHECK_THAT(e.cause,
               ContainsSubstring("not compiled for sm_120 (NVIDIA GeForce RTX 5090); it supports "
                                 "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"));
    CHECK_THAT(e.fix, ContainsSubstring("cu128 (torch 2.7.0 to 2.11.0)"));
    CHECK_THAT(e.fix, ContainsSubstring("cu129 (torch 2.8.0 to 2.11.0, 2.13.0)"));
    CHECK_THAT(e.fix, !ContainsSubstring("cu126"));
    // torch 2.5's cu124 wheels have no PTX: recommending them for sm_120 would fail the same way.
    CHECK_THAT(e.fix, !ContainsSubstring("cu124"));
    std::string ev = all_evidence(e);
    CHECK_THAT(ev,
               ContainsSubstring(
                   "L3: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible"));
    CHECK_THAT(ev, ContainsSubstring("L11: RuntimeError: CUDA error: no kernel image"));
    CHECK_THAT(ev, !ContainsSubstring("\x1b"));

    auto old_torch = fp(R"({"gpus": [{"name": "NVIDIA GeForce RTX 5090", "cc": "12.0"}],
                            "torch": {"version": "2.5.1+cu124",
                                      "arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}})");
    ex = expect(k_sm_log, "EX111", &old_torch);
    CHECK_THAT(
        ex[0].verdict,
        StartsWith("confirmed: NVIDIA GeForce RTX 5090 (compute capability 12.0) is not covered "
                   "by torch's arch list sm_50"));

    auto new_torch = fp(R"({"gpus": [{"name": "NVIDIA GeForce RTX 5090", "cc": "12.0"}],
                            "torch": {"version": "2.8.0+cu128",
                                      "arch_list": ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]}})");
    ex = expect(k_sm_log, "EX111", &new_torch);
    CHECK_THAT(
        ex[0].verdict,
        StartsWith("ruled out: NVIDIA GeForce RTX 5090 (compute capability 12.0) is covered"));

    // Without a torch arch list in the fingerprint the log's own list is used.
    auto gpus_only = fp(R"({"gpus": [{"name": "NVIDIA GeForce RTX 5090"}]})");
    ex = expect(k_sm_log, "EX111", &gpus_only);
    CHECK_THAT(ex[0].verdict,
               StartsWith("confirmed: NVIDIA GeForce RTX 5090 (compute capability 12.0)"));
}

TEST_CASE("sm warning on one joined line; PTX in an arch list covers newer GPUs") {
    std::string log =
        "UserWarning: NVIDIA Thor with CUDA capability sm_110 is not compatible with the current "
        "PyTorch installation. "
        "The current PyTorch install supports CUDA capabilities sm_75 sm_80 sm_86 sm_90 sm_100 "
        "sm_120 compute_120. "
        "If you want to use the NVIDIA Thor GPU with PyTorch, please check the instructions at "
        "https://pytorch.org/get-started/locally/\n";
    auto ex = expect(log, "EX111");
    CHECK(fact(ex[0], "gpu") == "NVIDIA Thor");
    CHECK(fact(ex[0], "supported") == "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120");
    CHECK(fact(ex[0], "sm_cc") == "11.0");
    // No wheel carries PTX older than 11.0: torch 2.5's cu124 wheels, once listed with
    // 9.0+PTX, hold SASS only (the knowledge-base audit of their binaries), so none fits.
    CHECK(fact(ex[0], "fits") == "<none>");
}

TEST_CASE("a GPU no torch wheel covers: build from source") {
    std::string log =
        "UserWarning: \n"
        "Tesla K40m with CUDA capability sm_35 is not compatible with the current PyTorch "
        "installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 "
        "sm_86 sm_90.\n";
    auto ex = expect(log, "EX111");
    CHECK(fact(ex[0], "fits_none") == "3.5");
    CHECK_THAT(ex[0].fix, ContainsSubstring(
                              "No torch wheel torchdock knows covers compute capability 3.5: build "
                              "torch from source with TORCH_CUDA_ARCH_LIST=3.5"));
}

TEST_CASE("GPU too old: K80 and the last wheels that still include it") {
    auto ex = expect(k_old_gpu_log, "EX112");
    const auto& e = ex[0];
    CHECK(fact(e, "gpu") == "Tesla K80");
    CHECK(fact(e, "cc") == "3.7");
    CHECK(fact(e, "min_cc") == "5.0");
    CHECK_THAT(e.cause, ContainsSubstring("The GPU Tesla K80 (compute capability 3.7) is older"));
    CHECK_THAT(e.fix, ContainsSubstring("cu118 (torch 2.0.0 to 2.7.1)"));
    auto k80 = fp(
        R"({"gpus": [{"name": "Tesla K80"}], "torch": {"arch_list": ["sm_50", "sm_80", "sm_90"]}})");
    ex = expect(k_old_gpu_log, "EX112", &k80);
    CHECK_THAT(ex[0].verdict,
               StartsWith("confirmed: Tesla K80 (compute capability 3.7) is not covered"));
}

// ---- drivers
// --------------------------------------------------------------------------------------------

TEST_CASE("insufficient driver with torch's CUDA in the log names the driver floor") {
    auto ex = expect(k_insufficient_log, "EX120");
    const auto& e = ex[0];
    CHECK(fact(e, "torch_cuda") == "12.4");
    CHECK(fact(e, "torch_version") == "2.5.1+cu124");
    CHECK(fact(e, "need_cuda") == "12.4");
    CHECK(fact(e, "min_driver") == "550.54.15");
    CHECK(fact(e, "nvcc") ==
          "<none>");  // "CUDA runtime version: Could not collect" is not a version
    CHECK_THAT(e.cause, StartsWith("The CUDA runtime 12.4 reports error 35"));
    CHECK_THAT(e.cause, ContainsSubstring("GPU-less CI runner"));
    CHECK_THAT(e.fix,
               ContainsSubstring(
                   "update the driver to >= 550.54.15 (the CUDA 12.4 toolkit floor; >= 525.60.13 "
                   "is enough under minor-version compatibility)"));

    auto old_driver =
        fp(R"({"driver": {"version": "470.82.01", "cuda": "11.4"}, "torch": {"cuda": "12.4"}})");
    ex = expect(k_insufficient_log, "EX120", &old_driver);
    CHECK(ex[0].verdict ==
          "confirmed: driver 470.82.01 supports CUDA up to 11.4, older than the CUDA 12.4 needed");

    auto minor_compat = fp(R"({"driver": {"version": "535.104.05", "cuda": "12.2"}})");
    ex = expect(k_insufficient_log, "EX120", &minor_compat);
    CHECK(ex[0].verdict ==
          "ruled out: driver 535.104.05 supports CUDA 12.2, enough for CUDA 12.4 (same major "
          "version: minor-version compatibility)");

    auto gpu_less = fp(R"({"gpus": [], "torch": {"version": "2.5.1+cu124", "cuda": "12.4"}})");
    ex = expect(k_insufficient_log, "EX120", &gpu_less);
    CHECK(ex[0].verdict == "confirmed: the fingerprint shows no NVIDIA driver");
}

TEST_CASE("deviceQuery on a GPU-less runner: error 35 without versions") {
    auto ex = expect(k_device_query_log, "EX120");
    CHECK(fact(ex[0], "need_cuda") == "<none>");
    CHECK_THAT(ex[0].cause, StartsWith("The CUDA runtime reports error 35"));
    CHECK_THAT(ex[0].fix, StartsWith("Where a GPU is expected: update the driver, or use a build"));
    CHECK(ex[0].evidence[0] ==
          "L6: -> CUDA driver version is insufficient for CUDA runtime version");
    // The driver's CUDA version comes from the knowledge base when the fingerprint lacks it.
    auto driver_only = fp(R"({"driver": {"version": "470.82.01"}, "torch": {"cuda": "12.1"}})");
    ex = expect(k_device_query_log, "EX120", &driver_only);
    CHECK(ex[0].verdict ==
          "confirmed: driver 470.82.01 is older than the driver floor of CUDA 11.6, older than the "
          "CUDA "
          "12.1 needed");
}

TEST_CASE("driver too old (found version 12040) for a CUDA 13 torch") {
    auto ex = expect(k_too_old_log, "EX121");
    const auto& e = ex[0];
    CHECK(fact(e, "found") == "12040");
    CHECK(fact(e, "found_cuda") == "12.4");
    CHECK(fact(e, "torch_cuda") == "13.0");
    CHECK(fact(e, "min_driver") == "580.95.05");
    CHECK(fact(e, "compat_driver") == "580");
    CHECK(fact(e, "fitting_torch") == "2.7.1+cu118");
    CHECK_THAT(e.cause,
               ContainsSubstring(
                   "the driver reports CUDA version 12040 (CUDA 12.4), older than the CUDA torch "
                   "was built with (CUDA 13.0)"));
    CHECK_THAT(e.fix, ContainsSubstring("Update the driver to >= 580.95.05"));
    CHECK_THAT(e.fix,
               ContainsSubstring("torch==2.7.1+cu118 (the newest wheel built for CUDA <= 12.4)"));

    auto old_driver =
        fp(R"({"driver": {"version": "550.54.15", "cuda": "12.4"}, "torch": {"cuda": "13.0"}})");
    ex = expect(k_too_old_log, "EX121", &old_driver);
    CHECK_THAT(ex[0].verdict, StartsWith("confirmed: driver 550.54.15 supports CUDA up to 12.4"));
    auto new_driver =
        fp(R"({"driver": {"version": "580.82.07", "cuda": "13.0"}, "torch": {"cuda": "13.0"}})");
    ex = expect(k_too_old_log, "EX121", &new_driver);
    CHECK(ex[0].verdict == "ruled out: driver 580.82.07 supports CUDA 13.0, enough for CUDA 13.0");
    auto no_driver = fp(R"({"torch": {"cuda": "13.0"}})");
    ex = expect(k_too_old_log, "EX121", &no_driver);
    CHECK(ex[0].verdict.empty());  // the log itself shows a driver; an empty fingerprint proves
                                   // nothing
}

TEST_CASE("no NVIDIA driver on a CI runner; libcuda and error 35 fold into it") {
    auto ex = expect(k_no_driver_log, "EX122");
    CHECK(ex[0].evidence.size() == 1);
    CHECK_THAT(ex[0].evidence[0],
               StartsWith("L7: 2024-05-01T10:00:02.5554325Z RuntimeError: Found no NVIDIA driver"));

    std::string both = k_libcuda_log + k_no_driver_log + k_device_query_log;
    ex = expect(both, "EX122");
    std::string ev = all_evidence(ex[0]);
    CHECK_THAT(ev, ContainsSubstring("libcuda.so.1: cannot open"));
    CHECK_THAT(ev, ContainsSubstring("Found no NVIDIA driver"));
    CHECK_THAT(ev, ContainsSubstring("CUDA driver version is insufficient"));
    CHECK(fact(ex[0], "soname") == "libcuda.so.1");

    auto none = fp(R"({"gpus": []})");
    ex = expect(k_no_driver_log, "EX122", &none);
    CHECK(ex[0].verdict == "confirmed: the fingerprint shows no NVIDIA driver");
    auto some = fp(
        R"({"driver": {"version": "535.104.05", "cuda": "12.2"}, "gpus": [{"name": "NVIDIA L4"}]})");
    ex = expect(k_no_driver_log, "EX122", &some);
    CHECK(ex[0].verdict == "ruled out: the fingerprint shows NVIDIA driver 535.104.05");
}

TEST_CASE("error 804 beats the generic cudaGetDeviceCount failure on the same line") {
    auto ex = expect(k_804_log, "EX123");
    CHECK(fact(ex[0], "code") == "804");  // captured by the folded generic signature
    CHECK_THAT(ex[0].cause,
               ContainsSubstring("forward compatibility only works on data-center GPUs"));
    CHECK_THAT(ex[0].fix, ContainsSubstring("/usr/local/cuda/compat"));
    CHECK(ex[0].evidence.size() == 1);
    CHECK_THAT(ex[0].evidence[0],
               StartsWith("L2: ERROR 03-26 05:25:01 engine.py:389] Unexpected error from"));

    auto geforce = fp(R"({"driver": {"version": "525.147.05", "cuda": "12.0"},
                          "gpus": [{"name": "NVIDIA GeForce RTX 3090", "cc": "8.6"}],
                          "env": {"LD_LIBRARY_PATH": "/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"}})");
    ex = expect(k_804_log, "EX123", &geforce);
    CHECK(ex[0].verdict ==
          "confirmed: NVIDIA GeForce RTX 3090 is not a data-center GPU, and CUDA forward "
          "compatibility runs only on data-center GPUs; LD_LIBRARY_PATH holds the compat libraries "
          "(/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64)");
    auto h100 = fp(R"({"gpus": [{"name": "NVIDIA H100 80GB HBM3", "cc": "9.0"}]})");
    ex = expect(k_804_log, "EX123", &h100);
    CHECK(ex[0].verdict.empty());
}

TEST_CASE("error 802 with ANSI colours names the Fabric Manager and the driver from nvidia-smi") {
    auto ex = expect(k_802_log, "EX124");
    CHECK(fact(ex[0], "driver") == "550.90.07");
    CHECK(fact(ex[0], "driver_cuda") == "12.4");
    CHECK(fact(ex[0], "code") == "802");
    CHECK_THAT(ex[0].cause,
               ContainsSubstring("of a different version than the driver (550.90.07)"));
    CHECK_THAT(ex[0].fix, ContainsSubstring("systemctl enable --now nvidia-fabricmanager"));
    CHECK_THAT(ex[0].evidence[0],
               StartsWith("L5: RuntimeError: Unexpected error from cudaGetDeviceCount()"));
}

TEST_CASE("PTX from a newer toolchain: torch's CUDA from its version, the driver from nvidia-smi") {
    auto ex = expect(k_ptx_log, "EX125");
    const auto& e = ex[0];
    CHECK(fact(e, "torch_cuda") == "12.8");
    CHECK(fact(e, "driver") == "550.163.01");
    CHECK(fact(e, "min_driver") == "570.124.06");
    CHECK_THAT(e.cause, ContainsSubstring("(the driver supports CUDA 12.4)"));
    CHECK_THAT(e.cause, ContainsSubstring("(CUDA 12.8)"));
    CHECK_THAT(e.fix,
               StartsWith("Update the driver to >= 570.124.06 (the CUDA 12.8 toolkit floor)"));

    auto old_driver =
        fp(R"({"driver": {"version": "550.163.01", "cuda": "12.4"}, "torch": {"cuda": "12.8"}})");
    ex = expect(k_ptx_log, "EX125", &old_driver);
    CHECK(ex[0].verdict ==
          "confirmed: driver 550.163.01 supports CUDA up to 12.4, older than the CUDA 12.8 needed");
    auto new_driver =
        fp(R"({"driver": {"version": "570.211.01", "cuda": "12.8"}, "torch": {"cuda": "12.8"}})");
    ex = expect(k_ptx_log, "EX125", &new_driver);
    CHECK(ex[0].verdict == "ruled out: driver 570.211.01 supports CUDA 12.8, enough for CUDA 12.8");
}

// ---- libraries at run time
// --------------------------------------------------------------------------------

TEST_CASE("cuDNN mismatch: both versions from the log, LD_LIBRARY_PATH in the fingerprint") {
    auto ex = expect(k_cudnn_mismatch_log, "EX130");
    const auto& e = ex[0];
    CHECK(fact(e, "c_major") == "9");
    CHECK(fact(e, "r_major") == "8");
    CHECK(fact(e, "r_minor") == "9");
    CHECK_THAT(
        e.cause,
        StartsWith("torch was compiled against cuDNN 9.1.0 but loaded cuDNN 8.9.2 at run time"));
    CHECK_THAT(e.fix, ContainsSubstring("the system libcudnn8 package"));
    CHECK_THAT(e.fix, ContainsSubstring("torch releases built against cuDNN 8: 1.13.0 to 2.3.1."));

    auto shadowed = fp(R"({"torch": {"version": "2.4.1+cu121", "cudnn": 8902},
                           "env": {"LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64"}})");
    ex = expect(k_cudnn_mismatch_log, "EX130", &shadowed);
    CHECK(
        ex[0].verdict ==
        "confirmed: torch in the fingerprint loads cuDNN 8.9.2, incompatible with the cuDNN 9.1 it "
        "was compiled against; LD_LIBRARY_PATH is /usr/local/cuda-12.1/lib64");
    auto bundled = fp(R"({"torch": {"version": "2.4.1+cu121", "cudnn": 90100}})");
    ex = expect(k_cudnn_mismatch_log, "EX130", &bundled);
    CHECK_THAT(ex[0].verdict,
               StartsWith("ruled out: torch in the fingerprint loads cuDNN 9.1.0, compatible"));
}

// ---- containers
// ---------------------------------------------------------------------------------------------

TEST_CASE("nvidia-container-cli cuda>=12.4 against a 535 driver") {
    auto ex = expect(k_container_cli_log, "EX140");
    const auto& e = ex[0];
    CHECK(fact(e, "required") == "12.4");
    CHECK(fact(e, "driver") == "535.104.05");
    CHECK(fact(e, "driver_cuda") == "12.2");
    CHECK(fact(e, "min_driver") == "550.54.15");
    CHECK_THAT(e.cause,
               ContainsSubstring(
                   "requires CUDA >= 12.4 (its NVIDIA_REQUIRE_CUDA setting), but the host driver "
                   "535.104.05 supports an older CUDA (12.2)"));
    CHECK_THAT(e.fix,
               StartsWith("Update the host driver to >= 550.54.15 (the CUDA 12.4 toolkit floor)"));
    CHECK_THAT(e.fix, ContainsSubstring("NVIDIA_DISABLE_REQUIRE=1"));
    CHECK_THAT(e.evidence[0], StartsWith("L7: nvidia-container-cli: requirement error"));

    auto host_535 = fp(R"({"driver": {"version": "535.104.05", "cuda": "12.2"}})");
    ex = expect(k_container_cli_log, "EX140", &host_535);
    CHECK(ex[0].verdict ==
          "confirmed: driver 535.104.05 supports CUDA up to 12.2, older than the CUDA 12.4 needed");
    auto host_550 = fp(R"({"driver": {"version": "550.54.15", "cuda": "12.4"}})");
    ex = expect(k_container_cli_log, "EX140", &host_550);
    CHECK(ex[0].verdict == "ruled out: driver 550.54.15 supports CUDA 12.4, enough for CUDA 12.4");
}

TEST_CASE("nvidia-container-cli, old message layout and a CUDA the knowledge base does not know") {
    std::string log =
        "container_linux.go:265: starting container process caused \"process_linux.go:368: "
        "container init caused "
        "\\\"process_linux.go:351: running prestart hook 1 caused \\\\\\\"error running hook: exit "
        "status 1, stdout: , "
        "stderr: exec command: [/usr/bin/nvidia-container-cli --load-kmods configure "
        "--require=cuda>=9.0]\\\\\\\\n"
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda >= "
        "9.0\\\\\\\\n\\\\\\\"\\\"\"\n";
    auto ex = expect(log, "EX140");
    CHECK(fact(ex[0], "required") == "9.0");
    CHECK(fact(ex[0], "min_driver") == "<none>");
    CHECK_THAT(ex[0].fix, StartsWith("Update the host driver, or use an image"));
}

TEST_CASE("container toolkit without a host driver, and docker without the toolkit") {
    auto ex = expect(k_container_nvml_log, "EX141");
    CHECK_THAT(ex[0].fix, ContainsSubstring("nvidia-ctk runtime configure --runtime=docker"));
    ex = expect(k_no_gpu_runtime_log, "EX142");
    CHECK(ex[0].evidence[0] ==
          "L2: docker: Error response from daemon: could not select device driver \"\" with "
          "capabilities: [[gpu]].");
    CHECK_THAT(ex[0].fix, ContainsSubstring("nvidia-container-toolkit"));
}

// ---- NCCL
// ---------------------------------------------------------------------------------------------------

TEST_CASE("NCCL shared memory: WARN lines explain torch's unhandled system error") {
    auto ex = expect(k_nccl_shm_log, "EX150");  // the generic NCCL entry folds into it
    const auto& e = ex[0];
    CHECK(fact(e, "segment") == "nccl-UG3QwZ");
    CHECK(fact(e, "size") == "9637892");
    CHECK(fact(e, "nccl_version") == "2.20.5+cuda12.4");
    CHECK_THAT(
        e.cause,
        StartsWith("NCCL could not create its shared-memory segment /dev/shm/nccl-UG3QwZ (9637892 "
                   "bytes): /dev/shm is too small"));
    CHECK_THAT(e.fix, ContainsSubstring("--shm-size=1g"));
    std::string ev = all_evidence(e);
    CHECK_THAT(
        ev, ContainsSubstring(
                "L5: node1:2451:2509 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend"));
    CHECK_THAT(ev, ContainsSubstring("L10: [rank0]: torch.distributed.DistBackendError"));
    CHECK_THAT(ev, ContainsSubstring("L11: [rank0]: ncclSystemError"));

    auto small = fp(R"({"shm_bytes": 67108864})");
    ex = expect(k_nccl_shm_log, "EX150", &small);
    CHECK(ex[0].verdict == "confirmed: /dev/shm in the fingerprint is 64 MiB, below 1 GiB");
    auto large = fp(R"({"shm_bytes": 17179869184})");
    ex = expect(k_nccl_shm_log, "EX150", &large);
    CHECK(ex[0].verdict == "ruled out: /dev/shm in the fingerprint is 16 GiB, at least 1 GiB");
}

TEST_CASE("NCCL posix_fallocate failure (older NCCL)") {
    auto ex = expect(k_nccl_fallocate_log, "EX150");
    CHECK(fact(ex[0], "segment") == "<none>");
    CHECK_THAT(
        ex[0].cause,
        StartsWith("NCCL could not create its shared-memory segment: /dev/shm is too small"));
}

TEST_CASE("NCCL unhandled system error without WARN lines: says what is missing, no guess") {
    auto ex = expect(k_nccl_generic_log, "EX151");
    CHECK(fact(ex[0], "nccl_version") == "2.14.3");
    CHECK_THAT(
        ex[0].cause,
        ContainsSubstring("(ncclSystemError) with NCCL 2.14.3; the log does not show which one"));
    CHECK_THAT(ex[0].fix, StartsWith("Rerun with NCCL_DEBUG=INFO"));
    auto small = fp(R"({"shm_bytes": 67108864})");
    ex = expect(k_nccl_generic_log, "EX151", &small);
    CHECK(ex[0].verdict.empty());
}

// ---- host driver state, extensions
// ---------------------------------------------------------------------------

TEST_CASE("NVML driver/library mismatch with the dmesg versions") {
    auto ex = expect(k_nvml_log, "EX160");
    const auto& e = ex[0];
    CHECK(fact(e, "nvml_version") == "535.183");
    CHECK(fact(e, "client_version") == "535.183.01");
    CHECK(fact(e, "kernel_version") == "535.161.08");
    CHECK_THAT(e.cause,
               ContainsSubstring("(NVML 535.183) (client 535.183.01) and the loaded kernel module "
                                 "(535.161.08)"));
    CHECK_THAT(e.fix, StartsWith("Reboot the host"));
    auto later = fp(R"({"driver": {"version": "535.183.01", "cuda": "12.2"}})");
    ex = expect(k_nvml_log, "EX160", &later);
    CHECK(ex[0].verdict ==
          "ruled out: the fingerprint shows NVIDIA driver 535.183.01; the driver loads in the "
          "fingerprinted environment, so a reboot or module reload may already have fixed it");
    auto none = fp(R"({"gpus": []})");
    ex = expect(k_nvml_log, "EX160", &none);
    CHECK(ex[0].verdict.empty());
}

TEST_CASE("undefined c10 symbol in flash-attn: extension built against another torch") {
    auto ex = expect(k_undefined_symbol_log, "EX170");
    CHECK(fact(ex[0], "library") == "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so");
    CHECK(fact(ex[0], "symbol") == "_ZN3c104cuda9SetDeviceEi");
    CHECK_THAT(ex[0].cause,
               StartsWith("flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so needs "
                          "_ZN3c104cuda9SetDeviceEi, which the installed torch does not export"));
    CHECK_THAT(ex[0].fix, ContainsSubstring("--no-build-isolation"));
    // With collect_env output the torch version appears.
    ex = expect("PyTorch version: 2.3.0+cu121\n" + k_undefined_symbol_log, "EX170");
    CHECK_THAT(ex[0].cause, ContainsSubstring("the installed torch 2.3.0+cu121 does not export"));
    // Another namespace and the const-method form.
    ex = expect(
        "ImportError: /opt/venv/lib/python3.11/site-packages/vllm/_C.abi3.so: undefined symbol: "
        "_ZNK3c1010TensorImpl4sizeEl\n",
        "EX170");
    CHECK(fact(ex[0], "library") == "_C.abi3.so");
}

TEST_CASE("nvcc 12.4 vs torch 11.8 while building an extension") {
    auto ex = expect(k_nvcc_log, "EX171");
    const auto& e = ex[0];
    CHECK(fact(e, "found") == "12.4");
    CHECK(fact(e, "torch_cuda") == "11.8");
    CHECK_THAT(e.cause, ContainsSubstring("is CUDA 12.4, but torch was built with CUDA 11.8"));
    CHECK_THAT(e.fix, ContainsSubstring("/usr/local/cuda-11.8"));
    CHECK_THAT(e.fix, ContainsSubstring(
                          "torch variant built for CUDA 12.4: cu124 (torch 2.4.0 to 2.6.0)"));
    CHECK(e.evidence.size() == 2);

    auto mismatch = fp(
        R"({"torch": {"version": "2.1.2+cu118", "cuda": "11.8"}, "cuda_runtime": {"version": "12.4"}})");
    ex = expect(k_nvcc_log, "EX171", &mismatch);
    CHECK(ex[0].verdict == "confirmed: CUDA 11.8 and CUDA 12.4 differ in major version");
    auto fixed = fp(
        R"({"torch": {"version": "2.4.1+cu124", "cuda": "12.4"}, "cuda_runtime": {"version": "12.4"}})");
    ex = expect(k_nvcc_log, "EX171", &fixed);
    CHECK(ex[0].verdict == "ruled out: CUDA 12.4 and CUDA 12.4 share major version 12");

    ex = expect(
        "RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to "
        "compile "
        "PyTorch (11.8)\n",
        "EX171");
    CHECK(fact(ex[0], "found") == "12.1");
    CHECK(fact(ex[0], "torch_cuda") == "11.8");
    CHECK_THAT(ex[0].fix, ContainsSubstring("cu121 (torch 2.1.0 to 2.5.1)"));
}

TEST_CASE(
    "cudaGetDeviceCount with an error code no signature knows: says so, names code and message") {
    auto ex = expect(k_device_count_log, "EX190");
    CHECK(fact(ex[0], "code") == "46");
    CHECK(fact(ex[0], "message") == "all CUDA-capable devices are busy or unavailable");
    CHECK_THAT(ex[0].cause, StartsWith("cudaGetDeviceCount() failed with CUDA error 46 (all "
                                       "CUDA-capable devices are busy or unavailable)"));
    CHECK_THAT(ex[0].cause, ContainsSubstring("no specific signature"));
}

// ---- ordering, deduplication, unknown logs, size
// -------------------------------------------------------------

TEST_CASE("the most root-cause-like signature comes first, whatever the log order") {
    std::string log = k_nccl_generic_log + k_insufficient_log + k_nvml_log;
    auto ex = expect(log, "EX160,EX120,EX151");
    CHECK_THAT(ex[0].evidence[0], ContainsSubstring("Failed to initialize NVML"));
}

TEST_CASE("a repeated error is one explanation with bounded evidence") {
    std::string log;
    for (int i = 0; i < 200; ++i)
        log += "[rank" + std::to_string(i % 8) + "]: " + k_undefined_symbol_log;
    auto ex = expect(log, "EX170");
    CHECK(ex[0].evidence.size() <= 12);
    CHECK_THAT(ex[0].evidence[0], StartsWith("L8: "));
}

TEST_CASE("logs with no known failure give nothing") {
    CHECK(explain("").empty());
    CHECK(explain("\n\n\r\n").empty());
    CHECK(explain("Traceback (most recent call last):\n"
                  "  File \"train.py\", line 10, in <module>\n"
                  "    cfg = CONFIG['lr']\n"
                  "KeyError: 'lr'\n")
              .empty());
    // An undefined C++ symbol outside torch's namespaces is not claimed by a signature: only
    // the loader vocabulary's meaning of the message answers, and says it is only that.
    auto only_meaning = [](const std::vector<Explanation>& ex, const std::string& id) {
        return ex.size() == 1 && ex[0].vocabulary && ex[0].id == id &&
               ex[0].cause.find("not a diagnosed root cause") != std::string::npos;
    };
    CHECK(only_meaning(explain("elinks: symbol lookup error: /lib64/libk5crypto.so.3: undefined "
                               "symbol: EVP_KDF_ctrl, version OPENSSL_1_1_1b\n"),
                       "loader/undefined-symbol"));
    // Someone else's missing library, and a bare mention of cuDNN: no signature claims it.
    CHECK(only_meaning(explain("error while loading shared libraries: libssl.so.1.1: cannot open "
                               "shared object file: No such file\n"
                               "INFO using cuDNN 9.1.0 and libcudart.so.12\n"),
                       "loader/cannot-open-shared-object"));
    // Binary garbage and invalid UTF-8 do not trip the scanner.
    std::string junk;
    for (int i = 0; i < 5000; ++i) junk += static_cast<char>((i * 131) % 256);
    CHECK(explain(junk).empty());
}

TEST_CASE("a 20 MB log with one matching line: found, with its line number") {
    std::string log;
    log.reserve(21u << 20);
    std::size_t lines = 0;
    const std::string noise =
        " | train | step {} | loss 2.3456 | lr 3.0e-04 | grad_norm 0.873 | tokens/s 182345.6 | mem "
        "61.2 GiB\n";
    while (log.size() < (10u << 20)) {
        log += "2024-06-01 12:00:00,000" + noise;
        ++lines;
    }
    log +=
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n";
    std::size_t match_line = ++lines;
    while (log.size() < (20u << 20)) log += "2024-06-01 12:00:01,000" + noise;
    REQUIRE(log.size() >= (20u << 20));

    auto start = std::chrono::steady_clock::now();
    auto ex = expect(log, "EX101");
    auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 20.0);
    REQUIRE(ex[0].evidence.size() == 1);
    CHECK(ex[0].evidence[0] ==
          "L" + std::to_string(match_line) +
              ": ImportError: libcudart.so.12: cannot open shared object file: No such file or "
              "directory");
    CHECK(fact(ex[0], "major") == "12");
}

TEST_CASE("a 20 MB single line: only its first 4096 bytes are matched") {
    std::string head =
        "OSError: libnccl.so.2: cannot open shared object file: No such file or directory ";
    std::string tail(20u << 20, 'x');
    auto ex = expect(head + tail, "EX103");
    CHECK(ex[0].evidence[0].size() < 400);
    CHECK(explain(tail + head).empty());
}

// ---- the matcher and the templates
// ------------------------------------------------------------------------------

TEST_CASE("line templates: captures, prefixes, numbers, text and blanks") {
    auto t = LineTemplate::compile("{soname=libcudnn}: cannot open shared object file");
    REQUIRE(t);
    auto m =
        t->match("OSError: /usr/lib/libcudnn_ops_infer.so.8: cannot open shared object file: x");
    REQUIRE(m);
    CHECK(m->at("soname") == "libcudnn_ops_infer.so.8");
    CHECK_FALSE(t->match("OSError: libcudart.so.12: cannot open shared object file"));

    auto ver = LineTemplate::compile("found version {found#})");
    REQUIRE(ver);
    CHECK(ver->match("(found version 12040). Please")->at("found") == "12040");
    CHECK_FALSE(ver->match("(found version N/A)"));

    auto greedy = LineTemplate::compile("kernel module has the version {v#}.");
    REQUIRE(greedy);
    CHECK(greedy->match("NVRM: this kernel module has the version 535.161.08.  Please")->at("v") ==
          "535.161.08");

    auto text = LineTemplate::compile("use the {gpu*} GPU with PyTorch");
    REQUIRE(text);
    CHECK(text->match("If you want to use the NVIDIA GeForce RTX 3050 Laptop GPU GPU with PyTorch, "
                      "please")
              ->at("gpu") == "NVIDIA GeForce RTX 3050 Laptop GPU");

    auto blanks = LineTemplate::compile("compiled   against\t({a#},");
    REQUIRE(blanks);
    CHECK(blanks->match(normalize_log_line("was compiled  \t against (9, 1, 0)"))->at("a") == "9");

    auto braces = LineTemplate::compile("dict {{'x': {x#}}}");
    REQUIRE(braces);
    CHECK(braces->match("got dict {'x': 42}")->at("x") == "42");
}

TEST_CASE("line templates: malformed ones are refused") {
    CHECK_FALSE(LineTemplate::compile("{a}{b} text"));
    CHECK_FALSE(LineTemplate::compile("abc {unclosed"));
    CHECK_FALSE(LineTemplate::compile("abc } def"));
    CHECK_FALSE(LineTemplate::compile("{x}"));
    CHECK_FALSE(LineTemplate::compile("{Bad} text here"));
    CHECK_FALSE(LineTemplate::compile("{x} and {x} again"));
    CHECK_FALSE(LineTemplate::compile("{x*} leading text"));
    CHECK_FALSE(LineTemplate::compile("{x=a/b} text here"));
}

TEST_CASE("line templates stay bounded on adversarial lines") {
    std::string dots(4096, '.');
    for (std::size_t i = 0; i < dots.size(); i += 2) dots[i] = '1';
    std::string colons;
    while (colons.size() < 4096) colons += "a:b ";
    const std::pair<const char*, const std::string*> cases[] = {
        {"{a}.{b}.{c}.{d}:{e}!", &dots},
        {"a{x*}:{y*} {z*}:{w*}!", &colons},
        {"{lead}: undefined {x=zz}", &colons},
    };
    auto start = std::chrono::steady_clock::now();
    for (const auto& [tmpl, line] : cases) {
        auto t = LineTemplate::compile(tmpl);
        REQUIRE(t);
        for (int i = 0; i < 200; ++i) CHECK_FALSE(t->match(*line));
    }
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5.0);
}

TEST_CASE("normalize_log_line strips escapes and control characters and repairs UTF-8") {
    CHECK(normalize_log_line("\x1b[1;31mError\x1b[0m:\tthing  \r") == "Error: thing");
    CHECK(normalize_log_line("\x1b]0;title\x07visible") == "visible");
    CHECK(normalize_log_line("caf\xc3\xa9 \xff ok") == "caf\xc3\xa9 ? ok");
    CHECK(normalize_log_line("a\x01\x02"
                             "b") == "a b");
    CHECK(normalize_log_line(std::string(5000, 'y')).size() == 4096);
}

TEST_CASE("render_template drops optional text whose facts are unknown, nested too") {
    std::map<std::string, std::string> f = {{"a", "1"}, {"b", "2"}};
    CHECK(render_template("x[[ a={a}[[ c={c}]]]] {b}", f) == "x a=1 2");
    CHECK(render_template("x[[ c={c}[[ a={a}]]]]!", f) == "x!");
    CHECK_FALSE(render_template("need {c}", f));
    CHECK(render_template("{{literal}}", f) == "{literal}");
}

TEST_CASE("parse errors name the JSON path") {
    auto with = [](const std::string& sig) {
        return ErrorSignatures::parse(R"({"schema": 1, "signatures": [)" + sig + "]}");
    };
    const std::string good_tail =
        R"("cause": "c", "fix": "f", "checks": [], "source": ["https://docs.nvidia.com/x"]})";
    auto ok = with(R"({"id": "EX900", "title": "t", "rank": 1, "patterns": ["some {v#} text"], )" +
                   good_tail);
    CHECK(ok);

    auto bad_pattern =
        with(R"({"id": "EX900", "title": "t", "rank": 1, "patterns": ["ok text", "{a}{b} x"], )" +
             good_tail);
    REQUIRE_FALSE(bad_pattern);
    CHECK_THAT(bad_pattern.error().message, ContainsSubstring("$.signatures[0].patterns[1]"));

    auto unknown_fact = ErrorSignatures::parse(
        R"({"schema": 1, "signatures": [{"id": "EX900", "title": "t", "rank": 1, "patterns": ["text {v#}"],
            "cause": "uses {w}", "fix": "f", "checks": [], "source": ["https://x"]}]})");
    REQUIRE_FALSE(unknown_fact);
    CHECK_THAT(unknown_fact.error().message,
               ContainsSubstring("$.signatures[0].cause: unknown fact \"w\""));

    auto not_guaranteed = ErrorSignatures::parse(
        R"({"schema": 1, "signatures": [{"id": "EX900", "title": "t", "rank": 1, "patterns": ["text {v#}", "other"],
            "cause": "uses {v}", "fix": "f", "checks": [], "source": ["https://x"]}]})");
    REQUIRE_FALSE(not_guaranteed);
    CHECK_THAT(not_guaranteed.error().message, ContainsSubstring("put it inside [[ ]]"));

    auto no_source = with(R"({"id": "EX900", "title": "t", "rank": 1, "patterns": ["some text"],
        "cause": "c", "fix": "f", "checks": [], "source": []})");
    REQUIRE_FALSE(no_source);
    CHECK_THAT(no_source.error().message,
               ContainsSubstring("$.signatures[0].source: expected at least one entry"));

    auto typo = with(
        R"({"id": "EX900", "title": "t", "rank": 1, "patterns": ["some text"], "sources": [], )" +
        good_tail);
    REQUIRE_FALSE(typo);
    CHECK_THAT(typo.error().message,
               ContainsSubstring("$.signatures[0].sources: unknown key, did you mean \"source\"?"));

    auto bad_check = with(R"({"id": "EX900", "title": "t", "rank": 1, "patterns": ["some text"],
        "cause": "c", "fix": "f", "checks": [{"kind": "shm_max"}], "source": ["https://x"]})");
    REQUIRE_FALSE(bad_check);
    CHECK_THAT(bad_check.error().message,
               ContainsSubstring("$.signatures[0].checks[0].kind: unknown check"));

    auto rank_order = ErrorSignatures::parse(
        R"({"schema": 1, "signatures": [
            {"id": "EX900", "title": "t", "rank": 1, "patterns": ["some text"], "supersedes": ["EX901"], )" +
        good_tail + R"(,
            {"id": "EX901", "title": "t", "rank": 5, "patterns": ["other text"], )" +
        good_tail + "]}");
    REQUIRE_FALSE(rank_order);
    CHECK_THAT(rank_order.error().message,
               ContainsSubstring("$.signatures[0].supersedes[0]: EX901 must rank below"));

    auto schema = ErrorSignatures::parse(R"({"schema": 2, "signatures": []})");
    REQUIRE_FALSE(schema);
    CHECK_THAT(schema.error().message, ContainsSubstring("$.schema"));
    CHECK_FALSE(ErrorSignatures::parse("{not json"));
}

TEST_CASE("a shell's command trace is the command, not a failure", "[regression]") {
    // Adversarial report, weak row: `+ grep ...` of a `set -x` script was ranked a failure.
    CHECK(explain("+ grep -q 'CUDA driver version is insufficient for CUDA runtime version' "
                  "log.txt\n++ echo 'libcudart.so.12: cannot open shared object file'\n")
              .empty());
    // The same text as output still is one.
    CHECK_FALSE(explain("ImportError: libcudart.so.12: cannot open shared object file: No such "
                        "file or directory\n")
                    .empty());
}

TEST_CASE("a vocabulary answers only when no signature matches, and never on shell traces") {
    // A signature (EX101, libcudart missing) and the loader vocabulary both match: the
    // signature alone answers.
    auto ex = explain(
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or "
        "directory\n");
    REQUIRE_FALSE(ex.empty());
    CHECK(ex[0].id == "EX101");
    for (const auto& e : ex) CHECK_FALSE(e.vocabulary);
    // The same message in a shell trace or a quoted line is not a failure.
    CHECK(explain("+ grep 'cannot open shared object file' build.log\n").empty());
    CHECK(explain("> error while loading shared libraries: libfoo.so.1: cannot open shared "
                  "object file\n")
              .empty());
    // A CUDA error code no signature knows: its meaning, from the runtime's own definition.
    auto code = explain("RuntimeError: CUDA error: cudaErrorLaunchTimeout\n");
    REQUIRE(code.size() == 1);
    CHECK(code[0].vocabulary);
    CHECK(code[0].id == "cuda/cudaErrorLaunchTimeout");
}

TEST_CASE("torchdock's own build log: an extension built under pip's build isolation") {
    auto log = engine::read_text_file(
        test::source_path("tests/data/build_logs/flash-attn-isolation.build.log"));
    REQUIRE(log);
    auto ex = explain(log.value());
    REQUIRE(ex.size() == 1);
    CHECK(ex[0].id == "build/isolation-missing-module");
    CHECK_THAT(ex[0].cause, ContainsSubstring("'packaging'"));
    CHECK_THAT(ex[0].fix, ContainsSubstring("--no-build-isolation"));
}

TEST_CASE("torchdock's own build logs: a pip resolver conflict and a refused connection") {
    auto resolver = engine::read_text_file(
        test::source_path("tests/data/build_logs/pip-resolution-impossible.build.log"));
    REQUIRE(resolver);
    auto ex = explain(resolver.value());
    REQUIRE_FALSE(ex.empty());
    CHECK(ex[0].id == "pip/resolution-impossible");
    auto network = engine::read_text_file(
        test::source_path("tests/data/build_logs/pip-connection-refused.build.log"));
    REQUIRE(network);
    ex = explain(network.value());
    REQUIRE_FALSE(ex.empty());
    CHECK(ex[0].id == "net/connection");
    CHECK_THAT(ex[0].evidence[0], ContainsSubstring("Connection refused"));
}
