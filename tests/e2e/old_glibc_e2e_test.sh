#!/usr/bin/env bash
# The probes start in older userlands, for real: a Debian bullseye image (glibc 2.31, the
# glibc of Ubuntu 20.04 and so of the CUDA 11.x ubuntu20.04 bases and NGC releases up to 23.x)
# made with `debootstrap --variant=minbase bullseye`, and any older suite debootstrap's mirror
# still carries. In each: every compiled probe starts and ends with its JSON result line, on
# the bare image and with the toolkit's real CUDA 13 runtime, cuDNN 9 and NCCL mounted in;
# probe-kernels reads the nvcc fixtures exactly as it does natively; and `torchdock validate`
# of the bare image and of one with those libraries reports every probe as evidence, none as
# unable to start. A control shows the image really refuses a binary that needs a newer glibc.
# Usage: old_glibc_e2e_test.sh TORCHDOCK PROBES_DIR
# Env:   OLD_GLIBC_SUITES       required suites (default "bullseye"): a failed debootstrap fails
#        OLD_GLIBC_EXTRA_SUITES tried, and skipped with debootstrap's reason when they cannot be
#                               made (default "buster stretch": gone from the default mirror now)
#        OLD_GLIBC_MIRROR       a Debian mirror for debootstrap (default: debootstrap's own)
set -uo pipefail
TD=$(realpath "${1:?usage: $0 TORCHDOCK PROBES_DIR}")
PROBES=$(realpath "${2:?usage: $0 TORCHDOCK PROBES_DIR}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
source "$ROOT/tests/e2e/lib/check.sh"
source "$ROOT/tests/e2e/lib/glibc_needs.sh"
source "$ROOT/tests/e2e/lib/test_images.sh"
WORK=$(mktemp -d /tmp/torchdock-old-glibc-XXXXXX)
trap 'services_stop; rm -rf "$WORK"' EXIT
REQUIRED=${OLD_GLIBC_SUITES:-bullseye}
EXTRA=${OLD_GLIBC_EXTRA_SUITES-buster stretch}
CUDA_DIR=$(readlink -f "$CUDA_LIB")
FIX=$ROOT/tests/data/kernels
COMPILED=(cuda cudnn nccl gemm libs kernels)
DOCKER=/usr/bin/docker

for p in "${COMPILED[@]}"; do
  [ -x "$PROBES/probe-$p" ] || { bad "probe-$p is built in $PROBES"; finish; exit 1; }
done
start_engine && start_registry || { bad "services started"; finish; exit 1; }

# in_image NAME [DOCKER_RUN_OPTIONS...] IMAGE COMMAND...: `docker run` as validate does (no
# network, the probes read-only at /opt/torchdock-probes); options are the arguments before
# the first one not starting with "-" (each option here takes its value as "-x" "value").
# stdout, stderr and the exit code land in $WORK/NAME.{out,err,rc}.
in_image() {
  local name=$1 opts=(); shift
  while [ "${1:0:1}" = - ]; do opts+=("$1" "$2"); shift 2; done
  timeout 300 "$DOCKER" run --rm --network=none -v "$PROBES:/opt/torchdock-probes:ro" "${opts[@]}" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $? >"$WORK/$name.rc"
}
# js NAME PROBE 'python expression': the run's last stdout line is probe PROBE's schema-1 result
# whose status agrees with the exit code, and the expression holds (j, d = data, rc, native:
# the native run's result when there is one). Prints why not.
js() {
  python3 - "$WORK/$1" "$2" "$3" <<'PY'
import json, os, sys
base, probe, expr = sys.argv[1:]
def result(prefix):
    lines = [l for l in open(prefix + ".out").read().splitlines() if l.strip()]
    return json.loads(lines[-1]) if lines else None
rc = int(open(base + ".rc").read())
try:
    j = result(base)
except Exception as e:
    j = None
    print("    last stdout line is not JSON:", e)
if j is None:
    print("    rc=%d stderr: %s" % (rc, open(base + ".err").read()[:600]))
    sys.exit(1)
native = result(base + ".native") if os.path.exists(base + ".native.out") else None
d = j.get("data") or {}
codes = {"pass": 0, "fail": 1, "waived": 2, "error": 3}
try:
    good = j.get("probe") == probe and j.get("schema") == 1 and codes.get(j.get("status")) == rc \
        and eval("(" + expr + "\n)")
except Exception as e:
    print("    %s: %r" % (type(e).__name__, e))
    good = False
if not good:
    print("    rc=%d %s" % (rc, json.dumps(j)[:900]))
sys.exit(0 if good else 1)
PY
}

# suite_image SUITE: imports the debootstrapped SUITE as $TD_REGISTRY/library/debian:SUITE
# (pushed: the libraries image below is built FROM it).
suite_image() {
  local suite=$1 tarball ref="$TD_REGISTRY/library/debian:$1"
  tarball=$(debian_rootfs_tarball "$suite" ${OLD_GLIBC_MIRROR:+"$OLD_GLIBC_MIRROR"}) || return 1
  "$DOCKER" import -c 'CMD ["bash"]' "$tarball" "$ref" >/dev/null && "$DOCKER" push -q "$ref" >/dev/null
}

# probes_in SUITE: everything this suite asserts about one userland.
probes_in() {
  local suite=$1 image="$TD_REGISTRY/library/debian:$1" glibc p
  glibc=$("$DOCKER" run --rm --network=none "$image" getconf GNU_LIBC_VERSION 2>&1 | awk '{print $2}')
  echo "# $suite: glibc $glibc"
  check "$suite: glibc $glibc is older than the host's and not older than the floor $PROBE_GLIBC_FLOOR" \
    test "$(printf '%s\n%s\n' "$glibc" "$PROBE_GLIBC_FLOOR" | sort -V | head -n 1)" = "$PROBE_GLIBC_FLOOR" \
    -a "$(printf '%s\n%s\n' "$glibc" "$(getconf GNU_LIBC_VERSION | awk '{print $2}')" | sort -V | tail -n 1)" != "$glibc"

  # Control: a binary built here for this host's glibc does not start there, with the loader's
  # words that validate turns into "the environment's glibc is older than the probes need".
  printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' >"$WORK/hi.c"
  mkdir -p "$WORK/control" && cc -O1 -o "$WORK/control/hi" "$WORK/hi.c"
  local newest
  newest=$(glibc_newest_needed "$WORK/control/hi")
  if [ "$(printf '%s\n%s\n' "$newest" "$glibc" | sort -V | tail -n 1)" != "$glibc" ]; then
    timeout 60 "$DOCKER" run --rm --network=none -v "$WORK/control:/opt/control:ro" "$image" /opt/control/hi \
      >"$WORK/$suite-control.out" 2>"$WORK/$suite-control.err"
    check "$suite: control: a host-built binary needing GLIBC_$newest does not start ($(head -c 160 "$WORK/$suite-control.err"))" \
      grep -q "GLIBC_$newest' not found" "$WORK/$suite-control.err"
  else
    skipped "$suite: control: this host's cc stamps only GLIBC_$newest, which glibc $glibc has"
  fi

  # The bare image: no CUDA library anywhere.
  for p in "${COMPILED[@]}"; do in_image "$suite-bare-$p" "$image" "/opt/torchdock-probes/probe-$p"; done
  for p in cuda cudnn nccl; do
    check "$suite, bare: probe-$p starts and waives (no library)" \
      js "$suite-bare-$p" "$p" "j['status'] == 'waived' and 'cannot open shared object file' in j['reason']"
  done
  # probe-gemm calls a missing runtime an error (it needs one to do anything); it ran all the same.
  check "$suite, bare: probe-gemm starts and says no libcudart loads" \
    js "$suite-bare-gemm" gemm "j['status'] in ('waived', 'error') and j['reason'].startswith('no libcudart loads')"
  check "$suite, bare: probe-libs starts, reads ld.so.cache and waives (nothing to resolve)" \
    js "$suite-bare-libs" libs "j['status'] == 'waived' and any(s.get('kind') == 'ld.so.cache' and s.get('loaded') for s in d['search'])"
  check "$suite, bare: probe-kernels starts and waives (no toolkit directory)" \
    js "$suite-bare-kernels" kernels "j['status'] == 'waived' and d['objects'] == []"

  # The toolkit's real libraries mounted in: the probes dlopen them and ask their versions.
  local libs=(-v "$CUDA_DIR:/opt/cuda-lib:ro" -e LD_LIBRARY_PATH=/opt/cuda-lib)
  for p in cuda cudnn nccl gemm; do
    in_image "$suite-libs-$p" "${libs[@]}" "$image" "/opt/torchdock-probes/probe-$p"
  done
  check "$suite, CUDA 13 libraries: probe-cuda loads the runtime (13000) and waives without a driver" \
    js "$suite-libs-cuda" cuda "j['status'] == 'waived' and d['runtime_version'] == 13000 and d['error']['class'] in ('no_driver', 'insufficient_driver')"
  check "$suite, CUDA 13 libraries: probe-cudnn reports cuDNN $cudnn_version" \
    js "$suite-libs-cudnn" cudnn "j['status'] == 'waived' and d['version_string'] == '$cudnn_version'"
  check "$suite, CUDA 13 libraries: probe-nccl reports NCCL $nccl_version" \
    js "$suite-libs-nccl" nccl "j['status'] == 'waived' and d['version'] == '$nccl_version'"
  check "$suite, CUDA 13 libraries: probe-gemm loads the runtime and waives without a GPU" \
    js "$suite-libs-gemm" gemm "j['status'] == 'waived' and j['reason']"

  # probe-kernels on the nvcc fixtures: the same objects and architectures as natively.
  "$PROBES/probe-kernels" "$FIX"/*.o >"$WORK/$suite-kernels.native.out" 2>/dev/null
  in_image "$suite-kernels" -v "$FIX:/opt/fixtures:ro" "$image" \
    /bin/sh -c 'exec /opt/torchdock-probes/probe-kernels /opt/fixtures/*.o'
  check "$suite: probe-kernels reads the $(ls "$FIX"/*.o | wc -l) fixtures as it does natively" \
    js "$suite-kernels" kernels "j['status'] == 'pass' and len(d['objects']) == $(ls "$FIX"/*.o | wc -l) and
      [(o['path'].split('/')[-1], o['sass'], o['ptx']) for o in d['objects']] ==
      [(o['path'].split('/')[-1], o['sass'], o['ptx']) for o in native['data']['objects']]"

  # torchdock validate: the bare image, and one with the CUDA 13 libraries installed.
  base=$image
  copy_cuda13 "$WORK/ctx-$suite-cuda13"
  make_image "$suite-cuda13" 'io.torchdock.cuda="13.0"' "io.torchdock.cudnn=\"$cudnn_version\"" "io.torchdock.nccl=\"$nccl_version\""
  check "$suite: built an image with the CUDA 13 libraries on it" test $? = 0
  "$TD" validate --probes "$PROBES" --json="$WORK/$suite-v.json" "$image" "torchdock-test/$suite-cuda13" \
    >"$WORK/$suite-v.out" 2>"$WORK/$suite-v.err"
  echo "# validate exit $?: $(tail -n 3 "$WORK/$suite-v.out" | tr '\n' ' ')"
  for img in "$image" "torchdock-test/$suite-cuda13"; do
    check "$suite: validate $img: every probe ran and is evidence (none unable to start)" \
      python3 - "$WORK/$suite-v.json" "$img" <<'PY'
import json, sys
doc, image = json.load(open(sys.argv[1])), sys.argv[2]
img = next((i for i in doc["images"] if i["image"] == image), None)
if img is None:
    print("    no result for", image); sys.exit(1)
probes = img["probes"]
print("    " + ", ".join("%s: %s" % (n, p["status"]) for n, p in sorted(probes.items())))
bad = {n: p for n, p in probes.items() if p["status"] == "no evidence" or "glibc" in p["reason"]}
for n, p in bad.items():
    print("    %s: %s (%s)" % (n, p["status"], p["reason"][:300]))
# The compiled probes validate runs without a GPU, at least: cuda, libs, cudnn, nccl.
missing = {"cuda", "libs", "cudnn", "nccl"} - set(probes)
if missing:
    print("    not run:", sorted(missing))
sys.exit(0 if not bad and not missing and not img["error"] else 1)
PY
  done
  check "$suite: validate of the CUDA 13 image finds runtime 13.0 (TD101 passes)" python3 - "$WORK/$suite-v.json" "torchdock-test/$suite-cuda13" <<'PY'
import json, sys
doc, image = json.load(open(sys.argv[1])), sys.argv[2]
img = next(i for i in doc["images"] if i["image"] == image)
c = next(c for c in img["checks"] if c["id"] == "TD101")
print("    TD101 %s: %s" % (c["status"], c["message"]))
sys.exit(0 if c["status"] == "pass" else 1)
PY
}

for suite in $REQUIRED; do
  if suite_image "$suite"; then ok "debootstrapped $suite and imported it"; probes_in "$suite"
  else bad "debootstrap $suite ($(tail -n 1 "$TORCHDOCK_CACHE/debootstrap-$suite.log" 2>/dev/null))"; fi
done
for suite in $EXTRA; do
  if suite_image "$suite"; then ok "debootstrapped $suite and imported it"; probes_in "$suite"
  else skipped "$suite: debootstrap could not make it here ($(tail -n 1 "$TORCHDOCK_CACHE/debootstrap-$suite.log" 2>/dev/null))"; fi
done
finish
