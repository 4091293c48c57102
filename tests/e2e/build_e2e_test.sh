#!/usr/bin/env bash
# End to end against a real Docker engine and a real registry, both started here:
# lock, render, build the Debian CPU family, inspect labels, run the image, rebuild from
# cache, change an extra package, break one, Ctrl-C and a dying engine mid-build, a dead
# engine, registry drift. Usage: build_e2e_test.sh TORCHDOCK
set -uo pipefail
TD=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
source "$ROOT/tests/e2e/lib/binfmt.sh"
WORK=$(mktemp -d /tmp/torchdock-build-e2e-XXXXXX)
chmod 755 "$WORK"  # the permission test reads it as another user
ALT_PID=""
cleanup() {
  [ -n "$ALT_PID" ] && kill "$ALT_PID" 2>/dev/null
  binfmt_restore  # a handler disabled for the no-emulation check, if interrupted there
  services_stop
  rm -rf "$WORK"
}
trap cleanup EXIT
source "$ROOT/tests/e2e/lib/check.sh"
api() { curl -s --unix-socket "${DOCKER_HOST#unix://}" "http://localhost/v1.41$1"; }
# json_field FILE KEY... : prints d[KEY][KEY]... (numeric keys index lists)
json_field() { python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    d = d[int(k)] if k.isdigit() else d[k]
print(d)
PY
}

services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
cd "$WORK"
mkdir -p manifests
cp "$ROOT/manifests/debian-cpu.json" manifests/
# A second family with the same base, so one build can fail while the other finishes.
sed 's/"name": "debian-cpu"/"name": "debian-two"/; s#torchdock/debian-cpu#torchdock/debian-two#' \
  manifests/debian-cpu.json >manifests/debian-two.json
printf '{"schema": 1, "mirrors": {"docker.io": "%s"}}\n' "$TD_REGISTRY" >torchdock.json
export TORCHDOCK_CONFIG="$WORK/torchdock.json"

# --- lock --------------------------------------------------------------------------
run lock debian-cpu debian-two
check "lock resolves the base through the mirror" test "$(rc)" = 0
check "lock wrote the lock file" test -s manifests/debian-cpu.lock.json
BASE_DIGEST=$(json_field manifests/debian-cpu.lock.json images debian:bookworm digest)
REG_DIGEST=$(curl -sI -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
  "http://$TD_REGISTRY/v2/library/debian/manifests/bookworm" | tr -d '\r' | awk -F': ' 'tolower($1)=="docker-content-digest"{print $2}')
check "locked digest is the registry's digest" test "$BASE_DIGEST" = "$REG_DIGEST"
run lock --check debian-cpu
check "lock --check passes when nothing moved" test "$(rc)" = 0
# The apt lock: procps (pinned by the manifest) and every package apt installs with it,
# resolved by apt inside the locked base; render pins them all.
check "lock resolved the apt packages in the pinned base: procps $(json_field manifests/debian-cpu.lock.json apt debian-cpu-debian12 resolved procps)" \
  test "$(json_field manifests/debian-cpu.lock.json apt debian-cpu-debian12 resolved procps)" = 2:4.0.2-3
check "...with the packages apt installs for it ($(python3 -c "import json; print(len(json.load(open('manifests/debian-cpu.lock.json'))['apt']['debian-cpu-debian12']['resolved']))") in all)" \
  python3 -c "import json,sys; r=json.load(open('manifests/debian-cpu.lock.json'))['apt']['debian-cpu-debian12']['resolved']; sys.exit(0 if len(r) > 1 else 1)"
check "...resolved in the base by its digest" \
  grep -q "\"base\": \"debian:bookworm@$(json_field manifests/debian-cpu.lock.json images debian:bookworm digest)\"" manifests/debian-cpu.lock.json
cp manifests/debian-cpu.lock.json "$WORK/apt-good.lock.json"
# The archive moved (simulated by editing the lock): --check names it and writes nothing.
python3 -c "import json; p='manifests/debian-cpu.lock.json'; d=json.load(open(p)); d['apt']['debian-cpu-debian12']['resolved']['procps']='2:4.0.2-2'; open(p,'w').write(json.dumps(d, indent=2)+'\n')"
cp manifests/debian-cpu.lock.json "$WORK/apt-moved.lock.json"
run lock --check debian-cpu
check "lock --check: exit 1 naming the moved apt package (procps 2:4.0.2-2 -> 2:4.0.2-3)" \
  bash -c "test $(rc) = 1 && grep -q 'MOVED: procps 2:4.0.2-2 -> 2:4.0.2-3' '$WORK/out'"
check "...and wrote nothing" cmp -s manifests/debian-cpu.lock.json "$WORK/apt-moved.lock.json"
cp "$WORK/apt-good.lock.json" manifests/debian-cpu.lock.json
# An unpinned name: rendered unpinned with a warning until locked, then pinned from the lock.
mkdir -p "$WORK/unpinned/manifests"
sed 's/"procps=2:4.0.2-3"/"procps"/' manifests/debian-cpu.json >"$WORK/unpinned/manifests/debian-cpu.json"
(cd "$WORK/unpinned" && "$TD" render --out d >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "an unpinned apt package without a lock renders with a warning and a Not pinned comment" \
  bash -c "test $(rc) = 0 && grep -q 'installs Debian packages without a version' '$WORK/err' && grep -q '# Not pinned: no lock file' '$WORK/unpinned/d/debian-cpu-debian12/Dockerfile'"
(cd "$WORK/unpinned" && "$TD" lock >"$WORK/out" 2>"$WORK/err" && "$TD" render --out d >>"$WORK/out" 2>>"$WORK/err"; echo $? >"$WORK/rc")
check "...and after lock it is pinned to what apt resolved (procps=2:4.0.2-3)" \
  bash -c "test $(rc) = 0 && grep -q '      procps=2:4.0.2-3' '$WORK/unpinned/d/debian-cpu-debian12/Dockerfile' && ! grep -q 'Not pinned' '$WORK/unpinned/d/debian-cpu-debian12/Dockerfile'"

# --- render + first build ------------------------------------------------------------
# Start from an empty build cache so the first build is a first build and the pip change
# below is a real change (the base image and the registry are kept).
/usr/bin/docker builder prune -af >/dev/null 2>&1
run render --out dockerfiles
check "render uses the lock" grep -q "^FROM debian@$BASE_DIGEST" dockerfiles/debian-cpu-debian12/Dockerfile
start=$(date +%s.%N)
run build debian-cpu-debian12 --json
first=$(echo "$(date +%s.%N) - $start" | bc)
check "first build succeeds" test "$(rc)" = 0
# This engine runs with --bridge=none: only then do RUN steps get the host's network, and the
# build says so (adversarial report row 46).
check "the build says its RUN steps use the host network (no bridge here)" has err "no bridge network"
cp "$WORK/out" "$WORK/first.json"
echo "# figure: first build of debian-cpu-debian12: ${first} s (steps cached: $(json_field first.json builds 0 cached_steps)/$(json_field first.json builds 0 steps))"

labels=$(api /images/torchdock/debian-cpu:debian12/json)
label() { echo "$labels" | python3 -c "import json,sys; print(json.load(sys.stdin)['Config']['Labels'].get('$1',''))"; }
check "label io.torchdock.torch" test "$(label io.torchdock.torch)" = 1.13.1
check "label io.torchdock.variant" test "$(label io.torchdock.variant)" = debian-cpu-debian12
check "label io.torchdock.manifest-sha256 matches the manifest" \
  test "$(label io.torchdock.manifest-sha256)" = "$(sha256sum manifests/debian-cpu.json | cut -d' ' -f1)"
check "label base digest" test "$(label org.opencontainers.image.base.digest)" = "$BASE_DIGEST"
size=$(echo "$labels" | python3 -c "import json,sys; print(json.load(sys.stdin)['Size'])")
echo "# figure: image size torchdock/debian-cpu:debian12: $size bytes"
torch_version=$(/usr/bin/docker run --rm --network=none --user 1000:1000 torchdock/debian-cpu:debian12 \
  python -c 'import torch, tqdm; print(torch.__version__)' 2>&1)
# Debian's python3-torch 1.13.1 reports itself as 1.13.0a0 (recorded in data/os.json).
check "the built image runs Debian's torch as the non-root user (got: $torch_version)" test "$torch_version" = 1.13.0a0

# --- no-op rebuild from cache ---------------------------------------------------------
start=$(date +%s.%N)
run build debian-cpu-debian12 --json
noop=$(echo "$(date +%s.%N) - $start" | bc)
check "no-op rebuild succeeds" test "$(rc)" = 0
steps=$(json_field out builds 0 steps); cached=$(json_field out builds 0 cached_steps)
check "no-op rebuild takes every RUN step from the cache ($cached of $steps, FROM not counted)" test "$cached" = $((steps - 1))
echo "# figure: no-op rebuild as a whole process: ${noop} s"

# --- build builds only what render writes (adversarial report 3, R3-6; variants) ----------
V=dockerfiles/debian-cpu-debian12
id_before=$(/usr/bin/docker image inspect -f '{{.Id}}' torchdock/debian-cpu:debian12)
printf 'machine 127.0.0.1\nlogin u\npassword FAKE-NETRC-SECRET\n' >"$WORK/user.netrc" && chmod 600 "$WORK/user.netrc"
if [ -f "$V/requirements.lock.txt" ]; then
  cp "$V/requirements.lock.txt" "$WORK/req.keep"
  printf 'evil-pkg==6.6.6 --hash=sha256:%064d\n' 0 >>"$V/requirements.lock.txt"
  run build debian-cpu-debian12 --index-netrc "$WORK/user.netrc"
  check "an edited context file (requirements.lock.txt): refused before any build (exit 2), naming it and torchdock render" \
    bash -c "test $(rc) = 2 && grep -qF '$V/requirements.lock.txt differs from what \`torchdock render\` writes' '$WORK/err' && ! grep -q 'started' '$WORK/err'"
  cp "$WORK/req.keep" "$V/requirements.lock.txt"
else
  skipped "an edited requirements.lock.txt: lock wrote no Python set for debian-cpu here"
fi
cp "$V/Dockerfile" "$WORK/Dockerfile.keep"
printf 'RUN --mount=type=secret,id=pip-netrc sh -c "cat /run/secrets/pip-netrc 2>/dev/null || echo no-secret" >/tmp/stolen\n' >>"$V/Dockerfile"
run build debian-cpu-debian12 --index-netrc "$WORK/user.netrc"
check "a Dockerfile edited to read the netrc secret: refused (exit 2), naming it" \
  bash -c "test $(rc) = 2 && grep -qF '$V/Dockerfile differs' '$WORK/err' && grep -qF 'torchdock render' '$WORK/err'"
check "...nothing was built or tagged" test "$(/usr/bin/docker image inspect -f '{{.Id}}' torchdock/debian-cpu:debian12)" = "$id_before"
run render --check --out dockerfiles
check "...render --check agrees that the tree is stale" test "$(rc)" = 1
run build debian-cpu-debian12 --skip-render-check --index-netrc "$WORK/user.netrc"
check "--skip-render-check builds the edited tree, saying the netrc is not handed to it" \
  bash -c "test $(rc) = 0 && grep -qF 'is not handed to these builds' '$WORK/err'"
stolen=$(/usr/bin/docker run --rm --network=none torchdock/debian-cpu:debian12 cat /tmp/stolen 2>&1)
check "...and the secret never reached its RUN step (it read: $stolen)" test "$stolen" = no-secret
cp "$WORK/Dockerfile.keep" "$V/Dockerfile"
run render --out dockerfiles

# --- a change to an extra pip package rebuilds only what comes after torch -------------
sed -i 's/"tqdm==4.67.1"/"tqdm==4.66.5"/' manifests/debian-cpu.json
run render --out dockerfiles
run build debian-cpu-debian12
check "build after a pip change succeeds" test "$(rc)" = 0
log=.torchdock/build/debian-cpu-debian12/build.log
torch_step=$(grep -m1 -E '^#[0-9]+ \[.*\] RUN .*python3-torch' "$log" | cut -d' ' -f1)
pip_step=$(grep -m1 -E '^#[0-9]+ \[.*\] RUN .*pip-ca' "$log" | cut -d' ' -f1)
check "the torch layer came from the cache" grep -qx "$torch_step CACHED" "$log"
check "the pip layer was rebuilt" bash -c "! grep -qx '$pip_step CACHED' '$log'"

# --- a broken package version fails that variant only ----------------------------------
sed -i 's/"procps=2:4.0.2-3"/"procps=2:9.9.9-1"/' manifests/debian-two.json
cp manifests/debian-two.lock.json "$WORK/two.lock.json"
run lock debian-two
check "lock: a version apt cannot install is exit 2, with apt's own words, and no lock file changes" \
  bash -c "test $(rc) = 2 && grep -q \"Version '2:9.9.9-1' for 'procps' was not found\" '$WORK/out' && grep -q 'change the manifest' '$WORK/err' && cmp -s manifests/debian-two.lock.json '$WORK/two.lock.json'"
run render --out dockerfiles
run build 'debian-*' -j 2
check "a failed variant makes the exit code 1" test "$(rc)" = 1
check "the failing step is named" has err "debian-two-debian12: build failed at step"
check "the failing step's output is shown" has err "procps"
check "the full log is kept" bash -c "grep -q 'full log: .torchdock/build/debian-two-debian12/build.log' '$WORK/err' && test -s .torchdock/build/debian-two-debian12/build.log"
check "the other variant still built" grep -qE '^debian-cpu-debian12 .* built$' "$WORK/out"
check "the summary marks only the broken one" grep -qE '^debian-two-debian12 .* FAILED$' "$WORK/out"
sed -i 's/"procps=2:9.9.9-1"/"procps=2:4.0.2-3"/' manifests/debian-two.json
run render --out dockerfiles

# --- --platform (issue 24): only a platform the manifest lists; another needs emulation ----
# Before the Ctrl-C and dead-engine sections: an apt step of a build they cut short can
# outlive it and hold the apt cache mount's lock ("Could not get lock ... held by process
# 0"), which failed this section's build once when it ran after them.
run build debian-cpu-debian12 --platform linux/arm64
check "build --platform linux/arm64 of a linux/amd64-only variant: exit 2, naming it and its platforms" \
  bash -c "test $(rc) = 2 && grep -q 'debian-cpu-debian12 (linux/amd64) is not built for it' '$WORK/err'"
run build debian-cpu-debian12 --platform linux/s390x
check "build --platform linux/s390x: exit 2, saying what is accepted" \
  bash -c "test $(rc) = 2 && grep -q 'accepted: linux/amd64, linux/arm64' '$WORK/err'"
mkdir -p "$WORK/mp/manifests"
sed -e 's/"schema": 1,/"schema": 1, "platforms": ["linux\/amd64", "linux\/arm64"],/' \
  -e 's#torchdock/debian-cpu#torchdock/debian-mp#' "$ROOT/manifests/debian-cpu.json" >"$WORK/mp/manifests/debian-cpu.json"
(cd "$WORK/mp" && "$TD" render --out d >/dev/null 2>&1)
# Without a qemu-aarch64 handler (this host's is disabled meanwhile, lib/binfmt.sh).
if binfmt_no_aarch64; then
  (cd "$WORK/mp" && "$TD" build --dockerfiles d --platform linux/arm64 >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
  binfmt_restore
  check "build --platform linux/arm64 on this amd64 engine without qemu: exit 3, naming qemu-user-static and a native builder" \
    bash -c "test $(rc) = 3 && grep -q 'needs emulation, and this host has no qemu-aarch64 handler in binfmt_misc: install Debian.s qemu-user-static' '$WORK/err' && grep -q 'native arm64 builder' '$WORK/err'"
else
  bad "the qemu-aarch64 binfmt handler could not be disabled for the no-emulation check"
fi
(cd "$WORK/mp" && "$TD" build --dockerfiles d --platform linux/amd64 >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "build --platform linux/amd64 of the two-platform variant: exit 0, a linux/amd64 image labelled with both platforms" \
  bash -c "test $(rc) = 0 && test \"\$(/usr/bin/docker image inspect -f '{{.Os}}/{{.Architecture}} {{index .Config.Labels \"io.torchdock.platforms\"}}' torchdock/debian-mp:debian12)\" = 'linux/amd64 linux/amd64,linux/arm64'"
[ "$(rc)" = 0 ] || tail -5 "$WORK/err"
/usr/bin/docker rmi -f torchdock/debian-mp:debian12 >/dev/null 2>&1

# --- Ctrl-C in the middle ---------------------------------------------------------------
"$TD" build debian-two-debian12 --no-cache >"$WORK/int.out" 2>"$WORK/int.err" &
bpid=$!
for _ in $(seq 1 100); do grep -q '^#[0-9]* \[.*\] RUN' .torchdock/build/debian-two-debian12/build.log 2>/dev/null && break; sleep 0.2; done
sleep 1
t0=$(date +%s)
kill -INT "$bpid"
wait "$bpid"; irc=$?
elapsed=$(( $(date +%s) - t0 ))
check "Ctrl-C exits 130" test "$irc" = 130
check "Ctrl-C exits promptly (${elapsed} s)" test "$elapsed" -le 15
check "Ctrl-C says what happened" grep -q "interrupted" "$WORK/int.err"
check "no half-tagged image is left" test "$(api /images/torchdock/debian-two:debian12/json | grep -c '"Id"')" = 0
check "no docker client is left running" bash -c "! pgrep -f '[b]uild.*debian-two-debian12' >/dev/null"

# --- the engine dies mid-build ----------------------------------------------------------
if [ -z "${TD_DOCKERD_PID:-}" ]; then
  skipped "engine killed mid-build: the engine at $DOCKER_HOST was not started by this test, so it is not killed"
else
"$TD" build debian-two-debian12 --no-cache >"$WORK/kill.out" 2>"$WORK/kill.err" &
bpid=$!
for _ in $(seq 1 100); do grep -q '^#[0-9]* \[.*\] RUN' .torchdock/build/debian-two-debian12/build.log 2>/dev/null && break; sleep 0.2; done
sleep 1
kill -9 "$TD_DOCKERD_PID"
wait "$bpid"; krc=$?
wait "$TD_DOCKERD_PID" 2>/dev/null
check "a dead engine mid-build exits 3" test "$krc" = 3
check "a dead engine mid-build gives a clean error" grep -q "the Docker engine went away during the build" "$WORK/kill.err"
check "no stack of errors: at most a few error lines" test "$(grep -c 'torchdock: error' "$WORK/kill.err")" -le 1
TD_STARTED_PIDS=("${TD_STARTED_PIDS[@]/$TD_DOCKERD_PID}")
start_engine || bad "engine restart after the kill"
fi

# --- a dead engine, a missing client ----------------------------------------------------
DOCKER_HOST=unix:///nonexistent/docker.sock run build debian-cpu-debian12
check "no engine exits 3" test "$(rc)" = 3
check "no engine: one clear line (besides the settings file's name)" bash -c "test \$(grep -vc 'note: settings from' '$WORK/err') = 1 && grep -q 'does not exist (start dockerd' '$WORK/err'"
TORCHDOCK_DOCKER=/nonexistent/docker run build debian-cpu-debian12
check "no docker client exits 3" test "$(rc)" = 3
check "no docker client: says how to fix it" has err "install Debian's docker.io"
if id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
  sock="${DOCKER_HOST#unix://}"
  chmod 660 "$sock"
  runuser -u nobody -- env DOCKER_HOST="$DOCKER_HOST" TORCHDOCK_CONFIG="$TORCHDOCK_CONFIG" "$TD" build \
    --dockerfiles "$WORK/dockerfiles" --work-dir /tmp/td-nobody debian-cpu-debian12 >"$WORK/out" 2>"$WORK/err"
  prc=$?
  check "no permission on the socket exits 3" test "$prc" = 3
  check "no permission: says how to fix it" has err "no permission on $sock"
else
  skipped "permission test: needs the nobody user and runuser"
fi

# --- push --------------------------------------------------------------------------------
run build debian-cpu-debian12 --push "$TD_REGISTRY"
check "build --push succeeds" test "$(rc)" = 0
check "the pushed image is in the registry" \
  curl -sf -o /dev/null -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "http://$TD_REGISTRY/v2/torchdock/debian-cpu/manifests/debian12"

# --- registry drift: a rebuilt upstream tag, a deleted tag, an unreachable registry -----
ALT=127.0.0.1:5001
mkdir -p "$WORK/alt"
printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\nlog:\n  level: warn\n' \
  "$WORK/alt" "$ALT" >"$WORK/alt.yml"
docker-registry serve "$WORK/alt.yml" >"$WORK/alt.log" 2>&1 &
ALT_PID=$!
for _ in $(seq 1 40); do curl -sf "http://$ALT/v2/" >/dev/null && break; sleep 0.25; done
/usr/bin/docker tag "$TD_REGISTRY/library/debian:bookworm" "$ALT/library/debian:bookworm"
/usr/bin/docker push -q "$ALT/library/debian:bookworm" >/dev/null
run lock debian-cpu --mirror "docker.io=$ALT"
check "lock against the second registry" test "$(rc)" = 0
# "Upstream" rebuilds the tag: same name, new content.
printf 'FROM %s/library/debian:bookworm\nLABEL rebuilt=yes\n' "$ALT" | DOCKER_BUILDKIT=1 /usr/bin/docker build -q -t "$ALT/library/debian:bookworm" - >/dev/null
/usr/bin/docker push -q "$ALT/library/debian:bookworm" >/dev/null
run lock --check debian-cpu --mirror "docker.io=$ALT"
check "lock --check fails when the tag was rebuilt" test "$(rc)" = 1
check "lock --check names the rebuilt tag" grep -q "debian:bookworm.*CHANGED upstream" "$WORK/out"
new_digest=$(curl -sI -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
  "http://$ALT/v2/library/debian/manifests/bookworm" | tr -d '\r' | awk -F': ' 'tolower($1)=="docker-content-digest"{print $2}')
curl -sf -X DELETE "http://$ALT/v2/library/debian/manifests/$new_digest" >/dev/null
run lock --check debian-cpu --mirror "docker.io=$ALT"
check "lock --check fails when the tag is gone" test "$(rc)" = 1
check "lock --check names the deleted tag with the registry's words" grep -q "GONE: the tag no longer exists (MANIFEST_UNKNOWN" "$WORK/out"
cp manifests/debian-cpu.lock.json "$WORK/lock.before"
run lock debian-cpu --mirror "docker.io=127.0.0.1:5999"
check "an unreachable registry exits 3" test "$(rc)" = 3
check "an unreachable registry is reported per image" grep -q "debian:bookworm (via 127.0.0.1:5999).*ERROR: .*127.0.0.1:5999" "$WORK/out"
check "a failed lock leaves the lock file as it was" cmp -s manifests/debian-cpu.lock.json "$WORK/lock.before"

finish
