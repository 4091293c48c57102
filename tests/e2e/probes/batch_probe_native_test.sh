#!/usr/bin/env bash
# Runs probe-batch natively (probes/batch/README.md): each program's stdout comes back byte for
# byte and its end (exit code, signal, the time limit) as it happened; a program that cannot
# be executed, one that leaves a child holding its pipe, one that prints more than the batch
# may, and bad arguments. The frames are read by a parser of this test's own (Python), not
# torchdock's. Also checks that the runner is fully static and that a real probe (probe-env)
# answers through it. Usage: batch_probe_native_test.sh PROBE_DIR
set -uo pipefail
PROBES=$(realpath "${1:?usage: $0 PROBE_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/torchdock-batch-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
source "$HERE/../lib/check.sh"
BATCH=$PROBES/probe-batch
if [ ! -x "$BATCH" ]; then
  skipped "probe-batch is not built in $PROBES"
  finish
  exit 77
fi
# frames NAME 'python expression': over $WORK/NAME.out read as frames (f: name -> frame dict
# with exit, signal, timed_out, overflow, seconds, out, err as bytes; end: the end count; rc)
frames() {
  python3 - "$WORK/$1.out" "$(cat "$WORK/$1.rc")" "$2" <<'PY'
import sys
path, rc, expr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
f, end, at = {}, None, 0
try:
    while at < len(data):
        nl = data.index(b"\n", at)
        head = data[at:nl].decode()
        if head.startswith("torchdock-batch-end "):
            end = int(head.split()[1])
            at = nl + 1
            break
        parts = head.split(" ")
        assert parts[0] == "torchdock-batch", head
        kv = dict(p.split("=", 1) for p in parts[2:])
        n_out, n_err = int(kv["out"]), int(kv["err"])
        body = data[nl + 1:nl + 1 + n_out + n_err]
        assert data[nl + 1 + n_out + n_err:nl + 2 + n_out + n_err] == b"\n", "frame not closed"
        f[parts[1]] = {"exit": int(kv["exit"]), "signal": int(kv["signal"]),
                       "timed_out": kv["timed_out"] == "1", "overflow": kv["overflow"] == "1",
                       "seconds": float(kv["seconds"]), "out": body[:n_out], "err": body[n_out:]}
        at = nl + 2 + n_out + n_err
    assert at == len(data), "bytes after the end line"
    ok = eval(expr)
except Exception as e:
    print("    %s: %r" % (type(e).__name__, e))
    ok = False
if not ok:
    print("    not true:", expr)
    print("    rc=%d frames=%s end=%s" % (rc, {k: {kk: vv for kk, vv in v.items() if kk not in ("out", "err")} for k, v in f.items()}, end))
sys.exit(0 if ok else 1)
PY
}
batch() {  # batch NAME ARGS...: probe-batch ARGS, stdout/rc/wall seconds kept under NAME
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$BATCH" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo $? >"$WORK/$name.rc"
  echo "$(date +%s.%N) - $t0" | bc >"$WORK/$name.wall"
}
wall_under() { [ "$(echo "$(cat "$WORK/$1.wall") < $2" | bc)" = 1 ] || { echo "    wall $(cat "$WORK/$1.wall") s"; false; }; }

check "probe-batch is fully static (no ELF interpreter)" bash -c "! readelf -l '$BATCH' | grep -q INTERP"

printf 'a\0b\nc' >"$WORK/bytes"
batch mixed --timeout=2 \
  --probe=ok:4 /bin/sh -c 'cat "$0"' "$WORK/bytes" \
  --probe=fails:3 /bin/sh -c 'echo out; echo err >&2; exit 3' \
  --probe=missing:1 /nonexistent/probe-x \
  --probe=segv:3 /bin/sh -c 'kill -SEGV $$' \
  --probe=hangs:2 /bin/sleep 60 \
  --probe=leaves:3 /bin/sh -c 'sleep 60 & echo started'
check "every program is framed, then the end line; exit 0" frames mixed "rc == 0 and end == 6 and len(f) == 6"
check "stdout comes back byte for byte (NUL, newline, no final newline)" frames mixed "f['ok']['out'] == b'a\x00b\nc' and f['ok']['exit'] == 0"
check "an exit code with its stdout and stderr" frames mixed "f['fails']['exit'] == 3 and f['fails']['out'] == b'out\n' and f['fails']['err'] == b'err\n'"
check "a program that cannot be executed: 127 and why" frames mixed "f['missing']['exit'] == 127 and b'cannot run /nonexistent/probe-x: No such file or directory' in f['missing']['err']"
check "a signal is named, with exit -1" frames mixed "f['segv']['signal'] == 11 and f['segv']['exit'] == -1 and not f['segv']['timed_out']"
check "a program past --timeout is killed and framed timed_out" frames mixed "f['hangs']['timed_out'] and f['hangs']['signal'] == 9 and 1.9 < f['hangs']['seconds'] < 4"
check "a child left holding the pipe does not hold the frame" frames mixed "f['leaves']['out'] == b'started\n' and f['leaves']['exit'] == 0"
check "the whole batch ends soon after its time limit (not the 60 s sleeps)" wall_under mixed 6
check "no sleep of the batch survives it" bash -c "! pgrep -f '^sleep 60$' >/dev/null && ! pgrep -fx '/bin/sleep 60' >/dev/null"

batch big --timeout=30 \
  --probe=flood:3 /bin/sh -c 'head -c 9000000 /dev/zero | tr "\0" x; echo' \
  --probe=small:3 /bin/sh -c 'echo "{\"probe\":\"x\"}"' \
  --probe=noisy:3 /bin/sh -c 'head -c 100000 /dev/zero | tr "\0" e >&2; echo LAST >&2'
check "stdout past the batch's bound: overflow=1, no stdout; the others whole" frames big "f['flood']['overflow'] and f['flood']['out'] == b'' and f['small']['out'] == b'{\"probe\":\"x\"}\n' and not f['small']['overflow']"
check "stderr keeps its last 16 KiB" frames big "len(f['noisy']['err']) == 16384 and f['noisy']['err'].endswith(b'LAST\n')"
check "the output stays under 7 MiB" bash -c "[ \$(stat -c %s '$WORK/big.out') -lt 7340032 ]"

for args in "--probe=a:1 /bin/true" "--timeout=5" "--timeout=0 --probe=a:1 /bin/true" \
            "--timeout=5 --probe=a:1 bin/true" "--timeout=5 --probe=A/b:1 /bin/true" \
            "--timeout=5 --probe=a:3 /bin/true" "--timeout=5 --bogus"; do
  # shellcheck disable=SC2086
  batch bad $args
  check "bad arguments ($args): exit 3, one line on stderr, nothing run" \
    bash -c "[ \$(cat '$WORK/bad.rc') = 3 ] && [ ! -s '$WORK/bad.out' ] && grep -q '^probe-batch: ' '$WORK/bad.err'"
done

if [ -x "$PROBES/probe-env" ]; then
  batch real --timeout=30 --probe=env:2 "$PROBES/probe-env" --nonce=batch-nonce --probe=t:1 /bin/true
  check "a real probe answers through the runner (probe-env's nonce)" frames real "__import__('json').loads(f['env']['out'].decode().splitlines()[-1])['data']['nonce'] == 'batch-nonce' and f['env']['exit'] == 0"
fi
finish
