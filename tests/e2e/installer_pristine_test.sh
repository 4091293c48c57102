#!/usr/bin/env bash
# scripts/install-deps.sh, the whole installer, in a pristine debootstrapped Debian bookworm
# (the project's base image, nothing installed beyond minbase): it must end with status 0 and
# its "install-deps: ok (...)" line, and a second run must find everything in place.
# Host network (apt's own sources from the image, pip's default index); the host's CA
# bundle reaches pip as PIP_CERT, as behind a TLS-inspecting proxy. apt archives persist in
# $TORCHDOCK_CACHE/installer-apt so reruns download little; pip's cache is kept there too, and
# stays empty where the index's answers are not cacheable (seen here: pip downloads each run).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
: "${TORCHDOCK_CACHE:=/var/tmp/torchdock}"
WORK=$(mktemp -d /tmp/torchdock-installer-XXXXXX)
DOCKER=/usr/bin/docker
NAME=td-installer-$$
cleanup() { $DOCKER rm -f "$NAME" >/dev/null 2>&1; services_stop; rm -rf "$WORK"; }
trap cleanup EXIT
TD=/nonexistent
source "$ROOT/tests/e2e/lib/check.sh"
services_start || { echo "FAIL - the test engine and registry did not start"; exit 1; }
BASE=$TD_REGISTRY/library/debian:bookworm
CA=${PIP_CERT:-${REQUESTS_CA_BUNDLE:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}}
mkdir -p "$TORCHDOCK_CACHE/installer-apt/partial" "$TORCHDOCK_CACHE/installer-pip"
# The host ran the same installer on the same release: its downloaded packages seed the
# container's archive (hard links where one file system holds both; apt checks each file's
# hash against its index, so a stale one is downloaded again, never trusted).
seeded=0
for deb in /var/cache/apt/archives/*.deb; do
  [ -e "$deb" ] || continue
  dest="$TORCHDOCK_CACHE/installer-apt/$(basename "$deb")"
  [ -e "$dest" ] || { ln "$deb" "$dest" 2>/dev/null || cp "$deb" "$dest"; } && seeded=$((seeded + 1))
done
echo "# apt archive: $seeded packages from the host's cache"
$DOCKER pull -q "$BASE" >/dev/null

start=$SECONDS
# Twice in the same container: the first run installs, the second must be a no-op that still
# says ok. The source tree is read-only inside: the installer writes nothing into it.
$DOCKER run --rm --name "$NAME" --network=host \
  -v "$ROOT:/src:ro" -v "$CA:/etc/torchdock-test-ca.crt:ro" -e PIP_CERT=/etc/torchdock-test-ca.crt \
  -v "$TORCHDOCK_CACHE/installer-apt:/var/cache/apt/archives" \
  -v "$TORCHDOCK_CACHE/installer-pip:/root/.cache/pip" \
  "$BASE" bash -c '
    test ! -e /usr/bin/cmake || { echo "base is not pristine: cmake present"; exit 90; }
    # As Debian'"'"'s own container images ship it: dpkg without fsync per file (half the time).
    echo force-unsafe-io >/etc/dpkg/dpkg.cfg.d/torchdock-test-unsafe-io
    s=$SECONDS; bash /src/scripts/install-deps.sh >/tmp/first.log 2>&1; echo "first=$? $((SECONDS - s))"
    tail -3 /tmp/first.log | sed "s/^/first: /"
    s=$SECONDS; bash /src/scripts/install-deps.sh >/tmp/second.log 2>&1; echo "second=$? $((SECONDS - s))"
    sed "s/^/second: /" /tmp/second.log
    command -v cmake g++ ninja dockerd docker-registry debootstrap hadolint uv | sed "s/^/found: /"
    du -sh /root/.cache/pip 2>&1 | sed "s/^/pip cache: /"
  ' >"$WORK/log" 2>&1
echo "# figure: e2e_installer_pristine took $((SECONDS - start)) s in the container"
sed 's/^/# /' "$WORK/log"
first=$(sed -n 's/^first=//p' "$WORK/log")
second=$(sed -n 's/^second=//p' "$WORK/log")
check "the base is pristine (no cmake before the installer)" bash -c "! grep -q 'base is not pristine' '$WORK/log'"
check "install-deps.sh exits 0 in a pristine bookworm (status ${first% *}, ${first#* } s)" test "${first% *}" = 0
check "...and ends with its ok line" grep -q '^first: install-deps: ok (cmake version' "$WORK/log"
check "a second run exits 0 too (status ${second% *}, ${second#* } s)" test "${second% *}" = 0
check "...with nothing left to install (no 'installing' line)" bash -c "! grep -q '^second: install-deps: installing' '$WORK/log'"
for tool in cmake g++ ninja dockerd docker-registry debootstrap hadolint uv; do
  check "$tool is on PATH afterwards" grep -q "^found: .*/$tool\$" "$WORK/log"
done
finish
