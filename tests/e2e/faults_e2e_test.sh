#!/usr/bin/env bash
# End to end: torchdock under faults, against a real engine (the adversarial report's engine
# rows). A verdict is never better than its evidence: hanging probes and a dead engine are
# errors, never passes; Ctrl-C, SIGTERM and SIGKILL leave no container and no build behind;
# build work directories and variant directories are never followed through symlinks.
# Usage: faults_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
WORK=$(mktemp -d /tmp/torchdock-faults-e2e-XXXXXX)
trap 'services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
DOCKER=/usr/bin/docker

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
IMG=$TD_REGISTRY/library/debian:bookworm
$DOCKER pull -q "$IMG" >/dev/null 2>&1
check "the Debian base is in the engine" bash -c "$DOCKER image inspect '$IMG' >/dev/null"

# status_of ID: that check's status in $WORK/v.json (first image)
status_of() { python3 -c "import json,sys; d=json.load(open('$WORK/v.json')); print(next((c['status']+'|'+c['message'] for c in d['images'][0]['checks'] if c['id']=='$1'), 'missing|'))"; }
leftovers() { $DOCKER ps -aq --filter label=io.torchdock.run | wc -l; }

# A probe directory where every native probe hangs (the python probe finds no python here).
HANG=$WORK/hang
mkdir -p "$HANG" && cp "$PROBES"/* "$HANG"/
for p in probe-cuda probe-libs probe-cudnn probe-nccl; do printf '#!/bin/sh\nexec sleep 100000\n' >"$HANG/$p"; done

# --- hanging probes are errors, never passes (D4) --------------------------------------------
start=$(date +%s)
run validate "$IMG" --probes "$HANG" --probe-timeout 3 --json="$WORK/v.json"
check "every probe hangs: exit 1" test "$(rc)" = 1
check "...TD101 is an error, not a pass ($(status_of TD101))" bash -c "[[ '$(status_of TD101)' == error\|*'probe-cuda timed out after 3 s'* ]]"
check "...TD110 is an error, not a skip" bash -c "[[ '$(status_of TD110)' == error\|* ]]"
check "...the summary does not say passed" bash -c "! grep -q '1 of 1 images passed' '$WORK/out'"
check "...no container is left" test "$(leftovers)" = 0

# --- a probe that floods its output is read bounded and is an error, not a pass (D13) -------
FLOOD=$WORK/flood
mkdir -p "$FLOOD" && cp "$PROBES"/* "$FLOOD"/
printf '#!/bin/sh\nhead -c 20000000 /dev/zero | tr "\\0" x\necho\nexit 0\n' >"$FLOOD/probe-libs"
run validate "$IMG" --probes "$FLOOD" --json="$WORK/v.json"
# The engine keeps at most 16 MiB of a probe container's log (its json-file max-size) and
# torchdock reads at most 8 MiB of it: either way no usable result, so an error, never a pass.
check "a probe printing a 20 MB line: TD110 is an error ($(status_of TD110 | cut -c1-80))" \
  bash -c "[[ '$(status_of TD110)' == error\|*'more than 8 MiB'* || '$(status_of TD110)' == error\|*'no usable result'* ]]"

# --- an image without torch and without labels fails (D19) ----------------------------------
run validate "$IMG" --probes "$PROBES" --json="$WORK/v.json"
check "plain Debian (no torch, no labels): exit 1" test "$(rc)" = 1
check "...TD119 says no PyTorch was found" bash -c "[[ '$(status_of TD119)' == fail\|*'no PyTorch found'* ]]"

# --- Ctrl-C and SIGTERM remove the probe containers, and say so truthfully (D2) --------------
setsid "$TD" validate "$IMG" "$IMG" -j 2 --probes "$HANG" --probe-timeout 60 >"$WORK/out" 2>"$WORK/err" &
pid=$!
sleep 4
kill -INT -- -"$pid"
wait "$pid"; echo $? >"$WORK/rc"
check "Ctrl-C during validate -j 2: exit 130" test "$(rc)" = 130
check "...says the containers were removed" has err "the probe containers were removed"
check "...and they are gone" test "$(leftovers)" = 0
timeout --preserve-status -s TERM 4 "$TD" validate "$IMG" --probes "$HANG" --probe-timeout 60 >"$WORK/out" 2>"$WORK/err"
check "SIGTERM during validate: exit 130" test $? = 130
check "...no container is left" test "$(leftovers)" = 0
setsid "$TD" doctor --image "$IMG" --probes "$HANG" >"$WORK/out" 2>"$WORK/err" &
pid=$!
sleep 4
kill -INT -- -"$pid"
wait "$pid"; echo $? >"$WORK/rc"
check "Ctrl-C during doctor --image: exit 130" test "$(rc)" = 130
check "...no container is left" test "$(leftovers)" = 0

# --- SIGKILL cannot clean up; the next run removes what the dead run left (D8 row 101) -------
setsid "$TD" validate "$IMG" --probes "$HANG" --probe-timeout 60 >/dev/null 2>&1 &
pid=$!
sleep 4
kill -KILL -- -"$pid"
wait "$pid" 2>/dev/null
check "SIGKILL during validate leaves its container" test "$(leftovers)" -ge 1
run validate "$IMG" --probes "$PROBES" --json="$WORK/v.json"
check "the next run removes it and says so" has err "left by an earlier torchdock that was killed"
check "...no container is left" test "$(leftovers)" = 0

# --- builds: a SIGKILLed torchdock takes its docker build with it (D8) -----------------------
DF=$WORK/df
index_entry() { echo "{\"name\":\"$1\",\"family\":\"v\",\"image\":\"torchdock/v\",\"tag\":\"$1\",\"dockerfile\":\"$1/Dockerfile\",\"base\":\"$IMG\"}"; }
mkdir -p "$DF/v-slow" "$DF/v-quick"
printf 'FROM %s\nRUN sleep 90\n' "$IMG" >"$DF/v-slow/Dockerfile"
printf 'FROM %s\nRUN true\n' "$IMG" >"$DF/v-quick/Dockerfile"
echo "{\"schema\":1,\"generator\":\"torchdock\",\"variants\":[$(index_entry v-slow),$(index_entry v-quick)]}" >"$DF/index.json"
cd "$WORK" || exit 1
setsid "$TD" build --skip-render-check --dockerfiles "$DF" v-slow >/dev/null 2>&1 &
pid=$!
sleep 8
check "the slow build's docker client is running" bash -c "pgrep -f 'build.*torchdock/v:v-slow' >/dev/null"
kill -KILL -- -"$pid"
wait "$pid" 2>/dev/null
gone=no
for _ in $(seq 1 30); do pgrep -f "build.*torchdock/v:v-slow" >/dev/null || { gone=yes; break; }; sleep 0.2; done
check "SIGKILL of torchdock: its docker build dies with it" test "$gone" = yes
sleep 3
check "...and nothing is tagged" bash -c "! $DOCKER image inspect torchdock/v:v-slow >/dev/null 2>&1"

# --- the build work dir and variant dirs are never followed through symlinks (D9, D23) -------
echo keep1 >"$WORK/victim1"; echo keep2 >"$WORK/victim2"
mkdir -p "$WORK/wd/v-quick"
ln -s "$WORK/victim1" "$WORK/wd/v-quick/Dockerfile"
ln -s "$WORK/victim2" "$WORK/wd/v-quick/build.log"
run build --skip-render-check --dockerfiles "$DF" v-quick --work-dir "$WORK/wd"
# Writers write regular files only (R3-4): a symlink at a work file's name is refused, naming it.
check "build with symlinks in the work dir: refused (exit 1, was $(rc))" test "$(rc)" = 1
check "...saying the work file is a symlink" grep -qF "it is a symlink to $WORK/victim1" "$WORK/out" "$WORK/err"
check "...the symlink targets are untouched" bash -c "[ \"\$(cat '$WORK/victim1')\" = keep1 ] && [ \"\$(cat '$WORK/victim2')\" = keep2 ]"
rm -f "$WORK/wd/v-quick/Dockerfile" "$WORK/wd/v-quick/build.log"
mkdir -p "$WORK/outside" && printf 'FROM %s\nRUN echo OUTSIDE\n' "$IMG" >"$WORK/outside/Dockerfile"
rm -rf "$DF/v-quick" && ln -s "$WORK/outside" "$DF/v-quick"
run build --skip-render-check --dockerfiles "$DF" v-quick
check "a variant directory that is a symlink out of the tree: refused" test "$(rc)" = 1
check "...saying it is a symlink" has err "symlink"

# --- the engine dies in the middle of validate: exit 3, never passed (D3) --------------------
setsid "$TD" validate "$IMG" --probes "$HANG" --probe-timeout 60 --json="$WORK/v.json" >"$WORK/out" 2>"$WORK/err" &
pid=$!
sleep 5
kill -9 "$(cat "$TD_SVC_DIR/dockerd.pid")"
wait "$pid"; echo $? >"$WORK/rc"
check "engine killed during validate: exit 3" test "$(rc)" = 3
check "...the image is not reported as passed" bash -c "! grep -q '1 of 1 images passed' '$WORK/out'"
check "...the report names the engine" bash -c "grep -q 'engine' '$WORK/out'"
services_stop
services_start >/dev/null 2>&1
$DOCKER ps -aq --filter label=io.torchdock.run | xargs -r $DOCKER rm -f >/dev/null 2>&1
finish
