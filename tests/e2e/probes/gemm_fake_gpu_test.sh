#!/usr/bin/env bash
# probe-gemm's GPU code path without a GPU: a pretend GPU on the CPU (fake_gpu/fake_gpu.cpp,
# built here as libcudart/libcuda/libcublas/libcublasLt/libnvidia-ml) runs its GEMMs, so the
# two parts of a run (exact correctness operands at a smaller shape, timing on full-entropy
# operands), the short and sustained timing loops, the operand files and CRC-32s, the clock
# readings and the JSON fields are all exercised. Figures are the CPU's, not a GPU's: only
# what the probe reports about them is checked.
# Usage: gemm_fake_gpu_test.sh PROBE_DIR      Exit 77 (skip) without g++ or the CUDA headers.
set -uo pipefail
DIR=$(cd "${1:?usage: $0 PROBE_DIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
CUDA_INCLUDE=${CUDA_HOME:-/usr/local/cuda}/include
CXX=${CXX:-g++}
WORK=$(mktemp -d /tmp/torchdock-gemm-fake-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

[ -x "$DIR/probe-gemm" ] || { echo "# SKIP: no $DIR/probe-gemm"; exit 77; }
command -v "$CXX" >/dev/null || { echo "# SKIP: no C++ compiler ($CXX) for the fake GPU"; exit 77; }
[ -f "$CUDA_INCLUDE/cublasLt.h" ] || { echo "# SKIP: no CUDA headers in $CUDA_INCLUDE"; exit 77; }
FAKE="$WORK/fake"
mkdir -p "$FAKE" "$WORK/ops"
if ! "$CXX" -std=c++17 -O2 -shared -fPIC -I"$CUDA_INCLUDE" -I"$ROOT/probes/gemm" \
    "$HERE/fake_gpu/fake_gpu.cpp" -o "$FAKE/libfakegpu.so" 2>"$WORK/build.log"; then
    cat "$WORK/build.log"
    bad "fake GPU library builds"
    exit 1
fi
for so in libcudart.so.13 libcuda.so.1 libcublas.so.13 libcublasLt.so.13 libnvidia-ml.so.1; do
    ln -s libfakegpu.so "$FAKE/$so"
done

# run NAME [ENV=VALUE...] -- FLAGS...: probe-gemm on the fake GPU.
run() {
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    env LD_LIBRARY_PATH="$FAKE" "${envs[@]}" timeout 300 "$DIR/probe-gemm" "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.rc"
}
# js NAME 'python expression': j = the closing JSON, d = its data, R = d["results"],
# by = {(dtype, m): result}, rc = exit code, os, zlib, struct importable.
js() {
    python3 - "$WORK/$1.out" "$(cat "$WORK/$1.rc")" "$2" <<'PY'
import json, math, os, struct, sys, zlib
out, rc, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = [l for l in open(out).read().splitlines() if l.strip()]
try:
    j = json.loads(lines[-1])
except Exception as e:
    print("#   last stdout line is not JSON:", e, lines[-1:] if lines else "(no output)")
    sys.exit(1)
d = j.get("data") or {}
R = d.get("results") or []
by = {(r["dtype"], r["m"]): r for r in R}
def crc(path):
    return "crc32:%08x" % zlib.crc32(open(path, "rb").read())
try:
    good = eval("(" + expr + "\n)")
except Exception as e:
    good = False
    print("#   %s: %s" % (type(e).__name__, e))
if not good:
    print("#   rc=%d %s" % (rc, lines[-1][:1500]))
sys.exit(0 if good else 1)
PY
}

# ---- short timing, two shapes, operands written --------------------------------------------
run short -- --timing=short --sizes=64,48x32x64 --check-max=32 --repeats=3 --warmup=1 \
    --dump-operands="$WORK/ops" --peak-tflops=bf16:989.5,fp8:1979
check "short: pass, exit 0, ten results" js short 'j["status"] == "pass" and rc == 0 and len(R) == 10'
check "short: device with its PCI bus id, NVML found" js short \
    'd["device"]["pci_bus_id"] == "0000:07:00.0" and d["nvml"]["error"] is None'
check "short: top level names the timing and the operands" js short \
    'd["timing"]["mode"] == "short" and d["timing"]["repeats"] == 3 and "back-to-back" in d["timing"]["method"]
     and d["operands"] == {"timing": "uniform(-1,1)", "check": "exact small integers", "check_max": 32}'
check "short: correctness on exact operands at the smaller shape" js short \
    'all(r["correct"] is True and r["check"]["correct"] is True and (r["check"]["m"], r["check"]["n"], r["check"]["k"]) == (32, 32, 64)
         and r["max_abs_err"] == r["check"]["max_abs_err"] and "exact in" in r["check"]["operands"] for r in R)'
check "short: throughput on uniform(-1,1) operands at the requested shape, its output checked" js short \
    'all(r["operands"]["distribution"] == "uniform(-1,1)" and (r["timed_check"]["m"], r["timed_check"]["k"]) == (r["m"], 64)
         and r["timed_check"]["correct"] is True and "sqrt(K)" in r["timed_check"]["rule"] for r in R)'
check "short: exact counts, median figure" js short \
    'all(r["timing"]["mode"] == "short" and r["timing"]["timed_runs"] == 3 == r["repeats"] and r["timing"]["warmup_runs"] == 2
         and r["tflops_median"] > 0 and r["timing"]["ms_median"] > 0 for r in R)'
check "short: fraction of peak where a peak was given" js short \
    'abs(by[("bf16", 64)]["fraction_of_peak"] * 989.5 / by[("bf16", 64)]["tflops_median"] - 1) < 1e-4
     and by[("bf16", 64)]["peak_tflops"] == 989.5 and by[("fp16", 64)]["fraction_of_peak"] is None'
check "short: clocks from NVML, start and end" js short \
    'all(r["clocks"]["source"] == "nvml" and r["clocks"]["start"]["sm_mhz"] > 0 and r["clocks"]["end"]["power_w"] == 699.5
         and r["clocks"]["power_limit_w"] == 700 and r["clocks"]["end"]["reasons"] == ["sw_power_cap"]
         and r["clocks_unavailable"] is None for r in R)'
check "short: full-entropy operands (entropy, distinct values, zeros)" js short \
    'all(r["operands"]["a"]["entropy_bits"] >= {"f32": r["operands"]["a"]["max_entropy_bits"] - 0.1, "f16": 10.5,
                                                 "bf16": 9.0, "e4m3": 5.5}[r["operands"]["format"]]
         and r["operands"]["b"]["zero_fraction"] < 0.01 and r["operands"]["a"]["bit_entropy"] > 0.6 for r in R)'
check "short: operand files hold what the CRC-32 says, sized M*K and N*K" js short \
    'all(crc(r["operands"][s]["file"]) == r["operands"][s]["crc32"] for r in R for s in "ab")
     and all(os.path.getsize(r["operands"]["a"]["file"]) == r["m"] * r["k"] * {"f32": 4, "f16": 2, "bf16": 2, "e4m3": 1}[r["operands"]["format"]] for r in R)'
check "short: fp32 and tf32 time the same bytes" js short \
    'by[("fp32", 64)]["operands"]["a"]["file"] == by[("tf32", 64)]["operands"]["a"]["file"]
     and by[("fp32", 64)]["operands"]["b"]["crc32"] == by[("tf32", 64)]["operands"]["b"]["crc32"]'
check "short: fp32 operand bytes are uniform(-1,1) multiples of 2^-23" js short \
    'all(-1 <= x < 1 and x * 2**23 == int(x * 2**23) for x in struct.unpack("<4096f", open(by[("fp32", 64)]["operands"]["a"]["file"], "rb").read()))'

# ---- sustained timing ------------------------------------------------------------------------
run sustained -- --sizes=32 --dtypes=bf16,fp8 --seconds=0.4 --warmup-seconds=0.1
check "sustained: pass" js sustained 'j["status"] == "pass" and len(R) == 2'
check "sustained: timed for the duration, at least 20 GEMMs, halves reported" js sustained \
    'all(r["timing"]["mode"] == "sustained" and r["timing"]["timed_s"] >= 0.4 and r["timing"]["timed_runs"] >= 20
         and r["timing"]["warmup_s"] >= 0.1 and r["timing"]["tflops_first_half"] > 0 and r["timing"]["tflops_last_half"] > 0 for r in R)'
check "sustained: clock samples over the run, min and max" js sustained \
    'all(r["clocks"]["samples"] >= 2 and r["clocks"]["sm_mhz_min"] <= r["clocks"]["sm_mhz_max"] for r in R)
     and d["timing"]["seconds"] == 0.4 and d["timing"]["warmup_seconds"] == 0.1'
check "sustained: no files without --dump-operands" js sustained \
    'all(r["operands"]["a"]["file"] is None and r["operands"]["a"]["crc32"] is None for r in R)'

# ---- a wrong GEMM, no NVML device, no fp8 -----------------------------------------------------
run wrong FAKE_GPU_WRONG=1 -- --timing=short --sizes=64 --dtypes=bf16 --repeats=2
check "wrong result: fail (1), the exact check names it" js wrong \
    'j["status"] == "fail" and rc == 1 and "exact operands" in j["reason"] and R[0]["correct"] is False'
run nonvml FAKE_GPU_NO_NVML_DEVICE=1 FAKE_GPU_CC=8.0 -- --timing=short --sizes=64 --dtypes=bf16,fp8 --repeats=2
check "no NVML device: clocks null with the reason, still pass" js nonvml \
    'j["status"] == "pass" and R[0]["clocks"] is None and "nvmlDeviceGetHandleByPciBusId_v2" in R[0]["clocks_unavailable"]
     and d["nvml"]["error"] == R[0]["clocks_unavailable"]'
check "cc 8.0: fp8 skipped with the reason" js nonvml \
    'len(R) == 1 and d["skipped"][0]["dtype"] == "fp8" and "8.9" in d["skipped"][0]["reason"]'
rm "$FAKE/libnvidia-ml.so.1"
run nolib -- --timing=short --sizes=64 --dtypes=bf16 --repeats=2
check "no libnvidia-ml: clocks null with a reason" js nolib \
    'j["status"] == "pass" and R[0]["clocks"] is None and R[0]["clocks_unavailable"]'

# ---- flags -------------------------------------------------------------------------------------
run badtiming -- --timing=burst
check "--timing=burst: error (3)" js badtiming 'j["status"] == "error" and rc == 3 and "--timing" in j["reason"]'
run badseconds -- --seconds=0
check "--seconds=0: error (3)" js badseconds 'j["status"] == "error" and rc == 3 and "--seconds" in j["reason"]'
run baddump -- --timing=short --sizes=64 --dtypes=bf16 --dump-operands="$WORK/missing/dir"
check "unwritable --dump-operands: error (3) naming the file" js baddump \
    'j["status"] == "error" and rc == 3 and "cannot write" in j["reason"]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
