"""Where the torch probe finds PyTorch, and what it really loads (imported by torch_probe.py).

* Interpreters: the image's own candidates (its PATH, VIRTUAL_ENV, CONDA_PREFIX, as the
  caller computed them), each asked in a subprocess whether it can find the torch package;
  the first that can is the one the probe runs under.
* What is loaded: after `import torch` and the first cuDNN and NCCL calls, the CUDA shared
  libraries mapped into this process (/proc/self/maps), with their paths.
* What is installed: the torch, torchvision, torchaudio, triton and nvidia-* distributions
  the interpreter sees (importlib.metadata), with their versions.
* After a crash: which shared object the loader was loading (LD_DEBUG=files,libs output of a
  re-run of the crashing stage, ld_debug_loading).
* Other interpreters with torch: their torch version and whether it imports (OtherInterpreters).

Python 3.7+, standard library only.
"""
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time

# Torch built for another Python than the interpreter that runs (a venv copied into a stage
# with a newer Python, a PYTHONPATH to another version's site directory): a site directory
# under the interpreter's prefixes named for another python3.X that holds torch, and a torch
# package on sys.path whose _C extension carries no tag of this interpreter. Source text, so
# the candidates' interpreters run it too (Python 3.4+).
_FOREIGN = r"""
def _torch_for_other_pythons():
    import glob, os, re, sys
    here = "%d.%d" % sys.version_info[:2]
    tag = getattr(sys.implementation, "cache_tag", None) or ""
    out, seen = [], set()
    for prefix in (sys.prefix, getattr(sys, "base_prefix", sys.prefix)):
        for site in sorted(glob.glob(os.path.join(prefix, "lib", "python3.*", "*-packages"))):
            m = re.search(r"/python(3\.[0-9]+)/", site)
            if m and m.group(1) != here and os.path.isdir(os.path.join(site, "torch")) \
                    and site not in seen:
                seen.add(site)
                out.append({"dir": site, "python": m.group(1), "evidence": "lib/python%s" % m.group(1)})
    for entry in sys.path:
        c_exts = glob.glob(os.path.join(entry or ".", "torch", "_C.cpython-*.so"))
        if not c_exts or entry in seen or any(os.path.basename(c).startswith("_C." + tag) for c in c_exts):
            continue
        m = re.match(r"_C\.cpython-3([0-9]+)", os.path.basename(c_exts[0]))
        if m:
            seen.add(entry)
            out.append({"dir": entry, "python": "3." + m.group(1), "evidence": os.path.basename(c_exts[0])})
    return out
"""

# Asked of each candidate interpreter; Python 2 answers too (and is passed over).
_ASK = _FOREIGN + r"""
import json, sys
out = {"version": "%d.%d.%d" % tuple(sys.version_info[:3]), "executable": sys.executable,
       "torch_origin": None, "torch_error": None, "foreign": []}
if sys.version_info[0] >= 3:
    try:
        import importlib.util
        spec = importlib.util.find_spec("torch")
        out["torch_origin"] = spec.origin if spec else None
    except Exception as e:
        out["torch_error"] = "%s: %s" % (type(e).__name__, e)
    try:
        out["foreign"] = _torch_for_other_pythons()
    except Exception:
        pass
print(json.dumps(out))
"""


def torch_for_other_pythons():
    """[{dir, python, evidence}]: torch this interpreter sees built for another Python."""
    scope = {}
    exec(_FOREIGN, scope)  # noqa: S102 - the module's own constant text
    try:
        return scope["_torch_for_other_pythons"]()
    except Exception:  # noqa: BLE001 - an unreadable directory is no finding
        return []


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


def discover(candidates, foreign=None):
    """The first candidate whose interpreter finds torch, and what was tried (as text).
    `foreign` collects, per candidate asked, torch built for another Python that it sees."""
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
        if foreign is not None and info.get("foreign"):
            foreign.extend(dict(f, interpreter=path, interpreter_python=info["version"])
                           for f in info["foreign"] if isinstance(f, dict))
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


def mapped_shared_objects(limit=4000):
    """Paths of every shared object mapped into this process (/proc/self/maps: the files the
    dynamic loader, torch's own preloading and ctypes really opened), in the order first
    mapped; None when the maps cannot be read."""
    out, seen = [], set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                if path.startswith("/") and ".so" in os.path.basename(path) and path not in seen:
                    seen.add(path)
                    out.append(path)
                    if len(out) == limit:
                        break
    except OSError:
        return None
    return out


def writable_by_mode(path):
    """Whether this process's user may write into `path` by its owner, group and mode bits:
    the probes run on a read-only root that a default `docker run` does not have, so
    os.access would answer for the probe's container, not for the image."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    import stat as stat_mod
    if not stat_mod.S_ISDIR(st.st_mode):
        return False
    uid = os.geteuid()
    if uid == 0:
        return True
    if st.st_uid == uid:
        return bool(st.st_mode & 0o200)
    if st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        return bool(st.st_mode & 0o020)
    return bool(st.st_mode & 0o002)


def writable_dirs():
    """Where this process (the image's USER) can write: the temporary directory Python's
    tempfile picks (torchvision's import, torch.compile and the file rendezvous need one) and
    HOME (torch.hub's and triton's caches). /tmp is the container's own copy of the image's
    /tmp and is tried for real; the rest of the root is read-only under the probes, so a
    directory tempfile could not use there counts when its mode lets the user write."""
    import tempfile
    out = {"uid": os.getuid(), "temp_dir": None, "temp_error": None,
           "home": os.environ.get("HOME"), "home_writable": None}
    try:
        out["temp_dir"] = tempfile.gettempdir()
    except Exception as e:  # noqa: BLE001 - FileNotFoundError: "No usable temporary directory"
        for env in ("TMPDIR", "TEMP", "TMP"):
            if os.environ.get(env) and writable_by_mode(os.environ[env]):
                out["temp_dir"] = os.environ[env]
                break
        else:
            for d in ("/var/tmp", "/usr/tmp"):
                if writable_by_mode(d):
                    out["temp_dir"] = d
                    break
        if out["temp_dir"] is None:
            out["temp_error"] = "%s: %s" % (type(e).__name__, e)
    home = out["home"]
    if home:
        out["home_writable"] = writable_by_mode(home)
    return out


def loaded_libraries():
    """Paths of the CUDA libraries mapped into this process, in the order first mapped."""
    mapped = mapped_shared_objects()
    if mapped is None:
        return None
    return [p for p in mapped if is_cuda_library(os.path.basename(p))]


def distributions(notes=None):
    """{name: {"version", "location"}} of torch and its companions and nvidia-* wheels.
    A distribution whose metadata cannot be read (a METADATA that is not UTF-8, a broken
    dist-info) is skipped with a line in `notes`, so one bad package never stops the probe."""
    try:
        import importlib.metadata as md
    except ImportError:  # Python 3.7
        return None
    out = {}
    try:
        found = md.distributions()
    except Exception as e:  # noqa: BLE001 - a path entry importlib cannot list
        if notes is not None:
            notes.append("installed distributions not read: %s: %s" % (type(e).__name__, e))
        return out
    while True:
        try:
            dist = next(found)
        except StopIteration:
            break
        except Exception as e:  # noqa: BLE001 - the next path entry could not be read
            if notes is not None:
                notes.append("a distribution was not read: %s: %s" % (type(e).__name__, e))
            continue
        try:
            name = (dist.metadata["Name"] or "").lower()
            wanted = name in ("torch", "torchvision", "torchaudio", "triton") or name.startswith("nvidia-")
            version = dist.version if wanted else None
        except Exception as e:  # noqa: BLE001 - METADATA that is not UTF-8, or unreadable
            if notes is not None:
                where = getattr(dist, "_path", None)
                notes.append("skipped the distribution at %s: its metadata could not be read "
                             "(%s: %s)" % (where or "an unknown path", type(e).__name__,
                                           str(e).splitlines()[0] if str(e) else ""))
            continue
        if wanted:
            try:
                location = str(dist.locate_file(""))
            except Exception:  # noqa: BLE001 - metadata of a broken install
                location = None
            entry = {"version": version, "location": location}
            if name in ("torch", "torchvision", "torchaudio"):
                # What it pins: the wheel a missing library should come from (torch), the torch
                # a companion was built for (torchvision, torchaudio).
                try:
                    entry["requires"] = list(dist.requires or [])
                except Exception:  # noqa: BLE001 - unreadable METADATA
                    entry["requires"] = []
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


def signal_name(num):
    try:
        return signal.Signals(num).name
    except (ValueError, AttributeError):
        return "signal %d" % num


def run_bounded(cmd, timeout, env=None, limit=64 * 1024):
    """Runs cmd with its output bounded (the first `limit` bytes of stdout, the last `limit` of
    stderr) and a wall-clock limit. Returns (returncode or None when it timed out, stdout,
    stderr) as text; (None, "", error) when it cannot start."""
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as e:
        return "not started", "", "%s: %s" % (type(e).__name__, e)
    out, err = bytearray(), bytearray()
    open_fds = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    deadline = time.monotonic() + timeout
    timed_out = False
    exited_at = None
    while open_fds:
        now = time.monotonic()
        if now >= deadline:
            timed_out = proc.poll() is None
            break
        if proc.poll() is not None:
            # Exited: what is still in the pipes comes at once; a grandchild that keeps them
            # open is not waited for.
            exited_at = exited_at or now
            if now - exited_at > 1.0:
                break
        ready, _, _ = select.select(list(open_fds), [], [], 0.1)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                del open_fds[fd]
                continue
            buf = open_fds[fd]
            if buf is out:
                if len(out) < limit:
                    out.extend(chunk[:limit - len(out)])
            else:
                err.extend(chunk)
                if len(err) > 2 * limit:
                    del err[:len(err) - limit]
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    code = None if timed_out else proc.returncode
    return code, out.decode("utf-8", "replace"), bytes(err[-limit:]).decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------
# After a crash: what the loader was loading.

_LD_OPEN = re.compile(r"^file=(.+?) \[\d+\];\s+(needed by|dynamically loaded by) ")
_LD_NS = re.compile(r" \[\d+\]$")


def ld_debug_loading(path, limit=4 << 20, pid=None):
    """The shared object being loaded when the process that wrote LD_DEBUG=files,libs output
    to `path` died, as (path, phase), or (None, None).

    Reads at most the last `limit` bytes. Events, in order: "file=NAME [ns];  needed by ..." /
    "dynamically loaded by ..." opens NAME; "trying file=PATH" (libs) names where NAME was
    searched, the last existing one being where it was found; "calling init: PATH" completes
    the loads before it. The answer is the last object opened after the last "calling init"
    (phase "mapping": its mapping, relocation or a failed dlopen of it was the last thing the
    loader did), else the object of the last "calling init" when nothing follows it (phase
    "initializing": the crash came in its initializer, or later in code that loaded nothing
    more). `pid`: only that process's lines (a trace several processes wrote to)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if size > limit:
                f.seek(size - limit)
                f.readline()  # a partial line
            text = f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None, None
    pending, current, last = [], None, None
    for raw in text.splitlines():
        writer, sep, line = raw.partition(":")
        if not sep or not writer.strip().isdigit() or (pid is not None and int(writer) != pid):
            continue
        line = line.strip()
        m = _LD_OPEN.match(line)
        if m:
            name = m.group(1)
            current = [name, name if "/" in name else None]
            pending.append(current)
            last = "open"
        elif line.startswith("trying file="):
            tried = line[len("trying file="):].strip()
            if current is not None and os.path.exists(tried):
                current[1] = tried
        elif line.startswith("calling init:"):
            init = _LD_NS.sub("", line[len("calling init:"):].strip())
            pending, current, last = [], None, ("init", init)
    if pending:
        name, where = pending[-1]
        return where or name, "mapping"
    if isinstance(last, tuple) and last[1]:
        return last[1], "initializing"
    return None, None


# ---------------------------------------------------------------------------------------
# Other interpreters: does their torch import?

_OTHER = r"""
import json, sys
try:
    import torch
    print(json.dumps({"torch": torch.__version__, "cuda": getattr(torch.version, "cuda", None)}))
except BaseException as e:
    t = str(e).strip()
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, t.splitlines()[0] if t else "")}))
    sys.exit(1)
"""


def version_file_text(torch_origin):
    """torch.__version__ as torch/version.py beside `torch_origin` sets it, without importing
    torch; None when it cannot be read."""
    if not torch_origin:
        return None
    try:
        with open(os.path.join(os.path.dirname(torch_origin), "version.py")) as f:
            for line in f:
                m = re.match(r"""__version__\s*=\s*['"]([^'"]+)['"]""", line)
                if m:
                    return m.group(1)
    except (OSError, UnicodeDecodeError):
        pass
    return None


def other_interpreter(path, timeout=90, imports=True):
    """{"path","realpath","python","torch_origin","torch","cuda","imports","error"} for an
    interpreter that finds a torch package; None when it finds none (or does not run).
    `imports` false: torch is not imported ("imports": None, "torch" read from its
    version.py, "version_from": "torch/version.py")."""
    info = ask(path)
    if info is None or not info["version"].startswith("3.") or not (
            info["torch_origin"] or info["torch_error"]):
        return None
    rec = {"path": path, "realpath": os.path.realpath(path), "python": info["version"],
           "torch_origin": info["torch_origin"], "torch": None, "cuda": None, "imports": False,
           "error": info["torch_error"]}
    if not imports:
        rec.update(imports=None, torch=version_file_text(info["torch_origin"]),
                   version_from="torch/version.py")
        return rec
    code, out, err = run_bounded([path, "-c", _OTHER], timeout)
    answer = None
    for line in reversed(out.strip().splitlines()):
        try:
            answer = json.loads(line)
            break
        except ValueError:
            continue
    if code is None:
        rec["error"] = "timed out after %d s" % timeout
    elif isinstance(code, int) and code < 0:
        rec["error"] = "died of %s" % signal_name(-code)
    elif isinstance(answer, dict) and answer.get("torch") is not None and code == 0:
        rec.update(torch=answer["torch"], cuda=answer.get("cuda"), imports=True, error=None)
    elif isinstance(answer, dict) and answer.get("error"):
        rec["error"] = answer["error"]
    else:
        lines = [ln.strip() for ln in err.splitlines() if ln.strip()]
        rec["error"] = lines[-1] if lines else "exited with code %s" % code
    return rec


def interpreter_key(path):
    """What makes two interpreter paths one interpreter: the same file (os.path.realpath) in
    the same virtual environment. A venv's bin/python is a symlink to its base interpreter, so
    the realpath alone would call /opt/venv/bin/python and /usr/bin/python3 one interpreter;
    the pyvenv.cfg beside it or one directory up (where Python itself looks) tells them apart."""
    real = os.path.realpath(path)
    d = os.path.dirname(os.path.abspath(path))
    for root in (d, os.path.dirname(d)):
        if os.path.isfile(os.path.join(root, "pyvenv.cfg")):
            return real, os.path.realpath(root)
    return real, None


class OtherInterpreters(object):
    """Checks interpreters other than the chosen one in the background, `parallel` at a time
    (`imports` false: where their torch is and its version, not imported); results() waits
    for them and keeps the order they were given in."""

    def __init__(self, paths, chosen, timeout=90, parallel=2, imports=True):
        todo = []
        seen = set([interpreter_key(chosen)]) if chosen else set()
        for p in paths:
            if not p or not os.path.isabs(p) or not (os.path.isfile(p) and os.access(p, os.X_OK)):
                continue
            key = interpreter_key(p)
            if key in seen:
                continue
            seen.add(key)
            todo.append(p)
        self._todo = list(enumerate(todo))
        self._out = [None] * len(todo)
        self._lock = threading.Lock()
        self._timeout = timeout
        self._imports = imports
        self._threads = [threading.Thread(target=self._run) for _ in range(min(parallel, len(todo)))]
        for t in self._threads:
            t.daemon = True
            t.start()

    def _run(self):
        while True:
            with self._lock:
                if not self._todo:
                    return
                i, path = self._todo.pop(0)
            try:
                self._out[i] = other_interpreter(path, self._timeout, self._imports)
            except Exception as e:  # noqa: BLE001 - one interpreter never sinks the probe
                self._out[i] = {"path": path, "realpath": os.path.realpath(path), "python": None,
                                "torch_origin": None, "torch": None, "cuda": None, "imports": False,
                                "error": "%s: %s" % (type(e).__name__, e)}

    def results(self):
        for t in self._threads:
            t.join()
        return [r for r in self._out if r is not None]
