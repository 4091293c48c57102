#!/usr/bin/env bash
# The arm64 suite's downloads (tests/e2e/lib/arm64_inputs.sh) as a ctest fixture: it needs
# the network, not the engine, so it runs beside the engine suites and the arm64 suite
# finds its inputs ready. Usage: arm64_inputs_fetch.sh DIR
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
source "$ROOT/tests/e2e/lib/arm64_inputs.sh"
if [ "$(uname -m)" != x86_64 ]; then
  echo "nothing to fetch: the arm64 suite runs on x86_64 hosts, this host is $(uname -m)"
  exit 0
fi
start=$(date +%s)
arm64_inputs "$1" || exit 1
echo "arm64 inputs ready in $1 ($(($(date +%s) - start)) s)"
