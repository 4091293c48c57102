#!/usr/bin/env bash
# Runs the cuda, gemm and cudnn probes natively (no container) and checks what they report
# against the machine: without a GPU they must waive for the right reason and still report
# the library versions; with one (nvidia-smi lists a GPU) they must pass. Also checks how
# the probes are built: no CUDA library or libstdc++ linked, glibc versions <= GLIBC_2.17.
# Usage: gpu_probes_native_test.sh PROBE_DIR        (e.g. build/dev/libexec/torchdock/probes)
# Env:   CUDNN_VERSION_HEADER  cudnn_version.h of the cuDNN the probes load
#                              (default: /usr/local/cuda/include/cudnn_version.h)
#        CUDNN_BUILD_HEADER    cudnn_version.h the probes were compiled with
#                              (default: CUDNN_VERSION_HEADER)
set -uo pipefail
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 PROBE_DIR" >&2
    exit 2
fi
DIR=$(cd "$1" && pwd)
WORK=$(mktemp -d /tmp/torchdock-gpu-probes-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
HEADER=${CUDNN_VERSION_HEADER:-/usr/local/cuda/include/cudnn_version.h}
BUILD_HEADER=${CUDNN_BUILD_HEADER:-$HEADER}
source "$(dirname "$0")/../lib/glibc_needs.sh"
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then GPU=1; else GPU=0; fi
echo "# GPU present: $([ $GPU = 1 ] && echo yes || echo no)"

# run NAME ARGS...: runs probe-NAME, keeping stdout, stderr and the exit code in $WORK/NAME.*
run() {
    local name=$1; shift
    timeout 600 "$DIR/probe-$name" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.rc"
}
# expect NAME PYTHON-EXPR: evaluates the expression with j = the last stdout line parsed as
# JSON, d = j["data"], rc = the exit code, gpu = whether a GPU is present; prints why if false.
expect() {
    local name=$1 expr=$2
    python3 - "$WORK/$name.out" "$WORK/$name.rc" "$GPU" "$expr" <<'PY'
import json, sys
out, rc_file, gpu, expr = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
lines = [l for l in open(out).read().splitlines() if l.strip()]
try:
    j = json.loads(lines[-1])
except Exception as e:
    print(f"#   last stdout line is not JSON: {e}: {lines[-1] if lines else '(no output)'}")
    sys.exit(1)
d = j.get("data") or {}
rc = int(open(rc_file).read())
try:
    good = eval("(" + expr + "\n)", {"j": j, "d": d, "rc": rc, "gpu": gpu})  # parenthesised: may span lines
except Exception as e:
    good = False
    print(f"#   {type(e).__name__}: {e}")
if not good:
    print(f"#   rc={rc} {lines[-1][:1500]}")
sys.exit(0 if good else 1)
PY
}
# the contract: status and exit code agree
CONTRACT='j.get("schema") == 1 and j.get("status") in ("pass","fail","waived","error") and rc == {"pass":0,"fail":1,"waived":2,"error":3}[j["status"]]'

# ---- how the probes are built ----------------------------------------------------------------
for p in cuda gemm cudnn; do
    bin="$DIR/probe-$p"
    if [ ! -x "$bin" ]; then bad "probe-$p exists"; continue; fi
    ok "probe-$p exists"
    check "probe-$p starts on glibc $PROBE_GLIBC_FLOOR (needs GLIBC_$(glibc_newest_needed "$bin"))" \
        glibc_starts_on "$bin" "$PROBE_GLIBC_FLOOR"
    libs=$(ldd "$bin" 2>&1)
    check "probe-$p does not link libstdc++ or libgcc_s" bash -c '! grep -qE "libstdc\+\+|libgcc_s" <<<"$1"' _ "$libs"
    check "probe-$p links no CUDA library (it dlopens them)" \
        bash -c '! grep -qE "libcuda\.|libcudart|libcublas|libcudnn" <<<"$1"' _ "$libs"
done

# ---- probe-cuda --------------------------------------------------------------------------------
run cuda
check "cuda: JSON last line, status matches exit code" expect cuda "$CONTRACT"
check "cuda: probe name and runtime version" expect cuda 'j["probe"] == "cuda" and d["runtime_version"] > 0 and d["runtime_library"]'
if [ $GPU = 1 ]; then
    check "cuda: GPU present -> pass with devices" expect cuda \
        'j["status"] == "pass" and d["device_count"] >= 1 and len(d["devices"]) == d["device_count"] and d["error"] is None
         and all(x["name"] and x["cc"] and x["memory_bytes"] > 0 and x["multiprocessors"] > 0 for x in d["devices"])
         and d["driver_version"] and d["nvidia_driver"]'
else
    check "cuda: no GPU -> waived, error.class insufficient_driver or no_driver" expect cuda \
        'j["status"] == "waived" and j["reason"] and d["device_count"] == 0 and d["devices"] == []
         and d["error"]["class"] in ("insufficient_driver", "no_driver") and d["error"]["code"] > 0'
fi
echo "# $(tail -n1 "$WORK/cuda.out" | cut -c1-400)"

# ---- probe-cudnn -------------------------------------------------------------------------------
run cudnn
check "cudnn: JSON last line, status matches exit code" expect cudnn "$CONTRACT"
# cudnn_version.h -> "VERSION MAJOR.MINOR.PATCH" (cuDNN 9 encodes 9.1.0 as 90100, 8 as 8907)
header_version() {
    awk '/#define CUDNN_MAJOR /{a=$3} /#define CUDNN_MINOR /{b=$3} /#define CUDNN_PATCHLEVEL /{c=$3}
         END{v = (a >= 9) ? a*10000 + b*100 + c : a*1000 + b*100 + c; print v, a "." b "." c}' "$1"
}
if [ -f "$HEADER" ]; then
    read -r want want_s < <(header_version "$HEADER")
    check "cudnn: version $want ($want_s, from $HEADER)" expect cudnn \
        "d['version'] == $want and d['version_string'] == '$want_s'"
else
    ok "cudnn: version check # SKIP no $HEADER"
fi
if [ -f "$BUILD_HEADER" ]; then
    read -r built built_s < <(header_version "$BUILD_HEADER")
    check "cudnn: header_version is the build's headers ($built, $BUILD_HEADER)" expect cudnn "d['header_version'] == $built"
else
    ok "cudnn: header_version check # SKIP no $BUILD_HEADER"
fi
check "cudnn: cudart_version non-zero, library path" expect cudnn 'd["cudart_version"] > 0 and d["library"]'
if [ $GPU = 1 ]; then
    check "cudnn: GPU present -> pass, convolution correct" expect cudnn \
        'j["status"] == "pass" and d["conv"]["correct"] is True and d["conv"]["max_abs_err"] <= d["conv"]["tolerance"]'
else
    check "cudnn: no GPU -> waived with a reason, conv null" expect cudnn \
        'j["status"] == "waived" and j["reason"] and d["conv"] is None and d["error"]["class"] in ("insufficient_driver", "no_driver")'
fi
echo "# $(tail -n1 "$WORK/cudnn.out" | cut -c1-400)"

# ---- probe-gemm --------------------------------------------------------------------------------
# Small sizes keep the run short on a GPU; 1000 is no multiple of 16, so fp8 may be skipped.
run gemm --sizes=1024,512x256x2048,1000 --timing=short --repeats=3 --warmup=1 --check-max=512 \
    --peak-tflops=bf16:989,fp16:989,tf32:494,fp32:67,fp8:1979
check "gemm: JSON last line, status matches exit code" expect gemm "$CONTRACT"
check "gemm: library reported" expect gemm 'j["probe"] == "gemm" and d["library"]'
check "gemm: timing mode and operands named" expect gemm \
    'd["timing"]["mode"] == "short" and d["timing"]["repeats"] == 3 and d["operands"]["timing"] == "uniform(-1,1)"'
if [ $GPU = 1 ]; then
    check "gemm: GPU present -> pass, every run correct" expect gemm \
        'j["status"] == "pass" and len(d["results"]) >= 12
         and all(r["correct"] is True and r["max_abs_err"] <= r["tolerance"] and r["tflops_median"] > 0 and r["repeats"] == 3 for r in d["results"])
         and all(r["fraction_of_peak"] is not None for r in d["results"])'
    check "gemm: correctness on exact operands at most 512x512, throughput on uniform(-1,1) operands" expect gemm \
        'all(r["check"]["correct"] is True and r["check"]["m"] <= 512 and r["check"]["n"] <= 512 and r["check"]["k"] == r["k"]
             and r["timed_check"]["correct"] is True and r["operands"]["distribution"] == "uniform(-1,1)"
             and r["operands"]["a"]["entropy_bits"] > 5 and r["timing"]["mode"] == "short" for r in d["results"])'
    check "gemm: clocks read through NVML, or null with the reason" expect gemm \
        'all((r["clocks"] is not None and r["clocks"]["samples"] >= 1 and r["clocks_unavailable"] is None)
             or (r["clocks"] is None and r["clocks_unavailable"]) for r in d["results"])'
    check "gemm: fp32, tf32, fp16, bf16 all ran" expect gemm \
        '{"fp32","tf32","fp16","bf16"} <= {r["dtype"] for r in d["results"]}'
    check "gemm: fp8 ran where cc >= 8.9, else skipped" expect gemm \
        '(any(r["dtype"] == "fp8" for r in d["results"]) if tuple(map(int, d["device"]["cc"].split("."))) >= (8, 9)
          else all(s["dtype"] == "fp8" for s in d["skipped"]))'
else
    check "gemm: no GPU -> waived with a reason, no results" expect gemm \
        'j["status"] == "waived" and j["reason"] and d["results"] == [] and d["device"] is None
         and d["error"]["class"] in ("insufficient_driver", "no_driver")'
fi
echo "# $(tail -n1 "$WORK/gemm.out" | cut -c1-400)"

run gemm --dtypes=fp64
check "gemm: unknown dtype -> error (3)" expect gemm 'j["status"] == "error" and rc == 3 and "fp64" in j["reason"]'
run gemm --sizes=12x3
check "gemm: bad size -> error (3)" expect gemm 'j["status"] == "error" and rc == 3'
run gemm --timing=burst
check "gemm: bad timing -> error (3)" expect gemm 'j["status"] == "error" and rc == 3 and "--timing" in j["reason"]'
run cuda --bogus
check "cuda: unknown flag -> error (3)" expect cuda 'j["status"] == "error" and rc == 3'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
