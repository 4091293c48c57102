#!/usr/bin/env bash
# Runs probe-kernels natively on the CUDA toolkit's real libraries and on the nvcc fixtures
# of tests/data/kernels, and checks what it reports against cuobjdump (the PyPI wheel
# nvidia-cuda-cuobjdump; scripts/install-deps.sh installs it), the fixtures' recorded
# listings, and its own contract (flags, missing paths, limits, memory). No GPU needed.
# Usage: kernels_probe_native_test.sh PROBE_DIR
# Env:   CUDA_HOME (default /usr/local/cuda); KERNELS_EXTRA_OBJECTS: more objects (space
#        separated, e.g. a libtorch_cuda.so) to compare with cuobjdump.
set -uo pipefail
PROBES=$(realpath "${1:?usage: $0 PROBE_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
LIB=$CUDA/lib64
WORK=$(mktemp -d /tmp/torchdock-kernels-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0 skip=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
skipped() { echo "skip - $1"; skip=$((skip + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
source "$ROOT/tests/e2e/lib/cuobjdump.sh"

run() {
  local name=$1; shift
  "$PROBES/probe-kernels" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $? >"$WORK/$name.rc"
}
# js NAME 'python expression' over the closing JSON line (j, d = data, rc, obj(path)).
js() {
  python3 - "$WORK/$1.out" "$(cat "$WORK/$1.rc")" "$2" <<'PY'
import json, sys
out, rc, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(out).read().splitlines()
try:
    j = json.loads(lines[-1])
except Exception as e:
    print("    last stdout line is not JSON:", e, lines[-1:] if lines else "(no output)")
    sys.exit(1)
d = j.get("data", {})
def obj(suffix):
    hits = [o for o in d.get("objects", []) if o["path"].endswith(suffix)
            or any(a.endswith(suffix) for a in o["aliases"])]
    return hits[0] if hits else None
try:
    good = bool(eval(expr))
except Exception as e:
    print("    %s: %r" % (type(e).__name__, e))
    good = False
if not good:
    print("    not true:", expr)
    print("    status=%s rc=%d reason=%s" % (j.get("status"), rc, j.get("reason")))
sys.exit(0 if good else 1)
PY
}
contract() {
  js "$1" "j['probe'] == 'kernels' and j['schema'] == 1 and \
    {'pass': 0, 'fail': 1, 'waived': 2, 'error': 3}[j['status']] == rc"
}

# ---- how it is built --------------------------------------------------------------------
bin=$PROBES/probe-kernels
if [ ! -x "$bin" ]; then bad "probe-kernels exists in $PROBES"; echo "$pass passed, $fail failed"; exit 1; fi
source "$ROOT/tests/e2e/lib/glibc_needs.sh"
check "probe-kernels starts on glibc $PROBE_GLIBC_FLOOR (needs GLIBC_$(glibc_newest_needed "$bin"))" \
  glibc_starts_on "$bin" "$PROBE_GLIBC_FLOOR"
check "probe-kernels links neither libstdc++ nor libgcc_s" bash -c '! ldd "$1" | grep -qE "libstdc\+\+|libgcc_s"' _ "$bin"

# ---- the fixtures: nvcc-built objects with cuobjdump's listing recorded beside them -------
FIX=$ROOT/tests/data/kernels
run fixtures "$FIX"/*.o  # by path: a directory walk takes *.so* files only
check "fixtures: contract" contract fixtures
check "fixtures: pass, every fixture listed" js fixtures \
  "j['status'] == 'pass' and len(d['objects']) == $(ls "$FIX"/*.o | wc -l)"
check "fixtures: family.o keeps a and f suffixes" js fixtures \
  "obj('family.o')['sass'] == ['sm_90a', 'sm_100a', 'sm_100f', 'sm_120f'] and \
   [p['arch'] for p in obj('family.o')['ptx']] == ['compute_100f', 'compute_120a']"
check "fixtures: compress_all.o has every entry compressed, compress_none.o none" js fixtures \
  "obj('compress_all.o')['compressed_entries'] == 3 and obj('compress_none.o')['compressed_entries'] == 0"
check "fixtures: embedded.o's container found in .rodata" js fixtures \
  "obj('embedded.o')['embedded']['sections'] == ['.rodata'] and obj('embedded.o')['sass'] == ['sm_75', 'sm_86']"
check "fixtures: rdc.o has relocatable code only, nothing runnable" js fixtures \
  "obj('rdc.o')['relocatable']['containers'] == 1 and obj('rdc.o')['executable'] is None and obj('rdc.o')['sass'] == []"
check "fixtures: plain.o is an ELF object without a fatbin" js fixtures \
  "obj('plain.o')['has_fatbin'] is False and obj('plain.o')['error'] is None"
check "fixtures: multi.o has two containers in two profiles" js fixtures \
  "obj('multi.o')['executable']['containers'] == 2 and len(obj('multi.o')['profiles']) == 2"

# ---- the toolkit's real libraries ---------------------------------------------------------
if [ -d "$LIB" ]; then
  run toolkit "$LIB"
  check "toolkit: contract, pass" contract toolkit
  check "toolkit: libcublasLt carries SASS from sm_75 to sm_120 in .nv_fatbin" js toolkit \
    "{'sm_75', 'sm_80', 'sm_90', 'sm_100', 'sm_120'} <= set(obj('libcublasLt.so')['executable']['sass'])"
  check "toolkit: libcublasLt's .cask_resource kernels found as embedded" js toolkit \
    "obj('libcublasLt.so')['embedded']['sections'] == ['.cask_resource'] and obj('libcublasLt.so')['embedded']['containers'] > 0"
  check "toolkit: libcudart has no fatbin" js toolkit "obj('libcudart.so')['has_fatbin'] is False"
  check "toolkit: one object per file, other names as aliases" js toolkit \
    "len({o['path'] for o in d['objects']}) == len(d['objects']) and \
     any(a.endswith('libcublasLt.so.' + a.split('.so.')[-1]) for a in obj('libcublasLt.so')['aliases'])"
  check "toolkit: no problems, nothing truncated" js toolkit \
    "not d['truncated'] and all(o['problems'] == [] for o in d['objects'])"
  # Memory: the biggest library, streamed with pread: far below the 200 MB goal.
  biggest=$(ls -S "$LIB"/*.so* 2>/dev/null | head -1)
  rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$bin" "$biggest")
  check "toolkit: auditing $(basename "$biggest") ($(($(stat -c %s "$biggest") / 1000000)) MB) peaks at ${rss} kB RSS (< 200 MB)" test "$rss" -lt 204800

  CUOBJDUMP=$(find_cuobjdump)
  if [ -n "$CUOBJDUMP" ]; then
    objects=()
    for pat in 'libcublas.so.[0-9]*' 'libcudnn_ops.so.[0-9]*' 'libcurand.so.[0-9]*' 'libnccl.so.2' \
               'libcufftw.so.[0-9]*' 'libcusparse.so.[0-9]*'; do
      f=$(ls "$LIB"/$pat 2>/dev/null | sort -V | tail -1)
      [ -n "$f" ] && objects+=("$f")
    done
    # shellcheck disable=SC2206
    objects+=(${KERNELS_EXTRA_OBJECTS:-})
    run oracle "${objects[@]}"
    if python3 "$ROOT/tests/e2e/lib/kernels_oracle.py" "$CUOBJDUMP" "$WORK/oracle.out" "${objects[@]}" >"$WORK/oracle.txt"; then
      ok "cuobjdump agrees on ${#objects[@]} objects ($(basename "${objects[0]}") ...)"
    else
      bad "cuobjdump agrees on ${#objects[@]} objects"
    fi
    sed 's/^/    /' "$WORK/oracle.txt"
  else
    skipped "comparison with cuobjdump: none found (pip install nvidia-cuda-cuobjdump)"
  fi
else
  skipped "the toolkit's libraries: $LIB does not exist"
fi

# ---- contract: flags, missing paths, non-ELF files, loops, limits -------------------------
mkdir -p "$WORK/tree/a/b"
printf 'GROUP ( /lib/libc.so.6 )\n' >"$WORK/tree/libscript.so"  # a linker script
cp "$FIX/sass_ptx.o" "$WORK/tree/a/libone.so.1"
cp "$FIX/family.o" "$WORK/tree/a/b/libtwo.so"
ln -s libone.so.1 "$WORK/tree/a/libone.so"
ln -s .. "$WORK/tree/a/b/loop"  # a directory loop the walk must not follow
run tree "$WORK/tree"
check "tree: pass; the linker script counted as not ELF; the symlink is an alias" js tree \
  "j['status'] == 'pass' and d['not_elf'] == 1 and len(d['objects']) == 2 and \
   obj('libone.so')['aliases'] != [] and obj('libtwo.so')['has_fatbin']"
run limited --max-files=1 "$WORK/tree"
check "--max-files=1: one file read, truncated" js limited \
  "len(d['objects']) + d['not_elf'] == 1 and d['truncated']"
run missing /nonexistent/dir
check "only missing paths: waived, exit 2" js missing \
  "j['status'] == 'waived' and rc == 2 and d['roots'][0]['exists'] is False"
run badflag --bogus=1
check "unknown flag: error, exit 3" js badflag "j['status'] == 'error' and rc == 3"
run garbage "$WORK/tree/libscript.so" "$ROOT/README.md"
check "files given by path that are not ELF: pass, not_elf counts them" js garbage \
  "j['status'] == 'pass' and d['not_elf'] == 2 and d['objects'] == []"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
