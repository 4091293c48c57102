#!/usr/bin/env bash
# End to end against genuine PyTorch CUDA installations nobody shaped to fit torchdock:
# `pip install torch==2.9.1` from PyPI (its CUDA 12.8 build and nvidia-* wheels) on the
# debootstrapped Debian base, and the ways users break such images
# (tests/e2e/lib/real_images.sh). Every verdict, cause and observed version is checked
# against the ground truth each image recorded with `pip freeze`.
# Usage: real_images_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-real-e2e-XXXXXX)
trap 'services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
source "$ROOT/tests/e2e/lib/real_images.sh"

# field IMAGE_JSON_INDEX CHECK_ID KEY: a field of one check in $WORK/v.json
field() { python3 -c "import json,sys; d=json.load(open('$WORK/v.json')); print(next((c[sys.argv[2]] for c in d['images'][0]['checks'] if c['id']==sys.argv[1]), 'missing'))" "$1" "$2"; }
status() { field "$1" status; }
validate() { "$TD" validate --probes "$PROBES" --json="$WORK/v.json" "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
doctor() { "$TD" doctor --probes "$PROBES" --json="$WORK/d.json" --image "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
# contains TEXT PART...: every PART is in TEXT (no shell quoting of TEXT needed)
contains() { local text=$1; shift; for part in "$@"; do [[ $text == *"$part"* ]] || return 1; done; }
finding() { python3 -c "import json,sys; d=json.load(open('$WORK/d.json')); print(' | '.join(f['id']+': '+f['detail']+' fix: '+f['fix'] for f in d['findings'] if f['id']==sys.argv[1]))" "$1"; }

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
start=$(date +%s)
build_real_images /var/tmp/torchdock/real-images
check "built the real PyTorch images (pip install torch==$REAL_TORCH and its variants)" test $? = 0
echo "# figure: real images built (or found in the cache) in $(( $(date +%s) - start )) s"
CUDNN=$(real_freeze uv nvidia-cudnn-cu12) NCCL=$(real_freeze uv nvidia-nccl-cu12)
RUNTIME=$(real_freeze uv nvidia-cuda-runtime-cu12) RUNTIME_NEW=$(real_freeze cudart129 nvidia-cuda-runtime-cu12)
check "ground truth read from pip freeze (cuDNN $CUDNN, NCCL $NCCL, runtime $RUNTIME)" \
  bash -c "[ -n '$CUDNN' ] && [ -n '$NCCL' ] && [ -n '$RUNTIME' ]"

# --- the healthy installation, in uv's layout (/app/.venv on PATH, VIRTUAL_ENV unset) --------
start=$(date +%s.%N)
validate tdreal/torch:uv
echo "# figure: validate tdreal/torch:uv (static tier) as a whole process: $(echo "$(date +%s.%N) - $start" | bc) s"
check "healthy: exit 0" test "$(rc)" = 0
check "healthy: torch found through the image's PATH" contains "$(field TD119 message)" /app/.venv/bin/python
check "healthy: cuDNN observed = pip freeze ($(field TD102 observed))" test "$(field TD102 observed)" = "$CUDNN"
check "healthy: NCCL observed = pip freeze ($(field TD104 observed))" test "$(field TD104 observed)" = "$NCCL"
check "healthy: CUDA runtime = the runtime wheel's ${RUNTIME%.*}" contains "$(field TD101 observed)" "${RUNTIME%.*} "
for id in TD110 TD111 TD123; do check "healthy: $id passes" test "$(status $id)" = pass; done
# The files-only tier on this x86 image, the figure issue 24 compares the arm64 image's with
# (e2e_arm64_files_only): the same probes, no code of the image run.
start=$(date +%s.%N)
TORCHDOCK_CACHE_DIR="$WORK/files-only-cache" validate tdreal/torch:uv --files-only
echo "# figure: validate --files-only tdreal/torch:uv (torch 2.9.1 cu128, x86_64; file-probe cache empty) as a whole process: $(echo "$(date +%s.%N) - $start" | bc) s"
check "healthy, --files-only: the files-only tier (exit $(rc)), TD132 every wheel tag and ELF object is x86_64" \
  bash -c "test $(rc) != 2 && test \"\$(python3 -c \"import json; print(json.load(open('$WORK/v.json'))['images'][0]['tier'])\")\" = files-only && test '$(status TD132)' = pass"
validate tdreal/torch:uv --expect cuda=12.8 --expect "cudnn=$CUDNN" --expect "nccl=$NCCL" \
  --expect torch=2.9.1 --expect python=3.11 --expect "arch-list=8.0;9.0"
check "healthy with the right expectations: exit 0" test "$(rc)" = 0
validate tdreal/torch:uv --expect cudnn=9 --expect nccl=2.27
check "short expectations are prefixes: cudnn=9, nccl=2.27 pass" test "$(status TD102) $(status TD104)" = "pass pass"
validate tdreal/torch:uv --expect "cudnn=${CUDNN%.*}.99" --expect cuda=13.0 --expect python=3.12
check "wrong expectations fail with the observed values (cuDNN ${CUDNN%.*}.99, CUDA 13.0, Python 3.12)" \
  test "$(rc) $(status TD102) $(status TD101) $(status TD118)" = "1 fail fail fail"
run validate tdreal/torch:uv --probes "$PROBES" --expect min-driver-compat=535
check "an --expect key validate does not check is refused (exit 2)" test "$(rc)" = 2

# --- the kernel audit: which GPUs the code in the image runs on (torch 2.9.1+cu128 carries
# sm_70 and newer) --------------------------------------------------------------------------
validate tdreal/torch:uv --expect "target-gpus=H100,RTX 5090"
check "kernels: H100 and RTX 5090 are covered (TD125 passes)" test "$(status TD125)" = pass
check "...torch's reported arch list is in its binary (TD126 passes)" test "$(status TD126)" = pass
validate tdreal/torch:uv --expect target-gpus=P100
check "kernels: P100 (sm_60) fails TD125, naming libtorch_cuda.so and what P100 needs" \
  contains "$(status TD125) $(field TD125 message)" fail libtorch_cuda.so "P100 needs sm_60"
preflight() { "$TD" preflight --probes "$PROBES" "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"; }
preflight tdreal/torch:uv --driver 570.124.06 --gpu H100
check "preflight: H100 on driver 570.124.06 is a yes (exit 0), judged on torch's CUDA 12.8" \
  contains "$(rc) $(cat "$WORK/out")" "0 " ": YES" "CUDA 12.8 is torch's build CUDA"
preflight tdreal/torch:uv --driver 570.124.06 --gpu P100
check "preflight: P100 is a no (exit 1) with the same kernel verdict as validate" \
  contains "$(rc) $(cat "$WORK/out")" "1 " "P100 (6.0): no - kernel audit: torch/lib/libtorch_cuda.so has sm_70"
preflight tdreal/torch:uv --driver 570.124.06 --gpu P100 --no-kernel-audit
check "preflight --no-kernel-audit: labels only, so unknown (exit 1) and says so" \
  contains "$(rc) $(cat "$WORK/out")" "1 " ": UNKNOWN" "not audited: --no-kernel-audit"

# --- the same files found through PYTHONPATH by the system python (no venv) -----------------
validate tdreal/torch:pythonpath
check "PYTHONPATH layout: exit 0" test "$(rc)" = 0
check "...torch found by /usr/bin/python3" contains "$(field TD119 message)" /usr/bin/python3

# --- the venv named only by VIRTUAL_ENV (the python3 on PATH has no torch) -------------------
# `docker run IMAGE python3` runs /usr/bin/python3, which has no torch: that is what is judged;
# the VIRTUAL_ENV that names another environment is a finding, never a preference.
validate tdreal/torch:virtualenv
ground=$(/usr/bin/docker run --rm --network=none tdreal/torch:virtualenv python3 -c 'import torch' 2>&1 | tail -1)
check "VIRTUAL_ENV layout: ground truth: the image's python3 has no torch ($ground)" contains "$ground" "No module named 'torch'"
check "VIRTUAL_ENV layout: exit 1, TD119 judged /usr/bin/python3" contains "$(rc) $(field TD119 message)" 1 /usr/bin/python3
check "...TD127 warns that VIRTUAL_ENV names /app/.venv and lists its torch" \
  contains "$(field TD127 status) $(field TD127 message)" warn VIRTUAL_ENV=/app/.venv "/app/.venv/bin/python" 2.9.1

# --- nvidia-nccl-cu12 removed: import torch fails ---------------------------------------------
validate tdreal/torch:nonccl
check "no NCCL wheel: exit 1" test "$(rc)" = 1
check "...TD119 fails with the import error" contains "$(field TD119 message)" "libnccl.so.2: cannot open shared object file"
check "...and explain's cause (EX103)" contains "$(field TD119 message)" EX103
check "...TD110 names the wheel torch pins" contains "$(field TD110 fix)" "nvidia-nccl-cu12==$NCCL"
check "...the torch checks say torch does not import, not 'CPU torch'" \
  contains "$(status TD121) $(field TD121 message)" "skip" "torch does not import"
doctor tdreal/torch:nonccl
check "...doctor: DR116 with explain's cause" contains "$(finding DR116)" EX103
check "...doctor: DR104 with the pinned wheel" contains "$(finding DR104)" "nvidia-nccl-cu12==$NCCL"
cp "$WORK/d.json" "$WORK/nonccl.json"

# --- an older cuDNN on LD_LIBRARY_PATH: torch's cuDNN breaks ----------------------------------
validate tdreal/torch:cudnn-ldlp
check "cuDNN $REAL_CUDNN_OLD on LD_LIBRARY_PATH: exit 1" test "$(rc)" = 1
check "...TD102 fails with torch's 'cuDNN version incompatibility'" \
  contains "$(status TD102) $(field TD102 message)" fail "cuDNN version incompatibility"
check "...TD111 fails: copies by content ${CUDNN%.*} and ${REAL_CUDNN_OLD%.*}, torch loads both directories" \
  contains "$(status TD111) $(field TD111 message)" fail "(${CUDNN%.*})" "(${REAL_CUDNN_OLD%.*})" "torch loads cudnn files from"
doctor tdreal/torch:cudnn-ldlp
check "...doctor: DR115 torch cannot use its cuDNN" contains "$(finding DR115)" "DR115"
check "...and no false 'runtime absent' (DR114)" test -z "$(finding DR114)"

# --- the same cuDNN only in ld.so.conf: torch is fine -----------------------------------------
validate tdreal/torch:cudnn-ldconf
check "cuDNN $REAL_CUDNN_OLD in ld.so.conf: exit 0 (torch keeps its own)" test "$(rc)" = 0
check "...TD111 warns that torch loads only ${CUDNN%.*}" \
  contains "$(status TD111) $(field TD111 message)" warn "torch loads only ${CUDNN%.*}"
check "...TD102 observes torch's cuDNN $CUDNN" test "$(field TD102 observed)" = "$CUDNN"

# --- a newer CUDA runtime wheel than torch was built with --------------------------------------
validate tdreal/torch:cudart129
check "runtime $RUNTIME_NEW under torch built with 12.8: TD101 warns" test "$(status TD101)" = warn
check "...naming both versions" contains "$(field TD101 observed)" "${RUNTIME_NEW%.*} " "built with 12.8"
doctor tdreal/torch:cudart129
check "...doctor records the runtime torch loads (${RUNTIME_NEW%.*})" \
  python3 -c "import json,sys; sys.exit(0 if json.load(open('$WORK/d.json'))['cuda_runtime']['version']=='${RUNTIME_NEW%.*}' else 1)"
check "...and warns (DR117)" contains "$(finding DR117)" DR117
# diff of two real torch images, one whose torch imports and one whose does not: the answer first.
"$TD" diff "$WORK/d.json" "$WORK/nonccl.json" >"$WORK/diff.out" 2>&1
"$TD" diff --json "$WORK/d.json" "$WORK/nonccl.json" >"$WORK/diff.json" 2>&1
echo "# figure: diff tdreal/torch:cudart129 vs :nonccl: $(python3 -c "import json; print(json.load(open('$WORK/diff.json'))['summary']['total'])") differences, $(wc -l <"$WORK/diff.out") lines on screen"
check "diff cudart129 vs nonccl: the answer line is torch not importing (libnccl.so.2)" \
  contains "$(head -1 "$WORK/diff.out") $(wc -l <"$WORK/diff.out")" "most likely to break a GPU job: torch does not import" \
  "torch_import_error: (absent) vs ImportError: libnccl.so.2"
check "...rows shown plus the counts of the rest add up to the --json total" python3 - "$WORK/diff.out" "$WORK/diff.json" <<'PY'
import json, re, sys
text, total = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))["summary"]["total"]
shown = sum(1 for l in text.splitlines() if re.match(r"\d+  ", l))
rest = re.search(r"^and (\d+) more not shown: (.*) \(--all", text, re.M)
assert text.count("\n") <= 20 and shown == 10, text  # one screen, the default top 10
assert shown + int(rest.group(1)) == total == sum(int(n) for n in re.findall(r"(\d+) \w+", rest.group(2))) + shown, (shown, rest.group(0), total)
PY
finish
