#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds the dev preset (warnings are
# errors), then runs unit tests, golden files and the end-to-end suites with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset dev
cmake --build --preset dev
ctest --preset dev
