"""Where the torch probe finds PyTorch, and what it really loads (imported by torch_probe.py).

* Interpreters: the image's own candidates (its PATH, VIRTUAL_ENV, CONDA_PREFIX, as the
  caller computed them), each asked in a subprocess whether it can find the torch package;
  the first that can is the one the probe runs under.
* What is loaded: after `import torch` and the first cuDNN and NCCL calls, the CUDA shared
  libraries mapped into this process (/proc/self/maps), with their paths.
* What is installed: the torch, torchvision, torchaudio, triton and nvidia-* distributions
  the interpreter sees (importlib.metadata), with their versions.

Python 3.7+, standard library only.
"""
import json
import os
import subprocess
import sys

# Asked of each candidate interpreter; Python 2 answers too (and is passed over).
_ASK = r"""
import json, sys
out = {"version": "%d.%d.%d" % tuple(sys.version_info[:3]), "executable": sys.executable,
       "torch_origin": None, "torch_error": None}
if sys.version_info[0] >= 3:
    try:
        import importlib.util
        spec = importlib.util.find_spec("torch")
        out["torch_origin"] = spec.origin if spec else None
    except Exception as e:
        out["torch_error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out))
"""

# Families of CUDA libraries (the part of the file name after "lib" and before ".so" or a
# "_"/"-" suffix); the core judges them, the probe only reports paths.
CUDA_FAMILIES = ("cudart", "cublas", "cublasLt", "cudnn", "nccl", "nvrtc", "nvJitLink", "cufft",
                 "curand", "cusparse", "cusparseLt", "cusolver", "cupti", "nvToolsExt", "cuda",
                 "nvidia-ml", "cufile", "nvshmem_host", "nvshmem")


def ask(path, timeout=20):
    """What interpreter `path` says about itself and torch; None when it cannot run."""
    try:
        res = subprocess.run([path, "-c", _ASK], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, timeout=timeout)
        lines = res.stdout.decode("utf-8", "replace").strip().splitlines()
        return json.loads(lines[-1]) if lines else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def discover(candidates):
    """The first candidate whose interpreter finds torch, and what was tried (as text)."""
    tried, seen = [], set()
    for path in candidates:
        if not path or path in seen:
            continue
        seen.add(path)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue  # PATH entries that do not exist are not interpreters
        info = ask(path)
        if info is None:
            tried.append("%s (does not run)" % path)
            continue
        if not info["version"].startswith("3."):
            tried.append("%s (python %s, not searched)" % (path, info["version"]))
            continue
        if info["torch_origin"] or info["torch_error"]:
            tried.append("%s (%s, torch at %s)" % (path, info["version"],
                                                  info["torch_origin"] or "a broken package"))
            return path, tried
        tried.append("%s (%s, no torch)" % (path, info["version"]))
    return None, tried


def is_cuda_library(name):
    if not name.startswith("lib") or ".so" not in name:
        return False
    stem = name[3:name.index(".so")]
    for family in CUDA_FAMILIES:
        if stem == family or stem.startswith(family + "_") or stem.startswith(family + "-"):
            return True
    return False


def loaded_libraries():
    """Paths of the CUDA libraries mapped into this process, in the order first mapped."""
    out = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                if path.startswith("/") and path not in out and is_cuda_library(os.path.basename(path)):
                    out.append(path)
    except OSError:
        return None
    return out


def distributions():
    """{name: {"version", "location"}} of torch and its companions and nvidia-* wheels."""
    try:
        import importlib.metadata as md
    except ImportError:  # Python 3.7
        return None
    out = {}
    for dist in md.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name in ("torch", "torchvision", "torchaudio", "triton") or name.startswith("nvidia-"):
            try:
                location = str(dist.locate_file(""))
            except Exception:  # noqa: BLE001 - metadata of a broken install
                location = None
            entry = {"version": dist.version, "location": location}
            if name == "torch":  # the wheels it pins: what a missing library should come from
                entry["requires"] = list(dist.requires or [])
            out.setdefault(name, entry)
    return out


def site_dirs(torch_file, probe_dir):
    """Directories this interpreter imports from (sys.path), torch's first."""
    dirs = []
    if torch_file:
        dirs.append(os.path.dirname(os.path.dirname(os.path.abspath(torch_file))))
    for d in sys.path:
        d = os.path.abspath(d) if d else os.getcwd()
        if os.path.isdir(d) and d != probe_dir and d not in dirs:
            dirs.append(d)
    return dirs
