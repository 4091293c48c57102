#!/usr/bin/env bash
# Runs probe-record natively over dist-info trees built here: a clean distribution (files of
# awkward sizes hashed by sha256sum, the FIPS 180-2 vectors, quoted RECORD fields, a ../
# script), one with every kind of problem, an unreadable directory (as uid 65534 when run as
# root), limits, flags; with the SHA-NI and the portable SHA-256 alike. Also checks that the
# binary is fully static (no PT_INTERP, no DT_NEEDED). Usage: record_probe_native_test.sh PROBE_DIR
set -uo pipefail
PROBES=$(realpath "${1:?usage: $0 PROBE_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/torchdock-record-XXXXXX)
trap 'chmod -R u+rwx "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
source "$HERE/../lib/check.sh"
PROBE=$PROBES/probe-record
if [ ! -x "$PROBE" ]; then
  skipped "probe-record is not built in $PROBES"
  finish
  exit 77
fi

# probe NAME ARGS...: one run; stdout and exit code into $WORK/NAME.{out,rc}
probe() { local name=$1; shift; "$PROBE" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"; echo $? >"$WORK/$name.rc"; }
# js NAME 'python expression' over the closing line (j, d = its data, rc, dist(name), kinds(name))
js() {
  python3 - "$WORK/$1.out" "$(cat "$WORK/$1.rc")" "$2" <<'PY'
import json, sys
out, rc, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(out, encoding="utf-8", errors="strict").read().splitlines()
try:
    j = json.loads(lines[-1])
except Exception as e:
    print("    last stdout line is not JSON:", e, lines[-1:] if lines else "(no output)")
    sys.exit(1)
d = j.get("data", {})
def dist(name): return [x for x in d["distributions"] if x["name"] == name][0]
def kinds(name): return {p["path"]: p["kind"] for p in dist(name)["problems"]}
ok = False
try:
    ok = j["probe"] == "record" and j["schema"] == 1 and \
        {"pass": 0, "fail": 1, "waived": 2, "error": 3}[j["status"]] == rc and eval(expr)
except Exception as e:
    print("    %s: %r" % (type(e).__name__, e))
if not ok:
    print("    not true:", expr)
    print("    status=%s rc=%d reason=%s" % (j.get("status"), rc, j.get("reason", "")[:400]))
sys.exit(0 if ok else 1)
PY
}

# ---- static -------------------------------------------------------------------------------
check "probe-record has no PT_INTERP (no dynamic loader)" bash -c "! readelf -lW '$PROBE' | grep -q INTERP"
check "probe-record has no DT_NEEDED" bash -c "! readelf -dW '$PROBE' 2>/dev/null | grep -q NEEDED"
check "file(1) says statically linked" bash -c "file -L '$PROBE' | grep -q 'statically linked'"

# ---- fixtures -----------------------------------------------------------------------------
SITE=$WORK/root/lib/site
mkdir -p "$SITE/torch/lib" "$WORK/root/bin"
export SITE WORK
# mkdist DIST-INFO NAME VERSION: a dist-info with METADATA; rows are appended to its RECORD
mkdist() { mkdir -p "$SITE/$1"; printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n\nbody\nName: wrong\n' "$2" "$3" >"$SITE/$1/METADATA"; : >"$SITE/$1/RECORD"; }
b64() { xxd -r -p | base64 -w0 | tr '+/' '-_' | tr -d '='; }
# row DIST-INFO RELPATH: a correct RECORD row for the file, hashed by sha256sum
row() {
  local f=$SITE/$2
  printf '%s,sha256=%s,%s\n' "$2" "$(sha256sum "$f" | cut -d' ' -f1 | b64)" "$(stat -c %s "$f")" >>"$SITE/$1/RECORD"
}
mkdist torch-2.9.1.dist-info torch 2.9.1
for n in 0 55 56 63 64 65 1048583; do
  head -c "$n" /dev/urandom >"$SITE/torch/lib/size$n.bin"
  row torch-2.9.1.dist-info "torch/lib/size$n.bin"
done
# FIPS 180-2 vectors: the digests written here, not computed
printf abc >"$SITE/torch/abc"
printf abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq >"$SITE/torch/msg448"
python3 -c "import sys; sys.stdout.write('a' * 1000000)" >"$SITE/torch/million"
for v in "abc ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad 3" \
         "msg448 248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1 56" \
         "million cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0 1000000"; do
  set -- $v
  echo "torch/$1,sha256=$(echo "$2" | b64),$3" >>"$SITE/torch-2.9.1.dist-info/RECORD"
done
printf 'x' >"$SITE/torch/a,b\"c.py"
printf '"torch/a,b""c.py",sha256=%s,1\r\n' "$(printf x | sha256sum | cut -d' ' -f1 | b64)" >>"$SITE/torch-2.9.1.dist-info/RECORD"
printf '#!/bin/sh\n' >"$WORK/root/bin/torchrun"
printf '../../bin/torchrun,sha256=%s,10\n' "$(sha256sum "$WORK/root/bin/torchrun" | cut -d' ' -f1 | b64)" >>"$SITE/torch-2.9.1.dist-info/RECORD"
printf 'torch/__pycache__/x.pyc,,\ntorch-2.9.1.dist-info/RECORD,,\n\ntorch/abc,sha512=AAAA,3\n' >>"$SITE/torch-2.9.1.dist-info/RECORD"
# a distribution torch does not ask for
mkdist six-1.0.dist-info six 1.0
echo 'six.py,sha256=AAAA,1' >>"$SITE/six-1.0.dist-info/RECORD"

# ---- a clean distribution, both SHA-256 implementations -----------------------------------
want_impl=portable
grep -qw sha_ni /proc/cpuinfo && want_impl=sha-ni
probe clean --site-dirs="$SITE"
check "clean torch: pass, 12 files checked, 1 sha512 row unchecked, six not read" js clean \
  "j['status'] == 'pass' and [x['name'] for x in d['distributions']] == ['torch'] and \
   dist('torch')['files'] == 12 and dist('torch')['unchecked'] == 1 and dist('torch')['version'] == '2.9.1' \
   and dist('torch')['problems'] == [] and dist('torch')['problems_total'] == 0"
check "clean torch: bytes and hashed_bytes add up the files' sizes" js clean \
  "d['hashed_bytes'] == dist('torch')['bytes'] == 0+55+56+63+64+65+1048583+3+56+1000000+1+10"
check "clean torch: sha_impl is $want_impl (CPUID)" js clean "d['sha_impl'] == '$want_impl'"
check "clean torch: human line 'torch 2.9.1: 12 files, ... ok'" grep -qE '^torch 2\.9\.1: 12 files, 2\.0 MiB, ok$' "$WORK/clean.out"
check "clean torch: threads default to the CPUs (at most 8)" js clean "d['threads'] == min(8, $(nproc))"
probe portable --site-dirs="$SITE" --sha-impl=portable --threads=3
check "--sha-impl=portable: pass with the portable implementation, 3 threads" js portable \
  "j['status'] == 'pass' and d['sha_impl'] == 'portable' and d['threads'] == 3 and d['files'] == 12"
probe twice --site-dirs="$SITE,$SITE/,$WORK/root/lib/../lib/site"
check "a dist-info reached three ways is read once" js twice "len(d['distributions']) == 1 and len(d['site_dirs']) == 3"
mkdist foo_bar_baz-1.0.dist-info Foo.Bar__baz 1.0
probe norm --site-dirs="$SITE" --dists=TORCH,FOO-bar.BAZ
check "--dists and Name are PEP 503-normalised (TORCH, FOO-bar.BAZ match torch, Foo.Bar__baz)" js norm \
  "sorted(x['name'] for x in d['distributions']) == ['Foo.Bar__baz', 'torch']"

# ---- every kind of problem ----------------------------------------------------------------
B=nvidia_cudnn_cu12-9.1.0.dist-info
mkdist $B nvidia-cudnn-cu12 9.1.0
mkdir -p "$SITE/nvidia/cudnn/lib"
for f in ok size empty hash link target; do printf '0123456789' >"$SITE/nvidia/cudnn/lib/$f"; done
for f in ok size empty hash link; do row $B "nvidia/cudnn/lib/$f"; done
printf '01234' >"$SITE/nvidia/cudnn/lib/size"
: >"$SITE/nvidia/cudnn/lib/empty"
printf '0123456780' >"$SITE/nvidia/cudnn/lib/hash"
ln -sf target "$SITE/nvidia/cudnn/lib/link"
mkdir "$SITE/nvidia/cudnn/lib/dir"
echo "nvidia/cudnn/lib/dir,sha256=AAAA,0" >>"$SITE/$B/RECORD"
echo "nvidia/cudnn/lib/gone,sha256=AAAA,5" >>"$SITE/$B/RECORD"
printf 'nvidia/cudnn/lib/\xff\xfename,sha256=AAAA,5\n' >>"$SITE/$B/RECORD"
echo "/etc/passwd,sha256=AAAA,5" >>"$SITE/$B/RECORD"
echo "../../../../../../../../../../../etc/passwd,sha256=AAAA,5" >>"$SITE/$B/RECORD"
echo "nvidia/cudnn/lib/ok,sha256=AAAA,five" >>"$SITE/$B/RECORD"
echo "only,two" >>"$SITE/$B/RECORD"
probe broken --site-dirs="$SITE" --dists='nvidia-*'
check "broken: fail, torch not asked for (--dists=nvidia-*)" js broken \
  "j['status'] == 'fail' and [x['name'] for x in d['distributions']] == ['nvidia-cudnn-cu12']"
check "broken: each file's kind" js broken "kinds('nvidia-cudnn-cu12') == { \
  'nvidia/cudnn/lib/size': 'size', 'nvidia/cudnn/lib/empty': 'size', 'nvidia/cudnn/lib/hash': 'hash', \
  'nvidia/cudnn/lib/link': 'not_regular', 'nvidia/cudnn/lib/dir': 'not_regular', \
  'nvidia/cudnn/lib/gone': 'missing', 'nvidia/cudnn/lib/\ufffd\ufffdname': 'missing', \
  '/etc/passwd': 'bad_record', '../../../../../../../../../../../etc/passwd': 'bad_record', \
  'nvidia/cudnn/lib/ok': 'bad_record', 'only': 'bad_record'}"
check "broken: sizes in the problem, the empty file says so" js broken \
  "[(p['expected_size'], p['size'], p['detail']) for p in dist('nvidia-cudnn-cu12')['problems'] if p['path'].endswith(('/size', '/empty'))] \
   == [(10, 5, 'size 5'), (10, 0, 'the file is empty')]"
check "broken: reason names the first problems" js broken \
  "j['reason'].startswith('nvidia-cudnn-cu12 9.1.0: nvidia/cudnn/lib/size is 5 bytes, RECORD says 10; nvidia-cudnn-cu12 9.1.0: nvidia/cudnn/lib/empty is empty, RECORD says 10') \
   and '(11 problems in all)' in j['reason']"
check "broken: 'file' is the absolute path" js broken \
  "[p['file'] for p in dist('nvidia-cudnn-cu12')['problems'] if p['kind'] == 'hash'] == ['$(realpath "$SITE")/nvidia/cudnn/lib/hash']"
check "broken: human line counts the problems" grep -q '^nvidia-cudnn-cu12 9.1.0: 8 files, .*, 11 problems$' "$WORK/broken.out"

# ---- an unreadable directory, as an unprivileged user -------------------------------------
U=nvidia_nccl_cu12-2.0.dist-info
mkdist $U nvidia-nccl-cu12 2.0
mkdir -p "$SITE/nvidia/nccl/lib"
printf 'abc' >"$SITE/nvidia/nccl/lib/libnccl.so.2"
row $U nvidia/nccl/lib/libnccl.so.2
chmod 0700 "$SITE/nvidia/nccl"
as_user=()
if [ "$(id -u)" = 0 ]; then
  chmod 755 "$WORK"
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
if "${as_user[@]}" "$PROBE" --site-dirs="$SITE" --dists=nvidia-nccl-cu12 >"$WORK/unreadable.out" 2>&1; then echo 0; else echo $?; fi >"$WORK/unreadable.rc"
check "unreadable: kind, blocking directory's mode and owner, the probe's uid" js unreadable \
  "kinds('nvidia-nccl-cu12') == {'nvidia/nccl/lib/libnccl.so.2': 'unreadable'} and \
   dist('nvidia-nccl-cu12')['problems'][0]['blocked_by']['mode'] == '0700' and \
   dist('nvidia-nccl-cu12')['problems'][0]['blocked_by']['path'].endswith('/nvidia/nccl') and \
   dist('nvidia-nccl-cu12')['problems'][0]['blocked_by']['uid'] == $(id -u) and \
   dist('nvidia-nccl-cu12')['problems'][0]['probe_uid'] == $( [ "$(id -u)" = 0 ] && echo 65534 || id -u) and \
   'is mode 0700 owned by uid $(id -u)' in j['reason'] and 'probe ran as uid' in j['reason']"
chmod 0755 "$SITE/nvidia/nccl"
chmod 0600 "$SITE/nvidia/nccl/lib/libnccl.so.2"
if [ "$(id -u)" = 0 ]; then
  "${as_user[@]}" "$PROBE" --site-dirs="$SITE" --dists=nvidia-nccl-cu12 >"$WORK/unreadable2.out" 2>&1; echo $? >"$WORK/unreadable2.rc"
  check "unreadable file: its own mode and owner" js unreadable2 \
    "dist('nvidia-nccl-cu12')['problems'][0]['owner']['mode'] == '0600' and \
     dist('nvidia-nccl-cu12')['problems'][0]['blocked_by'] is None and 'file is mode 0600 owned by uid 0' in j['reason']"
else
  skipped "unreadable file: needs root to make a file this user cannot read"
fi
rm -rf "${SITE:?}/$U"

# ---- platform facts: wheel tags, ELF machines, --text -------------------------------------
# WHEEL Tag: lines, the ELF machine and class of every file (one of this host's, one arm64
# header written here byte by byte: e_machine 183 at offset 18), and torch/version.py.
PLAT=$WORK/plat
mkdir -p "$PLAT/torch/lib" "$PLAT/torch-2.11.0.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\n' >"$PLAT/torch-2.11.0.dist-info/METADATA"
printf 'Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_aarch64\nTag:  cp311-cp311-linux_aarch64 \n' >"$PLAT/torch-2.11.0.dist-info/WHEEL"
cp /bin/true "$PLAT/torch/lib/libhost.so"
cp /bin/true "$PLAT/torch/lib/libhost2.so"
printf '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\xb7\x00\x01\x00\x00\x00' >"$PLAT/torch/lib/libarm.so"
printf "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n" >"$PLAT/torch/version.py"
: >"$PLAT/torch-2.11.0.dist-info/RECORD"
for f in torch/lib/libhost.so torch/lib/libarm.so torch/lib/libhost2.so torch/version.py; do
  printf '%s,sha256=%s,%s\n' "$f" "$(sha256sum "$PLAT/$f" | cut -d' ' -f1 | b64)" "$(stat -c %s "$PLAT/$f")" >>"$PLAT/torch-2.11.0.dist-info/RECORD"
done
host=$(uname -m)
probe plat --site-dirs="$PLAT" --text=torch:torch/version.py,torch:torch/missing.py
check "platform: the WHEEL tags, in order, trimmed" js plat \
  "dist('torch')['tags'] == ['cp311-cp311-manylinux_2_28_aarch64', 'cp311-cp311-linux_aarch64']"
check "platform: ELF objects counted per machine and class, the first in RECORD order" js plat \
  "dist('torch')['elf'] == {'$host/64': {'count': 2, 'first': 'torch/lib/libhost.so'}, 'aarch64/64': {'count': 1, 'first': 'torch/lib/libarm.so'}}"
check "platform: --text gives the file's text, null for one that is not there" js plat \
  "dist('torch')['texts'] == {'torch/version.py': \"__version__ = '2.11.0+cu130'\\ncuda: Optional[str] = '13.0'\\n\", 'torch/missing.py': None}"
check "platform: a distribution without WHEEL has no tags; --text absent: no texts" js clean \
  "dist('torch')['tags'] == [] and 'texts' not in dist('torch')"
probe text_abs --site-dirs="$PLAT" --text=torch:/etc/passwd
check "--text with an absolute path is an error" js text_abs "j['status'] == 'error' and '--text=torch:/etc/passwd' in j['reason']"
probe text_up --site-dirs="$PLAT" --text=torch:../../../../etc/passwd
check "--text that leaves / is an error" js text_up "j['status'] == 'error'"

# ---- limits -------------------------------------------------------------------------------
L=nvidia_many-1.dist-info
mkdist $L nvidia-many 1
for i in $(seq 1 60); do echo "many/$i,sha256=AAAA,1" >>"$SITE/$L/RECORD"; done
probe many --site-dirs="$SITE" --dists=nvidia-many
check "60 missing files: 50 listed, problems_total 60" js many \
  "len(dist('nvidia-many')['problems']) == 50 and dist('nvidia-many')['problems_total'] == 60"
python3 -c "import sys; sys.stdout.write('x' * (17 << 20))" >"$SITE/$L/RECORD"
probe huge --site-dirs="$SITE" --dists=nvidia-many
check "a RECORD over 16 MiB is a bad_record of that distribution" js huge \
  "j['status'] == 'fail' and kinds('nvidia-many') == {'': 'bad_record'} and 'over 16 MiB' in j['reason']"
python3 -c "import sys; sys.stdout.write('a,b,1\n' + 'x' * (65 << 10) + ',,\n')" >"$SITE/$L/RECORD"
probe longline --site-dirs="$SITE" --dists=nvidia-many
check "a RECORD line over 64 KiB is refused" js longline "'line 2 is over 64 KiB' in j['reason']"

# ---- waived and errors --------------------------------------------------------------------
probe none --site-dirs="$SITE" --dists=nothing-here,nope-*
check "no matching distribution: waived, reason names the patterns" js none \
  "j['status'] == 'waived' and j['reason'] == 'no nothing-here, nope-* distribution in $SITE'"
probe nosite --dists=torch
check "no --site-dirs: error" js nosite "j['status'] == 'error' and '--site-dirs is required' in j['reason']"
probe badpat --site-dirs="$SITE" --dists='to*ch'
check "a * not at the end: error" js badpat "j['status'] == 'error' and '--dists' in j['reason']"
probe badthreads --site-dirs="$SITE" --threads=0
check "--threads=0: error" js badthreads "j['status'] == 'error'"
probe unknown --site-dirs="$SITE" --bogus=1
check "an unknown flag: error" js unknown "j['status'] == 'error' and '--bogus' in j['reason']"
probe nodir --site-dirs="$WORK/absent,$WORK/absent2"
check "no readable site dir: error" js nodir "j['status'] == 'error' and 'no readable site dir' in j['reason']"
# ---- pip install --target: RECORD rows written in pip's temporary home ---------------------
# pip writes `../../bin/torchrun` (relative to HOME/lib/python) and moves the script to
# TARGET/bin/torchrun; probe-record finds it there, and reports the row as pip wrote it when
# the file is in neither place.
TGT=$WORK/target
mkdir -p "$TGT/torch" "$TGT/bin" "$TGT/torch-2.9.1.dist-info"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1\n' >"$TGT/torch-2.9.1.dist-info/METADATA"
printf 'x = 1\n' >"$TGT/torch/version.py"
printf '#!/bin/sh\nexec python3 -m torch.distributed.run "$@"\n' >"$TGT/bin/torchrun"
for f in torch/version.py:torch/version.py bin/torchrun:../../bin/torchrun; do
  printf '%s,sha256=%s,%s\n' "${f#*:}" "$(sha256sum "$TGT/${f%%:*}" | cut -d' ' -f1 | b64)" \
    "$(stat -c %s "$TGT/${f%%:*}")" >>"$TGT/torch-2.9.1.dist-info/RECORD"
done
probe target --site-dirs="$TGT"
check "pip --target tree: ../../bin/torchrun is found in TARGET/bin, pass with 2 files" js target \
  "j['status'] == 'pass' and dist('torch')['files'] == 2 and dist('torch')['problems'] == []"
# A --target tree may be named like any site directory: a venv's site-packages of another Python.
VTGT=$WORK/venv/lib/python3.12/site-packages
mkdir -p "$(dirname "$VTGT")" && cp -a "$TGT" "$VTGT"
probe target_site --site-dirs="$VTGT"
check "pip --target into a directory named site-packages: ../../bin/torchrun found there too" js target_site \
  "j['status'] == 'pass' and dist('torch')['files'] == 2 and dist('torch')['problems'] == []"
rm "$TGT/bin/torchrun"
probe target_gone --site-dirs="$TGT"
check "pip --target tree without its script: fail, the row named as pip wrote it" js target_gone \
  "j['status'] == 'fail' and kinds('torch') == {'../../bin/torchrun': 'missing'}"

# ---- --imported: another copy of what the python imports elsewhere is listed, not read ------
# TGT's torch now lacks bin/torchrun; VTGT's is whole.
probe shadow --site-dirs="$VTGT,$TGT" --imported="torch@$VTGT"
check "--imported: the copy the python imports is checked, the other listed with shadowed_by, unread" js shadow \
  "j['status'] == 'pass' and [(x['dist_info'].startswith('$VTGT'), x.get('shadowed_by'), x['files'], x['problems']) for x in d['distributions']] == [(True, None, 2, []), (False, '$VTGT', 0, [])] and d['files'] == 2"
probe shadow_damaged --site-dirs="$TGT,$VTGT" --imported="torch@$TGT/"
check "--imported: the imported copy's damage still fails (a trailing / is the same directory)" js shadow_damaged \
  "j['status'] == 'fail' and [x.get('shadowed_by') for x in d['distributions']] == [None, '$TGT'] and kinds('torch') == {'../../bin/torchrun': 'missing'}"
for bad in torch "torch@" "torch@relative/dir" "@/x"; do
  probe imported_bad --site-dirs="$TGT" --imported="$bad"
  check "--imported=$bad: error naming the form" js imported_bad "j['status'] == 'error' and 'DIST@SITE_DIR' in j['reason']"
done

finish
