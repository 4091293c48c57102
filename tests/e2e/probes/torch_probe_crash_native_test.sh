#!/usr/bin/env bash
# Native tests of the torch probe's crash isolation, companion checks and other interpreters,
# with a fake torch (no real torch needed). Usage: torch_probe_crash_native_test.sh [PROBE_DIR]
# (default: probes/torch in the source tree).
#
# The fake torch lives in a virtual environment of this machine's python3 (with dist-info
# METADATA, so the probe's distributions() sees it); FAKE_TORCH selects how it behaves:
#   ok            imports, reports versions, all-reduce through files
#   sigbus        import torch kills itself with SIGBUS
#   segv_cudnn    torch.backends.cudnn.version() kills itself with SIGSEGV
#   trunc_so      import torch dlopens a truncated copy of libz (the loader dies of SIGBUS)
#   empty_so      cudnn.version() dlopens an empty .so (dlopen fails), then aborts
#   exit_silent   import torch calls os._exit(5)
# FAKE_TORCHVISION: ok, or nms_missing (import raises "operator torchvision::nms does not exist").
# Ends with exactly "N passed, M failed, K skipped"; exits 1 when anything failed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-$HERE/../../../probes/torch}
PROBE="$DIR/torch_probe.py"
WORK=$(mktemp -d /tmp/torchdock-torch-crash-XXXXXX)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
source "$HERE/../lib/check.sh"  # ok, bad, skipped, check, finish

if [ ! -f "$PROBE" ]; then
  bad "the probe is in the probe directory ($PROBE)"
  echo "$pass passed, $fail failed, $skip skipped"
  exit 1
fi
ok "the probe is in the probe directory"

# The real interpreter (not a wrapper script such as a pyenv shim: LD_DEBUG names its pid).
BASE=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -z "$BASE" ] || ! "$BASE" -m venv --without-pip "$WORK/venv-a" >"$WORK/venv.log" 2>&1 ||
   ! "$BASE" -m venv --without-pip "$WORK/venv-b" >>"$WORK/venv.log" 2>&1 ||
   ! "$BASE" -m venv --without-pip "$WORK/venv-c" >>"$WORK/venv.log" 2>&1; then
  sed 's/^/  | /' "$WORK/venv.log" 2>/dev/null
  skipped "python3 -m venv does not work here: no fake-torch environments"
  echo "$pass passed, $fail failed, $skip skipped"
  [ "$fail" -eq 0 ] || exit 1
  exit 77
fi
# Python 3.7 has no importlib.metadata: data.distributions is null there, and a companion's
# version is known only when it imports.
OLD=$("$BASE" -c 'import sys; print(int(sys.version_info < (3, 8)))')
PYA=$WORK/venv-a/bin/python PYB=$WORK/venv-b/bin/python PYC=$WORK/venv-c/bin/python
SITE_A=$("$PYA" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
SITE_B=$("$PYB" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

# Shared objects for the loader cases: an empty file, and the first half of a real library.
: >"$WORK/libfake_empty.so"
LIBZ=$(readlink -f "$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64|libz\.so\.1 \(libc6,/{print $NF; exit}')" 2>/dev/null)
[ -f "$LIBZ" ] || LIBZ=$(readlink -f /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null || readlink -f /usr/lib64/libz.so.1 2>/dev/null || true)
if [ -f "$LIBZ" ]; then
  head -c $(($(stat -c %s "$LIBZ") / 2)) "$LIBZ" >"$WORK/libfake_trunc.so"
fi

"$BASE" - "$SITE_A" "$SITE_B" "$WORK" <<'PY'
import os, sys
site_a, site_b, work = sys.argv[1:4]

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)

def dist_info(site, name, version, requires=()):
    d = os.path.join(site, "%s-%s.dist-info" % (name, version))
    write(os.path.join(d, "METADATA"), "Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s" % (
        name, version, "".join("Requires-Dist: %s\n" % r for r in requires)))
    write(os.path.join(d, "RECORD"), "")

TORCH = r'''
import ctypes, json, os, signal, time, types
MODE = os.environ.get("FAKE_TORCH", "ok")
WORK = %(work)r
if MODE == "sigbus":
    os.kill(os.getpid(), signal.SIGBUS)
if MODE == "trunc_so":
    ctypes.CDLL(os.path.join(WORK, "libfake_trunc.so"))
if MODE == "exit_silent":
    os._exit(5)
__version__ = "2.9.1+cu128"
__file__ = __file__
version = types.SimpleNamespace(cuda="12.8", hip=None)
float32, float64 = "float32", "float64"

class Tensor(object):
    def __init__(self, values, dtype=None):
        self.v, self.dtype = list(values), dtype
    def _op(self, other, f):
        o = other.v if isinstance(other, Tensor) else [other] * len(self.v)
        return Tensor([f(a, b) for a, b in zip(self.v, o)], self.dtype)
    def __add__(self, o): return self._op(o, lambda a, b: a + b)
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)
    def __ne__(self, o): return self._op(o, lambda a, b: a != b)
    def __getitem__(self, i): return self.v[i]
    def __setitem__(self, i, x): self.v[i] = x
    def sum(self): return Tensor([sum(self.v)], self.dtype)
    def item(self): return self.v[0]
    def to(self, dtype): return Tensor(self.v, dtype)
    def cpu(self): return self
    def tolist(self): return list(self.v)

def arange(n, dtype=None, device=None): return Tensor([float(i) for i in range(n)], dtype)
def tensor(values, dtype=None): return Tensor(values, dtype)
def device(*a): return a

def _cudnn_version():
    if MODE == "segv_cudnn":
        os.kill(os.getpid(), signal.SIGSEGV)
    if MODE == "empty_so":
        try:
            ctypes.CDLL(os.path.join(WORK, "libfake_empty.so"))
        except OSError:
            os.abort()
    return 91002

backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=_cudnn_version))
cuda = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0,
                             get_arch_list=lambda: [], nccl=types.SimpleNamespace(version=lambda: (2, 27, 3)))
_C = types.SimpleNamespace()
ops = types.SimpleNamespace()
'''
DIST = r'''
import json, os, time
_state = {}
class ReduceOp(object):
    SUM = "sum"
def is_available(): return True
def is_nccl_available(): return False
def init_process_group(backend, init_method, rank, world_size, timeout=None):
    _state.update(dir=os.path.dirname(init_method[len("file://"):]), rank=rank, world=world_size)
def all_reduce(t, op=None):
    d, rank, world = _state["dir"], _state["rank"], _state["world"]
    with open(os.path.join(d, "fake%d.tmp" % rank), "w") as f:
        json.dump(t.v, f)
    os.rename(os.path.join(d, "fake%d.tmp" % rank), os.path.join(d, "fake%d.json" % rank))
    paths = [os.path.join(d, "fake%d.json" % r) for r in range(world)]
    while not all(os.path.exists(p) for p in paths):
        time.sleep(0.01)
    total = [0.0] * len(t.v)
    for p in paths:
        with open(p) as f:
            total = [a + b for a, b in zip(total, json.load(f))]
    t.v = total
def destroy_process_group(): pass
'''
VISION = r'''
import os, types
import torch
if os.environ.get("FAKE_TORCHVISION", "ok") == "nms_missing":
    raise RuntimeError("operator torchvision::nms does not exist")
__version__ = "0.24.1+cu128"
def _nms(boxes, scores, iou):
    return torch.tensor([0, 2])
ops = types.SimpleNamespace(nms=_nms)
torch.ops.torchvision = types.SimpleNamespace(nms=_nms)
'''
write(os.path.join(site_a, "torch", "__init__.py"), TORCH % {"work": work})
write(os.path.join(site_a, "torch", "distributed.py"), DIST)
dist_info(site_a, "torch", "2.9.1+cu128", ["nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\""])
write(os.path.join(site_a, "torchvision", "__init__.py"), VISION)
dist_info(site_a, "torchvision", "0.24.1+cu128", ["numpy", "torch==2.9.1"])
write(os.path.join(site_a, "torchaudio", "__init__.py"), "import torch\n__version__ = '2.9.1+cu128'\n")
dist_info(site_a, "torchaudio", "2.9.1+cu128", ["torch==2.9.1"])
# The second interpreter: a torch that does not import.
write(os.path.join(site_b, "torch", "__init__.py"),
      "raise ImportError('libtorch_cuda.so: cannot open shared object file: No such file or directory')\n")
write(os.path.join(site_b, "torch", "version.py"), "__version__ = '2.8.0+cu126'\n")
dist_info(site_b, "torch", "2.8.0")
PY

# probe [ENV=VALUE...] -- FLAGS...: runs the probe under venv A (as torchdock would:
# --candidates), keeps stdout/stderr/exit code and the last stdout line.
probe() {
  local envs=()
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local start=$SECONDS
  env "${envs[@]}" "$PYA" "$PROBE" --candidates="$WORK/nowhere/python:$PYA" --world-size=2 --timeout=30 "$@" \
    >"$WORK/out" 2>"$WORK/err"
  echo $? >"$WORK/rc"
  echo $((SECONDS - start)) >"$WORK/took"
  tail -n 1 "$WORK/out" >"$WORK/last.json"
}
rc() { cat "$WORK/rc"; }
field() {
  "$BASE" - "$WORK/last.json" "$1" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("<no JSON on the last line: %s>" % e)
    sys.exit(0)
try:
    v = eval(sys.argv[2], {"j": j, "d": j.get("data", {})})
except Exception as e:
    v = "<%s: %s>" % (type(e).__name__, e)
print(v if isinstance(v, str) else json.dumps(v))
PY
}
is() { [ "$(field "$1")" = "$2" ] || { echo "  $1 = $(field "$1"), wanted $2" >&2; return 1; }; }
show_on_failure() { if [ "$fail" -gt "$1" ]; then sed 's/^/  | /' "$WORK/out" "$WORK/err" | tail -n 30; fi; }
json_lines() { "$BASE" -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        json.loads(line); n += 1
    except ValueError:
        pass
print(n)' "$WORK/out"; }

# The parent's fields, present whatever happened in the child.
parent_fields() {
  is 'sorted(k for k in ["site_dirs", "distributions", "interpreters_tried", "python", "python_executable", "interpreter"] if k in d)' \
    '["distributions", "interpreter", "interpreters_tried", "python", "python_executable", "site_dirs"]' &&
    { [ "$OLD" = 1 ] && is 'd["distributions"]' null || is 'd["distributions"]["torch"]["version"]' "2.9.1+cu128"; } &&
    is "d[\"site_dirs\"][0] == \"$SITE_A\"" true
}

# 1. A healthy fake torch: pass; the companions import and nms runs; the interpreter judged.
f0=$fail
probe FAKE_TORCH=ok -- --others="$PYA:$PYB:$PYC:$WORK/venv-a/bin/python3"
check "healthy: exit 0, status pass" is '[j["status"], j["reason"]]' '["pass", ""]'
check "healthy: exactly one JSON line, the last" test "$(json_lines)" = 1
check "healthy: torch facts from the child" is '[d["torch"], d["cuda"], d["cudnn"], d["nccl"]]' '["2.9.1+cu128", "12.8", 91002, "2.27.3"]'
check "healthy: the all-reduce ran in ranks forked from the child, exact" \
  is '[d["distributed"]["start"], d["distributed"]["exact"], d["distributed"]["observed"]]' '["fork", true, 1048576]'
check "healthy: parent fields" parent_fields
check "healthy: data.interpreter is the candidate as passed, index 1" \
  is "d[\"interpreter\"] == {\"path\": \"$PYA\", \"realpath\": \"$(readlink -f "$PYA")\", \"candidate_index\": 1}" true
check "healthy: torchvision imports, ops ok" \
  is 'd["torchvision"]' '{"version": "0.24.1+cu128", "imports": true, "import_error": null, "ops_ok": true, "ops_error": null}'
check "healthy: torchaudio imports" is 'd["torchaudio"]' '{"version": "2.9.1+cu128", "imports": true, "import_error": null}'
if [ "$OLD" = 1 ]; then
  skipped "healthy: requires of torchvision and torchaudio (Python 3.7: no distributions)"
else
  check "healthy: requires recorded for torchvision and torchaudio" \
    is '[d["distributions"]["torchvision"]["requires"], d["distributions"]["torchaudio"]["requires"]]' '[["numpy", "torch==2.9.1"], ["torch==2.9.1"]]'
fi
check "healthy: no crash field" is '"crash" in d' false
check "others: only venv B listed (A and its python3 are the chosen one; C has no torch)" \
  is "[o[\"path\"] for o in d[\"other_interpreters\"]] == [\"$PYB\"]" true
check "others: A's torch imports, so B's is listed from its version.py, not imported" \
  is '[d["other_interpreters"][0][k] for k in ("imports", "torch", "version_from", "error")]' \
  '[null, "2.8.0+cu126", "torch/version.py", null]'
check "others: B's python version and torch origin" \
  is "[d[\"other_interpreters\"][0][\"python\"].count(\".\"), d[\"other_interpreters\"][0][\"torch_origin\"] == \"$SITE_B/torch/__init__.py\"]" '[2, true]'
show_on_failure "$f0"

# 2. torchvision built for another torch: recorded, the probe's status unchanged.
f0=$fail
probe FAKE_TORCH=ok FAKE_TORCHVISION=nms_missing -- --dtypes=none
check "torchvision mismatch: status still pass" is 'j["status"]' pass
V='"0.24.1+cu128"'; [ "$OLD" = 1 ] && V=null
check "torchvision mismatch: recorded" \
  is 'd["torchvision"]' '{"version": '"$V"', "imports": false, "import_error": "RuntimeError: operator torchvision::nms does not exist", "ops_ok": null, "ops_error": null}'
check "torchvision mismatch: no other_interpreters without --others" is 'd["other_interpreters"]' '[]'
show_on_failure "$f0"

# 3. import torch dies of SIGBUS: fail, crash recorded, the parent's data all there.
f0=$fail
probe FAKE_TORCH=sigbus -- --others="$PYB"
check "SIGBUS on import: exit 1, status fail" test "$(rc)" = 1
check "SIGBUS on import: reason" is 'j["reason"].startswith("import torch died of SIGBUS (signal 7)")' true
check "SIGBUS on import: crash signal, number, exit code, stage" \
  is '[d["crash"][k] for k in ("signal", "signal_number", "exit_code", "stage")]' '["SIGBUS", 7, 135, "import torch"]'
check "SIGBUS on import: faulthandler traceback names the fake torch" \
  is 'any("torch/__init__.py" in ln for ln in d["crash"]["traceback"]) and 0 < len(d["crash"]["traceback"]) <= 30' true
check "SIGBUS on import: import_error carries the reason (the core's TD119)" is 'd["import_error"] == j["reason"]' true
check "SIGBUS on import: torch_file is where the import system found torch (what probe-record inspects)" \
  is "d[\"torch_file\"] == \"$SITE_A/torch/__init__.py\"" true
check "SIGBUS on import: parent fields" parent_fields
check "SIGBUS on import: others still checked" is 'len(d["other_interpreters"])' 1
check "SIGBUS on import: exactly one JSON line" test "$(json_lines)" = 1
check "SIGBUS on import: B is asked to import (A's did not): does not, with the first line of its error" \
  is '[d["other_interpreters"][0][k] for k in ("imports", "torch", "error")]' \
  '[false, null, "ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory"]'
# The fake torch raises SIGBUS from Python code: the child loaded nothing its trace could name,
# so the stage is re-run under LD_DEBUG.
check "SIGBUS on import: the re-run died too" is '[d["crash"]["rerun"], d["crash"]["trace"]]' \
  '["died of SIGBUS", "a re-run of the stage (LD_DEBUG=files,libs)"]'

# The signal came from Python code after every load had completed: nothing is blamed.
check "SIGBUS on import: no library blamed (loads all completed), last initializer apart" \
  is '[d["crash"]["loading"], d["crash"]["loading_evidence"], isinstance(d["crash"]["last_initialized"], str)]' '[null, null, true]'
check "SIGBUS on import: reason is just the signal" is 'j["reason"]' "import torch died of SIGBUS (signal 7)"
show_on_failure "$f0"

# 4. SIGSEGV inside cudnn.version(): the facts before it survive.
f0=$fail
probe FAKE_TORCH=segv_cudnn --
check "SIGSEGV in cudnn: exit 1, status fail" test "$(rc)" = 1
check "SIGSEGV in cudnn: reason" is 'j["reason"].startswith("torch died of SIGSEGV (signal 11) in torch.backends.cudnn.version()")' true
check "SIGSEGV in cudnn: stage and exit code" is '[d["crash"]["stage"], d["crash"]["exit_code"]]' '["torch.backends.cudnn.version()", 139]'
check "SIGSEGV in cudnn: torch version from before the crash, cudnn_error set" \
  is '[d["torch"], d["cudnn_error"] == j["reason"], "import_error" in d]' '["2.9.1+cu128", true, false]'
check "SIGSEGV in cudnn: loaded_libraries present" is 'isinstance(d["loaded_libraries"], list)' true
show_on_failure "$f0"

# 5. The loader dies of SIGBUS on a truncated library: LD_DEBUG names it.
f0=$fail
if [ -f "$WORK/libfake_trunc.so" ]; then
  probe FAKE_TORCH=trunc_so --
  echo "  (truncated library: $(field 'j["reason"]'))"
  check "truncated .so: status fail, signal $(field 'd["crash"]["signal"]')" \
    is '[j["status"], d["crash"]["signal"] in ("SIGBUS", "SIGSEGV")]' '["fail", true]'
  check "truncated .so: loading names it, from LD_DEBUG" \
    is "[d[\"crash\"][\"loading\"] == \"$WORK/libfake_trunc.so\", d[\"crash\"][\"loading_evidence\"]]" '[true, "LD_DEBUG"]'
  check "truncated .so: the reason says what was being loaded" \
    is "j[\"reason\"].endswith(\"while loading $WORK/libfake_trunc.so\")" true
  check "truncated .so: read from the trace of the process that died, no re-run" \
    is '[d["crash"]["trace"], d["crash"]["rerun"]]' '["the process that died (LD_DEBUG=files,libs)", null]'
  cp "$WORK/last.json" "$WORK/example-crash.json"
  # The environment sets LD_DEBUG itself (an image may): the probe does not trace over it, and
  # a re-run of the stage names the library; the trace directory is gone either way.
  mkdir -p "$WORK/tmp-user" "$WORK/tmp-traced"
  probe LD_DEBUG=statistics LD_DEBUG_OUTPUT="$WORK/user-ld" TMPDIR="$WORK/tmp-user" FAKE_TORCH=trunc_so --
  check "LD_DEBUG set by the environment: a re-run names the truncated .so" \
    is "[d[\"crash\"][\"loading\"] == \"$WORK/libfake_trunc.so\", d[\"crash\"][\"trace\"], d[\"crash\"][\"rerun\"] is not None]" \
    '[true, "a re-run of the stage (LD_DEBUG=files,libs)", true]'
  probe TMPDIR="$WORK/tmp-traced" FAKE_TORCH=trunc_so --
  left=$(find "$WORK/tmp-traced" "$WORK/tmp-user" -mindepth 1 | tr '\n' ' ')
  check "the loader trace is removed when the probe ends (left: ${left:-nothing})" test -z "$left"
else
  skipped "no libz.so.1 found to truncate"
fi
show_on_failure "$f0"

# 6. An empty .so whose dlopen fails, then abort: the failed load is what was being loaded.
f0=$fail
probe FAKE_TORCH=empty_so --
check "empty .so: SIGABRT in cudnn.version()" \
  is '[d["crash"]["signal"], d["crash"]["signal_number"], d["crash"]["stage"]]' '["SIGABRT", 6, "torch.backends.cudnn.version()"]'
check "empty .so: loading names it" is "d[\"crash\"][\"loading\"] == \"$WORK/libfake_empty.so\"" true
show_on_failure "$f0"

# 7. The child exits without a result: error, with the exit code.
f0=$fail
probe FAKE_TORCH=exit_silent --
check "silent exit: exit 3, status error" test "$(rc)" = 3
check "silent exit: reason has the exit code and stage" \
  is 'j["reason"]' "the torch probe's child process exited with code 5 and no result (last stage: import torch)"
check "silent exit: parent fields" parent_fields
show_on_failure "$f0"

# 8. No torch in the chosen interpreter's reach, --others listed anyway.
f0=$fail
"$PYC" "$PROBE" --candidates="$PYC" --others="$PYB" >"$WORK/out" 2>"$WORK/err"
echo $? >"$WORK/rc"
tail -n 1 "$WORK/out" >"$WORK/last.json"
check "no torch: waived, others listed" is '[j["status"], [o["path"] for o in d["other_interpreters"]] == ["'"$PYB"'"]]' '["waived", true]'
show_on_failure "$f0"

# 9. Python 3.7 syntax for both files.
check "the probe and its helpers parse as Python 3.7" "$BASE" -c '
import ast, sys
for p in sys.argv[1:]:
    if sys.version_info >= (3, 8):
        ast.parse(open(p).read(), filename=p, feature_version=(3, 7))
    else:
        compile(open(p).read(), p, "exec")' "$PROBE" "$DIR/torch_probe_env.py" "$DIR/torch_probe_crash.py" "$DIR/torch_matmul.py"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
