#!/usr/bin/env bash
# Runs probe-env natively under controlled environments (env -i) over a tree of fake Python
# interpreters (shell scripts): execvp-like resolution compared with `command -v`, symlinks
# resolved, a non-executable python skipped, the nonce echoed, --head through PATH, and
# environment values with a newline, a quote and invalid UTF-8 surviving json.loads. Also
# checks that the binary is fully static. Usage: env_probe_native_test.sh PROBE_DIR
set -uo pipefail
PROBES=$(realpath "${1:?usage: $0 PROBE_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/torchdock-env-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$HERE/../lib/check.sh"
PROBE=$PROBES/probe-env
if [ ! -x "$PROBE" ]; then
  skipped "probe-env is not built in $PROBES"
  finish
  exit 77
fi
# js NAME 'python expression' over $WORK/NAME.out's closing line (j, d = its data, rc)
js() {
  python3 - "$WORK/$1.out" "$(cat "$WORK/$1.rc")" "$2" <<'PY'
import json, os, sys
out, rc, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(out, encoding="utf-8", errors="strict").read().splitlines()
try:
    j = json.loads(lines[-1])
except Exception as e:
    print("    last stdout line is not JSON:", e, lines[-1:] if lines else "(no output)")
    sys.exit(1)
d, T = j.get("data", {}), os.environ["T"]
ok = False
try:
    ok = j["probe"] == "env" and j["schema"] == 1 and \
        {"pass": 0, "fail": 1, "waived": 2, "error": 3}[j["status"]] == rc and eval(expr)
except Exception as e:
    print("    %s: %r" % (type(e).__name__, e))
if not ok:
    print("    not true:", expr)
    print("    status=%s rc=%d reason=%s" % (j.get("status"), rc, j.get("reason", "")[:300]))
sys.exit(0 if ok else 1)
PY
}
# probe NAME ENV-ASSIGNMENTS... -- ARGS...: the probe under `env -i` with only those variables
probe() {
  local name=$1; shift
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  env -i "${vars[@]}" "$PROBE" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $? >"$WORK/$name.rc"
}

check "probe-env has no PT_INTERP (no dynamic loader)" bash -c "! readelf -lW '$PROBE' | grep -q INTERP"
check "probe-env has no DT_NEEDED" bash -c "! readelf -dW '$PROBE' 2>/dev/null | grep -q NEEDED"

# ---- the tree -----------------------------------------------------------------------------
export T=$WORK/t
mkdir -p "$T/a/bin" "$T/b/bin" "$T/venv/bin" "$T/home/.local/bin" "$T/cwd"
fake() { printf '#!/bin/sh\necho %s\n' "$1" >"$1"; chmod 755 "$1"; }
printf '#!/bin/sh\n' >"$T/a/bin/python"; chmod 644 "$T/a/bin/python"  # not executable: skipped
mkdir "$T/a/bin/python3"                                               # a directory: skipped
fake "$T/b/bin/python"
fake "$T/b/bin/python3.11"
ln -s python3.11 "$T/b/bin/python3"
fake "$T/venv/bin/python"
ln -s "$T/b/bin/python" "$T/venv/bin/python3"  # same file as b/bin/python: listed once
fake "$T/home/.local/bin/python3.12"
fake "$T/b/bin/python3.x"  # not an interpreter name
printf '#!/bin/sh\nexec "$@"\n' >"$T/b/bin/entry.sh"; chmod 755 "$T/b/bin/entry.sh"
P=$T/a/bin:$T/b/bin
WEIRD=$(printf 'line1\nq"uote\\ \xff\xfe end')

probe main PATH="$P" VIRTUAL_ENV="$T/venv" HOME="$T/home" WEIRD="$WEIRD" -- \
  --nonce=N-123 --head=entry.sh extra "arg two"
want_python=$(env -i PATH="$P" /bin/bash -c 'command -v python')
want_python3=$(env -i PATH="$P" /bin/bash -c 'command -v python3')
check "status pass, nonce echoed" js main "j['status'] == 'pass' and d['nonce'] == 'N-123'"
check "python resolves like command -v ($want_python): the non-executable one is skipped" js main \
  "d['python']['python']['path'] == '$want_python' == T + '/b/bin/python'"
check "python3 resolves like command -v ($want_python3), past a directory; realpath is python3.11" js main \
  "d['python']['python3']['path'] == '$want_python3' and d['python']['python3']['realpath'] == T + '/b/bin/python3.11'"
check "interpreters: PATH first, VIRTUAL_ENV, then the scan (HOME/.local/bin), each realpath once" js main \
  "[(i['path'], i['via']) for i in d['interpreters'] if i['path'].startswith(T)] == [ \
     (T + '/b/bin/python', 'PATH'), (T + '/b/bin/python3', 'PATH'), \
     (T + '/venv/bin/python', 'VIRTUAL_ENV'), (T + '/home/.local/bin/python3.12', 'scan')] and \
   len({i['realpath'] for i in d['interpreters']}) == len(d['interpreters']) <= 64"
check "argv recorded as given" js main "d['argv'][1:] == ['--nonce=N-123', '--head=entry.sh', 'extra', 'arg two']"
check "env holds exactly the variables given" js main "sorted(d['env']) == ['HOME', 'PATH', 'VIRTUAL_ENV', 'WEIRD']"
check "a value with a newline, a quote, a backslash and invalid UTF-8 round-trips (\\ufffd)" js main \
  "d['env']['WEIRD'] == 'line1\\nq\"uote\\\\ \\ufffd\\ufffd end'"
check "--head=entry.sh found through PATH, text and size" js main \
  "d['head'] == {'path': T + '/b/bin/entry.sh', 'text': '#!/bin/sh\\nexec \"\$@\"\\n', 'size': 20, 'error': None}"
check "ids and cwd" js main "d['uid'] == $(id -u) and d['euid'] == $(id -u) and d['gid'] == $(id -g) and d['cwd'] == '$PWD'"

# ---- PATH unset, an empty PATH element, --head errors -------------------------------------
probe nopath -- 
check "PATH unset: empty env, resolution over Docker's default PATH" js nopath \
  "d['env'] == {} and 'head' not in d and (d['python']['python3'] is None or \
   d['python']['python3']['path'].split('/python3')[0] in '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'.split(':'))"
fake "$T/cwd/python"
want_cwd=$(cd "$T/cwd" && env -i PATH=/nonexistent::/bin /bin/bash -c 'command -v python')
(cd "$T/cwd" && probe emptyelem PATH=/nonexistent::/bin -- --head=python)
check "an empty PATH element is the cwd ($want_cwd, like command -v)" js emptyelem \
  "d['python']['python']['path'] == '$want_cwd' and d['python']['python']['realpath'] == T + '/cwd/python' and \
   d['head']['path'] == '$want_cwd' and d['head']['error'] is None"
probe nohead PATH="$P" -- --head=no-such-command
check "--head of a name not in PATH: error in head, status still pass" js nohead \
  "j['status'] == 'pass' and d['head']['error'] == 'not found in PATH' and d['head']['text'] is None"
probe devhead PATH="$P" -- --head=/dev/zero
check "--head of a device: not a regular file" js devhead "d['head']['error'] == 'not a regular file'"
probe badflag PATH="$P" -- --head
check "--head without a value: error" js badflag "j['status'] == 'error' and rc == 3"
finish
