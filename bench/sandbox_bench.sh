#!/usr/bin/env bash
# Prints how long `torchdock validate` takes in the sandbox tier (the image read from a
# `docker save` archive, unpacked into the store, probes under bubblewrap, no engine socket)
# beside the engine path and beside `docker run --rm IMAGE python -c 'import torch'`, the
# whole process, median of N runs each:
#   engine         validate IMAGE through the engine (its probe memo and file-probe cache warm)
#   sandbox cold   validate docker-archive:FILE:IMAGE with an empty store and file-probe cache:
#                  every layer unpacked (the MB/s of the unpacking is printed from the report)
#   sandbox warm   the same again: the root found in the store, file probes cached
#   floor          docker run --rm --network=none IMAGE python -c 'import torch'
# The image: the bundled pypi-cuda family's torch 2.9.1 image when the main job built it
# (torchdock/pypi-cuda:2.9.1-cu128-debian12), else tdreal/torch:uv (the real-image suite's
# pip install torch==2.9.1), or the one passed.
# Usage: bench/sandbox_bench.sh TORCHDOCK PROBES_DIR [IMAGE] [RUNS]
set -euo pipefail
TD=$(realpath "$1") PROBES=$(realpath "$2") IMAGE=${3:-} RUNS=${4:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
OUT=$(mktemp -d /var/tmp/torchdock-sandbox-bench-XXXXXX)
trap 'services_stop; rm -rf "$OUT"' EXIT
services_start >/dev/null 2>&1
if [ -z "$IMAGE" ]; then
  for try in torchdock/pypi-cuda:2.9.1-cu128-debian12 tdreal/torch:uv; do
    /usr/bin/docker image inspect "$try" >/dev/null 2>&1 && { IMAGE=$try; break; }
  done
fi
[ -n "$IMAGE" ] && /usr/bin/docker image inspect "$IMAGE" >/dev/null 2>&1 || {
  echo "sandbox_bench: no image (run scripts/main-job.sh or tests/e2e/real_images_e2e_test.sh first)" >&2; exit 2; }

seconds() { local s; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; echo "$(date +%s.%N) - $s" | bc; }
median() { printf '%s\n' "$@" | sort -n | awk -v n="$#" 'NR==int((n+1)/2)'; }
/usr/bin/docker save -o "$OUT/image.tar" "$IMAGE"
size=$(du -BM "$OUT/image.tar" | cut -f1)
engine() { "$TD" validate "$IMAGE" --probes "$PROBES" --json="$OUT/e.json"; }
sandbox() { DOCKER_HOST=unix:///nonexistent/engine.sock "$TD" validate "docker-archive:$OUT/image.tar:$IMAGE" --probes "$PROBES" --json="$OUT/s.json"; }
engine >/dev/null 2>&1 || true  # its probe memo and file-probe cache, as a second validate finds them
floor=() eng=() cold=() warm=() rates=()
for i in $(seq 1 "$RUNS"); do
  floor+=("$(seconds /usr/bin/docker run --rm --network=none "$IMAGE" python -c 'import torch')")
  eng+=("$(seconds engine)")
  rm -rf "$OUT/cache"; sync
  export TORCHDOCK_CACHE_DIR=$OUT/cache
  cold+=("$(seconds sandbox)")
  rates+=("$(python3 -c "import json; print(json.load(open('$OUT/s.json'))['images'][0]['runner']['detail'])")")
  warm+=("$(seconds sandbox)")
  unset TORCHDOCK_CACHE_DIR
done
f=$(median "${floor[@]}") e=$(median "${eng[@]}") c=$(median "${cold[@]}") w=$(median "${warm[@]}")
echo "image: $IMAGE (docker save: $size), $RUNS runs each, medians"
printf 'floor: docker run python -c "import torch":      %.2f s\n' "$f"
printf 'validate through the engine (warm):             %.2f s (%.2fx the floor)\n' "$e" "$(echo "$e / $f" | bc -l)"
printf 'validate in the sandbox, cold (unpacked):       %.2f s\n' "$c"
printf 'validate in the sandbox, warm (store, cache):   %.2f s (%.2fx the engine path)\n' "$w" "$(echo "$w / $e" | bc -l)"
printf 'unpacking, each cold run: %s\n' "${rates[@]#bubblewrap over * (}"
