#!/usr/bin/env bash
# The main job on a fresh machine: install what is needed, build torchdock (release
# preset), render the bundled manifests into dockerfiles/, confirm the committed tree is
# current and lint every Dockerfile with hadolint.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
TD=build/release/src/app/torchdock
"$TD" render
"$TD" list
hadolint --failure-threshold warning dockerfiles/*/Dockerfile >/tmp/torchdock-hadolint.txt || {
  cat /tmp/torchdock-hadolint.txt; echo "main-job: hadolint found problems" >&2; exit 1; }
echo "main-job: $(ls -d dockerfiles/*/ | wc -l) Dockerfiles rendered and lint-clean (hadolint, warning level)"
