#!/usr/bin/env bash
# Runs probe-nccl and probe-libs natively on this machine and checks what they report
# against the toolkit headers, the real loader (ldd, ldconfig -p) and small fixtures built
# here with gcc. Works with or without a GPU. Usage: host_probes_native_test.sh PROBE_DIR
set -uo pipefail
PROBES=$(realpath "${1:?usage: $0 PROBE_DIR}")
CUDA=${CUDA_HOME:-/usr/local/cuda}
WORK=$(mktemp -d /tmp/torchdock-probes-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; fail=$((fail + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

# run NAME PROBE [ARGS...]: stdout, stderr and exit code of one probe run into $WORK/NAME.*
run() {
  local name=$1 probe=$2; shift 2
  "$PROBES/$probe" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $? >"$WORK/$name.rc"
}
rc() { cat "$WORK/$1.rc"; }
# js NAME 'python expression': true when the expression holds for the run's closing JSON
# line (j: the object, d: its data, rc: the exit code, env: os.environ). Prints why not.
js() {
  python3 - "$WORK/$1.out" "$(rc "$1")" "$2" <<'PY'
import json, os, sys
out, rc, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(out).read().splitlines()
try:
    j = json.loads(lines[-1])
except Exception as e:
    print("    last stdout line is not JSON:", e, lines[-1:] if lines else "(no output)")
    sys.exit(1)
d, env = j.get("data", {}), os.environ
try:
    ok = eval(expr)
except Exception as e:
    print("    %s: %r" % (type(e).__name__, e))
    ok = False
if not ok:
    print("    not true:", expr)
    print("    status=%s rc=%d reason=%s" % (j.get("status"), rc, j.get("reason")))
sys.exit(0 if ok else 1)
PY
}
# contract: one JSON object on the last stdout line, schema 1, status and exit code agree
contract() {
  js "$1" "j['probe'] == '$2' and j['schema'] == 1 and \
    {'pass': 0, 'fail': 1, 'waived': 2, 'error': 3}[j['status']] == rc"
}

have_gpu=0
[ -e /proc/driver/nvidia/version ] && [ -e /dev/nvidiactl ] && have_gpu=1

# ---- probe-nccl -------------------------------------------------------------------------
hdr=$CUDA/include/nccl.h
want=$(awk '/^#define NCCL_MAJOR /{a=$3} /^#define NCCL_MINOR /{b=$3} /^#define NCCL_PATCH /{c=$3}
            END {if (a != "") print a "." b "." c}' "$hdr" 2>/dev/null)
check "nccl.h defines NCCL_MAJOR/MINOR/PATCH ($want)" test -n "$want"
export WANT_NCCL=$want
LD_LIBRARY_PATH=$CUDA/lib64 run nccl probe-nccl --sizes=8,64K,1M --iters=5 --warmup=2
check "probe-nccl: closing line follows the contract" contract nccl nccl
check "probe-nccl: version equals nccl.h's" js nccl "d['version'] == env['WANT_NCCL']"
check "probe-nccl: library is libnccl.so.2" js nccl "d['soname'] == 'libnccl.so.2' and d['library']"
if [ $have_gpu = 0 ]; then
  check "probe-nccl: no GPU -> waived with the CUDA error" js nccl "j['status'] == 'waived' and rc == 2 and \
    j['reason'] == 'no usable GPU: %s (%d)' % (d['error']['name'], d['error']['code']) and \
    d['error']['name'].startswith('cudaError') and d['single_process'] == [] and d['multi_process'] == []"
  check "probe-nccl: no driver here -> cudaErrorInsufficientDriver (35)" js nccl \
    "j['reason'] == 'no usable GPU: cudaErrorInsufficientDriver (35)' and d['error']['class'] in ('no_driver', 'insufficient_driver')"
else
  check "probe-nccl: GPU -> pass, every all-reduce exact" js nccl "j['status'] == 'pass' and \
    len(d['single_process']) == 9 and all(e['correct'] for e in d['single_process'] + d['multi_process'])"
fi
# The watchdog: a stage that never ends -> fail, "(hang)", children killed, quick exit.
start=$(date +%s)
LD_LIBRARY_PATH=$CUDA/lib64 run hang probe-nccl --test-hang=query --timeout=1
took=$(( $(date +%s) - start ))
check "probe-nccl --test-hang: closing line follows the contract" contract hang nccl
check "probe-nccl --test-hang: fail with the hang reason" js hang "j['status'] == 'fail' and \
  j['reason'] == 'CUDA initialisation (cudaGetDeviceCount) did not complete within 1 s (hang)' and \
  d['hang']['stage'] == 'cudaGetDeviceCount' and d['version'] == env['WANT_NCCL']"
check "probe-nccl --test-hang: exits within seconds ($took s)" test "$took" -le 10
sleep 0.3
left=$(pgrep -f -- "--test-hang=query --timeout=1" || true)
check "probe-nccl --test-hang: no child left behind" test -z "$left"
for p in $left; do kill -9 "$p" 2>/dev/null; done
run badflag probe-nccl --sizes=12Q
check "probe-nccl: a bad size is an error (exit 3)" js badflag "j['status'] == 'error' and rc == 3 and '12Q' in j['reason']"
run baddtype probe-nccl --dtypes=float64
check "probe-nccl: an unknown dtype is an error (exit 3)" js baddtype "j['status'] == 'error' and rc == 3"

# ---- probe-libs: the CUDA 13 toolkit through LD_LIBRARY_PATH ------------------------------
LD_LIBRARY_PATH=$CUDA/lib64 run cuda probe-libs
check "probe-libs: closing line follows the contract" contract cuda libs
check "probe-libs: CUDA 13 libraries resolve -> pass" js cuda "j['status'] == 'pass' and rc == 0 and d['unresolved'] == []"
check "probe-libs: cudart, cublas, cublasLt, cudnn, nccl found via LD_LIBRARY_PATH" js cuda "all(any( \
    l['soname'] == s and l['path'] == '$CUDA/lib64/' + s and l['found_via'] == 'LD_LIBRARY_PATH' for l in d['libraries']) \
    for s in ('libcudart.so.13', 'libcublas.so.13', 'libcublasLt.so.13', 'libcudnn.so.9', 'libnccl.so.2'))"
check "probe-libs: cuDNN 9 sub-libraries are roots" js cuda \
  "{'libcudnn_ops.so.9', 'libcudnn_graph.so.9', 'libcudnn_cnn.so.9'} <= {r['soname'] for r in d['roots']}"
check "probe-libs: search order reported" js cuda \
  "[s['kind'] for s in d['search']] == ['rpath', 'LD_LIBRARY_PATH', 'runpath', 'ld.so.cache', 'default'] and \
   d['search'][1]['dirs'] == ['$CUDA/lib64'] and d['search'][3]['loaded']"

# Every direct dependency of a CUDA root resolves where the real loader (ldd) puts it.
ldd_ok=1
python3 - "$WORK/cuda.out" >"$WORK/pairs" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])["data"]
roots = {r["path"] for r in d["roots"]}
for l in d["libraries"]:
    if l["needed_by"] in roots and l["found_via"] != "rtld":
        print(l["needed_by"], l["soname"], l["path"])
PY
while read -r root soname path; do
  got=$(LD_LIBRARY_PATH=$CUDA/lib64 ldd "$root" 2>/dev/null | awk -v s="$soname" '$1 == s && $2 == "=>" {print $3; exit}')
  if [ "$got" != "$path" ]; then echo "    $root: $soname -> probe $path, ldd $got"; ldd_ok=0; fi
done <"$WORK/pairs"
check "probe-libs: $(wc -l <"$WORK/pairs") direct dependencies agree with ldd" test "$ldd_ok" = 1 -a -s "$WORK/pairs"

# What the probe read from /etc/ld.so.cache is what ldconfig -p prints.
ldconfig -p >"$WORK/ldconfig" 2>/dev/null
cache_ok=1 cache_n=0
python3 - "$WORK/cuda.out" >"$WORK/cached" <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])["data"]
for l in d["libraries"]:
    if l["found_via"] == "ld.so.cache":
        print(l["soname"], l["path"])
PY
while read -r soname path; do
  cache_n=$((cache_n + 1))
  got=$(awk -v s="$soname" '$1 == s && $2 == "(libc6,x86-64)" {print $4; exit}' "$WORK/ldconfig")
  if [ "$got" != "$path" ]; then echo "    $soname: probe $path, ldconfig -p $got"; cache_ok=0; fi
done <"$WORK/cached"
check "probe-libs: $cache_n ld.so.cache look-ups agree with ldconfig -p" test "$cache_ok" = 1 -a "$cache_n" -gt 0

# ---- fixtures --------------------------------------------------------------------------------
F=$WORK/fx
mkdir -p "$F/missing" "$F/a" "$F/b" "$F/rp" "$F/llp" "$F/cache"
cc() { gcc -shared -fPIC "$@" 2>>"$WORK/gcc.log"; }

# 1. A DT_NEEDED that does not exist anywhere.
echo 'int tdmissing(void) { return 7; }' >"$F/missing/m.c"
echo 'int tdmissing(void); int tdroot(void) { return tdmissing(); }' >"$F/missing/r.c"
cc -Wl,-soname,libtdmissing.so.7 -o "$F/missing/libtdmissing.so.7" "$F/missing/m.c"
cc -o "$F/missing/libtdroot.so" "$F/missing/r.c" -L"$F/missing" -l:libtdmissing.so.7
rm -f "$F/missing/libtdmissing.so.7"
check "fixture: libtdroot.so needs libtdmissing.so.7" sh -c "readelf -d '$F/missing/libtdroot.so' | grep -q 'NEEDED.*libtdmissing.so.7'"
export FX=$F
LD_LIBRARY_PATH=$CUDA/lib64 run missing probe-libs --roots="$F/missing/libtdroot.so"
check "probe-libs --roots (missing soname): contract" contract missing libs
check "probe-libs --roots (missing soname): fail, exit 1" js missing "j['status'] == 'fail' and rc == 1"
check "probe-libs --roots (missing soname): named in unresolved" js missing \
  "{'soname': 'libtdmissing.so.7', 'needed_by': env['FX'] + '/missing/libtdroot.so'} in \
   [{k: u[k] for k in ('soname', 'needed_by')} for u in d['unresolved']]"
check "probe-libs --roots (missing soname): reason names it and who needs it" js missing \
  "j['reason'] == 'libtdmissing.so.7 needed by ' + env['FX'] + '/missing/libtdroot.so cannot be found'"

# 1b. The same root read with another machine's loader (--machine, the static tier of an
# arm64 image): this host's object is skipped as ld.so would skip it, nothing is resolved
# through this host's directories, and no version is asked by loading.
other=aarch64; [ "$(uname -m)" = aarch64 ] && other=x86_64
LD_LIBRARY_PATH=$CUDA/lib64 run foreign probe-libs --machine=$other --roots="$F/missing/libtdroot.so"
check "probe-libs --machine=$other (a $(uname -m) root): an error naming the machine" js foreign \
  "j['status'] == 'error' and 'is not the loader' in j['reason']"
LD_LIBRARY_PATH=$CUDA/lib64 run foreign2 probe-libs --machine=$other
check "probe-libs --machine=$other: reports the machine and the $other default directories" js foreign2 \
  "d['machine'] == '$other' and d['hwcaps'] == [] and \
   any(s.get('kind') == 'default' and '/lib/$other-linux-gnu' in s.get('dirs', []) for s in d['search'])"
run badmachine probe-libs --machine=sparc
check "probe-libs --machine=sparc: error, names what is accepted" js badmachine \
  "j['status'] == 'error' and 'x86_64 or aarch64' in j['reason']"

# 2. Two copies of a fake libcudnn.so.9 in two LD_LIBRARY_PATH dirs.
echo 'int cudnnGetVersion(void) { return 90100; }' >"$F/a/c.c"
cc -Wl,-soname,libcudnn.so.9 -o "$F/a/libcudnn.so.9" "$F/a/c.c"
cc -Wl,-soname,libcudnn.so.9 -o "$F/b/libcudnn.so.9.1.0" "$F/a/c.c"
ln -s libcudnn.so.9.1.0 "$F/b/libcudnn.so.9"
LD_LIBRARY_PATH=$F/a:$F/b run dups probe-libs
check "probe-libs (two libcudnn.so.9): contract" contract dups libs
check "probe-libs (two libcudnn.so.9): duplicates lists both copies" js dups \
  "any(x['name'] == 'cudnn' and {env['FX'] + '/a/libcudnn.so.9', env['FX'] + '/b/libcudnn.so.9.1.0'} <= \
       {c['path'] for c in x['copies']} for x in d['duplicates'])"
check "probe-libs (two libcudnn.so.9): versions from the file names" js dups \
  "[(c['path'].split('/')[-2], c['version']) for x in d['duplicates'] if x['name'] == 'cudnn' \
    for c in x['copies'] if c['path'].startswith(env['FX'])] == [('a', '9'), ('b', '9.1.0')]"
check "probe-libs (two libcudnn.so.9): the first LD_LIBRARY_PATH copy is the root" js dups \
  "any(r['path'] == env['FX'] + '/a/libcudnn.so.9' and r['found_via'] == 'LD_LIBRARY_PATH' for r in d['roots']) and \
   not any(r['path'].startswith(env['FX'] + '/b/') for r in d['roots'])"
check "probe-libs (two libcudnn.so.9): duplicates are no failure" js dups "j['status'] == 'pass'"

# 3. DT_RPATH before LD_LIBRARY_PATH, DT_RUNPATH after it; $ORIGIN expanded.
echo 'int tddep(void) { return 1; }' >"$F/rp/d.c"
cc -Wl,-soname,libtddep.so.1 -o "$F/rp/libtddep.so.1" "$F/rp/d.c"
cc -Wl,-soname,libtddep.so.1 -o "$F/llp/libtddep.so.1" "$F/rp/d.c"
echo 'int tddep(void); int tduse(void) { return tddep(); }' >"$F/u.c"
cc -o "$F/libtdrunpath.so" "$F/u.c" -L"$F/rp" -l:libtddep.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/rp'
cc -o "$F/libtdrpath.so" "$F/u.c" -L"$F/rp" -l:libtddep.so.1 -Wl,--disable-new-dtags,-rpath,'$ORIGIN/rp'
check "fixture: RUNPATH and RPATH objects" sh -c "readelf -d '$F/libtdrunpath.so' | grep -q RUNPATH && readelf -d '$F/libtdrpath.so' | grep -q '(RPATH)'"
LD_LIBRARY_PATH=$F/llp run order probe-libs --roots="$F/libtdrunpath.so,$F/libtdrpath.so"
LD_LIBRARY_PATH= run order2 probe-libs --roots="$F/libtdrunpath.so"
# dep SONAME NEEDER PATH VIA (paths below $F): the expression "NEEDER's SONAME is PATH, found via VIA"
dep() { echo "any(l['soname'] == '$1' and l['needed_by'] == env['FX'] + '/$2' and \
  l['path'] == env['FX'] + '/$3' and l['found_via'] == '$4' for l in d['libraries'])"; }
check "probe-libs: DT_RPATH wins over LD_LIBRARY_PATH" js order "$(dep libtddep.so.1 libtdrpath.so rp/libtddep.so.1 rpath)"
check "probe-libs: LD_LIBRARY_PATH wins over DT_RUNPATH" js order "$(dep libtddep.so.1 libtdrunpath.so llp/libtddep.so.1 LD_LIBRARY_PATH)"
check "probe-libs: DT_RUNPATH with \$ORIGIN" js order2 "$(dep libtddep.so.1 libtdrunpath.so rp/libtddep.so.1 runpath)"
ldd_fx() { LD_LIBRARY_PATH=$1 ldd "$2" | awk '$1 == "libtddep.so.1" {print $3}'; }
check "ldd agrees: RPATH fixture" test "$(ldd_fx "$F/llp" "$F/libtdrpath.so")" = "$F/rp/libtddep.so.1"
check "ldd agrees: RUNPATH fixture" test "$(ldd_fx "$F/llp" "$F/libtdrunpath.so")" = "$F/llp/libtddep.so.1"

# 4. ld.so.cache formats: new (glibc-ld.so.cache1.1), old (ld.so-1.7.0), and both.
echo 'int tdcache(void) { return 3; }' >"$F/cache/k.c"
cc -Wl,-soname,libtdcache.so.3 -o "$F/cache/libtdcache.so.3" "$F/cache/k.c"
echo 'int tdcache(void); int tdc(void) { return tdcache(); }' >"$F/cache/n.c"
cc -o "$F/libtdneedscache.so" "$F/cache/n.c" -L"$F/cache" -l:libtdcache.so.3
python3 - "$F" <<'PY'
import struct, sys
F = sys.argv[1]
# (flags, key, value): an i386 (FLAG_ELF_LIBC6 only) entry first, which ld.so must skip.
entries = [(0x0003, "libtdcache.so.3", "/nonexistent/libtdcache.so.3"),
           (0x0303, "libtdcache.so.3", F + "/cache/libtdcache.so.3"),
           (0x0303, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6")]
def strings(base):  # -> (table bytes, [(koff, voff)]) with offsets from `base`
    table, offs = b"", []
    for _, k, v in entries:
        ko = base + len(table); table += k.encode() + b"\0"
        vo = base + len(table); table += v.encode() + b"\0"
        offs.append((ko, vo))
    return table, offs
def new_part():
    hdr = 48 + 24 * len(entries)
    table, offs = strings(hdr)
    out = b"glibc-ld.so.cache" + b"1.1" + struct.pack("<IIB3xI3I", len(entries), len(table), 2, 0, 0, 0, 0)
    for (fl, _, _), (ko, vo) in zip(entries, offs):
        out += struct.pack("<iIIIQ", fl, ko, vo, 0, 0)
    return out + table
def old_part(hidden=b""):
    n = len(entries)
    end = 16 + 12 * n
    pad = (-end) % 8 if hidden else 0
    table, offs = strings(pad + len(hidden))
    out = b"ld.so-1.7.0\0" + struct.pack("<I", n)
    for (fl, _, _), (ko, vo) in zip(entries, offs):
        out += struct.pack("<iII", fl, ko, vo)
    return out + b"\0" * pad + hidden + table
open(F + "/cache/new.cache", "wb").write(new_part())
open(F + "/cache/old.cache", "wb").write(old_part())
open(F + "/cache/both.cache", "wb").write(old_part(new_part()))
PY
for fmt in new old both; do
  LD_LIBRARY_PATH= run "cache_$fmt" probe-libs --ld-so-cache="$F/cache/$fmt.cache" --roots="$F/libtdneedscache.so"
done
export CACHE_FORMATS='{"new": "glibc-ld.so.cache1.1", "old": "ld.so-1.7.0", "both": "ld.so-1.7.0 + glibc-ld.so.cache1.1"}'
for fmt in new old both; do
  check "probe-libs --ld-so-cache ($fmt format): parsed" js "cache_$fmt" \
    "d['search'][3]['loaded'] and d['search'][3]['format'] == json.loads(env['CACHE_FORMATS'])['$fmt'] and d['search'][3]['entries'] == 3"
  check "probe-libs --ld-so-cache ($fmt format): x86-64 entry used" js "cache_$fmt" \
    "any(l['soname'] == 'libtdcache.so.3' and l['path'] == env['FX'] + '/cache/libtdcache.so.3' and \
         l['found_via'] == 'ld.so.cache' for l in d['libraries']) and \
     not any(u['soname'] == 'libtdcache.so.3' for u in d['unresolved'])"
done
printf 'garbage' >"$F/cache/bad.cache"
LD_LIBRARY_PATH= run cache_bad probe-libs --ld-so-cache="$F/cache/bad.cache" --roots="$F/libtdneedscache.so"
check "probe-libs: an unreadable ld.so.cache is reported, the search goes on" js cache_bad \
  "not d['search'][3]['loaded'] and d['search'][3]['error'] and \
   {'soname': 'libtdcache.so.3', 'needed_by': env['FX'] + '/libtdneedscache.so'} in \
   [{k: u[k] for k in ('soname', 'needed_by')} for u in d['unresolved']]"

# 5. A site directory with a pip nvidia wheel and torch (--site-dirs).
S=$F/site
mkdir -p "$S/nvidia/cudnn/lib" "$S/torch/lib"
cc -Wl,-soname,libcudnn.so.9 -o "$S/nvidia/cudnn/lib/libcudnn.so.9" "$F/a/c.c"
echo 'int tdtorchdep(void) { return 2; }' >"$F/t.c"
cc -Wl,-soname,libtdtorchdep.so.1 -o "$S/torch/lib/libtdtorchdep.so.1" "$F/t.c"
echo 'int tdtorchdep(void); int tdt(void) { return tdtorchdep(); }' >"$F/tc.c"
cc -o "$S/torch/lib/libtorch_cuda.so" "$F/tc.c" -L"$S/torch/lib" -l:libtdtorchdep.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
export CUDA_REAL=$(realpath "$CUDA/lib64")
LD_LIBRARY_PATH=$CUDA/lib64 run site probe-libs --site-dirs="$S"
check "probe-libs --site-dirs: torch/lib/libtorch_cuda.so and nvidia/*/lib are roots" js site \
  "{(r['kind'], r['path']) for r in d['roots']} >= {('torch', env['FX'] + '/site/torch/lib/libtorch_cuda.so'), \
    ('pip-nvidia', env['FX'] + '/site/nvidia/cudnn/lib/libcudnn.so.9')} and env['FX'] + '/site' in d['site_dirs']"
check "probe-libs --site-dirs: torch's dependency found through its \$ORIGIN RUNPATH" js site \
  "$(dep libtdtorchdep.so.1 site/torch/lib/libtorch_cuda.so site/torch/lib/libtdtorchdep.so.1 runpath)"
check "probe-libs --site-dirs: pip's cuDNN and the toolkit's are duplicates" js site \
  "any(x['name'] == 'cudnn' and env['FX'] + '/site/nvidia/cudnn/lib/libcudnn.so.9' in [c['path'] for c in x['copies']] \
       and any(c['path'].startswith(env['CUDA_REAL'] + '/') for c in x['copies']) for x in d['duplicates'])"

# 6. Flags.
LD_LIBRARY_PATH=$CUDA/lib64 run depth probe-libs --max-depth=0
check "probe-libs --max-depth=0: roots only, marked truncated" js depth \
  "d['truncated'] and all(l['needed_by'] is None for l in d['libraries'])"
run nosuchroot probe-libs --roots=/nonexistent/libx.so
check "probe-libs --roots=missing file: error, exit 3" js nosuchroot "j['status'] == 'error' and rc == 3"
run libsbadflag probe-libs --bogus=1
check "probe-libs: unknown flag is an error (exit 3)" js libsbadflag "j['status'] == 'error' and rc == 3"

# ---- portability: no glibc version newer than 2.17 (tests/e2e/lib/glibc_needs.sh) ----------
source "$(dirname "$0")/../lib/glibc_needs.sh"
for p in probe-nccl probe-libs; do
  check "$p starts on glibc $PROBE_GLIBC_FLOOR (needs GLIBC_$(glibc_newest_needed "$PROBES/$p"))" \
    glibc_starts_on "$PROBES/$p" "$PROBE_GLIBC_FLOOR"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
