#!/usr/bin/env bash
# node-check's --deadline bounds every engine call, and --drain drains one node only
# (adversarial round 3, R3-7, R3-8, rows 40-42). No real engine and no Slurm: a fake engine on
# a UNIX socket (lib/fake_engine.py, under `timeout`) that answers ping, version and info and
# hangs on everything else, or never answers at all; a fake `scontrol` on PATH that logs its
# arguments. Each run must end by its deadline + 1 s, unknown (exit 3): a check that ran out
# of time is no evidence against the node, and nothing is drained.
# Usage: node_check_deadline_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/torchdock-deadline-XXXXXX)
ENGINE_PIDS=()
cleanup() {
  local p
  for p in "${ENGINE_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
source "$ROOT/tests/e2e/lib/check.sh"
IMG=torchdock/never-pulled:1

# start_engine NAME MODE: a fake engine at $WORK/NAME.sock, gone after 300 s at the latest.
start_engine() {
  timeout 300 python3 "$ROOT/tests/e2e/lib/fake_engine.py" "$WORK/$1.sock" "$2" 2>"$WORK/$1.log" &
  ENGINE_PIDS+=($!)
  for _ in $(seq 1 50); do [ -S "$WORK/$1.sock" ] && return 0; sleep 0.1; done
  echo "fake engine $1 did not start"; cat "$WORK/$1.log"; exit 1
}
start_engine wedged pinghang
start_engine silent silent

# A fake scontrol: logs every call; `show node NAME` answers one record named NAME unless
# FAKE_SCONTROL_RECORDS says otherwise (a nodeset: two records).
mkdir -p "$WORK/bin"
cat >"$WORK/bin/scontrol" <<'SH'
#!/bin/sh
echo "$*" >>"$FAKE_SCONTROL_LOG"
case "$*" in
  *"show node"*)
    name=$(eval echo \${$#})
    if [ -n "${FAKE_SCONTROL_RECORDS:-}" ]; then printf '%s\n' "$FAKE_SCONTROL_RECORDS"
    else echo "NodeName=$name Arch=x86_64 State=IDLE"; fi ;;
esac
exit 0
SH
chmod +x "$WORK/bin/scontrol"
export FAKE_SCONTROL_LOG=$WORK/scontrol.log
: >"$FAKE_SCONTROL_LOG"
FAKE_PATH="$WORK/bin:$PATH"

# timed SOCKET ARGS...: node-check against that socket; seconds in $WORK/secs.
timed() {
  local sock=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  DOCKER_HOST="unix://$WORK/$sock.sock" PATH="$FAKE_PATH" TORCHDOCK_PROBES="$PROBES" \
    timeout 120 "$TD" -q node-check "$IMG" --probes "$PROBES" "$@" >"$WORK/out" 2>"$WORK/err"
  echo $? >"$WORK/rc"
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.1f}')" >"$WORK/secs"
}
secs() { cat "$WORK/secs"; }
within() { python3 -c "import sys; sys.exit(0 if float(open('$WORK/secs').read()) <= $1 else 1)"; }

# 1. The wedged engine (R3-7): the leftover sweep and the inspection hang.
timed wedged --node n7 --deadline 10s
check "wedged engine, --deadline 10s: unknown, exit 3, in $(secs) s (<= 11)" \
  bash -c "test $(rc) = 3 && grep -q '^UNKNOWN: torchdock: n7: the checks did not finish within 10 s' '$WORK/out' && python3 -c 'import sys; sys.exit(0 if float(open(\"$WORK/secs\").read()) <= 11 else 1)'"
check "the wedged engine was asked (sweep or inspection) before the deadline cut it" \
  grep -qE 'GET /v1.41/(containers/json|images/)' "$WORK/wedged.log"

timed wedged --node n7 --deadline 50s --drain --json=-
check "wedged engine, --deadline 50s --drain (the HealthCheckProgram wiring): exit 3 in $(secs) s (<= 51, under Slurm's 60)" \
  bash -c "test $(rc) = 3 && python3 -c 'import sys; sys.exit(0 if float(open(\"$WORK/secs\").read()) <= 51 else 1)'"
check "its report says unknown and why" \
  python3 -c "import json; d=json.load(open('$WORK/out')); assert d['verdict']=='unknown', d['verdict']; assert 'did not finish within 50 s' in d['reasons'][0], d['reasons']"
check "an unknown verdict drains nothing (scontrol never asked to update)" \
  bash -c "! grep -q update '$FAKE_SCONTROL_LOG'"

# 2. A socket that accepts and never answers (row 41): its ping is cut by the deadline too.
timed silent --node n7 --deadline 6s
check "silent socket, --deadline 6s: exit 3 in $(secs) s (<= 7), not a fixed 10 s ping" \
  bash -c "test $(rc) = 3 && python3 -c 'import sys; sys.exit(0 if float(open(\"$WORK/secs\").read()) <= 7 else 1)'"

# 3. Names that are not one node (R3-8) are refused before anything runs.
for name in ALL all aLL 'node[1-3]' node1,node2 -h; do
  timed wedged --node "$name" --drain --deadline 10s
  check "--node '$name' --drain: refused, exit 2 ($(head -c 120 "$WORK/err"))" \
    bash -c "test $(rc) = 2 && grep -q 'is not one node' '$WORK/err'"
done
t0=$(date +%s)
SLURMD_NODENAME=All DOCKER_HOST="unix://$WORK/wedged.sock" PATH="$FAKE_PATH" \
  timeout 60 "$TD" -q node-check "$IMG" --probes "$PROBES" --drain --deadline 10s >"$WORK/out" 2>"$WORK/err"
echo $? >"$WORK/rc"
check "SLURMD_NODENAME=All: refused, exit 2, naming the variable" \
  bash -c "test $(rc) = 2 && grep -q 'SLURMD_NODENAME \"All\" is not one node' '$WORK/err'"
check "no refused name reached scontrol" bash -c "! grep -qi 'all\|node\[' '$FAKE_SCONTROL_LOG'"

# 4. A drain verdict (no engine socket at all) drains one node, checked first with show node.
: >"$FAKE_SCONTROL_LOG"
timed missing --node n7 --drain --deadline 10s
check "no engine: drain, exit 1, and scontrol drained n7 after show node n7" \
  bash -c "test $(rc) = 1 && grep -q -- '--oneliner show node n7' '$FAKE_SCONTROL_LOG' && grep -q 'update NodeName=n7 State=DRAIN' '$FAKE_SCONTROL_LOG'"
: >"$FAKE_SCONTROL_LOG"
FAKE_SCONTROL_RECORDS=$'NodeName=gpu1 State=IDLE\nNodeName=gpu2 State=IDLE' timed missing --node gpus --drain --deadline 10s
check "a name scontrol expands to two nodes (a nodeset) is not drained" \
  bash -c "test $(rc) = 1 && grep -q 'does not give exactly one node' '$WORK/err' && ! grep -q update '$FAKE_SCONTROL_LOG'"

finish
