#!/usr/bin/env bash
# The cleanup of the real torch images (ctest fixture real_torch_images): once
# e2e_runtime_images and e2e_real_images are done with tdreal/torch:* and tdrt/torch:* (about
# 10 GB), they leave the test engine before the suites that build torch images of their own.
# BuildKit's cache mounts (pip's downloads) stay: a later run rebuilds them without the
# network. Usage: real_images_release.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
trap 'services_stop' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
engine_release tdreal/torch tdrt/torch tdob/torch
check "no tdreal/torch, tdrt/torch or tdob/torch image is left in the test engine" \
  test -z "$(/usr/bin/docker images -q tdreal/torch; /usr/bin/docker images -q tdrt/torch; /usr/bin/docker images -q tdob/torch)"
finish
