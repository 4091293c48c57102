#!/usr/bin/env bash
# bench/validate_real_bench.sh over every layout of the real-image suites (tdreal/torch:uv and
# the tdob/torch:* images of tests/e2e/lib/observed_images.sh, or the images given), one line
# each: floor, cold and warm medians and their ratios. A layout whose
# `docker run IMAGE python -c 'import torch'` fails has no floor: it is listed as such (a
# broken image, or an ENTRYPOINT that is python itself), never left out silently.
# Build the images first (the e2e_observed suite, or build_real_images/build_observed_images).
# Usage: bench/validate_layouts_bench.sh TORCHDOCK PROBES_DIR [RUNS] [IMAGE...]
set -uo pipefail
TD=${1:?usage: $0 TORCHDOCK PROBES_DIR [RUNS] [IMAGE...]} PROBES=${2:?} RUNS=${3:-3}
shift $(($# < 3 ? $# : 3))
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../tests/e2e/lib/services.sh"
services_start >/dev/null 2>&1 || { echo "validate_layouts_bench: the engine did not start" >&2; exit 2; }
images=("$@")
if [ ${#images[@]} = 0 ]; then
  mapfile -t images < <(/usr/bin/docker images --format '{{.Repository}}:{{.Tag}}' | grep -E '^(tdreal/torch:uv|tdob/torch:)' | sort)
fi
[ ${#images[@]} -gt 0 ] || { echo "validate_layouts_bench: no tdreal/tdob images here: build them first" >&2; exit 2; }
printf '%-26s %8s %14s %14s\n' image floor cold warm
for image in "${images[@]}"; do
  out=$(bash "$HERE/validate_real_bench.sh" "$TD" "$PROBES" "$image" "$RUNS" 2>&1)
  if [ $? -ne 0 ]; then
    printf '%-26s no floor: %s\n' "$image" "$(tail -1 <<<"$out" | cut -c1-100)"
    continue
  fi
  python3 - "$image" "$out" <<'PY'
import re, sys
image, out = sys.argv[1], sys.argv[2]
f = re.search(r"floor: .*median ([\d.]+) s", out).group(1)
c = re.search(r"cold .*median ([\d.]+) s \(([\d.]+)x", out).groups()
w = re.search(r"warm .*median ([\d.]+) s \(([\d.]+)x", out).groups()
print("%-26s %7ss %7ss %5sx %7ss %5sx" % (image, f, c[0], c[1], w[0], w[1]))
PY
done
