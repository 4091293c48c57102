#!/usr/bin/env bash
# Prints how long `torchdock lock` takes on the bundled PyPI family (manifests/pypi-cuda.json,
# every variant: base image digests and each Python set resolved and hash-locked with uv):
# cold (an empty uv cache, no lock file) and when nothing changed (the lock file there, uv's
# cache warm), median and min of N runs each. Then the bundled Debian family
# (manifests/debian-cpu.json), whose apt packages apt resolves inside the base by digest
# (dependencies included; apt-get update runs every time): cold (BuildKit's cache pruned, no
# lock file) and warm (the lock file there). The engine's image store keeps the base either
# way: images built from it hold it there. The base image is
# resolved through the local registry the test services start (tests/e2e/lib/services.sh);
# uv reads PyPI, apt Debian's archive.
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
  printf 'lock %s, %s, %d runs: median %.2f s, min %.2f s\n' \
    "$WHAT" "$label" "$#" "$median" "$(echo "$sorted" | head -1)"
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
WHAT="pypi-cuda ($(grep -c '^pypi-cuda-' <<<"$("$TD" list)") variants)"
stats "cold (empty uv cache, no lock file)" "${cold[@]}"
stats "nothing changed (lock file and uv cache warm)" "${warm[@]}"

rm manifests/pypi-cuda.json manifests/pypi-cuda.lock.json
cp "$ROOT/manifests/debian-cpu.json" manifests/
cold=() warm=()
for i in $(seq 1 "$RUNS"); do
  rm -f manifests/debian-cpu.lock.json
  docker builder prune -af >/dev/null
  s=$(date +%s.%N)
  "$TD" lock >/dev/null
  cold+=("$(echo "$(date +%s.%N) - $s" | bc)")
done
for i in $(seq 1 "$RUNS"); do
  s=$(date +%s.%N)
  "$TD" lock | grep -q unchanged
  warm+=("$(echo "$(date +%s.%N) - $s" | bc)")
done
WHAT="debian-cpu (1 variant, $(python3 -c "import json; print(len(json.load(open('manifests/debian-cpu.lock.json'))['apt']['debian-cpu-debian12']['resolved']))") apt packages resolved in the base)"
stats "cold (BuildKit's cache pruned, no lock file)" "${cold[@]}"
stats "warm (lock file there, nothing moved)" "${warm[@]}"
