#!/usr/bin/env bash
# End to end: the command-line habits every command shares (issue 20, item 3): help and
# did-you-mean, -q/-v, --color and NO_COLOR, the report flag convention (--json prints to
# stdout, --json=FILE writes FILE), one unit for timeouts, settings discovery, the one list
# of environment variables, `init`, and `list` within 100 columns. No engine needed.
# Usage: cli_habits_test.sh TORCHDOCK
set -uo pipefail
TD=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-cli-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
source "$ROOT/tests/e2e/lib/check.sh"
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

# 1. Help: `help COMMAND`, `help environment`, did-you-mean for an unknown command.
run help validate
check "help validate: exit 0, its usage line names the tool" \
  bash -c "test $(rc) = 0 && grep -q '^Usage: torchdock validate' '$WORK/out'"
run help kb refresh; check "help kb refresh: the nested usage line" has out "Usage: torchdock kb refresh"
run lsit
check "unknown command: exit 2 with did-you-mean" \
  bash -c "test $(rc) = 2 && grep -qF 'unknown command \"lsit\"; did you mean \"list\"?' '$WORK/err'"
run help vaildate; check "help of an unknown topic: exit 2, did-you-mean" \
  bash -c "test $(rc) = 2 && grep -qF 'did you mean \"validate\"' '$WORK/err'"
run --help; check "--help lists the exit codes" has out "130  interrupted"
run help environment
missing=""
for v in $(grep -rhoE 'getenv\("[A-Z_]+"\)' src | sed -E 's/getenv\("([A-Z_]+)"\)/\1/' | sort -u); do
  grep -q "$v" "$WORK/out" || missing="$missing $v"
  grep -q "$v" README.md || missing="$missing README:$v"
done
check "every variable the code reads is in 'help environment' and the README:${missing:- all}" \
  test -z "$missing"

# 2. Colour: on with --color always, off with never, off for NO_COLOR under auto.
run --color always lsit; check "--color always colours the error" grep -q $'\x1b\\[' "$WORK/err"
run --color never lsit; check "--color never: no escape sequence" bash -c "! grep -q $'\x1b' '$WORK/err'"
NO_COLOR=1 script -qec "$TD lsit" /dev/null >"$WORK/tty" 2>&1
check "NO_COLOR on a terminal: no escape sequence" bash -c "! grep -q $'\x1b\\[1;31m' '$WORK/tty'"
script -qec "$TD lsit" /dev/null >"$WORK/tty" 2>&1
check "a terminal without NO_COLOR: colour" grep -q $'\x1b\\[1;31m' "$WORK/tty"

# 3. One report convention: --json prints to stdout, --json=FILE writes FILE.
run list --json; check "list --json prints JSON to stdout" json "$WORK/out" "len(d) >= 30"
run list --json="$WORK/list.json"
check "list --json=FILE writes the file and still prints the table" \
  bash -c "json '$WORK/list.json' 'len(d) >= 30' 2>/dev/null || python3 -c 'import json;json.load(open(\"$WORK/list.json\"))' && grep -q '^VARIANT' '$WORK/out'"
check "list --json names the settings a variant needs to build" \
  json "$WORK/list.json" "any(v['build_needs'] == ['indexes.pytorch'] for v in d) and any(v['build_needs'] == [] for v in d)"
run render --out "$WORK/tree" --json; check "render --json: the files written" \
  json "$WORK/out" "d['files'] and d['out'].endswith('tree')"
echo "# local edit" >>"$WORK/tree/debian-cpu-debian12/Dockerfile"
run render --out "$WORK/tree" --check --json
check "render --check --json: exit 1, the stale file in stale[], stdout is only JSON" \
  bash -c "test $(rc) = 1 && python3 -c 'import json,sys; d=json.load(open(\"$WORK/out\")); sys.exit(0 if d[\"stale\"] == [\"$WORK/tree/debian-cpu-debian12/Dockerfile\"] and not d[\"up_to_date\"] else 1)'"
run validate img --json out.json
check "validate --json out.json (the old form): exit 2, says --json=out.json" \
  bash -c "test $(rc) = 2 && grep -qF -- '--json=out.json' '$WORK/err'"
run validate img --json --junit
check "two reports on stdout: exit 2" bash -c "test $(rc) = 2 && grep -qF 'both print to stdout' '$WORK/err'"
run validate img --json="$WORK/nodir/v.json"
check "a report file in a missing directory: exit 2 before any work" test "$(rc)" = 2

# 4. Timeouts: seconds, or with a unit; out of range and junk are refused.
run validate img --probe-timeout 2x
check "--probe-timeout 2x: exit 2, says what a duration is" \
  bash -c "test $(rc) = 2 && grep -qF '90s, 30m, 2h' '$WORK/err'"
run build --timeout 8d; check "build --timeout 8d: exit 2" test "$(rc)" = 2
run help build; check "build --timeout shows its default in a unit" has out "default 2h"

# 5. Settings: found from a subdirectory up to the repository root, then the user's.
mkdir -p "$WORK/repo/.git" "$WORK/repo/a/b" "$WORK/repo/manifests" "$WORK/xdg/torchdock"
cp manifests/debian-cpu.json "$WORK/repo/manifests/"
echo '{"schema": 1, "mirors": {}}' >"$WORK/repo/torchdock.json"
(cd "$WORK/repo/a/b" && "$TD" lock --manifests ../../manifests >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "settings found two directories up at the repository root (its error names it)" \
  bash -c "test $(rc) = 2 && grep -qF '$WORK/repo/torchdock.json' '$WORK/err'"
rm "$WORK/repo/torchdock.json"
echo '{"schema": 1, "indexes": {"pypi": "ftp://x"}}' >"$WORK/xdg/torchdock/torchdock.json"
(cd "$WORK/repo/a/b" && XDG_CONFIG_HOME="$WORK/xdg" "$TD" lock --manifests ../../manifests >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "then the user's config directory" \
  bash -c "test $(rc) = 2 && grep -qF '$WORK/xdg/torchdock/torchdock.json' '$WORK/err'"
echo '{"schema": 1}' >"$WORK/repo/torchdock.json"
mkdir -p "$WORK/above" && echo 'not json' >"$WORK/above/torchdock.json" && mv "$WORK/repo" "$WORK/above/"
(cd "$WORK/above/repo/a/b" && XDG_CONFIG_HOME="$WORK/none" "$TD" -v lock --manifests ../../manifests --timeout 1 >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "the search stops at the repository root (a broken file above it is not read)" \
  bash -c "! grep -qF '$WORK/above/torchdock.json' '$WORK/err' && grep -qF 'settings from $WORK/above/repo/torchdock.json' '$WORK/err'"

# 6. init: a manifest that renders as written; impossible choices write nothing.
mkdir -p "$WORK/init" && cd "$WORK/init"
run init team --torch 2.7.1 --cuda cu126,cu128 --os ubuntu22.04 --gpus A100,H100
check "init: exit 0, two variants" bash -c "test $(rc) = 0 && grep -q 'team-2.7.1-cu128-runtime-ubuntu22.04' '$WORK/out'"
run render; check "what init wrote renders as written" \
  bash -c "test $(rc) = 0 && test -f dockerfiles/team-2.7.1-cu126-runtime-ubuntu22.04/Dockerfile"
run init team --torch 2.7.1 --cuda cu128 --os ubuntu22.04
check "init never overwrites" bash -c "test $(rc) = 2 && grep -q 'never overwrites' '$WORK/err'"
run init bad --torch 2.7.1 --cuda cu130 --os ubuntu22.04
check "impossible choices: exit 2, the knowledge-base reason, nothing written" \
  bash -c "test $(rc) = 2 && grep -qF 'torch 2.7.1 has no cu130 wheels' '$WORK/err' && test ! -e manifests/bad.json"
cd "$ROOT"

# 7. list fits a 100-column terminal.
run list
width=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$WORK/out")
check "list fits 100 columns (widest line $width)" test "$width" -le 100
check "list marks the variants that need the PyTorch index setting" has out "build needs indexes.pytorch"

# 8. -q: no progress lines; -v: details.
run -q render --out "$WORK/q"; check "-q render: no stderr" test ! -s "$WORK/err"
finish
