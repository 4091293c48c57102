#!/usr/bin/env bash
# Prints how long `torchdock lock` takes on the bundled PyPI family (manifests/pypi-cuda.json,
# every variant: base image digests and each Python set resolved and hash-locked with uv):
# cold (an empty uv cache, no lock file) and when nothing changed (the lock file there, uv's
# cache warm), median and min of N runs each. The base image is resolved through the local
# registry the test services start (tests/e2e/lib/services.sh); uv reads PyPI.
# Usage: bench/lock_bench.sh TORCHDOCK [RUNS]
set -euo pipefail
TD=$(realpath "$1") RUNS=${2:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
OUT=$(mktemp -d)
trap 'services_stop; rm -rf "$OUT"' EXIT
services_start >/dev/null 2>&1
mkdir -p "$OUT/manifests"
cp "$ROOT/manifests/pypi-cuda.json" "$OUT/manifests/"
printf '{"schema": 1, "mirrors": {"docker.io": "%s"}}\n' "$TD_REGISTRY" >"$OUT/torchdock.json"
cd "$OUT"
# stats LABEL TIMES...: median and min
stats() {
  local label=$1; shift
  local sorted median
  sorted=$(printf '%s\n' "$@" | sort -n)
  median=$(echo "$sorted" | awk -v n="$#" 'NR==int((n+1)/2)')
  printf 'lock pypi-cuda (%d variants), %s, %d runs: median %.2f s, min %.2f s\n' \
    "$(grep -c '^pypi-cuda-' <<<"$("$TD" list)")" "$label" "$#" "$median" "$(echo "$sorted" | head -1)"
}
cold=() warm=()
for i in $(seq 1 "$RUNS"); do
  rm -rf manifests/pypi-cuda.lock.json "$OUT/uv-cache"
  s=$(date +%s.%N)
  UV_CACHE_DIR="$OUT/uv-cache" "$TD" lock >/dev/null
  cold+=("$(echo "$(date +%s.%N) - $s" | bc)")
done
for i in $(seq 1 "$RUNS"); do
  s=$(date +%s.%N)
  UV_CACHE_DIR="$OUT/uv-cache" "$TD" lock | grep -q unchanged
  warm+=("$(echo "$(date +%s.%N) - $s" | bc)")
done
stats "cold (empty uv cache, no lock file)" "${cold[@]}"
stats "nothing changed (lock file and uv cache warm)" "${warm[@]}"
