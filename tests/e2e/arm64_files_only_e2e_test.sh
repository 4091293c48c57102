#!/usr/bin/env bash
# End to end: a genuine arm64 PyTorch image validated on this x86 machine without running its
# code. The image is made here: an arm64 Debian bookworm root from debootstrap (unpacked on
# this host, services.sh debian_arm64_files_tarball) and torch 2.11.0's real linux/aarch64
# wheels from PyPI (its CUDA 13.0 build and the nvidia-* wheels it pins), installed for that
# platform by uv; the layers are loaded into the engine as a linux/arm64 image
# (lib/docker_archive.py: what a registry pull gives, no BuildKit cache, no emulation).
# validate sees an arm64 image on an amd64 engine with no qemu handler and runs the files-only
# tier: probe-libs plays the aarch64 loader, probe-record reads wheel tags, ELF machines and
# torch/version.py, probe-kernels audits the fatbins. The healthy image passes; planted
# breakages fail naming what is wrong: the x86_64 nvidia-nccl-cu13 wheel over the aarch64
# one, torch 2.10.0's CPU-only aarch64 wheel behind CUDA labels, bitsandbytes 0.47.0 (no
# sm_100 code in its CUDA 11.8-12.6 libraries) for a GB200 target, and AWS g5g's T4G (sm_75)
# for torch 2.11.0's own libtorch_cuda.so. Then the emulated tier: with Debian's
# qemu-user-static handler registered (lib/binfmt.sh), validate runs the image's own python
# and the linux/arm64 probes under qemu-user, and the breakages are seen as torch runs them.
# Usage: arm64_files_only_e2e_test.sh TORCHDOCK PROBES_DIR [INPUTS_DIR]
# INPUTS_DIR: where tests/e2e/arm64_inputs_fetch.sh (a ctest fixture) fetched the root and
# wheels; fetched here when it is not complete. It is removed at the end, as the images are
# (about 10 GB together); debootstrap's tarball and uv's cache stay.
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
source "$ROOT/tests/e2e/lib/arm64_inputs.sh"
source "$ROOT/tests/e2e/lib/binfmt.sh"
WORK=$(mktemp -d /tmp/torchdock-arm64-e2e-XXXXXX)
INPUTS=${3:-$WORK/inputs}
trap '$DOCKER rmi -f $IMG:healthy $IMG:nccl-x86 $IMG:bnb $IMG:cpu >/dev/null 2>&1; binfmt_restore; services_stop; rm -rf "$WORK" "$INPUTS"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
DOCKER=/usr/bin/docker
LABELS='{"io.torchdock.torch": "2.11.0", "io.torchdock.cuda": "13.0", "io.torchdock.python": "3.11", "io.torchdock.target-gpus": "GH200,GB200"}'
IMG=torchdock-test/arm64-torch
SITE=/usr/local/lib/python3.11/dist-packages
export TORCHDOCK_PROBES=$PROBES
secs() { echo "$(date +%s.%N) - $1" | bc; }
# field ID KEY [FILE]: a check's field in validate's JSON report
export WORK
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[3])); print(next((c[sys.argv[2]] for c in d['images'][0]['checks'] if c['id']==sys.argv[1]), 'missing'))" "$1" "$2" "${3:-$WORK/v.json}"; }
export -f field
if [ "$(uname -m)" != x86_64 ]; then
  skipped "this suite reads an arm64 image on an x86_64 host; this host is $(uname -m)"
  finish
  exit 77
fi
services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
# The files-only sections assert what validate does with no emulation: a qemu-aarch64 handler
# of this host's is disabled until the emulated section (and put back at the end).
binfmt_no_aarch64 || { bad "the qemu-aarch64 binfmt handler could not be disabled"; finish; exit 1; }

# --- the arm64 root, the wheels, the images ---------------------------------------------------
start=$(date +%s.%N)
arm64_inputs "$INPUTS" || { bad "the arm64 root and wheels (debootstrap, uv)"; finish; exit 1; }
tarball=$(cat "$INPUTS/tarball")
check "uv installed torch 2.11.0's aarch64 set, torch 2.10.0 (CPU) for aarch64, an x86_64 NCCL and bitsandbytes 0.47.0" \
  bash -c "grep -q \"cuda: Optional\\[str\\] = '13.0'\" '$INPUTS/healthy/torch/version.py' && grep -q 'cuda: Optional\\[str\\] = None' '$INPUTS/cpu/torch/version.py' && file -L '$INPUTS/nccl-x86/nvidia/nccl/lib/libnccl.so.2' | grep -q x86-64 && test -f '$INPUTS/bnb/bitsandbytes/libbitsandbytes_cuda126.so'"
# The images, loaded as a registry pull would give them: the arm64 root, then the site layers.
cat >"$WORK/spec.json" <<EOF
{"platform": "linux/arm64",
 "layers": {"root": {"tar": "$tarball"},
            "healthy": {"dir": "$INPUTS/healthy", "at": "$SITE"}, "cpu": {"dir": "$INPUTS/cpu", "at": "$SITE"},
            "nccl-x86": {"dir": "$INPUTS/nccl-x86", "at": "$SITE"}, "bnb": {"dir": "$INPUTS/bnb", "at": "$SITE"}},
 "images": [
  {"tag": "$IMG:healthy", "layers": ["root", "healthy"], "cmd": ["/usr/bin/python3"], "labels": $LABELS},
  {"tag": "$IMG:nccl-x86", "layers": ["root", "healthy", "nccl-x86"], "labels": $LABELS},
  {"tag": "$IMG:bnb", "layers": ["root", "healthy", "bnb"], "labels": $LABELS},
  {"tag": "$IMG:cpu", "layers": ["root", "cpu"],
   "labels": {"io.torchdock.torch": "2.11.0", "io.torchdock.cuda": "13.0", "io.torchdock.target-gpus": "GB200"}}]}
EOF
python3 "$ROOT/tests/e2e/lib/docker_archive.py" "$WORK/spec.json" | $DOCKER load -q >"$WORK/load.log" 2>&1
rm -rf "$INPUTS"
check "the four images are linux/arm64, their python3.11 an aarch64 executable" \
  bash -c "for t in healthy nccl-x86 bnb cpu; do test \"\$($DOCKER image inspect -f '{{.Os}}/{{.Architecture}}' $IMG:\$t)\" = linux/arm64 || exit 1; done && tar -xOf '$tarball' ./usr/bin/python3.11 | head -c 20 | od -An -tx1 | tr -d ' \n' | grep -q '^7f454c460201010000000000000000000200b700'"
echo "# figure: arm64 root and wheels (ready from e2e_arm64_inputs, else fetched here) and images loaded: $(secs "$start") s"

# --- the healthy image ------------------------------------------------------------------------
start=$(date +%s.%N)
TORCHDOCK_CACHE_DIR="$WORK/cache" run validate "$IMG:healthy" --json="$WORK/v.json"
echo "# figure: validate (files only) of the healthy arm64 image (torch 2.11.0 cu130, aarch64; file-probe cache empty), whole process: $(secs "$start") s"
check "healthy: exit 0, the files-only tier named with its reason (linux/arm64 on a linux/amd64 engine)" \
  bash -c "test $(rc) = 0 && grep -q 'linux/arm64 files-only: the image is linux/arm64 and the engine runs linux/amd64' '$WORK/out' && python3 -c \"import json; i=json.load(open('$WORK/v.json'))['images'][0]; assert i['tier'] == 'files-only' and i['platform'] == 'linux/arm64'\""
check "healthy: TD110 every soname resolves through the aarch64 loader's rules" \
  bash -c "test \"$(field TD110 status)\" = pass && grep -q 'libraries resolved' <<<\"$(field TD110 observed)\""
check "healthy: TD132 every wheel tag and ELF object is aarch64 (PyPI cusparselt's sbsa tag included)" \
  bash -c "test \"$(field TD132 status)\" = pass && test \"$(field TD132 expected)\" = linux/arm64"
check "healthy: TD133 torch/version.py says torch 2.11.0+cu130, CUDA 13.0, as labelled" \
  bash -c "test \"$(field TD133 status)\" = pass && test \"$(field TD133 observed)\" = 'torch 2.11.0+cu130, CUDA 13.0'"
check "healthy: TD125 GH200 and GB200 run every object with GPU code torch links" \
  bash -c "test \"$(field TD125 status)\" = pass && test \"$(field TD125 expected)\" = 'GH200, GB200'"
check "healthy: TD112 every file matches its RECORD" test "$(field TD112 status)" = pass
check "healthy: TD119 is judged from the files: torch's are there (a skip: importing needs its code)" \
  bash -c 'test "$(field TD119 status)" = skip && field TD119 message | grep -q "files-only tier: torch.s files are there, torch 2.11.0"'
check "healthy: the checks that run the image's code are skipped, saying so (TD121, TD140)" \
  bash -c "for id in TD121 TD140; do test \"\$(python3 -c \"import json; print(next(c['status']+':'+c['message'] for c in json.load(open('$WORK/v.json'))['images'][0]['checks'] if c['id']=='\$id'))\")\" = \"skip:files-only tier: rests on probes that run the image's code\" || exit 1; done"
check "healthy: no container of the run is left" \
  bash -c "test -z \"\$($DOCKER ps -aq --filter label=io.torchdock.run)\""

# --- planted breakages ------------------------------------------------------------------------
run validate "$IMG:nccl-x86" --json="$WORK/v.json"
check "an x86_64 NCCL wheel in the arm64 image: exit 1, TD132 names the wheel tag and the object" \
  bash -c "test $(rc) = 1 && test \"$(field TD132 status)\" = fail && grep -q 'nvidia-nccl-cu13 2.28.9: its wheel tag py3-none-manylinux_2_18_x86_64 is for x86_64' <<<\"$(field TD132 message)\" && grep -q '1 x86_64/64 ELF object (first nvidia/nccl/lib/libnccl.so.2)' <<<\"$(field TD132 message)\""
check "an x86_64 NCCL wheel: TD110 libnccl.so.2 does not resolve for libtorch_cuda.so (the aarch64 loader skips it)" \
  bash -c "test \"$(field TD110 status)\" = fail && grep -q 'libnccl.so.2 (needed by $SITE/torch/lib/libtorch_cuda.so)' <<<\"$(field TD110 observed)\""

run validate "$IMG:cpu" --json="$WORK/v.json"
check "torch 2.10.0's CPU-only aarch64 wheel behind CUDA 13.0 labels: exit 1, TD133 says so from torch/version.py" \
  bash -c "test $(rc) = 1 && test \"$(field TD133 status)\" = fail && grep -q 'torch 2.10.0+cpu is a CPU-only build (torch/version.py cuda = None) in an image labelled CUDA 13.0' <<<\"$(field TD133 message)\""
check "...and its fix names the release whose linux/arm64 wheel has CUDA 13 (torch.json, read from PyPI)" \
  grep -q 'built for CUDA 13 is torch 2.11.0' <<<"$(field TD133 fix)"

run validate "$IMG:bnb" --expect target-gpus=GB200 --json="$WORK/v.json"
check "bitsandbytes 0.47.0 for a GB200 target: exit 1, TD125 names its library without sm_100 code" \
  bash -c "test $(rc) = 1 && test \"$(field TD125 status)\" = fail && grep -q 'bitsandbytes/libbitsandbytes_cuda1[0-9]*.so' <<<\"$(field TD125 message)\" && grep -q GB200 <<<\"$(field TD125 message)\""
run validate "$IMG:bnb" --expect target-gpus=GH200 --json="$WORK/v.json"
check "the same bitsandbytes for GH200 (sm_90, which it carries): TD125 passes" \
  test "$(field TD125 status)" = pass
run validate "$IMG:healthy" --expect target-gpus=T4 --json="$WORK/v.json"
check "torch 2.11.0 aarch64 for AWS g5g's T4G (sm_75): TD125 names torch/lib/libtorch_cuda.so" \
  bash -c "test $(rc) = 1 && grep -q 'torch/lib/libtorch_cuda.so' <<<\"$(field TD125 message)\" && grep -q T4 <<<\"$(field TD125 message)\""

# --- preflight, sbom and doctor of the arm64 image, no emulation ------------------------------
run preflight "$IMG:healthy" --driver 580.95.05 --gpu GB200 --json="$WORK/pre.json"
check "preflight without emulation: UNKNOWN (exit 1), the kernel audit not run, saying torch cannot run here" \
  bash -c "test $(rc) = 1 && python3 -c \"import json; d=json.load(open('$WORK/pre.json')); assert d['answer'] == 'unknown' and any('the kernel audit needs torch to run, and the image is linux/arm64' in n for n in d['notes']), d\""
run sbom "$IMG:healthy" -o "$WORK/arm64.cdx.json"
check "sbom without emulation: exit 0, every distribution read from the files, torch 2.11.0 and the aarch64 nvidia-nccl-cu13 among them" \
  bash -c "test $(rc) = 0 && python3 -c \"import json; c={(x['name'], x.get('version')) for x in json.load(open('$WORK/arm64.cdx.json'))['components']}; assert ('torch', '2.11.0') in c and ('nvidia-nccl-cu13', '2.28.9') in c, sorted(c)[:20]\""
run doctor --image "$IMG:healthy" --json="$WORK/doc.json"
check "doctor without emulation: exit 3, it runs the image's code and cannot here, pointing at validate's files-only tier" \
  bash -c "test $(rc) = 3 && grep -q \"doctor runs the image's code, and the image is linux/arm64 and the engine runs linux/amd64 with no emulation\" '$WORK/err' && grep -q 'reads it in its files-only tier' '$WORK/err'"

# --- the emulated tier: qemu-user runs the image's own code --------------------------------------
# With Debian's qemu-user-static registered in binfmt_misc (F flag: it also runs inside
# containers), validate runs the linux/arm64 probes (cross-compiled by zig beside the host's)
# and the image's own aarch64 python, under emulation: the checks that the files-only tier
# skips are judged on what torch really does.
binfmt_restore
if why=$(binfmt_aarch64); then
  start=$(date +%s.%N)
  run validate "$IMG:healthy" --json="$WORK/v.json"
  echo "# figure: validate (emulated: qemu-user runs the image's python and the linux/arm64 probes) of the healthy arm64 image, whole process: $(secs "$start") s"
  check "emulated: exit 0, the emulated tier named with its reason (qemu-user, no GPU tier)" \
    bash -c "test $(rc) = 0 && grep -q 'linux/arm64 emulated: the image is linux/arm64 and the engine runs linux/amd64; its code runs under qemu-user' '$WORK/out' && python3 -c \"import json; i=json.load(open('$WORK/v.json'))['images'][0]; assert i['tier'] == 'emulated' and i['platform'] == 'linux/arm64'\""
  check "emulated: the torch probe ran the image's aarch64 python3.11, imported torch from the image, which loaded its CUDA 13 runtime" \
    python3 -c "import json; t=json.load(open('$WORK/v.json'))['images'][0]['probes']['torch']; assert t['status'] == 'pass' and t['interpreter']['realpath'] == '/usr/bin/python3.11' and t['torch_file'] == '$SITE/torch/__init__.py' and '$SITE/nvidia/cu13/lib/libcudart.so.13' in t['loaded_libraries'], t"
  check "emulated: TD133 checks torch/version.py against what torch reports" \
    bash -c "test \"$(field TD133 status)\" = pass"
  check "emulated: TD119, TD121 and TD140 are judged, no longer skipped for the files-only tier" \
    bash -c "for id in TD119 TD121 TD140; do python3 -c \"import json,sys; c=next(c for c in json.load(open('$WORK/v.json'))['images'][0]['checks'] if c['id']=='\$id'); sys.exit(c['message'].startswith('files-only tier'))\" || exit 1; done"
  # One preflight for three targets: torch and the kernel audit run once under qemu-user.
  run preflight "$IMG:healthy" --driver 580.95.05 --gpu GB200,GH200,T4 --json="$WORK/pre.json"
  check "emulated preflight: GB200 and GH200 yes, AWS g5g's T4G (sm_75) no (exit 1), torch run under qemu-user and its kernels audited, said in a note" \
    bash -c "test $(rc) = 1 && python3 -c \"import json; d=json.load(open('$WORK/pre.json')); t={x['gpu']: x['ok'] for x in d['targets']}; assert d['answer'] == 'no' and t == {'GB200': True, 'GH200': True, 'T4': False} and any('runs under qemu-user' in n for n in d['notes']) and not any('not audited' in n for n in d['notes']), d\""
  run doctor --image "$IMG:healthy" --json="$WORK/doc.json"
  check "emulated doctor: the fingerprint has torch 2.11.0+cu130 from the image's python, run under qemu-user" \
    python3 -c "import json; t=json.load(open('$WORK/doc.json'))['torch']; assert t['version'] == '2.11.0+cu130', t"
  # The two breakages in one run (two at a time): each image's report split out for `field`.
  run validate "$IMG:nccl-x86" "$IMG:cpu" -j 2 --json="$WORK/both.json"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [json.dump(dict(d, images=[i]), open(sys.argv[2 + n], 'w')) for n, i in enumerate(d['images'])]" \
    "$WORK/both.json" "$WORK/nccl.json" "$WORK/cpu.json"
  echo "# the torch probe in the x86_64 NCCL image, under qemu-user: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['images'][0]['probes']['torch']['reason'][:300])" "$WORK/nccl.json")"
  check "emulated, the x86_64 NCCL wheel: exit 1, torch does not import, in the aarch64 loader's own words about libnccl.so.2" \
    bash -c "test $(rc) = 1 && python3 -c \"import json; t=json.load(open('$WORK/nccl.json'))['images'][0]['probes']['torch']; assert t['status'] != 'pass' and 'libnccl.so.2' in json.dumps(t), t\""
  check "emulated, torch 2.10.0's CPU-only aarch64 wheel: the running torch is a CPU build (TD121) of 2.10.0 (TD120), as its files say (TD133)" \
    bash -c "test \"$(field TD121 status "$WORK/cpu.json")\" = fail && test \"$(field TD121 message "$WORK/cpu.json")\" = 'torch is a CPU build in an image labelled CUDA 13.0' && test \"$(field TD120 status "$WORK/cpu.json")\" = fail && grep -q '2.10.0' <<<\"$(field TD120 observed "$WORK/cpu.json")\" && test \"$(field TD133 status "$WORK/cpu.json")\" = pass"
  # A probe directory without the linux/arm64 set: emulation alone is not enough.
  mkdir -p "$WORK/host-probes" && cp -a "$PROBES"/. "$WORK/host-probes/" && rm -rf "$WORK/host-probes/linux-arm64"
  run validate "$IMG:healthy" --probes="$WORK/host-probes" --json="$WORK/v.json"
  check "emulated but no linux/arm64 probes: the files-only tier, saying the probes were not built" \
    bash -c "test $(rc) = 0 && grep -q \"this host emulates linux/arm64 (binfmt qemu), but torchdock's linux/arm64 probes were not built\" '$WORK/out'"
  binfmt_restore
else
  skipped "the emulated tier (qemu-user): $why"
fi

# --- --files-only on this machine's own architecture ---------------------------------------------
run validate "$TD_REGISTRY/library/debian:bookworm" --files-only --json="$WORK/v.json"
check "--files-only on an amd64 image: the files-only tier by request, TD132 has nothing of another platform" \
  bash -c "grep -q 'files-only: --files-only' '$WORK/out' && python3 -c \"import json; i=json.load(open('$WORK/v.json'))['images'][0]; assert i['tier'] == 'files-only' and i['platform'] == 'linux/amd64'\""

finish
