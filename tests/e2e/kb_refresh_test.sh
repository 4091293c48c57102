#!/usr/bin/env bash
# `torchdock kb refresh` end to end. Usage: kb_refresh_test.sh TORCHDOCK [online]
#  offline (default): no network needed. An unreachable index is an environment error
#    (exit 3) that says only refresh needs the index; render and list still work offline.
#  online: `kb refresh --check` of three releases against PyPI must find the committed
#    data/torch.json in agreement (exit 0). Exits 77 (CTest's SKIP_RETURN_CODE) with the
#    reason when PyPI cannot be reached.
set -uo pipefail
TD=$(realpath "$1")
MODE=${2:-offline}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-kb-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
source "$ROOT/tests/e2e/lib/check.sh"

if [ "$MODE" = offline ]; then
  cp -r data "$WORK/data"
  # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
  run kb refresh --check --data "$WORK/data" --index-url http://127.0.0.1:9/simple/
  check "an unreachable index exits 3 (environment)" test "$(rc)" = 3
  check "the error names the index" has err "127.0.0.1:9"
  check "the error says the other commands work offline" has err "work offline"
  check "nothing was written" diff -r data "$WORK/data"
  # The same with no route to any index: render and list never touch the network.
  https_proxy=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 run render --check
  check "render --check works without a network" test "$(rc)" = 0
  https_proxy=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 run list
  check "list works without a network" test "$(rc)" = 0
  run kb refresh --check --release 2.11.0 --jobs 0
  check "--jobs 0 is a usage error" test "$(rc)" = 2
  finish
  exit $?
fi

run kb refresh --check --release 1.13.1 --release 2.11.0 --release 2.15.0
if [ "$(rc)" = 3 ]; then
  echo "skip - PyPI cannot be reached: $(tail -1 "$WORK/err")"
  exit 77
fi
check "kb refresh --check of 1.13.1, 2.11.0, 2.15.0 agrees with PyPI (exit 0)" test "$(rc)" = 0
check "it read three releases from PyPI" has err "read 3 torch releases from PyPI"
check "it reports no differing fact" has err "0 facts differ"
if [ "$(rc)" != 0 ]; then cat "$WORK/out" "$WORK/err"; fi
finish
