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

# 5b. Settings have owners (adversarial report 3, R3-5 and R3-6; variants of its cases). `build`
# against no engine: exit 3 means the settings and the tree were accepted, exit 2 refused.
T=$WORK/trust
mkproj() { mkdir -p "$1/manifests" && cp "$ROOT/manifests/debian-cpu.json" "$1/manifests/" && (cd "$1" && "$TD" render >/dev/null 2>&1); }
tb() { local d=$1; shift; (cd "$d" && DOCKER_HOST=unix:///nonexistent/docker.sock XDG_CONFIG_HOME="$T/no-xdg" "$TD" build "$@" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"); }
mkdir -p "$T/repo/.git" "$T/elsewhere" "$T/victim" && mkproj "$T/repo"
echo '{"schema": 1, "mirrors": {"docker.io": "127.0.0.1:5000"}}' >"$T/repo/torchdock.json"
tb "$T/repo"
check "a repository's own torchdock.json is used and named on stderr without -v" \
  bash -c "test $(rc) = 3 && grep -qF 'settings from $T/repo/torchdock.json (the working tree)' '$WORK/err'"
tb "$T/repo" -q
check "...and not with -q" bash -c "test $(rc) = 3 && ! grep -q 'settings from' '$WORK/err'"
chmod 775 "$T/repo"
tb "$T/repo"
check "a group-writable (not sticky) repository root: refused, naming the directory, its mode and --config" \
  bash -c "test $(rc) = 2 && grep -qF 'refusing the settings file $T/repo/torchdock.json: $T/repo is writable by its group (mode 0775)' '$WORK/err' && grep -qF -- '--config $T/repo/torchdock.json' '$WORK/err'"
tb "$T/repo" --config "$T/repo/torchdock.json"
check "...trusted when the user names it with --config" test "$(rc)" = 3
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  chown nobody "$T/repo/torchdock.json"
  tb "$T/repo"
  check "a file owned by nobody in that group-writable directory: refused, naming the owner" \
    bash -c "test $(rc) = 2 && grep -qF '$T/repo/torchdock.json is owned by uid $(id -u nobody), not by you (uid 0) or root' '$WORK/err'"
  chmod 755 "$T/repo"
  tb "$T/repo"
  check "...also in a directory only root can write" test "$(rc)" = 2
  (cd "$T/repo" && TORCHDOCK_CONFIG="$T/repo/torchdock.json" DOCKER_HOST=unix:///nonexistent/docker.sock "$TD" build >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
  check "...trusted when named by \$TORCHDOCK_CONFIG" \
    bash -c "test $(rc) = 3 && grep -qF 'settings from $T/repo/torchdock.json (\$TORCHDOCK_CONFIG)' '$WORK/err'"
  chown "$(id -u)" "$T/repo/torchdock.json"
else
  skipped "settings owned by another user: needs root and the nobody user to chown"
fi
chmod 755 "$T/repo"
# A sticky world-writable working directory (not /tmp itself): its torchdock.json is refused.
mkdir -p "$T/scratch" && mkproj "$T/scratch" && chmod 1777 "$T/scratch"
echo '{"schema": 1}' >"$T/scratch/torchdock.json"
tb "$T/scratch"
check "a torchdock.json in a sticky world-writable directory: refused (mode 1777, sticky)" \
  bash -c "test $(rc) = 2 && grep -qF '$T/scratch is writable by group and others (mode 1777, sticky)' '$WORK/err'"
# No repository and no home above: only the working directory is searched.
mkdir -p "$T/shared/ci-job-7/work" && mkproj "$T/shared/ci-job-7/work"
echo '{"schema": 1, "waivers": {"TD101": "x"}, "indexes": {"netrc": "/proc/self/environ"}}' >"$T/shared/torchdock.json"
tb "$T/shared/ci-job-7/work"
check "outside a repository and home, a file two directories up is not read" \
  bash -c "test $(rc) = 3 && ! grep -q 'torchdock.json' '$WORK/err'"
# Inside home without a repository: up to $HOME, never its parent.
mkdir -p "$T/home/me/proj" && mkproj "$T/home/me/proj"
echo 'not json' >"$T/home/torchdock.json"
echo '{"schema": 1}' >"$T/home/me/torchdock.json"
(cd "$T/home/me/proj" && HOME="$T/home/me" XDG_CONFIG_HOME="$T/no-xdg" DOCKER_HOST=unix:///nonexistent/docker.sock "$TD" build >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "below \$HOME: the search reaches \$HOME and stops there (its parent's file is not read)" \
  bash -c "test $(rc) = 3 && grep -qF 'settings from $T/home/me/torchdock.json' '$WORK/err' && ! grep -qF '$T/home/torchdock.json' '$WORK/err'"
# A repository's torchdock.json that is a symlink out of the repository.
echo '{"schema": 1}' >"$T/elsewhere/td.json"
rm "$T/repo/torchdock.json" && ln -s "$T/elsewhere/td.json" "$T/repo/torchdock.json"
tb "$T/repo"
check "a repository torchdock.json that is a symlink out of the repository: refused, naming where it resolves" \
  bash -c "test $(rc) = 2 && grep -qF 'it resolves to $T/elsewhere/td.json, outside $T/repo' '$WORK/err'"
rm "$T/repo/torchdock.json"
# R3-6: a repository names no host secret, not even through a symlink inside it.
printf 'machine 127.0.0.1\nlogin u\npassword FAKE-SECRET\n' >"$T/victim/netrc" && chmod 600 "$T/victim/netrc"
mkdir -p "$T/repo/ci" && ln -s "$T/victim/netrc" "$T/repo/ci/netrc"
echo '{"schema": 1, "indexes": {"netrc": "ci/netrc"}}' >"$T/repo/torchdock.json"
tb "$T/repo"
check "a repository torchdock.json naming a netrc (a symlink inside it to a file outside): refused, pointing at --index-netrc" \
  bash -c "test $(rc) = 2 && grep -qF '$T/repo/torchdock.json: \$.indexes.netrc: the working tree' '$WORK/err' && grep -qF -- '--index-netrc' '$WORK/err'"
echo '{"schema": 1}' >"$T/repo/torchdock.json"
tb "$T/repo" --index-netrc ci/netrc
check "...the same file named by the user (--index-netrc) is accepted" test "$(rc)" = 3
tb "$T/repo" --index-netrc /proc/self/status
check "--index-netrc /proc/self/status: refused (exit 2), it is under /proc" \
  bash -c "test $(rc) = 2 && grep -qF 'is under /proc' '$WORK/err'"
mkdir -p "$T/xdg/torchdock" && echo '{"schema": 1, "indexes": {"netrc": "/proc/self/cmdline"}}' >"$T/xdg/torchdock/torchdock.json"
rm "$T/repo/torchdock.json"
(cd "$T/repo" && XDG_CONFIG_HOME="$T/xdg" DOCKER_HOST=unix:///nonexistent/docker.sock "$TD" build >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "the user's own settings naming /proc/self/cmdline as netrc: refused (exit 2)" \
  bash -c "test $(rc) = 2 && grep -qF 'settings from $T/xdg/torchdock/torchdock.json (your config directory)' '$WORK/err' && grep -qF 'is under /proc' '$WORK/err'"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  chown nobody "$T/victim/netrc"
  tb "$T/repo" --index-netrc "$T/victim/netrc"
  check "a netrc owned by another user: refused, naming its owner" \
    bash -c "test $(rc) = 2 && grep -qF 'owned by uid $(id -u nobody), not by you' '$WORK/err'"
else
  skipped "a netrc owned by another user: needs root and the nobody user"
fi
# build builds only what render writes (the tree compared before any engine is reached).
sed -i 's/"tag": "debian12"/"tag": "debian12-x"/' "$T/repo/dockerfiles/index.json"
tb "$T/repo"
check "build of a tree whose index.json was edited: refused (exit 2), naming it and torchdock render" \
  bash -c "test $(rc) = 2 && grep -qF 'dockerfiles/index.json differs from what \`torchdock render\` writes' '$WORK/err'"
tb "$T/repo" --skip-render-check
check "...--skip-render-check builds it as it is (reaches the engine: exit 3)" test "$(rc)" = 3
(cd "$T/repo" && "$TD" render >/dev/null 2>&1)
tb "$T/repo" --manifests "$T/none"
check "build without the manifests the tree came from: exit 2, naming --manifests and --skip-render-check" \
  bash -c "test $(rc) = 2 && grep -qF -- '--skip-render-check' '$WORK/err' && grep -qF -- '--manifests' '$WORK/err'"

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
