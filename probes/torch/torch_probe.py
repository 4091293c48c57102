#!/usr/bin/env python3
"""torchdock probe "torch": what PyTorch sees, and two checks it can decide by itself.

Reports torch.__version__, the CUDA, cuDNN and NCCL versions torch was built with, its CUDA
architecture list and the visible devices. Checks:

* with a CUDA device, a matrix product per dtype (fp32 and bf16 by default; --dtypes adds
  tf32, fp16 and fp8) on uniform(-1,1) operands, checked against a float64 reference on a
  sample of entries, and timed as probe-gemm times cuBLAS (torch_matmul.py: back-to-back
  products between CUDA events, median of --repeats after --warmup, NVML clocks);
* always, a real distributed all-reduce among --world-size processes (NCCL when there are
  at least that many GPUs, else Gloo on the CPU) whose exact sum every rank checks. The
  rendezvous is a file in a temporary directory and Gloo/NCCL talk over loopback, so it
  works inside a container started with --network=none.

Crash isolation: this process never imports torch. It picks the interpreter (--candidates),
finds the site directories and installed distributions, then forks a child that does
everything touching torch (import, what it reports, torchvision/torchaudio, matmul, the
all-reduce, whose gloo ranks fork from the child). The child announces each stage and sends
what it found through a pipe, with faulthandler (all threads) on a second pipe; when it dies
of a signal the parent reports data.crash (signal, stage, faulthandler's last lines, and the
library being loaded, from one LD_DEBUG=files,libs re-run of the stage) with everything found
before. Other interpreters of the image (--others) that find torch are listed while the child
works (torch's version from its version.py, not imported); when this python's torch does not
import, they are asked, two at a time, whether theirs does.

Output contract (probes/README.md): human lines, then one JSON object on the last line of
stdout; exit 0 pass, 1 fail, 2 waived, 3 error. Flags are --name=value:

  --size=N          matrix size N (N x N times N x N), default 4096
  --repeats=N       timed repetitions per dtype, default 20 (median reported)
  --warmup=N        untimed repetitions first, default 3
  --operands-from=F probe-gemm's JSON (run with --dump-operands): time torch on the operand
                    files it wrote, checked by CRC-32, with its numbers of warm-up and timed
                    runs, so both time identical bytes (scripts/gpu-selfcheck.sh)
  --dtypes=LIST     comma-separated from fp32,tf32,fp16,bf16,fp8; default fp32,bf16;
                    "none" skips the matrix products
  --world-size=N    processes in the all-reduce, default 2
  --backend=NAME    auto (default), gloo or nccl
  --timeout=S       seconds the all-reduce may take, processes' start included, default 120
  --candidates=A:B  the image's interpreters in the order it resolves them; the first that
                    finds a torch package runs the probe (re-executed under it)
  --others=A:B      the image's other interpreters: each that finds torch is listed in
                    data.other_interpreters with its torch version, and whether it imports
                    when this python's does not ("imports": null: not tried)
  --locate          only where torch would be imported from (the interpreter, data.site_dirs,
                    data.torch_file from the import system's spec), torch not imported: the
                    probes that need only these start while the full run imports torch
                    (waived, "torch not imported")

Python 3.7+, standard library and torch only.
"""
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Its helper module lies beside it (the probe directory); `python -I` leaves that directory
# off sys.path, so it is added (last: nothing of the image's is shadowed).
sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import torch_matmul  # noqa: E402
import torch_probe_crash as crashes  # noqa: E402
import torch_probe_env as probe_env  # noqa: E402

PROBE = "torch"
EXIT = {"pass": 0, "fail": 1, "waived": 2, "error": 3}
ALL_DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8")


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def finish(status, reason, data):
    sys.stderr.flush()
    out = {"probe": PROBE, "schema": 1, "status": status, "reason": reason, "data": data}
    sys.stdout.write(json.dumps(out, separators=(",", ":"), sort_keys=False) + "\n")
    sys.stdout.flush()
    return EXIT[status]


class FlagError(Exception):
    pass


def parse_flags(argv, spec):
    """--name=value flags; spec maps name -> (converter, default). Hidden flags included."""
    values = dict((k, v[1]) for k, v in spec.items())
    for arg in argv:
        if not arg.startswith("--"):
            raise FlagError("unexpected argument %r (flags are --name=value)" % arg)
        name, eq, raw = arg[2:].partition("=")
        if name not in spec:
            raise FlagError("unknown flag --%s" % name)
        conv = spec[name][0]
        if not eq:
            if conv is not to_bool:
                raise FlagError("flag --%s needs a value (--%s=VALUE)" % (name, name))
            values[name] = True
            continue
        try:
            values[name] = conv(raw)
        except ValueError:
            raise FlagError("bad value for --%s: %r" % (name, raw))
    return values


def to_bool(raw):
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)



def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def number(x):
    """An integral float as an int, so checksums read exactly in JSON."""
    if x is None:
        return None
    if isinstance(x, float) and x.is_integer() and abs(x) < 2 ** 53:
        return int(x)
    return x


# ---------------------------------------------------------------------------------------
# What torch reports about itself.

def nccl_version_string(torch):
    try:
        v = torch.cuda.nccl.version()
    except Exception:  # CPU builds have no NCCL; some builds raise without a driver
        return None
    if isinstance(v, (tuple, list)):
        nums = [str(x) for x in v[:3]]
        extra = [str(x) for x in v[3:] if x not in (None, "")]
        return ".".join(nums) + ("".join("-" + e if not e.startswith("-") else e for e in extra) if extra else "")
    if isinstance(v, int):
        # NCCL_VERSION_CODE: major*10000 + minor*100 + patch from 2.9 on, major*1000 before.
        if v >= 20900:
            return "%d.%d.%d" % (v // 10000, (v % 10000) // 100, v % 100)
        return "%d.%d.%d" % (v // 1000, (v % 1000) // 100, v % 100)
    return str(v)


def arch_list(torch):
    try:
        archs = list(torch.cuda.get_arch_list())
    except Exception:
        archs = []
    if not archs:
        # get_arch_list() answers [] when no device is usable; the build's list is still there.
        getter = getattr(torch._C, "_cuda_getArchFlags", None)
        if getter is not None:
            try:
                flags = getter()
                if flags:
                    archs = flags.split()
            except Exception:
                pass
    return archs


def describe(torch, stage=None):
    """What torch reports about itself; stage(name, info) is called before each call that can
    crash the process (the child reports where it was)."""
    stage = stage or (lambda name, info: None)
    info = {
        "torch": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "cudnn": None,
        "nccl": None,
        "arch_list": [],
        "cuda_available": False,
        "device_count": 0,
        "devices": [],
    }
    stage("torch.backends.cudnn.version()", info)
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:  # noqa: BLE001 - "cuDNN version incompatibility" is evidence
        info["cudnn_error"] = "%s: %s" % (type(e).__name__, first_line(e))
    stage("torch.cuda.nccl.version()", info)
    info["nccl"] = nccl_version_string(torch)
    stage("torch.cuda.get_arch_list()", info)
    info["arch_list"] = arch_list(torch)
    stage("torch.cuda.is_available()", info)
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
    except Exception as e:
        info["cuda_error"] = "%s: %s" % (type(e).__name__, e)
    if info["cuda_available"]:
        n = torch.cuda.device_count()
        info["device_count"] = n
        for i in range(n):
            p = torch.cuda.get_device_properties(i)
            info["devices"].append({
                "index": i,
                "name": p.name,
                "cc": "%d.%d" % (p.major, p.minor),
                "memory_bytes": int(p.total_memory),
                "multiprocessors": int(p.multi_processor_count),
            })
    return info


def error_text(e):
    return "%s: %s" % (type(e).__name__, first_line(e))


def companion_installed(name, distributions):
    if isinstance(distributions, dict):
        return name in distributions
    try:  # Python 3.7: no importlib.metadata, so no distributions; is the module there?
        import importlib.util
        return importlib.util.find_spec(name) is not None
    except BaseException:  # noqa: B902
        return False


NMS_BOXES = [[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0], [50.0, 50.0, 60.0, 60.0]]
NMS_SCORES = [0.9, 0.8, 0.7]
NMS_KEEP = [0, 2]  # the second box overlaps the first with IoU 0.68 > 0.5


def check_torchvision(torch, dist_version, stage):
    """{"version","imports","import_error","ops_ok","ops_error"}: does torchvision import
    against this torch, and are its C++ operators registered (a torchvision built for another
    torch imports, or fails with "operator torchvision::nms does not exist")."""
    out = {"version": dist_version, "imports": False, "import_error": None, "ops_ok": None,
           "ops_error": None}
    stage("import torchvision")
    try:
        import torchvision
    except BaseException as e:  # noqa: B902 - RuntimeError, ImportError, OSError, ...
        out["import_error"] = error_text(e)
        return out
    out["imports"] = True
    out["version"] = getattr(torchvision, "__version__", None) or dist_version
    stage("torchvision.ops.nms")
    try:
        torch.ops.torchvision.nms  # noqa: B018 - raises when the operator is not registered
        keep = torchvision.ops.nms(torch.tensor(NMS_BOXES, dtype=torch.float32),
                                   torch.tensor(NMS_SCORES, dtype=torch.float32), 0.5)
        got = [int(x) for x in keep.tolist()]
        if got == NMS_KEEP:
            out["ops_ok"] = True
        else:
            out["ops_ok"] = False
            out["ops_error"] = "torchvision.ops.nms kept %s, expected %s" % (got, NMS_KEEP)
    except BaseException as e:  # noqa: B902
        out["ops_ok"], out["ops_error"] = False, error_text(e)
    return out


def check_torchaudio(dist_version, stage):
    out = {"version": dist_version, "imports": False, "import_error": None}
    stage("import torchaudio")
    try:
        import torchaudio
    except BaseException as e:  # noqa: B902
        out["import_error"] = error_text(e)
        return out
    out["imports"] = True
    out["version"] = getattr(torchaudio, "__version__", None) or dist_version
    return out


# ---------------------------------------------------------------------------------------
# Distributed all-reduce: one process per rank, each started as this script with --_worker.

NUMEL = 1024


def expected_checksum(world_size):
    # sum over ranks r of (arange(NUMEL) + r), summed over the elements.
    return world_size * (NUMEL * (NUMEL - 1) // 2) + NUMEL * (world_size * (world_size - 1) // 2)


def worker(flags):
    """One rank. Writes its findings as JSON to --_result; prints human lines to stderr."""
    rank, world = flags["_rank"], flags["world-size"]
    out = {"rank": rank, "ok": False, "error": None}

    def write():
        tmp = flags["_result"] + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f)
        os.rename(tmp, flags["_result"])

    try:
        import datetime
        import torch
        import torch.distributed as dist
        backend = flags["backend"]
        # Loopback only: --network=none containers have nothing else, and the host needs no more.
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
        if backend == "nccl":
            torch.cuda.set_device(rank)
            device = torch.device("cuda", rank)
        else:
            device = torch.device("cpu")
        dist.init_process_group(backend=backend, init_method=flags["_init"], rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=max(1, flags["timeout"])))
        t = torch.arange(NUMEL, dtype=torch.float32, device=device) + rank
        if flags["inject-error"] and rank == min(1, world - 1):
            t[0] += 1  # a wrong contribution, for the probe's own tests
        if flags["inject-hang"] and rank == min(1, world - 1):
            time.sleep(10 ** 6)  # a rank that never joins, for the watchdog's tests
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        if backend == "nccl":
            torch.cuda.synchronize(device)
        ranks = torch.arange(world, dtype=torch.float64)
        expected = (torch.arange(NUMEL, dtype=torch.float64) * world + ranks.sum()).to(torch.float32)
        got = t.cpu()
        out["mismatches"] = int((got != expected).sum().item())
        out["observed"] = number(float(got.to(torch.float64).sum().item()))
        out["exact"] = out["mismatches"] == 0
        out["ok"] = True
        dist.destroy_process_group()
    except BaseException as e:  # noqa: B902 - report anything, then exit non-zero
        out["error"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
        write()
        sys.stderr.write("rank %d: %s\n" % (rank, out["error"]))
        return 1
    write()
    return 0


class ForkedRank(object):
    """One gloo rank as a fork of this process: torch is already imported, so a rank starts in
    milliseconds instead of paying a second `import torch`. Only for the CPU backend: CUDA
    cannot be used across fork. Duck-types the parts of subprocess.Popen used here."""

    def __init__(self, flags, rank, result, err_path):
        self.returncode = None
        self.pid = os.fork()
        if self.pid == 0:  # the rank
            code = 1
            try:
                os.setsid()
                fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                # The probe's child sends fatal-signal tracebacks to the parent; a rank's own
                # go to its error file.
                import faulthandler
                if faulthandler.is_enabled():
                    faulthandler.enable(file=sys.stderr, all_threads=True)
                rank_flags = dict(flags)
                rank_flags.update({"_rank": rank, "_result": result, "backend": "gloo"})
                code = worker(rank_flags)
            finally:
                os._exit(code)

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status) if hasattr(
                    os, "waitstatus_to_exitcode") else (status >> 8)
        return self.returncode

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def wait(self):
        while self.poll() is None:
            time.sleep(0.01)
        return self.returncode


def distributed(flags, backend):
    world, timeout = flags["world-size"], flags["timeout"]
    expected = expected_checksum(world)
    res = {"backend": backend, "world_size": world, "init_method": "file", "numel": NUMEL,
           "expected": expected, "observed": None, "exact": False, "seconds": None,
           "timed_out": False, "error": None, "ranks": []}
    tmp = tempfile.mkdtemp(prefix="torchdock-probe-torch-")
    procs = []
    try:
        init = "file://" + os.path.join(tmp, "rendezvous")
        env = dict(os.environ)
        env["PYTHONUNBUFFERED"] = "1"
        start = time.monotonic()
        res["start"] = "fork" if backend == "gloo" else "spawn"
        for rank in range(world):
            result = os.path.join(tmp, "rank%d.json" % rank)
            err_path = os.path.join(tmp, "rank%d.err" % rank)
            if backend == "gloo":
                sys.stdout.flush()
                sys.stderr.flush()
                procs.append((ForkedRank(dict(flags, _init=init), rank, result, err_path), None))
                continue
            cmd = [sys.executable, os.path.abspath(__file__), "--_worker", "--_rank=%d" % rank,
                   "--world-size=%d" % world, "--backend=" + backend, "--_init=" + init,
                   "--_result=" + result, "--timeout=%d" % timeout]
            if flags["inject-error"]:
                cmd.append("--inject-error")
            if flags["inject-hang"]:
                cmd.append("--inject-hang")
            errf = open(err_path, "w")
            procs.append((subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=errf, stderr=errf, env=env,
                                           start_new_session=True), errf))
        deadline = start + timeout
        while time.monotonic() < deadline and any(p.poll() is None for p, _ in procs):
            time.sleep(0.05)
        res["seconds"] = round(time.monotonic() - start, 3)
        if any(p.poll() is None for p, _ in procs):
            res["timed_out"] = True
            for p, _ in procs:
                if p.poll() is None:
                    crashes.kill_group(p)
        for p, f in procs:
            if f:
                f.close()
        for rank in range(world):
            path = os.path.join(tmp, "rank%d.json" % rank)
            r = {"rank": rank, "ok": False, "error": None, "exit_code": procs[rank][0].returncode}
            if os.path.exists(path):
                with open(path) as f:
                    r.update(json.load(f))
            res["ranks"].append(r)
            if r["error"] and not res["error"]:
                tail = ""
                try:
                    with open(os.path.join(tmp, "rank%d.err" % rank)) as f:
                        lines = [ln.strip() for ln in f if ln.strip()]
                    tail = lines[-1] if lines else ""
                except OSError:
                    pass
                res["error"] = "rank %d: %s" % (rank, r["error"] or tail)
                if "Unable to find address for: lo" in res["error"]:
                    res["error"] += " (is the loopback interface up?)"
            if not res["timed_out"] and not res["error"] and not os.path.exists(path):
                res["error"] = "rank %d exited with code %s and no result" % (rank, r["exit_code"])
        done = [r for r in res["ranks"] if r.get("ok")]
        if done and len(done) == world:
            observed = [r.get("observed") for r in done]
            res["observed"] = observed[0]
            if len(set(observed)) > 1:
                res["observed_per_rank"] = observed
            res["exact"] = all(r.get("exact") for r in done) and observed[0] == expected
    finally:
        for p, f in procs:
            if p.poll() is None:
                crashes.kill_group(p)
            if f and not f.closed:
                f.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return res


# ---------------------------------------------------------------------------------------

FLAGS = {
    "size": (int, 4096),
    "repeats": (int, 20),
    "warmup": (int, 3),
    "dtypes": (str, "fp32,bf16"),
    # probe-gemm's JSON (run with --dump-operands): time its operand files, with its counts.
    "operands-from": (str, ""),
    "world-size": (int, 2),
    "backend": (str, "auto"),
    "timeout": (int, 120),
    # The image's interpreters, ':'-separated, in the order the image would use them; the
    # first that finds torch runs the probe. Empty: this interpreter.
    "candidates": (str, ""),
    # Other interpreters of the image, ':'-separated: each that finds torch is asked, in a
    # subprocess, whether it imports (data.other_interpreters).
    "others": (str, ""),
    # Where torch would come from, without importing it (see the docstring).
    "locate": (to_bool, False),
    # Hidden, for tests and for the ranks themselves.
    "inject-error": (to_bool, False),
    "inject-hang": (to_bool, False),
    "_worker": (to_bool, False),
    "_chosen": (to_bool, False),
    "_rank": (int, 0),
    "_init": (str, ""),
    "_result": (str, ""),
}

OTHERS_TIMEOUT = 90      # seconds for each other interpreter's `import torch`
OTHERS_PARALLEL = 2      # other interpreters checked at a time
FAULT_BYTES = 256 * 1024     # faulthandler output kept (its tail)
MESSAGE_BYTES = 64 << 20     # what the child may send before the rest is dropped

# The stages the child announces before it enters them, and what re-runs each in a fresh
# interpreter after a crash (to name the library being loaded); matmul and the all-reduce
# are not re-run.
RERUN = {
    "import torch": "import torch",
    "torch.backends.cudnn.version()": "import torch; torch.backends.cudnn.version()",
    "torch.cuda.nccl.version()": "import torch; torch.cuda.nccl.version()",
    "torch.cuda.get_arch_list()": "import torch; torch.cuda.get_arch_list()",
    "torch.cuda.is_available()": "import torch; torch.cuda.is_available() and "
                                 "[torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count())]",
    "import torchvision": "import torch, torchvision",
    "torchvision.ops.nms": "import torch, torchvision; torch.ops.torchvision.nms; torchvision.ops.nms("
                           "torch.tensor(%r), torch.tensor(%r), 0.5)" % (NMS_BOXES, NMS_SCORES),
    "import torchaudio": "import torch, torchaudio",
}


class Channel(object):
    """The child's side of the pipe to the parent: one JSON object a line."""

    def __init__(self, fd):
        self.fd = fd

    def send(self, obj):
        buf = (json.dumps(obj, separators=(",", ":")) + "\n").encode("utf-8")
        while buf:
            n = os.write(self.fd, buf)
            buf = buf[n:]


def child_main(flags, dtypes, parent_data, chan):
    """Everything that touches torch, in a forked child: a crash here loses nothing the parent
    found. Sends {"stage": name} before each stage, {"data": {...}} with the fields found so
    far, and {"result": {"status", "reason"}} at the end."""
    data = {}
    describing = [True]

    def stage(name, found=None):
        if found:
            data.update(found)
        if describing[0] and "torch" in data:
            data["loaded_libraries"] = probe_env.loaded_libraries()
        chan.send({"data": data})
        chan.send({"stage": name})

    def result(status, reason):
        chan.send({"data": data})
        chan.send({"result": {"status": status, "reason": reason}})

    stage("import torch")
    try:
        import torch
    except BaseException as e:  # noqa: B902 - ImportError, OSError from a missing .so, anything
        msg = error_text(e)
        data["import_error"] = msg
        log("import torch failed: " + msg)
        return result("fail", "import torch failed: " + msg)

    data["torch"] = torch.__version__
    data["torch_file"] = getattr(torch, "__file__", None)
    data.update(describe(torch, stage))
    describing[0] = False
    # What this torch really loaded, from where, and what is installed beside it.
    data["loaded_libraries"] = probe_env.loaded_libraries()
    # Every object the import mapped: the loader's evidence TD110 and doctor weigh against
    # probe-libs' model of the loader (torch also preloads its wheels through sys.path).
    data["mapped_objects"] = probe_env.mapped_shared_objects()
    log("python %s (%s)" % (sys.version.split()[0], sys.executable))
    log("torch %s, CUDA %s, cuDNN %s, NCCL %s" % (data["torch"], data["cuda"], data["cudnn"], data["nccl"]))
    log("arch list: %s" % (" ".join(data["arch_list"]) or "(none)"))
    log("CUDA available: %s, %d device(s)" % (data["cuda_available"], data["device_count"]))
    for d in data["devices"]:
        log("  cuda:%d %s, compute capability %s, %.1f GiB, %d SMs" % (
            d["index"], d["name"], d["cc"], d["memory_bytes"] / 2.0 ** 30, d["multiprocessors"]))

    # Companions: recorded, judged by the core; they never change this probe's status.
    dists = parent_data.get("distributions")
    for name in ("torchvision", "torchaudio"):
        if not companion_installed(name, dists):
            continue
        version = dists[name]["version"] if isinstance(dists, dict) else None
        if name == "torchvision":
            data[name] = check_torchvision(torch, version, stage)
            tv = data[name]
            log("torchvision %s: %s" % (tv["version"], "imports" + (
                ", nms runs" if tv["ops_ok"] else ", nms fails: %s" % tv["ops_error"])
                if tv["imports"] else "does not import: %s" % tv["import_error"]))
        else:
            data[name] = check_torchaudio(version, stage)
            ta = data[name]
            log("torchaudio %s: %s" % (ta["version"], "imports" if ta["imports"]
                                       else "does not import: %s" % ta["import_error"]))

    failures, errors = [], []
    notes = list(parent_data.get("notes") or [])
    data["notes"] = notes
    if not data["cuda_available"]:
        notes.append("no usable CUDA device: matmul skipped")
        log("no usable CUDA device: matmul skipped")
    elif not dtypes:
        notes.append("--dtypes=none: matmul skipped")
    else:
        stage("matmul")
        try:
            data["matmul"] = torch_matmul.matmuls(torch, dtypes, flags["size"], flags["repeats"], flags["warmup"],
                                                  log, flags["operands-from"])
        except Exception as e:
            errors.append("matmul: %s: %s" % (type(e).__name__, e))
        else:
            for r in data["matmul"]["results"]:
                if r["error"]:
                    # fp8 needs compute capability 8.9+; elsewhere its absence is a note.
                    if r["dtype"] == "fp8":
                        notes.append("fp8 matmul not run: " + r["error"])
                    else:
                        errors.append("matmul %s: %s" % (r["dtype"], r["error"]))
                elif not r["correct"]:
                    failures.append("matmul %s wrong: max abs error %s > tolerance %.3g" % (
                        r["dtype"], r["max_abs_err"], r["tolerance"]))

    stage("distributed")
    data["writable"] = probe_env.writable_dirs()
    if data["writable"]["temp_error"]:
        # The file rendezvous needs a temporary directory: the image's USER has none, which
        # is the finding (TD134), not a probe that could not run.
        failures.append("no writable temporary directory for uid %d: %s" % (
            data["writable"]["uid"], data["writable"]["temp_error"]))
        return result("fail", "; ".join(failures + errors))
    backend = flags["backend"]
    if backend == "auto":
        nccl_ok = False
        try:
            import torch.distributed as dist
            nccl_ok = dist.is_available() and dist.is_nccl_available()
        except Exception:
            pass
        backend = "nccl" if nccl_ok and data["device_count"] >= flags["world-size"] else "gloo"
    if backend == "nccl" and data["device_count"] < flags["world-size"]:
        errors.append("distributed all-reduce: backend nccl needs %d GPUs, %d visible" % (
            flags["world-size"], data["device_count"]))
        return result("fail" if failures else "error", "; ".join(failures + errors))
    log("distributed all-reduce: backend %s, world size %d, file:// rendezvous, timeout %d s" % (
        backend, flags["world-size"], flags["timeout"]))
    d = distributed(flags, backend)
    data["distributed"] = d
    if d["timed_out"]:
        failures.append("distributed all-reduce did not finish within %d s" % flags["timeout"])
        log("distributed all-reduce did not finish within %d s; ranks killed" % flags["timeout"])
    elif d["error"]:
        errors.append("distributed all-reduce: " + d["error"])
        log("distributed all-reduce: error: " + d["error"])
    else:
        log("distributed all-reduce: expected checksum %s, observed %s: %s (%.2f s)" % (
            d["expected"], d["observed"], "exact" if d["exact"] else "WRONG", d["seconds"]))
        if not d["exact"]:
            failures.append("distributed all-reduce (%s, %d ranks) inexact: expected checksum %s, observed %s" % (
                backend, flags["world-size"], d["expected"], d["observed"]))

    # Correctness the probe decided (fail) outranks what it could not do (error).
    if failures:
        return result("fail", "; ".join(failures + errors))
    if errors:
        return result("error", "; ".join(errors))
    return result("pass", "")


def start_child(flags, dtypes, data):
    """Forks the child that imports torch. Returns (pid, message fd, faulthandler fd)."""
    msg_r, msg_w = os.pipe()
    fault_r, fault_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.close(msg_r)
            os.close(fault_r)
            import faulthandler
            fault = os.fdopen(fault_w, "w")
            faulthandler.enable(file=fault, all_threads=True)
            chan = Channel(msg_w)
            try:
                child_main(flags, dtypes, data, chan)
                code = 0
            except BaseException as e:  # noqa: B902 - say what went wrong, then exit non-zero
                try:
                    chan.send({"result": {"status": "error",
                                          "reason": "torch probe child: %s" % error_text(e)}})
                except OSError:
                    pass
                code = 0
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    os.close(msg_w)
    os.close(fault_w)
    return pid, msg_r, fault_r


def wait_child(pid, msg_r, fault_r):
    """Reads the child's messages and faulthandler output until it exits. Returns
    (wait status, [messages], faulthandler text)."""
    import select
    bufs = {msg_r: bytearray(), fault_r: bytearray()}
    limits = {msg_r: MESSAGE_BYTES, fault_r: FAULT_BYTES}
    open_fds = [msg_r, fault_r]
    status, exited_at = None, None
    while True:
        if status is None:
            got, st = os.waitpid(pid, os.WNOHANG)
            if got == pid:
                status, exited_at = st, time.monotonic()
        if status is not None and (not open_fds or time.monotonic() - exited_at > 1.0):
            break  # a rank forked from the child may keep the pipes open: not waited for
        if not open_fds:
            _, status = os.waitpid(pid, 0)
            break
        ready, _, _ = select.select(open_fds, [], [], 0.05 if status is not None else 0.2)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            buf = bufs[fd]
            if fd == fault_r:
                buf.extend(chunk)
                if len(buf) > 2 * limits[fd]:
                    del buf[:len(buf) - limits[fd]]
            elif len(buf) < limits[fd]:
                buf.extend(chunk)
    os.close(msg_r)
    os.close(fault_r)
    messages = []
    for line in bytes(bufs[msg_r]).split(b"\n"):
        try:
            messages.append(json.loads(line.decode("utf-8", "replace")))
        except ValueError:
            continue
    return status, messages, bytes(bufs[fault_r][-FAULT_BYTES:]).decode("utf-8", "replace")


def main(argv):
    try:
        flags = parse_flags(argv, FLAGS)
        if flags["_worker"]:
            return worker(flags)
        if flags["size"] < 1 or flags["repeats"] < 1 or flags["warmup"] < 0:
            raise FlagError("--size and --repeats must be positive, --warmup not negative")
        if flags["world-size"] < 1 or flags["timeout"] < 1:
            raise FlagError("--world-size and --timeout must be positive")
        if flags["backend"] not in ("auto", "gloo", "nccl"):
            raise FlagError("--backend must be auto, gloo or nccl")
        dtypes = [d for d in flags["dtypes"].split(",") if d and d != "none"]
        for d in dtypes:
            if d not in ALL_DTYPES:
                raise FlagError("unknown dtype %r in --dtypes (known: %s)" % (d, ",".join(ALL_DTYPES)))
    except FlagError as e:
        return finish("error", str(e), {})
    crashes.adopt_trace()
    if crashes.TRACE["dir"] is None and not flags["locate"]:
        crashes.traced_exec(sys.executable, os.path.abspath(__file__), argv)

    # This process never imports torch: what it finds here survives a crash of the child.
    data = {"torch": None, "cuda": None, "cudnn": None, "nccl": None, "arch_list": [], "cuda_available": False,
            "devices": [], "matmul": None, "distributed": None, "notes": []}
    data["python"] = sys.version.split()[0]
    data["python_executable"] = sys.executable
    interpreter = {"path": sys.executable, "realpath": os.path.realpath(sys.executable), "candidate_index": None}
    if flags["candidates"] and not flags["_chosen"]:
        candidates = flags["candidates"].split(":")
        foreign = []
        chosen, tried = probe_env.discover(candidates, foreign)
        if chosen is None:
            data["interpreters_tried"] = tried
            data["torch_for_other_python"] = foreign
            data["interpreter"] = None
            data["other_interpreters"] = probe_env.OtherInterpreters(
                flags["others"].split(":"), None, OTHERS_TIMEOUT, OTHERS_PARALLEL).results()
            reason = "no PyTorch found; interpreters tried: " + (", ".join(tried) or "none")
            log(reason)
            return finish("waived", reason, data)
        interpreter = {"path": chosen, "realpath": os.path.realpath(chosen),
                       "candidate_index": candidates.index(chosen)}
        if chosen != sys.executable:
            os.environ["TORCHDOCK_PROBE_TRIED"] = json.dumps(tried)
            os.environ["TORCHDOCK_PROBE_CHOSEN"] = json.dumps(interpreter)
            crashes.traced_exec(chosen, os.path.abspath(__file__), list(argv) + ["--_chosen"])
            os.execv(chosen, [chosen, os.path.abspath(__file__)] + list(argv) + ["--_chosen"])
        data["interpreters_tried"] = tried
    elif flags["_chosen"]:
        data["interpreters_tried"] = json.loads(os.environ.pop("TORCHDOCK_PROBE_TRIED", "[]"))
        try:
            interpreter.update(json.loads(os.environ.pop("TORCHDOCK_PROBE_CHOSEN", "{}")))
        except ValueError:
            pass
    else:
        data["interpreters_tried"] = ["%s (%s)" % (sys.executable, data["python"])]
    data["interpreter"] = interpreter
    # No torch at all is an observation (waived); a torch that is there but does not import
    # is a finding (fail) whose error text is the evidence.
    try:
        import importlib.util
        spec = importlib.util.find_spec("torch")
    except BaseException as e:  # noqa: B902 - a broken package can raise anything here
        spec, data["import_error"] = None, "%s: %s" % (type(e).__name__, first_line(e))
    # Where this interpreter imports from (torch's directory first when there is one): the
    # library probe looks there for torch and the nvidia-* wheels, even when torch fails to
    # import.
    data["site_dirs"] = probe_env.site_dirs(spec.origin if spec else None,
                                            os.path.dirname(os.path.abspath(__file__)))
    # The file the import system would run, where this python imports torch from also when
    # the import fails (the locate run and a failed import say the same); torch.__file__
    # replaces it after an import.
    if spec is not None and spec.origin:
        data["torch_file"] = spec.origin
    if flags["locate"]:
        return finish("waived", "--locate: where torch would be imported from; torch not imported", data)
    # What is installed, also when torch does not import (the import error's missing library
    # is then named with the wheel torch pins for it).
    data["distributions"] = probe_env.distributions(data["notes"])
    data["torch_for_other_python"] = [
        dict(f, interpreter=sys.executable, interpreter_python=data["python"])
        for f in probe_env.torch_for_other_pythons()]

    if spec is None:
        others = probe_env.OtherInterpreters(flags["others"].split(":"), sys.executable,
                                             OTHERS_TIMEOUT, OTHERS_PARALLEL)
        data["other_interpreters"] = others.results()
        if "import_error" not in data:
            log("no torch module for python %s (%s)" % (data["python"], sys.executable))
            return finish("waived", "no torch module for python %s (%s)" % (data["python"], sys.executable), data)
        log("import torch failed: " + data["import_error"])
        return finish("fail", "import torch failed: " + data["import_error"], data)

    pid, msg_r, fault_r = start_child(flags, dtypes, data)
    # Started after the fork (no threads are forked), read while the child works: where the
    # others' torch is, not imported. Whether theirs imports is asked only when this one's
    # does not (then it is the evidence of where torch works); the image runs this one.
    others = probe_env.OtherInterpreters(flags["others"].split(":"), sys.executable,
                                         OTHERS_TIMEOUT, OTHERS_PARALLEL, imports=False)
    status_word, messages, fault_text = wait_child(pid, msg_r, fault_r)
    stage, result = None, None
    for m in messages:
        if "data" in m and isinstance(m["data"], dict):
            data.update(m["data"])
        if "stage" in m:
            stage = m["stage"]
        if "result" in m and isinstance(m["result"], dict):
            result = m["result"]
    if result is not None and result.get("status") in EXIT:
        status, reason = result["status"], result.get("reason", "")
    elif os.WIFSIGNALED(status_word):
        crash, reason = crashes.crash_report(os.WTERMSIG(status_word), stage, fault_text, pid,
                                             RERUN.get(stage), log)
        data["crash"] = crash
        # The fields the core already reads: an import that crashed is an import error, a
        # cuDNN check that crashed is torch's cuDNN failing.
        if stage == "import torch":
            data["import_error"] = reason
        elif stage == "torch.backends.cudnn.version()":
            data["cudnn_error"] = reason
        log(reason)
        status = "fail"
    else:
        code = os.WEXITSTATUS(status_word) if os.WIFEXITED(status_word) else status_word
        status = "error"
        reason = "the torch probe's child process exited with code %s and no result%s" % (
            code, " (last stage: %s)" % stage if stage else "")
        log(reason)
    found = others.results()
    if data.get("torch") is None and found:
        found = probe_env.OtherInterpreters([o["path"] for o in found], sys.executable,
                                            OTHERS_TIMEOUT, OTHERS_PARALLEL).results()
    data["other_interpreters"] = found
    for o in found:
        log("other interpreter %s (python %s): torch %s" % (
            o["path"], o["python"],
            "%s (not imported: this python's torch imports)" % o["torch"] if o["imports"] is None
            else o["torch"] + " imports" if o["imports"] else "does not import: %s" % o["error"]))
    return finish(status, reason, data)


def died(e):
    """The probe's own failure as its result, with the traceback's last line, instead of a
    bare traceback on stderr and no result (torchdock would only see "no output")."""
    import traceback
    frames = traceback.extract_tb(e.__traceback__)
    where = " (at %s:%d in %s)" % (os.path.basename(frames[-1].filename), frames[-1].lineno,
                                   frames[-1].name) if frames else ""
    return finish("error", "torch_probe.py died: %s%s" % (error_text(e), where), {"notes": []})


def run(argv):
    try:
        return main(argv)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:  # noqa: B902 - whatever stopped the probe is its result
        return died(e)
    finally:
        if crashes.TRACE["dir"]:
            shutil.rmtree(crashes.TRACE["dir"], ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
