#!/usr/bin/env bash
# Prints how long `torchdock validate` takes on a genuine PyTorch CUDA image (the static
# tier, no GPU): the whole process, median and min of N runs, with the time of each probe.
# The image is tdreal/torch:uv from tests/e2e/lib/real_images.sh (pip install torch==2.9.1 on
# Debian 12); build it first with the real-image suite, or pass another image.
# Usage: bench/validate_real_bench.sh TORCHDOCK PROBES_DIR [IMAGE] [RUNS]
set -euo pipefail
TD=$(realpath "$1") PROBES=$(realpath "$2") IMAGE=${3:-tdreal/torch:uv} RUNS=${4:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
trap services_stop EXIT
services_start >/dev/null 2>&1
/usr/bin/docker image inspect "$IMAGE" >/dev/null 2>&1 || {
  echo "validate_real_bench: no image $IMAGE (run tests/e2e/real_images_e2e_test.sh first)" >&2; exit 2; }
OUT=$(mktemp -d)
times=()
for i in $(seq 1 "$RUNS"); do
  s=$(date +%s.%N)
  "$TD" validate "$IMAGE" --probes "$PROBES" --json "$OUT/v.json" >/dev/null 2>&1 || true
  times+=("$(echo "$(date +%s.%N) - $s" | bc)")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | awk -v n="$RUNS" 'NR==int((n+1)/2)')
min=$(echo "$sorted" | head -1)
printf 'validate %s (static tier, whole process, %d runs): median %.2f s, min %.2f s\n' "$IMAGE" "$RUNS" "$median" "$min"
rm -rf "$OUT"
