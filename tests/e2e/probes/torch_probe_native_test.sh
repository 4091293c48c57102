#!/usr/bin/env bash
# Native tests of the torch probe (probes/torch/torch_probe.py as copied into the probe
# directory). Usage: torch_probe_native_test.sh PROBE_DIR
#
# Needs a python with torch: $TORCHDOCK_TEST_PYTHON. Without it the checks that need torch
# are skipped (printed as "skip - ...", counted as skipped, and the script exits 77, which
# ctest reports as a skipped test); the checks that need no torch still run.
# Ends with exactly "N passed, M failed, K skipped"; exits 1 when anything failed.
set -uo pipefail
DIR=${1:?usage: torch_probe_native_test.sh PROBE_DIR}
PROBE="$DIR/torch_probe.py"
WORK=$(mktemp -d /tmp/torchdock-torch-probe-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0 skip=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
skipped() { echo "skip - $1"; skip=$((skip + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

# probe PYTHON FLAGS... : runs the probe, keeps stdout/stderr/exit code and the last stdout line.
# $PYOPTS: interpreter options (word-split) for this call.
probe() {
  local py=$1; shift
  # shellcheck disable=SC2086
  "$py" ${PYOPTS:-} "$PROBE" "$@" >"$WORK/out" 2>"$WORK/err"
  echo $? >"$WORK/rc"
  tail -n 1 "$WORK/out" >"$WORK/last.json"
}
rc() { cat "$WORK/rc"; }
# field EXPR: a Python expression over the last line's object `j`, printed (json for non-str).
field() {
  python3 - "$WORK/last.json" "$1" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("<no JSON on the last line: %s>" % e)
    sys.exit(0)
try:
    v = eval(sys.argv[2], {"j": j})
except Exception as e:
    v = "<%s: %s>" % (type(e).__name__, e)
print(v if isinstance(v, str) else json.dumps(v))
PY
}
is() { [ "$(field "$1")" = "$2" ] || { echo "  $1 = $(field "$1"), wanted $2" >&2; return 1; }; }
show_on_failure() { if [ "$fail" -gt "$1" ]; then sed 's/^/  | /' "$WORK/out" "$WORK/err" | tail -n 20; fi; }

if [ ! -f "$PROBE" ]; then
  bad "the probe is in the probe directory ($PROBE)"
  echo "$pass passed, $fail failed, $skip skipped"
  exit 1
fi
ok "the probe is in the probe directory"

# Needs no torch: Python 3.7 syntax, and the error contract when torch cannot be imported.
check "the probe parses as Python 3.7" python3 -c '
import ast, sys
ast.parse(open(sys.argv[1]).read(), filename=sys.argv[1], feature_version=(3, 7))' "$PROBE"
f0=$fail
PYOPTS="-I -S" probe python3   # -S: no site-packages, so no torch whatever python3 has
check "without torch: waived, exit 2 (an observation, not an error)" test "$(rc)" = 2
check "without torch: status waived" is 'j["status"]' waived
check "without torch: reason says no torch module" is '"no torch module" in j["reason"]' true
check "without torch: the interpreter is named" is 'bool(j["data"]["python_executable"])' true
check "without torch: schema 1, probe torch" is '[j["schema"], j["probe"]]' '[1, "torch"]'
show_on_failure "$f0"

# A torch that is there but does not import (as when nvidia-nccl-cu12 is missing): fail,
# with the import error as the evidence.
f0=$fail
mkdir -p "$WORK/broken/torch"
printf 'raise ImportError("libnccl.so.2: cannot open shared object file: No such file or directory")\n' \
  >"$WORK/broken/torch/__init__.py"
PYTHONPATH="$WORK/broken" PYOPTS="-S" probe python3
check "torch that does not import: exit 1" test "$(rc)" = 1
check "torch that does not import: status fail" is 'j["status"]' fail
check "torch that does not import: the import error is the evidence" \
  is 'j["data"]["import_error"]' "ImportError: libnccl.so.2: cannot open shared object file: No such file or directory"
show_on_failure "$f0"

PY=${TORCHDOCK_TEST_PYTHON:-}
if [ -z "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
  if [ -n "$PY" ]; then echo "TORCHDOCK_TEST_PYTHON=$PY cannot import torch" >&2; fi
  skipped "no python with torch here: set TORCHDOCK_TEST_PYTHON (default run, wrong contribution, watchdog, bad flags)"
  echo "$pass passed, $fail failed, $skip skipped"
  [ "$fail" -eq 0 ] || exit 1
  exit 77
fi

# 1. Default run: pass, an exact all-reduce between 2 processes (Gloo unless 2+ GPUs).
f0=$fail
probe "$PY" --size=512 --repeats=3
check "default run exits 0" test "$(rc)" = 0
check "default run: status pass" is 'j["status"]' pass
check "default run: the JSON object is the last stdout line, with human lines before it" \
  test "$(wc -l <"$WORK/out")" -gt 1
check "default run: torch version reported" is 'isinstance(j["data"]["torch"], str) and len(j["data"]["torch"]) > 0' true
check "default run: distributed.exact true" is 'j["data"]["distributed"]["exact"]' true
check "default run: world_size 2" is 'j["data"]["distributed"]["world_size"]' 2
if [ "$(field 'j["data"]["device_count"]')" -ge 2 ] 2>/dev/null; then
  check "default run: backend nccl (2+ GPUs)" is 'j["data"]["distributed"]["backend"]' nccl
else
  check "default run: backend gloo" is 'j["data"]["distributed"]["backend"]' gloo
fi
check "default run: observed == expected == 1048576" is '[j["data"]["distributed"]["expected"], j["data"]["distributed"]["observed"]]' '[1048576, 1048576]'
if [ "$(field 'j["data"]["cuda_available"]')" = true ]; then
  check "default run: matmul correct (GPU)" is 'j["data"]["matmul"]["correct"]' true
  check "default run: matmul TFLOP/s for fp32 and bf16" is 'sorted(k for k, v in j["data"]["matmul"]["tflops"].items() if v)' '["bf16", "fp32"]'
else
  check "default run: no GPU, matmul null with a note" is '[j["data"]["matmul"], any("matmul skipped" in n for n in j["data"]["notes"])]' '[null, true]'
fi
show_on_failure "$f0"

# 2. A wrong contribution (rank 1 adds 1 to one element): fail, exact false.
f0=$fail
probe "$PY" --world-size=2 --dtypes=none --inject-error
check "wrong contribution: exit 1" test "$(rc)" = 1
check "wrong contribution: status fail" is 'j["status"]' fail
check "wrong contribution: distributed.exact false" is 'j["data"]["distributed"]["exact"]' false
check "wrong contribution: observed is expected + 1" is 'j["data"]["distributed"]["observed"] - j["data"]["distributed"]["expected"]' 1
check "wrong contribution: reason says inexact" is '"inexact" in j["reason"]' true
show_on_failure "$f0"

# 3. Watchdog: a rank that never joins is killed after --timeout; fail with the reason.
f0=$fail
start=$SECONDS
probe "$PY" --world-size=2 --dtypes=none --timeout=5 --inject-hang
took=$((SECONDS - start))
check "hung rank: exit 1" test "$(rc)" = 1
check "hung rank: status fail" is 'j["status"]' fail
check "hung rank: reason" is 'j["reason"]' "distributed all-reduce did not finish within 5 s"
check "hung rank: distributed.exact false, timed_out true" is '[j["data"]["distributed"]["exact"], j["data"]["distributed"]["timed_out"]]' '[false, true]'
check "hung rank: the probe returned within 60 s (took ${took} s)" test "$took" -lt 60
check "hung rank: no rank process left behind" bash -c '! pgrep -f -- "torch_probe[.]py --_worker" >/dev/null'
show_on_failure "$f0"

# 4. Bad flags: error, exit 3.
f0=$fail
probe "$PY" --no-such-flag=1
check "unknown flag: exit 3, status error" is '[j["status"], "--no-such-flag" in j["reason"]]' '["error", true]'
check "unknown flag: exit code 3" test "$(rc)" = 3
probe "$PY" --dtypes=fp64
check "unknown dtype: status error" is 'j["status"]' error
show_on_failure "$f0"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
