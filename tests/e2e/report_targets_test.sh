#!/usr/bin/env bash
# Report writers write regular files only (../shared/reports/adversarial-3.md R3-4): a report
# target that is there and is a block or character device, a FIFO, a socket, a symlink (to a
# regular file elsewhere, or to nothing) or a directory is refused, exit 2, with its name and
# what it is, and is left exactly as it was; a missing path is created, a regular file
# replaced, `-` is stdout. Variants of the report's repro, in a scratch directory only (never
# the host's /dev). Then the device-node guard (device_nodes_check.sh) is shown to notice a
# replaced node. Needs no engine; the device nodes need root (skipped, and said, without it).
# Usage: report_targets_test.sh TORCHDOCK   (run from the repository root)
set -uo pipefail
TD=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-report-targets-XXXXXX)
SOCK_PID=
trap '[ -n "$SOCK_PID" ] && kill "$SOCK_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
cd "$ROOT" || exit 1
# No engine is reachable: a command that got past its flag checks would say so, not write.
export DOCKER_HOST=unix://$WORK/no-engine.sock

S=$WORK/targets
mkdir -p "$S" "$WORK/elsewhere"
printf 'keep me\n' >"$WORK/elsewhere/victim.json"
ln -s "$WORK/elsewhere/victim.json" "$S/to-regular"
ln -s "$WORK/elsewhere/not-there.json" "$S/dangling"
mkfifo "$S/fifo"
mkdir "$S/dir"
# A listening UNIX socket, held by a child that this script stops by its PID.
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); time.sleep(600)' "$S/sock" &
SOCK_PID=$!
for _ in $(seq 1 50); do [ -S "$S/sock" ] && break; sleep 0.1; done
devices=0
if [ "$(id -u)" = 0 ] && mknod -m 600 "$S/blk" b 7 250 2>/dev/null && mknod -m 666 "$S/chr" c 1 5 2>/dev/null; then
  devices=1
else
  skipped "block and character devices: mknod needs root here (the unit test covers /dev/null itself)"
fi

# state PATH: what a node is, to compare before and after (type, device numbers, inode, link).
state() { echo "$(stat -c '%F %t:%T %i %s' "$1" 2>/dev/null) $(readlink "$1" 2>/dev/null)"; }

# refused NAME KIND COMMAND...: the command is refused with exit 2 naming NAME and KIND, and
# NAME, the symlinks' targets and the scratch directory are unchanged.
refused() {
  local name=$1 kind=$2
  shift 2
  local before listing
  before=$(state "$S/$name")
  listing=$(ls -A "$S" "$WORK/elsewhere")
  timeout 30 "$TD" "$@" >"$WORK/out" 2>"$WORK/err"
  local code=$?
  check "$* -> exit 2 (was $code)" test "$code" = 2
  check "...names $S/$name and says it is $kind" \
    grep -qF -- "$S/$name: it is $kind" "$WORK/err"
  check "...$name is unchanged ($before)" test "$(state "$S/$name")" = "$before"
  check "...nothing was written beside it or through a link" \
    test "$(ls -A "$S" "$WORK/elsewhere")" = "$listing"
}

if [ "$devices" = 1 ]; then
  refused blk "a block device (7:250)" checks --json="$S/blk"
  refused chr "a character device (1:5)" sbom some-variant -o "$S/chr"
fi
refused fifo "a FIFO" checks --markdown="$S/fifo"
refused sock "a socket" validate debian:bookworm --junit="$S/sock"
refused to-regular "a symlink to $WORK/elsewhere/victim.json" list --json="$S/to-regular"
check "...the symlink's target still holds its own text" \
  test "$(cat "$WORK/elsewhere/victim.json")" = "keep me"
refused dangling "a symlink to $WORK/elsewhere/not-there.json" render --check --sarif="$S/dangling"
check "...and nothing was created at the dangling link's target" \
  test ! -e "$WORK/elsewhere/not-there.json"
timeout 30 "$TD" checks --json="$S/dir" >"$WORK/out" 2>"$WORK/err"
code=$?
check "checks --json=DIRECTORY -> exit 2 (was $code) naming it as a directory" \
  bash -c "test $code = 2 && grep -qF '$S/dir is a directory' '$WORK/err'"
check "...the directory is still an empty directory" test -d "$S/dir" -a -z "$(ls -A "$S/dir")"

# What still works: a missing path, a regular file replaced, '-' is stdout.
run checks --json="$S/new.json"
check "checks --json=NEW writes a regular file (exit $(rc))" \
  bash -c "test $(rc) = 0 && test -f '$S/new.json' && ! test -L '$S/new.json'"
printf 'old\n' >"$S/regular.json"
run checks --json="$S/regular.json"
check "checks --json=REGULAR replaces the regular file with the report (exit $(rc))" \
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$S/regular.json"
run checks --json=-
check "checks --json=- prints the report on stdout (exit $(rc))" \
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/out"

# The guard itself: a scratch /dev whose null is replaced by a regular file, and whose stdout
# link is replaced by a file, is named by device_nodes_check.sh.
if [ "$devices" = 1 ]; then
  D=$WORK/dev
  mkdir "$D"
  mknod -m 666 "$D/null" c 1 3 && mknod -m 666 "$D/zero" c 1 5 && mknod -m 666 "$D/full" c 1 7 &&
    mknod -m 666 "$D/random" c 1 8 && mknod -m 666 "$D/urandom" c 1 9 && ln -s /proc/self/fd/1 "$D/stdout"
  TD_DEV_ROOT=$D bash "$ROOT/tests/e2e/device_nodes_check.sh" record "$WORK/dev.rec" >"$WORK/guard" 2>&1
  check "the device guard records a healthy scratch /dev (exit $?)" grep -q '^ok - recorded 6' "$WORK/guard"
  TD_DEV_ROOT=$D bash "$ROOT/tests/e2e/device_nodes_check.sh" check "$WORK/dev.rec" >"$WORK/guard" 2>&1
  check "...and finds it unchanged (exit $?)" grep -q '^ok - 6 device nodes' "$WORK/guard"
  rm "$D/null" "$D/stdout" && : >"$D/null" && printf 'x\n' >"$D/stdout"
  TD_DEV_ROOT=$D bash "$ROOT/tests/e2e/device_nodes_check.sh" check "$WORK/dev.rec" >"$WORK/guard" 2>&1
  code=$?
  check "a replaced null and stdout fail the guard (exit $code)" test "$code" = 1
  check "...naming null as it was and is now" grep -qF "$D/null: was 'c 1:3', now 'f owner=" "$WORK/guard"
  check "...naming the stdout link" grep -qF "$D/stdout: was 'l /proc/self/fd/1', now 'f " "$WORK/guard"
  check "...with the way to restore it" grep -qF "mknod -m 666 $D/null c 1 3" "$WORK/guard"
fi
finish
