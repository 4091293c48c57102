#!/usr/bin/env bash
# End to end, opt-in (TORCHDOCK_E2E_EMULATED_BUILD=1; about 15 minutes here, so not in the
# default run): one manifest for linux/amd64 and linux/arm64 built for linux/arm64 on this
# x86 machine through qemu-user, then validated in the emulated tier. The base is a real
# two-platform index, as docker.io's debian:bookworm is: a second local registry mirrors
# docker.io and holds library/debian:bookworm as an index of the suites' amd64 Debian root
# and a complete arm64 one (debootstrap's second stage run under qemu-user). lock pins the
# index, render writes the Dockerfile, `build --platform linux/arm64` runs its apt and pip
# steps under emulation (saying so), and validate runs the image's own Debian python3-torch
# under qemu-user with the linux/arm64 probes.
# Usage: arm64_emulated_build_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/check.sh"
if [ "${TORCHDOCK_E2E_EMULATED_BUILD:-}" != 1 ]; then
  skipped "the emulated arm64 build (about 15 minutes): set TORCHDOCK_E2E_EMULATED_BUILD=1 to run it"
  finish
  exit 77
fi
if [ "$(uname -m)" != x86_64 ]; then
  skipped "this suite builds for arm64 on an x86_64 host; this host is $(uname -m)"
  finish
  exit 77
fi
source "$ROOT/tests/e2e/lib/services.sh"
source "$ROOT/tests/e2e/lib/binfmt.sh"
WORK=$(mktemp -d /tmp/torchdock-arm64-build-e2e-XXXXXX)
MIRROR=127.0.0.1:5001
IMAGE=torchdock-test/debian-emulated:debian12
DOCKER=/usr/bin/docker
trap '$DOCKER rmi -f $IMAGE $MIRROR/library/debian:bookworm-amd64 $MIRROR/library/debian:bookworm-arm64 >/dev/null 2>&1; binfmt_restore; services_stop; rm -rf "$WORK"' EXIT
export TORCHDOCK_PROBES=$PROBES
secs() { echo "$(date +%s.%N) - $1" | bc; }
services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }
why=$(binfmt_aarch64) || { bad "the qemu-aarch64 binfmt handler: $why"; finish; exit 1; }

# --- a two-platform debian:bookworm in a docker.io mirror -------------------------------------
start=$(date +%s.%N)
tarball=$(debian_rootfs_tarball bookworm "" arm64) || { bad "an arm64 Debian root (debootstrap under qemu-user)"; finish; exit 1; }
registry_serve "$MIRROR" "$WORK/registry" || { bad "a second registry on $MIRROR"; finish; exit 1; }
cat >"$WORK/spec.json" <<EOF
{"platform": "linux/arm64", "layers": {"root": {"tar": "$tarball"}},
 "images": [{"tag": "$MIRROR/library/debian:bookworm-arm64", "layers": ["root"], "cmd": ["bash"]}]}
EOF
python3 "$ROOT/tests/e2e/lib/docker_archive.py" "$WORK/spec.json" | $DOCKER load -q >/dev/null &&
  $DOCKER tag "$TD_REGISTRY/library/debian:bookworm" "$MIRROR/library/debian:bookworm-amd64" &&
  $DOCKER push -q "$MIRROR/library/debian:bookworm-amd64" >/dev/null &&
  $DOCKER push -q "$MIRROR/library/debian:bookworm-arm64" >/dev/null &&
  { $DOCKER manifest rm "$MIRROR/library/debian:bookworm" >/dev/null 2>&1; true; } &&
  $DOCKER manifest create --insecure "$MIRROR/library/debian:bookworm" \
    "$MIRROR/library/debian:bookworm-amd64" "$MIRROR/library/debian:bookworm-arm64" >/dev/null &&
  $DOCKER manifest push --purge --insecure "$MIRROR/library/debian:bookworm" >/dev/null
check "the mirror's debian:bookworm is an index of linux/amd64 and linux/arm64" \
  bash -c "curl -sf -H 'Accept: application/vnd.docker.distribution.manifest.list.v2+json' http://$MIRROR/v2/library/debian/manifests/bookworm | python3 -c \"import json,sys; p=sorted(m['platform']['architecture'] for m in json.load(sys.stdin)['manifests']); assert p == ['amd64', 'arm64'], p\""
echo "# figure: arm64 Debian root (debootstrap under qemu-user, or cached) and the two-platform index: $(secs "$start") s"

# --- lock, render, build --platform linux/arm64 under emulation -------------------------------
mkdir -p "$WORK/p/manifests"
cd "$WORK/p"
printf '{"schema": 1, "mirrors": {"docker.io": "%s"}}\n' "$MIRROR" >torchdock.json
export TORCHDOCK_CONFIG="$WORK/p/torchdock.json"
sed -e 's/"schema": 1,/"schema": 1, "platforms": ["linux\/amd64", "linux\/arm64"],/' \
  -e "s#torchdock/debian-cpu#${IMAGE%%:*}#" "$ROOT/manifests/debian-cpu.json" >manifests/debian-cpu.json
run lock
check "lock pins the base's index and each platform's manifest: exit 0" \
  bash -c "test $(rc) = 0 && python3 -c \"import json; v=json.load(open('manifests/debian-cpu.lock.json'))['images']['debian:bookworm']; assert v['media_type'].endswith('manifest.list.v2+json') and sorted(v['platforms']) == ['linux/amd64', 'linux/arm64'], v\""
run render --out d
check "render: exit 0, the Dockerfile for both platforms" \
  bash -c "test $(rc) = 0 && grep -q '^# Platforms: linux/amd64, linux/arm64' d/debian-cpu-debian12/Dockerfile"
start=$(date +%s.%N)
run build --dockerfiles d --platform linux/arm64 --no-cache
echo "# figure: build --platform linux/arm64 under qemu-user (Debian's python3-torch and its dependencies): $(secs "$start") s"
check "build --platform linux/arm64 through qemu-user: exit 0, the emulation said" \
  bash -c "test $(rc) = 0 && grep -q 'linux/arm64 is emulated on this x86_64 engine (qemu-aarch64 in binfmt_misc)' '$WORK/err'"
[ "$(rc)" = 0 ] || tail -5 "$WORK/err"
check "the image is linux/arm64, labelled with both platforms" \
  bash -c "test \"\$($DOCKER image inspect -f '{{.Os}}/{{.Architecture}} {{index .Config.Labels \"io.torchdock.platforms\"}}' $IMAGE)\" = 'linux/arm64 linux/amd64,linux/arm64'"

# --- validate in the emulated tier ------------------------------------------------------------
start=$(date +%s.%N)
run validate "$IMAGE" --json="$WORK/v.json"
echo "# figure: validate (emulated) of the built arm64 image: $(secs "$start") s"
check "validate: exit 0 in the emulated tier, Debian's torch imported by the image's python" \
  bash -c "test $(rc) = 0 && python3 -c \"import json; i=json.load(open('$WORK/v.json'))['images'][0]; assert i['tier'] == 'emulated' and i['probes']['torch']['status'] == 'pass', i['tier']\""
[ "$(rc)" = 0 ] || head -40 "$WORK/out"

finish
