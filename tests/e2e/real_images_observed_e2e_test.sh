#!/usr/bin/env bash
# What the process does beats what a model predicts (../shared/reports/real-images-3.md,
# issue 34): runner ENTRYPOINTs kept (uv run, poetry run, Poetry's cache venv), torch finding
# its nvidia-* wheels through sys.path (the objects its import mapped are the evidence, not the
# loader model), a pip --target tree's RECORD, a USER without a temporary directory, torch for
# another Python (a 3.11 venv in a Python 3.13 stage included), cuSPARSELt told from
# cuSPARSE, a CMD through uv run, a .pth, torch twice
# (a --system-site-packages venv), missing nvidia-* wheels, a 50-entry LD_LIBRARY_PATH, torch's
# pins moved both ways, numpy moved under pandas, an older torchvision first on PYTHONPATH, a
# distroless layout. Every image derives from the genuine torch
# 2.9.1 install (tests/e2e/lib/observed_images.sh); each verdict is checked beside the ground
# truth taken by running the image as `docker run` does.
# Usage: real_images_observed_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-observed-e2e-XXXXXX)
export TORCHDOCK_CACHE_DIR=$WORK/cache
trap 'services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
source "$ROOT/tests/e2e/lib/real_images.sh"
source "$ROOT/tests/e2e/lib/observed_images.sh"
source "$ROOT/tests/e2e/lib/verdicts.sh"

first_explanation() { "$TD" explain "$1" --json 2>/dev/null | python3 -c "import json,sys; e=json.load(sys.stdin)['explanations']; print(e[0]['id'] if e else 'none')"; }
# timed CASE: validate tdob/torch:CASE (the file-probe cache as the runs before left it),
# printing how long it took beside the floor: one `docker run IMAGE python -c 'import torch'`
# (OB_PYTHON instead of python where set)
timed() {
  local s v f
  s=$(date +%s.%N); /usr/bin/docker run --rm --network=none "tdob/torch:$1" "${OB_PYTHON:-python}" -c 'import torch' >/dev/null 2>&1
  f=$(echo "$(date +%s.%N) - $s" | bc)
  s=$(date +%s.%N); validate "tdob/torch:$1" "${@:2}"; v=$(echo "$(date +%s.%N) - $s" | bc)
  echo "# figure: validate tdob/torch:$1: $v s, exit $(rc); docker run python -c 'import torch': $f s ($(echo "scale=2; $v / $f" | bc)x)"
}
gt() { local g; g=$(ob_truth "$@"); echo "# ground truth $1: $g" >&2; echo "$g"; }

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
start=$(date +%s)
build_real_images /var/tmp/torchdock/real-images && build_observed_images "$WORK/images"
check "built the observed-evidence images from the genuine torch 2.9.1 install" test $? = 0 ||
  { finish; exit 1; }
echo "# figure: images built (or found in the cache) in $(( $(date +%s) - start )) s"

# --- runner ENTRYPOINTs: the probes start through them, as `docker run IMAGE python` does ----
g=$(gt uvrun); timed uvrun
check "uvrun: ground truth: healthy through uv run ($g)" contains "$g" "ok 2.9.1"
check "uvrun: validate passes (exit $(rc))" test "$(rc)" = 0
check "uvrun: TD119 judges /app/.venv's python ($(msg TD119))" contains "$(status TD119) $(msg TD119)" pass /app/.venv
check "uvrun: TD127 says the environment is the one uv run sets up ($(msg TD127))" contains "$(msg TD127)" "uv run --frozen"
doctor tdob/torch:uvrun
check "uvrun: doctor exits 0 with no 'no torch' finding ($(findings))" \
  bash -c 'test "$1" = 0 && [[ $2 != *DR113* && $2 != *DR121* ]]' _ "$(rc)" "$(findings)"
"$TD" sbom tdob/torch:uvrun --probes "$PROBES" -o "$WORK/uvrun.cdx.json" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "uvrun: sbom lists the venv's distributions (exit $(rc))" \
  bash -c "test $(rc) = 0 && python3 -c \"import json,sys; d=json.load(open('$WORK/uvrun.cdx.json')); sys.exit(0 if any(c.get('name')=='torch' for c in d['components']) else 1)\""

g=$(gt poetryrun); timed poetryrun
check "poetryrun: ground truth: healthy through poetry run ($g)" contains "$g" "ok 2.9.1"
check "poetryrun: validate passes (exit $(rc))" test "$(rc)" = 0
check "poetryrun: TD119 judges the venv Poetry keeps in its cache ($(msg TD119))" \
  contains "$(status TD119) $(msg TD119)" pass /root/.cache/pypoetry/virtualenvs/app-

# --- torch's own loading: sys.path preloading, a --target tree -----------------------------
g=$(gt target 'import torch; print("GT", torch.__version__, torch.__file__)'); timed target
check "target: ground truth: torch imports from /opt/pkgs ($g)" contains "$g" "ok 2.9.1" /opt/pkgs/torch
check "target: validate passes (exit $(rc))" test "$(rc)" = 0
check "target: TD112 passes: ../../bin/torchrun is read where pip --target put it ($(msg TD112))" test "$(status TD112)" = pass
check "target: TD112 names the venv's torch it did not hash: python imports torch from /opt/pkgs" \
  contains "$(msg TD112)" "torch 2.9.1 in /app/.venv/lib/python3.11/site-packages (not read: this python imports torch from /opt/pkgs)"
check "target: TD110 passes on what the process mapped ($(msg TD110))" test "$(status TD110)" = pass
check "target: TD119 names /opt/pkgs and the PYTHONPATH that puts it first ($(msg TD119))" contains "$(msg TD119)" /opt/pkgs "PYTHONPATH=/opt/pkgs"
doctor tdob/torch:target
check "target: doctor finds no unresolved library ($(findings))" lacks "$(findings)" DR104
check "target: the fingerprint records PYTHONPATH" \
  python3 -c "import json,sys; d=json.load(open('$WORK/d.json')); sys.exit(0 if d['env'].get('PYTHONPATH') == '/opt/pkgs' else 1)"

# --- a USER without a temporary directory ---------------------------------------------------
g=$(gt tmpro); g2=$(gt tmpro 'import tempfile; tempfile.mkdtemp()')
timed tmpro
check "tmpro: ground truth: torch imports ($g), a temporary directory cannot be made ($g2)" \
  bash -c '[[ $1 == "ok 2.9.1"* && $2 == *"No usable temporary directory"* ]]' _ "$g" "$g2"
check "tmpro: validate fails (exit $(rc)) on TD134, naming the temporary directory ($(msg TD134))" \
  contains "$(rc) $(status TD134) $(msg TD134)" 1 fail "no writable temporary directory"
check "tmpro: TD119 passes (torch imports; $(status TD119))" test "$(status TD119)" = pass
check "tmpro: TD133 does not claim 'no GPU code' ($(status TD133): $(msg TD133))" lacks "$(msg TD133)" "no GPU code"
# torchvision's import, torch.compile and the file rendezvous fail here, with this text.
ob_error_log tmpro 'import tempfile; tempfile.mkdtemp()' "$WORK/tmpro.log"
check "tmpro: explain names the missing temporary directory (EX508)" test "$(first_explanation "$WORK/tmpro.log")" = EX508

# --- torch for another Python ---------------------------------------------------------------
g=$(gt abi); timed abi
check "abi: ground truth: import torch fails ($g)" contains "$g" "fail"
check "abi: TD112 passes: the --target tree's ../../bin rows are in it, though it is named site-packages ($(msg TD112))" \
  test "$(status TD112)" = pass
check "abi: validate fails (exit $(rc)); TD119 names Python 3.12 against 3.11 ($(msg TD119))" \
  contains "$(rc) $(status TD119) $(msg TD119)" 1 fail "built for Python 3.12" "runs Python 3.11"
doctor tdob/torch:abi
check "abi: doctor exits 1 with DR125 ($(findings))" contains "$(rc) $(findings)" 1 "DR125 error"
ob_error_log abi 'import torch' "$WORK/abi.log"
check "abi: explain on torch's own text (Failed to load PyTorch C extensions): EX506" \
  bash -c "grep -q 'Failed to load PyTorch C extensions' '$WORK/abi.log' && test $(first_explanation "$WORK/abi.log") = EX506"

g=$(gt venvabi 'import sys; print("GT", sys.version.split()[0]); import torch')
validate tdob/torch:venvabi
check "venvabi: ground truth: the venv's python is 3.11 and has no torch module ($g)" \
  bash -c '[[ $1 == fail*"No module named '"'"'torch'"'"'"* ]]' _ "$g"
check "venvabi: TD119 names the venv built for Python 3.12 under 3.11, not 'no PyTorch' ($(msg TD119))" \
  contains "$(rc) $(msg TD119)" 1 "built for Python 3.12 (lib/python3.12), but the image runs Python 3.11"
check "venvabi: TD101 is skipped, not passed as a CPU image ($(status TD101))" test "$(status TD101)" = skip
doctor tdob/torch:venvabi
check "venvabi: doctor exits 1 with DR125, never 'no torch' ($(findings))" \
  bash -c 'test "$1" = 1 && [[ $2 == *"DR125 error"* && $2 != *DR113* ]]' _ "$(rc)" "$(findings)"

# --- report cases 5 and 6: the Python 3.11 venv copied into Debian trixie (Python 3.13) -----
gv=$(gt py313 'import sys; print("GT", sys.version.split()[0])')
g=$(gt py313 'import torch')
validate tdob/torch:py313
check "py313: ground truth: the venv's python is 3.13 ($gv) and has no torch module ($g)" \
  bash -c '[[ $1 == "ok 3.13."* && $2 == fail*"No module named '"'"'torch'"'"'"* ]]' _ "$gv" "$g"
check "py313: TD119 names the venv built for Python 3.11 under 3.13, not 'no PyTorch' ($(msg TD119))" \
  contains "$(rc) $(msg TD119)" 1 "built for Python 3.11 (lib/python3.11), but the image runs Python 3.13"
check "py313: TD101 is skipped, not passed as a CPU image ($(status TD101))" test "$(status TD101)" = skip
doctor tdob/torch:py313
check "py313: doctor exits 1 with DR125, never 'no torch' ($(findings))" \
  bash -c 'test "$1" = 1 && [[ $2 == *"DR125 error"* && $2 != *DR113* ]]' _ "$(rc)" "$(findings)"
"$TD" preflight tdob/torch:py313 --probes "$PROBES" --driver 570.124.06 --gpu H100 >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "py313: preflight says NO for H100 because of the Python, not UNKNOWN/yes ($(grep H100 "$WORK/out"))" \
  contains "$(rc) $(grep H100 "$WORK/out")" 1 "no - torch in /app/.venv/lib/python3.11/site-packages is built for Python 3.11"

g=$(gt py313pp); timed py313pp
check "py313pp: ground truth: import torch fails under 3.13 ($g)" contains "$g" "fail"
check "py313pp: validate fails (exit $(rc)); TD119 names Python 3.11 against 3.13 ($(msg TD119))" \
  contains "$(rc) $(status TD119) $(msg TD119)" 1 fail "built for Python 3.11" "runs Python 3.13"
doctor tdob/torch:py313pp
check "py313pp: doctor exits 1 with DR125 ($(findings))" contains "$(rc) $(findings)" 1 "DR125 error"
"$TD" preflight tdob/torch:py313pp --probes "$PROBES" --driver 570.124.06 --gpu H100 >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "py313pp: preflight's NO names the Python, not a library torch never loads ($(grep H100 "$WORK/out"))" \
  bash -c '[[ $1 == 1*"the cause: torch in"*"built for Python 3.11"* && $1 != *libcufftw* ]]' _ "$(rc) $(grep H100 "$WORK/out")"
ob_error_log py313pp 'import torch' "$WORK/py313pp.log"
check "py313pp: explain on torch's own text (Failed to load PyTorch C extensions): EX506" \
  bash -c "grep -q 'Failed to load PyTorch C extensions' '$WORK/py313pp.log' && test $(first_explanation "$WORK/py313pp.log") = EX506"

# --- cuSPARSELt, not cuSPARSE ----------------------------------------------------------------
g=$(gt nocusparselt); timed nocusparselt
check "nocusparselt: ground truth: import fails on libcusparseLt ($g)" contains "$g" fail libcusparseLt
check "nocusparselt: TD119 names cuSPARSELt (EX217), not cuSPARSE (EX202) ($(msg TD119))" \
  bash -c 'contains() { [[ $1 == *EX217* && $1 != *EX202* ]]; }; contains "$1"' _ "$(msg TD119)"
ob_error_log nocusparselt 'import torch' "$WORK/lt.log"
check "nocusparselt: explain's first answer is cuSPARSELt (EX217)" test "$(first_explanation "$WORK/lt.log")" = EX217

# --- a CMD through uv run: `docker run IMAGE python` has no torch, and says where it is --------
g=$(OB_PYTHON=python3 gt uvruncmd); gcmd=$(/usr/bin/docker run --rm --network=none tdob/torch:uvruncmd 2>&1 | tail -1)
validate tdob/torch:uvruncmd
check "uvruncmd: ground truth: python3 has no torch ($g); the CMD imports it ($gcmd)" \
  bash -c '[[ $1 == fail*"No module named '"'"'torch'"'"'"* && $2 == 2.9.1* ]]' _ "$g" "$gcmd"
check "uvruncmd: validate fails (exit $(rc)); TD119 names /app/.venv/bin/python and the CMD's uv run ($(msg TD119))" \
  contains "$(rc) $(msg TD119)" 1 "imports in /app/.venv/bin/python" "CMD \`uv run --frozen python main.py\`"
check "uvruncmd: TD119's fix is to run that python ($(field TD119 fix))" contains "$(field TD119 fix)" "--python /app/.venv/bin/python"
check "uvruncmd: TD101 is skipped, not passed as a CPU image ($(status TD101): $(msg TD101))" test "$(status TD101)" = skip
doctor tdob/torch:uvruncmd
check "uvruncmd: doctor exits 1 with DR121 (torch installed, not found), not 'no torch' ($(findings))" \
  bash -c 'test "$1" = 1 && [[ $2 == *DR121* && $2 != *DR113* ]]' _ "$(rc)" "$(findings)"

# --- torch's site directory reached by another python: a .pth, a --system-site-packages venv ---
g=$(OB_PYTHON=python3 gt pth); OB_PYTHON=python3 timed pth
check "pth: ground truth: /usr/bin/python3 imports torch through the .pth ($g)" contains "$g" "ok 2.9.1"
check "pth: validate passes (exit $(rc)); TD119 judges /usr/bin/python3 ($(msg TD119))" \
  contains "$(rc) $(status TD119) $(msg TD119)" 0 pass /usr/bin/python3 /app/.venv/lib/python3.11/site-packages
g=$(gt twice '
import torch, re
maps = open("/proc/self/maps").read()
cudart = re.search(r"\S+libcudart\.so\.12", maps).group(0)
print("GT", torch.__file__, cudart)'); timed twice
check "twice: ground truth: torch from /opt/venv, its cudart mapped from /app/.venv ($g)" \
  contains "$g" "ok /opt/venv/lib/python3.11/site-packages/torch" "/app/.venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
check "twice: validate passes (exit $(rc)); TD119 judges /opt/venv ($(msg TD119))" \
  contains "$(rc) $(status TD119) $(msg TD119)" 0 pass "/opt/venv/lib/python3.11/site-packages"
check "twice: TD112 hashes the torch /opt/venv imports, and names the one beneath it ($(status TD112))" \
  contains "$(status TD112) $(msg TD112)" pass "(not read: this python imports torch from /opt/venv/lib/python3.11/site-packages)"
check "twice: TD110 passes on what the process mapped and names the model's miss ($(msg TD110))" \
  contains "$(status TD110) $(msg TD110)" pass "mapped from /app/.venv"
doctor tdob/torch:twice
check "twice: doctor exits 0, no unresolved library ($(findings))" bash -c 'test "$1" = 0 && [[ $2 != *DR104* ]]' _ "$(rc)" "$(findings)"

# --- missing nvidia wheels: named by the file that does not load, and its wheel --------------
g=$(gt nonvshmem); validate tdob/torch:nonvshmem
check "nonvshmem: ground truth: import fails on libnvshmem_host.so.3 ($g)" contains "$g" fail libnvshmem_host.so.3
check "nonvshmem: TD110 names libnvshmem_host.so.3, TD128 the wheel nvidia-nvshmem-cu12==3.3.20 ($(msg TD110); $(msg TD128))" \
  contains "$(rc) $(status TD110) $(msg TD110) $(msg TD128)" 1 fail libnvshmem_host.so.3 nvidia-nvshmem-cu12==3.3.20
check "nonvshmem: TD119 explains it as NVSHMEM (EX219) ($(msg TD119))" contains "$(msg TD119)" EX219
g=$(gt nonvidia); validate tdob/torch:nonvidia
check "nonvidia: ground truth: import fails without the nvidia wheels' files ($g)" contains "$g" fail "libcublas"
check "nonvidia: TD112 names the nvidia-* wheels' missing files ($(msg TD112))" \
  contains "$(rc) $(status TD112) $(msg TD112)" 1 fail "nvidia-" "missing"
ob_error_log nonvidia 'import torch' "$WORK/nonvidia.log"
check "nonvidia: explain's first answer is the CUDA runtime not found (EX101)" test "$(first_explanation "$WORK/nonvidia.log")" = EX101

# --- a 50-entry LD_LIBRARY_PATH with an older cudart and nvJitLink: torch maps its own -------
g=$(gt ldlphuge '
import torch, re
maps = open("/proc/self/maps").read()
print("GT", *sorted(set(re.findall(r"\S+lib(?:cudart|nvJitLink)\.so\.12", maps))))'); timed ldlphuge
check "ldlphuge: ground truth: the process maps the wheels' cudart and nvJitLink only ($g)" \
  bash -c '[[ $1 == ok* && $1 == */nvidia/cuda_runtime/lib/libcudart.so.12* && $1 == */nvidia/nvjitlink/lib/libnvJitLink.so.12* && $1 != *cuda-12.1* ]]' _ "$g"
check "ldlphuge: validate passes (exit $(rc)); TD111 warns of cudart 12.1 that torch does not load ($(msg TD111))" \
  contains "$(rc) $(status TD111) $(msg TD111)" 0 warn "/usr/local/cuda-12.1/lib64/libcudart.so.12 (12.1)" "torch loads only 12.8"
check "ldlphuge: TD111 also names nvJitLink 12.1 by its file name (no nvJitLinkVersion) beside torch's 12.8" \
  contains "$(field TD111 observed)" "libnvJitLink.so.12 (12 by its file name: the library reports no version (no nvJitLinkVersion))" \
  "torch loads only 12.8 from /app/.venv/lib/python3.11/site-packages/nvidia/nvjitlink/lib"
check "ldlphuge: TD110 names where the loader model and the process disagree ($(msg TD110))" \
  contains "$(msg TD110)" "libnvJitLink.so.12: the loader model finds /usr/local/cuda-12.1/lib64/libnvJitLink.so.12"
doctor tdob/torch:ldlphuge
check "ldlphuge: the fingerprint's nvJitLink is the mapped wheel copy, the model's 12.1 kept beside it" python3 - "$WORK/d.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["libraries"] if r["soname"] == "libnvJitLink.so.12"]
print(rows)
sys.exit(0 if rows and all(r["path"].endswith("/nvidia/nvjitlink/lib/libnvJitLink.so.12")
                           and r["found_via"] == "mapped by the process" for r in rows)
         and any(r.get("model_path", "").startswith("/usr/local/cuda-12.1/") for r in rows) else 1)
PY

# --- an older torchvision put first by PYTHONPATH: the process dies, the cause is named ------
g=$(gt pypathtv); gtv=$(ob_truth pypathtv 'import torchvision'); validate tdob/torch:pypathtv
check "pypathtv: ground truth: torch imports ($g), torchvision kills the process ($gtv)" \
  bash -c '[[ $1 == "ok 2.9.1"* && $2 == "fail 139"* ]]' _ "$g" "$gtv"
check "pypathtv: TD124 names torchvision 0.23.0, the PYTHONPATH that put it first, and the pair ($(msg TD124))" \
  contains "$(rc) $(status TD124) $(msg TD124)" 1 fail "torchvision 0.23.0 (from /opt/pkgs, found through PYTHONPATH=/opt/pkgs" "does not pair with torch 2.9.1"
check "pypathtv: TD119's fix points at TD124 ($(field TD119 fix))" contains "$(field TD119 fix)" TD124

# --- distroless: no shell, no dpkg database, no os-release, no ld.so.cache, a non-root USER ---
g=$(/usr/bin/docker run --rm --network=none tdob/torch:distroless -c 'import os, torch; print("GT", torch.__version__, os.getuid())' 2>&1 | grep '^GT ')
gsh=$(/usr/bin/docker run --rm --network=none --entrypoint /bin/sh tdob/torch:distroless -c true 2>&1; echo "rc=$?")
validate tdob/torch:distroless
check "distroless: ground truth: healthy as uid 65532 ($g), no shell ($(tail -1 <<<"$gsh"))" \
  bash -c '[[ $1 == "GT 2.9.1"*" 65532" && $2 != *"rc=0"* ]]' _ "$g" "$gsh"
check "distroless: validate passes (exit $(rc)); TD119 judges the ENTRYPOINT's python ($(msg TD119))" \
  contains "$(rc) $(status TD119) $(msg TD119)" 0 pass /app/.venv/bin/python
doctor tdob/torch:distroless
check "distroless: doctor exits 0 and reads /dev/shm without a shell ($(findings))" \
  bash -c 'test "$1" = 0 && python3 -c "import json,sys; sys.exit(0 if isinstance(json.load(open(sys.argv[1])).get(\"shm_bytes\"), int) else 1)" "$2"' _ "$(rc)" "$WORK/d.json"
"$TD" sbom tdob/torch:distroless --probes "$PROBES" -o "$WORK/distroless.cdx.json" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "distroless: sbom lists torch (exit $(rc))" \
  bash -c "test $(rc) = 0 && python3 -c \"import json,sys; d=json.load(open('$WORK/distroless.cdx.json')); sys.exit(0 if any(c.get('name')=='torch' for c in d['components']) else 1)\""

# --- torch's pins moved both ways; numpy moved under pandas (outside torch's stack) ---------
g=$(gt pinmoved '
import ctypes, re, torch, triton
lib = re.search(r"\S+libnccl\.so\.2", open("/proc/self/maps").read()).group(0)
v = ctypes.c_int(); ctypes.CDLL(lib).ncclGetVersion(ctypes.byref(v))
print("GT", triton.__version__, v.value)'); validate tdob/torch:pinmoved
check "pinmoved: ground truth: imports with triton 3.4.0, the process maps NCCL 23203 ($g)" contains "$g" "ok 3.4.0 23203"
check "pinmoved: TD128 fails naming which way each pin moved ($(msg TD128))" \
  contains "$(rc) $(status TD128) $(msg TD128)" 1 fail "nvidia-nccl-cu12 2.32.3 is installed (newer than the pin)" "triton 3.4.0 is installed (older than the pin)"
check "pinmoved: TD104 observes the NCCL the process maps, 2.32.3 ($(field TD104 observed))" test "$(field TD104 observed)" = 2.32.3
g=$(gt numpyabi 'import numpy, torch; print("GT", numpy.__version__, torch.from_numpy(numpy.arange(3)).sum().item())')
gp=$(ob_truth numpyabi 'import pandas'); validate tdob/torch:numpyabi
check "numpyabi: ground truth: torch works with numpy 2.4.6 ($g), pandas does not import ($gp)" \
  bash -c '[[ $1 == "ok 2.4.6 3" && $2 == fail*"numpy.dtype size changed"* ]]' _ "$g" "$gp"
check "numpyabi: validate passes: torch's stack is healthy (exit $(rc))" test "$(rc)" = 0

check "no probe container is left behind" test "$(/usr/bin/docker ps -aq --filter label=io.torchdock.run | wc -l)" = 0
finish
