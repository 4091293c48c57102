#!/usr/bin/env bash
# Prints how long `torchdock validate` takes on a genuine PyTorch CUDA image (the static
# tier, no GPU), the whole process, median of N runs each:
#   cold  the integrity check hashes every file of torch's wheels (an empty cache each run)
#   warm  the integrity check's answer comes from the cache (same layers, same probe)
#   floor `docker run --rm IMAGE python -c 'import torch'` (python3 where the image has no
#         `python`, nothing before -c where its ENTRYPOINT is python): one container start and one
#         torch import as the image runs it (its ENTRYPOINT kept: `uv run`, `poetry run`),
#         timed in the same run; an image where that fails has no floor (exit 2)
# with the time of each probe in the last warm run. The image is tdreal/torch:uv from
# tests/e2e/lib/real_images.sh (pip install torch==2.9.1 on Debian 12); build it first with
# the real-image suite, or pass another image.
# Usage: bench/validate_real_bench.sh TORCHDOCK PROBES_DIR [IMAGE] [RUNS]
set -euo pipefail
TD=$(realpath "$1") PROBES=$(realpath "$2") IMAGE=${3:-tdreal/torch:uv} RUNS=${4:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
OUT=$(mktemp -d)
trap 'services_stop; rm -rf "$OUT"' EXIT
services_start >/dev/null 2>&1
/usr/bin/docker image inspect "$IMAGE" >/dev/null 2>&1 || {
  echo "validate_real_bench: no image $IMAGE (run tests/e2e/real_images_e2e_test.sh first)" >&2; exit 2; }

seconds() { local s; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; echo "$(date +%s.%N) - $s" | bc; }
median() { printf '%s\n' "$@" | sort -n | awk -v n="$#" 'NR==int((n+1)/2)'; }
validate() { "$TD" validate "$IMAGE" --probes "$PROBES" --json="$OUT/v.json"; }

# How the image runs python: `python`, else `python3` (no `python` on its PATH), else nothing
# before -c (an ENTRYPOINT that is python itself, as distroless images have).
py=()
for try in python python3 ""; do
  if /usr/bin/docker run --rm --network=none "$IMAGE" $try -c 'import torch' >/dev/null 2>&1; then
    py=($try) found=yes
    break
  fi
done
[ "${found:-}" = yes ] || {
  echo "validate_real_bench: \`docker run $IMAGE python|python3|(ENTRYPOINT) -c 'import torch'\` fails: no floor to compare with" >&2; exit 2; }
cold=() warm=() floor=()
for i in $(seq 1 "$RUNS"); do
  floor+=("$(seconds /usr/bin/docker run --rm --network=none "$IMAGE" "${py[@]}" -c 'import torch')")
  export TORCHDOCK_CACHE_DIR=$OUT/cache-$i
  cold+=("$(seconds validate)")
  warm+=("$(seconds validate)")
done
f=$(median "${floor[@]}") c=$(median "${cold[@]}") w=$(median "${warm[@]}")
printf 'floor: docker run %s -c "import torch" (%d runs): median %.2f s\n' "${py[*]:-(ENTRYPOINT)}" "$RUNS" "$f"
printf 'validate %s cold (hashing, empty cache): median %.2f s (%.2fx the floor)\n' "$IMAGE" "$c" "$(echo "$c / $f" | bc -l)"
printf 'validate %s warm (integrity from cache):  median %.2f s (%.2fx the floor)\n' "$IMAGE" "$w" "$(echo "$w / $f" | bc -l)"
python3 - "$OUT/v.json" <<'PY'
import json, sys
img = json.load(open(sys.argv[1]))["images"][0]
print("last warm run, per probe: " + ", ".join(
    "%s %.2f s%s" % (n, p["seconds"], " (cached)" if p.get("cached") else "") for n, p in img["probes"].items()))
PY
