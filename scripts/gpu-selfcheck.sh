#!/usr/bin/env bash
# GPU self-check: builds the probes alone (probes/standalone), runs them natively on this
# machine together with the torch probe, and prints a compact report: GEMM throughput of the
# probe beside torch.matmul for the same sizes and dtypes, the correctness of each, NCCL and
# torch.distributed results, the versions seen, and a final PASS/FAIL line.
#
# Needs: Linux, an NVIDIA GPU and driver, a CUDA toolkit (nvcc and headers), CMake >= 3.25,
# a C++20 compiler, and a python3 with torch. No network. About 4-5 minutes on an H100/H200
# (sustained timing: 12 s per dtype on each side); SELFCHECK_TIMING=short takes about 1.
#
# Usage: scripts/gpu-selfcheck.sh [OUT_DIR]
# Environment:
#   OUT_DIR            where the probes' outputs and the report go (default build/selfcheck/report)
#   BUILD_DIR          the probes' build (default build/selfcheck)
#   PYTHON             the python with torch (default: python3)
#   SELFCHECK_SIZE     GEMM size N for N x N x N (default 8192)
#   SELFCHECK_DTYPES   default fp32,tf32,fp16,bf16,fp8
#   SELFCHECK_TIMING   sustained (default): the GEMM probe times SELFCHECK_SECONDS (default 10)
#                      of back-to-back GEMMs per dtype after SELFCHECK_WARMUP_SECONDS (default 2),
#                      so power and clocks reach their steady state; short: SELFCHECK_REPEATS
#                      timed GEMMs (default 20) after 5 warm-up ones, for a quick look
#   SELFCHECK_OPERANDS_DIR  where the GEMM probe writes its timed operands for torch.matmul to
#                      time the same bytes (default BUILD_DIR/operands; about 1.2 GB at 8192,
#                      removed after the torch probe ran)
#   SELFCHECK_LIBS     torch (default): put the CUDA libraries torch's wheels bring (nvidia/*/lib)
#                      on LD_LIBRARY_PATH ahead of the system's, so the probes and torch use the
#                      same cuBLAS/cuDNN/NCCL where torch has its own; system: leave it as it is
#   SELFCHECK_COMPILER auto (default): zig c++ for glibc 2.17 through probes/cmake/zig_toolchain.cmake
#                      when a zig is found ($ZIG, zig on PATH, PyPI's ziglang), so the binaries
#                      are built the way `torchdock validate` ships them; else the system's C++
#                      compiler (the probes then need this host's glibc, which is fine natively).
#                      zig or system: that one only. Applies when BUILD_DIR is first configured.
# Exit: 0 PASS, 1 FAIL (a probe missing, failed, waived or timed out counts as FAIL).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD_DIR=${BUILD_DIR:-build/selfcheck}
OUT_DIR=${1:-${OUT_DIR:-$BUILD_DIR/report}}
PYTHON=${PYTHON:-python3}
SIZE=${SELFCHECK_SIZE:-8192}
DTYPES=${SELFCHECK_DTYPES:-fp32,tf32,fp16,bf16,fp8}
REPEATS=${SELFCHECK_REPEATS:-20}
TIMING=${SELFCHECK_TIMING:-sustained}
SECONDS_TIMED=${SELFCHECK_SECONDS:-10}
WARMUP_SECONDS=${SELFCHECK_WARMUP_SECONDS:-2}
OPERANDS_DIR=${SELFCHECK_OPERANDS_DIR:-$BUILD_DIR/operands}
LIBS=${SELFCHECK_LIBS:-torch}
COMPILER=${SELFCHECK_COMPILER:-auto}
BIN="$BUILD_DIR/probes-bin"
START=$SECONDS

say() { echo "selfcheck: $*" >&2; }
mkdir -p "$OUT_DIR"
rm -f "$OUT_DIR"/*.json "$OUT_DIR"/*.stdout "$OUT_DIR"/*.stderr "$OUT_DIR"/*.rc "$OUT_DIR"/*.missing \
  "$OUT_DIR"/*.cmd "$OUT_DIR"/*.seconds "$OUT_DIR"/report.txt "$OUT_DIR"/build.log "$OUT_DIR"/env.txt
OUT_ABS=$(cd "$OUT_DIR" && pwd)

# --- Environment -------------------------------------------------------------------------
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -n) $(uname -srm)"
  echo "python: $(command -v "$PYTHON" || echo "$PYTHON (not found)")"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "nvidia-smi: $(timeout 30 nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | tr '\n' ';')"
  else
    echo "nvidia-smi: not found"
  fi
  NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
  echo "nvcc: ${NVCC:-not found} $([ -n "$NVCC" ] && "$NVCC" --version | grep -o 'release [0-9.]*' | head -1)"
  echo "cmake: $(cmake --version 2>/dev/null | head -1 || echo 'not found')"
} >"$OUT_DIR/env.txt"

# --- Build the probes alone ----------------------------------------------------------------
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
cmake_args=(-S probes/standalone -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release)
if [ -n "$NVCC" ]; then cmake_args+=("-DCUDAToolkit_ROOT=$(dirname "$(dirname "$(readlink -f "$NVCC")")")"); fi
ZIG_FOUND=${ZIG:-$(command -v zig || python3 -c 'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))' 2>/dev/null || true)}
case $COMPILER in
  auto|zig)
    if [ -n "$ZIG_FOUND" ] && [ -x "$ZIG_FOUND" ]; then
      cmake_args+=("-DCMAKE_TOOLCHAIN_FILE=$ROOT/probes/cmake/zig_toolchain.cmake" "-DTORCHDOCK_ZIG=$ZIG_FOUND")
      echo "probe compiler: zig $("$ZIG_FOUND" version) ($ZIG_FOUND), target glibc 2.17" >>"$OUT_DIR/env.txt"
    elif [ "$COMPILER" = zig ]; then
      say "SELFCHECK_COMPILER=zig but no zig was found (\$ZIG, zig on PATH, PyPI's ziglang)"; exit 1
    else
      echo "probe compiler: the system's C++ compiler (no zig found)" >>"$OUT_DIR/env.txt"
    fi ;;
  system) echo "probe compiler: the system's C++ compiler (SELFCHECK_COMPILER=system)" >>"$OUT_DIR/env.txt" ;;
  *) say "SELFCHECK_COMPILER is '$COMPILER': use auto, zig or system"; exit 1 ;;
esac
keep_going=()
if command -v ninja >/dev/null 2>&1 && [ ! -f "$BUILD_DIR/Makefile" ]; then
  cmake_args+=(-G Ninja); keep_going=(-- -k 0)
elif [ -f "$BUILD_DIR/build.ninja" ]; then
  keep_going=(-- -k 0)
else
  keep_going=(-- -k)
fi
say "building the probes in $BUILD_DIR"
build_ok=true
if ! cmake "${cmake_args[@]}" >"$OUT_DIR/build.log" 2>&1; then
  build_ok=false
  say "configure failed (see $OUT_DIR/build.log)"
fi
if grep -q "CUDA toolkit headers not found" "$OUT_DIR/build.log"; then
  say "CMake found no CUDA toolkit: no compiled probe was built"
fi
if $build_ok; then
  # Keep going past a probe that does not compile: the others still run, it is reported missing.
  if ! cmake --build "$BUILD_DIR" --parallel "$(nproc)" "${keep_going[@]}" >>"$OUT_DIR/build.log" 2>&1; then
    say "some probes did not build (see $OUT_DIR/build.log)"
  fi
fi
say "build done after $((SECONDS - START)) s"

# --- Libraries: the ones torch brings, unless told otherwise ------------------------------
TORCH_LIB_DIRS=$("$PYTHON" - <<'PY' 2>/dev/null
import glob, os
dirs = []
try:
    import nvidia  # namespace package of NVIDIA's wheels (nvidia-cublas, nvidia-cudnn-cu13, ...)
    for base in list(nvidia.__path__):
        dirs += sorted(d for d in glob.glob(os.path.join(base, "*", "lib")) if os.path.isdir(d))
except Exception:
    pass
print(":".join(dirs))
PY
)
if [ "$LIBS" = torch ] && [ -n "$TORCH_LIB_DIRS" ]; then
  export LD_LIBRARY_PATH="$TORCH_LIB_DIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "libraries: torch's wheels first: $TORCH_LIB_DIRS" >>"$OUT_DIR/env.txt"
else
  echo "libraries: the system's (LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-})" >>"$OUT_DIR/env.txt"
fi

# --- Run ---------------------------------------------------------------------------------
# run NAME TIMEOUT CMD... : stdout, stderr, exit code and the last stdout line (the JSON) of one probe.
run() {
  local name=$1 limit=$2; shift 2
  printf '%q ' "$@" >"$OUT_DIR/$name.cmd"
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" </dev/null >"$OUT_DIR/$name.stdout" 2>"$OUT_DIR/$name.stderr"
  local rc=$?
  echo "$rc" >"$OUT_DIR/$name.rc"
  echo $((SECONDS - t0)) >"$OUT_DIR/$name.seconds"
  tail -n 1 "$OUT_DIR/$name.stdout" >"$OUT_DIR/$name.json"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then say "$name: timed out after $limit s"; else say "$name: exit $rc ($((SECONDS - t0)) s)"; fi
}
# probe NAME TIMEOUT FLAGS... : a compiled probe, or a .missing note when it was not built.
probe() {
  local name=$1 limit=$2; shift 2
  if [ -x "$BIN/probe-$name" ]; then
    run "$name" "$limit" "$BIN/probe-$name" "$@"
  else
    local why="probe-$name was not built (see $OUT_DIR/build.log)"
    if ! $build_ok; then why="probe-$name was not built: configuring the probes failed (see $OUT_DIR/build.log)"; fi
    if grep -q "CUDA toolkit headers not found" "$OUT_DIR/build.log" 2>/dev/null; then
      why="probe-$name was not built: CMake found no CUDA toolkit"
    fi
    [ -d "probes/$name" ] || why="probes/$name does not exist in this tree"
    echo "$why" >"$OUT_DIR/$name.missing"
    say "$name: missing ($why)"
  fi
}

probe cuda 60
probe libs 60
probe cudnn 120
# The GEMM probe: correctness on exact operands, then throughput on full-entropy operands whose
# bytes it also writes to OPERANDS_DIR (the torch probe below times torch.matmul on them); the
# datasheet peaks of this GPU from data/gpus.json give the fraction of peak.
peak=$(python3 scripts/gpu_selfcheck_report.py "--peak-flag=$OUT_DIR/cuda.json" 2>/dev/null || true)
ndtypes=$(tr ',' '\n' <<<"$DTYPES" | grep -c .)
gemm_limit=$(awk -v n="$ndtypes" -v s="$SECONDS_TIMED" -v w="$WARMUP_SECONDS" -v t="$TIMING" \
  'BEGIN { l = 120 + 30 * n; if (t == "sustained") l += n * (s + w); printf "%d", l }')
rm -rf "$OPERANDS_DIR" && mkdir -p "$OPERANDS_DIR"
probe gemm "$gemm_limit" "--sizes=$SIZE" "--dtypes=$DTYPES" "--timing=$TIMING" "--seconds=$SECONDS_TIMED" \
  "--warmup-seconds=$WARMUP_SECONDS" "--repeats=$REPEATS" "--dump-operands=$(cd "$OPERANDS_DIR" && pwd)" ${peak:+"$peak"}
probe nccl 180

TORCH_PROBE="$BIN/torch_probe.py"
[ -f "$TORCH_PROBE" ] || TORCH_PROBE=probes/torch/torch_probe.py
if [ -f "$TORCH_PROBE" ]; then
  # The torch probe on the GEMM probe's operand files (identical bytes, checked by CRC-32), with
  # its numbers of warm-up and timed runs and its timing method: the torch side of the
  # comparison (torch.matmul; tf32 through torch.backends.cuda.matmul.allow_tf32; fp8 through
  # torch._scaled_mm).
  run torch "$gemm_limit" "$PYTHON" "$TORCH_PROBE" "--size=$SIZE" "--dtypes=$DTYPES" "--repeats=$REPEATS" \
    "--operands-from=$OUT_ABS/gemm.json" --timeout=120
  rm -rf "$OPERANDS_DIR"
  # NCCL through torch.distributed on as many GPUs as there are (up to 8), one rank each;
  # the run above used Gloo when there are fewer than 2.
  ngpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"].get("device_count") or 0)' \
    "$OUT_DIR/torch.json" 2>/dev/null || echo 0)
  if [ "${ngpu:-0}" -ge 1 ] 2>/dev/null; then
    [ "$ngpu" -le 8 ] || ngpu=8
    run torch-nccl 180 "$PYTHON" "$TORCH_PROBE" --dtypes=none --backend=nccl "--world-size=$ngpu" --timeout=120
  fi
else
  echo "probes/torch/torch_probe.py does not exist in this tree" >"$OUT_DIR/torch.missing"
fi

rm -rf "$OPERANDS_DIR"

# --- Report ------------------------------------------------------------------------------
say "probes done after $((SECONDS - START)) s"
python3 scripts/gpu_selfcheck_report.py "$OUT_ABS" --size="$SIZE" --dtypes="$DTYPES" | tee "$OUT_DIR/report.txt"
exit "${PIPESTATUS[0]}"
