#!/usr/bin/env bash
# validate and doctor judge the image as it runs (../shared/reports/real-images-2.md): the
# python `docker run IMAGE python` runs (after a wrapper ENTRYPOINT), never the image's
# ENTRYPOINT app, what LD_PRELOAD loads first, damaged and unreadable files, crashes named
# by signal, a torchvision that does not pair. Every image is a genuine torch 2.9.1 install
# (tests/e2e/lib/real_images.sh, shared with e2e_real_images) changed the way users change
# them (tests/e2e/lib/runtime_images.sh); each verdict is checked next to the ground truth
# taken by running the image as `docker run` does.
# Usage: real_images_runtime_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-runtime-e2e-XXXXXX)
export TORCHDOCK_CACHE_DIR=$WORK/cache
trap 'services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
source "$ROOT/tests/e2e/lib/real_images.sh"
source "$ROOT/tests/e2e/lib/runtime_images.sh"
source "$ROOT/tests/e2e/lib/verdicts.sh"

# timed CASE: validate tdrt/torch:CASE, printing how long it took
timed() { local s; s=$(date +%s.%N); validate "tdrt/torch:$1" "${@:2}"; echo "# figure: validate tdrt/torch:$1: $(echo "$(date +%s.%N) - $s" | bc) s, exit $(rc)"; }
gt() { local g; g=$(ground_truth "$1"); echo "# ground truth $1: $g" >&2; echo "$g"; }

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
start=$(date +%s)
build_real_images /var/tmp/torchdock/real-images && build_runtime_images "$WORK/images"
check "built the runtime images from the genuine torch 2.9.1 install" test $? = 0
echo "# figure: images built (or found in the cache) in $(( $(date +%s) - start )) s"

# --- which python: the one PATH resolves `python` to, not the first with a torch package ----
g=$(gt twopy); timed twopy
check "twopy: ground truth: the image's python cannot import torch ($g)" contains "$g" "fail"
check "twopy: validate fails (exit $(rc))" test "$(rc)" = 1
check "twopy: TD119 fails on /opt/venv2/bin/python" contains "$(status TD119) $(msg TD119)" fail /opt/venv2/bin/python
check "twopy: TD127 warns that CONDA_PREFIX names another environment" contains "$(status TD127) $(msg TD127)" warn CONDA_PREFIX=/app/.venv
check "twopy: /app/.venv's python is listed with its torch" contains "$(msg TD127)" "/app/.venv/bin/python" "2.9.1"
g=$(gt stalevenv); timed stalevenv
check "stalevenv: ground truth: healthy ($g)" contains "$g" "ok 2.9.1"
check "stalevenv: validate passes (exit $(rc)), judging /app/.venv/bin/python" \
  contains "$(rc) $(msg TD119)" 0 /app/.venv/bin/python
check "stalevenv: TD127 warns about VIRTUAL_ENV=/opt/venv2" contains "$(status TD127) $(msg TD127)" warn VIRTUAL_ENV=/opt/venv2

# --- the ENTRYPOINT: a wrapper's environment is used; an app never swallows the probes -----
g=$(gt entryact); timed entryact
check "entryact: ground truth: healthy through the entrypoint ($g)" contains "$g" "ok 2.9.1"
check "entryact: validate passes (exit $(rc))" test "$(rc)" = 0
check "entryact: the environment its ENTRYPOINT sets up is named" contains "$(msg TD127)" entrypoint.sh
s=$(date +%s); g=$(gt entryapp); timed entryapp; took=$(( $(date +%s) - s ))
check "entryapp: ground truth (python instead of the app): healthy ($g)" contains "$g" "ok 2.9.1"
check "entryapp: validate passes (exit $(rc)) in ${took} s, not at the probes' timeout" \
  test "$(rc)" = 0 -a "$took" -lt 90
check "entryapp: the ENTRYPOINT is named as a program of its own" contains "$(msg TD127)" "/opt/serve.py" "program"
g=$(gt noshell); timed noshell
check "noshell: ground truth: healthy ($g)" contains "$g" "ok 2.9.1"
check "noshell: torch judged without a shell (TD119 $(status TD119))" test "$(status TD119)" = pass

# --- damaged files: named by RECORD; crashes named by signal -------------------------------
g=$(gt engtrunc); timed engtrunc
check "engtrunc: validate fails (exit $(rc)): an empty cuDNN engine library" test "$(rc)" = 1
check "engtrunc: TD112 names the file, its wheel and the fix" \
  contains "$(status TD112) $(msg TD112) $(field TD112 fix)" fail libcudnn_engines_precompiled.so.9 nvidia-cudnn-cu12 "force-reinstall"
g=$(gt tornlib); timed tornlib
check "tornlib: ground truth: import torch dies ($g)" contains "$g" "fail 135"
check "tornlib: TD119 names SIGBUS" contains "$(status TD119) $(msg TD119)" fail SIGBUS
check "tornlib: TD112 names libc10_cuda.so" contains "$(msg TD112)" "torch/lib/libc10_cuda.so"
doctor tdrt/torch:tornlib
check "tornlib: doctor exits 1 and never says 'no torch' ($(findings | cut -c1-200))" \
  bash -c "[ $(rc) = 1 ] && ! grep -q 'no torch' '$WORK/out'"
g=$(gt graphtrunc); timed graphtrunc
check "graphtrunc: ground truth: cuDNN dies ($g)" contains "$g" "fail"
check "graphtrunc: validate fails; TD112 names libcudnn_graph.so.9" \
  contains "$(rc) $(msg TD112)" 1 libcudnn_graph.so.9
check "graphtrunc: TD119 names the crash and its stage" contains "$(status TD119) $(msg TD119)" fail "died of"

# --- what is installed beside torch ----------------------------------------------------------
g=$(gt tvskew); timed tvskew
check "tvskew: ground truth: torchvision fails ($g)" contains "$g" "fail" "torchvision::nms"
check "tvskew: TD124 fails naming the torchvision that pairs (0.24.1)" \
  contains "$(status TD124) $(msg TD124) $(field TD124 fix)" fail 0.22.1 0.24.1
g=$(gt unreadable); timed unreadable
check "unreadable: ground truth: import fails as uid 1000 ($g)" contains "$g" "fail"
check "unreadable: TD110 says the directory cannot be read, not 'install the wheel'" \
  contains "$(status TD110) $(msg TD110) $(field TD110 fix)" fail "mode 0700" "uid 1000" chmod
g=$(gt jitpreload); timed jitpreload
check "jitpreload: ground truth: import fails ($g)" contains "$g" "fail"
check "jitpreload: TD119 names LD_PRELOAD as the cause" contains "$(status TD119) $(msg TD119) $(field TD119 fix)" fail LD_PRELOAD
check "jitpreload: TD113 fails naming the preloaded nvJitLink" contains "$(status TD113) $(msg TD113)" fail /opt/oldjit
g=$(gt novisible); timed novisible
check "novisible: validate passes (exit $(rc)) with a TD131 warning" \
  contains "$(rc) $(status TD131) $(msg TD131)" 0 warn CUDA_VISIBLE_DEVICES

# --- the integrity check's cache: a second validate of the same image hashes nothing -------
# (a fresh cache: the images above that only change ENV share tdreal/torch:uv's layers)
export TORCHDOCK_CACHE_DIR=$WORK/cache-fresh
s=$(date +%s.%N); validate tdreal/torch:uv; cold=$(echo "$(date +%s.%N) - $s" | bc)
first_cached=$(python3 -c "import json; print(json.load(open('$WORK/v.json'))['images'][0]['probes']['record']['cached'])")
s=$(date +%s.%N); validate tdreal/torch:uv; warm=$(echo "$(date +%s.%N) - $s" | bc)
second_cached=$(python3 -c "import json; print(json.load(open('$WORK/v.json'))['images'][0]['probes']['record']['cached'])")
echo "# figure: validate tdreal/torch:uv cold (hashing) $cold s, warm (cache) $warm s"
check "record cache: first run hashes ($first_cached), second reads the cache ($second_cached), both pass" \
  test "$first_cached $second_cached $(rc) $(status TD112)" = "False True 0 pass"
check "every report names the image ID" contains "$(cat "$WORK/v.json")" '"image_id": "sha256:'
for c in twopy stalevenv entryact entryapp noshell engtrunc tornlib graphtrunc tvskew unreadable jitpreload novisible; do
  /usr/bin/docker rmi -f "tdrt/torch:$c" >/dev/null 2>&1
done
finish
