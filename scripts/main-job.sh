#!/usr/bin/env bash
# The main job on a fresh machine: install what is needed, build torchdock (release
# preset), render the bundled manifests and lint every Dockerfile, then, against a real
# Docker engine and a local registry (started here when none is running), lock, render
# and build the default images, then validate them with the probes: the Debian CPU family,
# and a genuine CUDA PyTorch image from PyPI's wheels (the pypi-cuda family's torch 2.9.1
# variant, its whole Python set hash-locked with uv; about 2.5 GB of downloads the first
# time). `render` refreshes dockerfiles/ from the bundled manifests (no change when they are
# current); the locks, the default images' Dockerfiles and the reports go to build/main-job/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
TD=$ROOT/build/release/bin/torchdock

"$TD" render
hadolint --failure-threshold warning dockerfiles/*/Dockerfile >/tmp/torchdock-hadolint.txt || {
  cat /tmp/torchdock-hadolint.txt; echo "main-job: hadolint found problems" >&2; exit 1; }
echo "main-job: $(ls -d dockerfiles/*/ | wc -l) Dockerfiles rendered and lint-clean (hadolint, warning level)"

source tests/e2e/lib/services.sh
trap services_stop EXIT
services_start

WORK=$ROOT/build/main-job
rm -rf "$WORK" && mkdir -p "$WORK/manifests"
cp manifests/debian-cpu.json manifests/pypi-cuda.json "$WORK/manifests/"
printf '{"schema": 1, "mirrors": {"docker.io": "%s"}}\n' "$TD_REGISTRY" >"$WORK/torchdock.json"
cd "$WORK"
"$TD" lock
"$TD" render --out dockerfiles
"$TD" build debian-cpu-debian12 pypi-cuda-2.9.1-cu128-debian12
for image in debian-cpu:debian12 pypi-cuda:2.9.1-cu128-debian12; do
  "$TD" validate "torchdock/$image" \
    --json="validate-${image%%:*}.json" --junit="validate-${image%%:*}.xml" \
    --markdown="validate-${image%%:*}.md"
  # The SBOM of what was built: from the image's own files (CycloneDX 1.6).
  "$TD" sbom "torchdock/$image" -o "sbom-${image%%:*}.cdx.json"
  echo "main-job: torchdock/$image built and validated (reports in $WORK/validate-${image%%:*}.*, SBOM sbom-${image%%:*}.cdx.json)"
done
