#!/usr/bin/env bash
# The Debian package end to end. Usage: package_e2e_test.sh BUILD_DIR
# cpack builds the .deb from the built tree; its contents and computed Depends are checked;
# then a fresh container of the project's debootstrapped bookworm base installs it with apt
# (host network, apt's own sources) and runs the installed torchdock: --version, render of
# the packaged manifests, explain, checks (when the subcommand exists), doctor --host with
# the installed probes, validate of a Debian image through the engine's socket, and the
# error when the probes are gone. Needs root, docker.io, dpkg-dev and the network to the
# Debian archive (apt archives are cached in $TORCHDOCK_CACHE/apt-package).
set -uo pipefail
BUILD=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
: "${TORCHDOCK_CACHE:=/var/tmp/torchdock}"
# Below /var/tmp: a directory the container shares with the engine at the same path.
WORK=$(mktemp -d /var/tmp/torchdock-pkg-XXXXXX)
DOCKER=/usr/bin/docker
cleanup() { $DOCKER rm -f "td-pkg-$$" >/dev/null 2>&1; services_stop; rm -rf "$WORK"; }
trap cleanup EXIT
TD=/nonexistent   # check.sh's `run` is not used: torchdock runs in the container
source "$ROOT/tests/e2e/lib/check.sh"
start=$SECONDS
services_start || { echo "FAIL - the test engine and registry did not start"; exit 1; }
BASE=$TD_REGISTRY/library/debian:bookworm

# --- the package ------------------------------------------------------------------------
cpack --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1
check "cpack builds the package (log: $(tail -3 "$WORK/cpack.log" | tr '\n' ' '))" test $? = 0
DEB=$(ls "$WORK"/pkg/torchdock_*.deb 2>/dev/null | head -1)
check "the package is a .deb named torchdock_<version>_<arch>.deb" test -f "$DEB"
[ -f "$DEB" ] || { finish; exit 1; }
dpkg-deb -c "$DEB" | awk '{print $6}' >"$WORK/contents"
for path in ./usr/bin/torchdock ./usr/share/torchdock/data/torch.json \
    ./usr/share/torchdock/data/knowledge_base.json ./usr/share/torchdock/data/error_signatures/ \
    ./usr/share/torchdock/manifests/debian-cpu.json ./usr/libexec/torchdock/probes/probe-env \
    ./usr/libexec/torchdock/probes/torch_probe.py ./usr/share/man/man1/torchdock.1 \
    ./usr/share/bash-completion/completions/torchdock ./usr/share/zsh/vendor-completions/_torchdock; do
  check "the package holds $path" grep -qxF -- "$path" "$WORK/contents"
done
check "no __pycache__ or kb lock file in the package" bash -c "! grep -qE '__pycache__|torchdock-kb.lock' '$WORK/contents'"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
echo "# Depends: $DEPENDS"
check "Depends is computed from the binary's libraries (libc6, libcurl4, libstdc++6)" \
  bash -c "[[ '$DEPENDS' == *libc6* && '$DEPENDS' == *libcurl4* && '$DEPENDS' == *libstdc++6* ]]"
dpkg-deb -x "$DEB" "$WORK/root"
check "the packaged binary names no source or build directory" \
  bash -c "! strings -n 6 '$WORK/root/usr/bin/torchdock' | grep -qF -e '$ROOT' -e '$BUILD'"

# --- installed in a fresh bookworm container --------------------------------------------
mkdir -p "$WORK/out" "$WORK/shared" "$TORCHDOCK_CACHE/apt-package/archives/partial"
$DOCKER pull -q "$BASE" >/dev/null
cat >"$WORK/in-container.sh" <<'SH'
# Runs in the container: each step's stdout, stderr and exit code land in /out/STEP.{out,err,rc}.
step() { local name=$1; shift; "$@" >"/out/$name.out" 2>"/out/$name.err"; echo $? >"/out/$name.rc"; }
export DEBIAN_FRONTEND=noninteractive
step apt-update apt-get update
step apt-install apt-get install -y /pkg/torchdock.deb
cd /tmp
step which sh -c 'command -v torchdock'
step version torchdock --version
step render torchdock render --manifests /usr/share/torchdock/manifests --out /tmp/dockerfiles
ls /tmp/dockerfiles >/out/rendered 2>&1
printf 'Traceback (most recent call last):\n  File "/w/train.py", line 3, in <module>\n    import torch\nImportError: libcudart.so.13: cannot open shared object file: No such file or directory\n' >/tmp/crash.log
step explain torchdock explain /tmp/crash.log
step help torchdock --help
step checks torchdock checks
step doctor torchdock doctor --host --json=/out/doctor.json
# The engine reads probe bind mounts from its own filesystem: hand it a copy at a path both share.
cp -a /usr/libexec/torchdock/probes "$SHARED/probes"
step validate env TORCHDOCK_PROBES="$SHARED/probes" torchdock validate "$IMAGE" --json=/out/validate.json
# zsh is not on the build machines: the installed completion is parsed here.
step zsh-install apt-get install -y zsh
step zsh-parse zsh -n /usr/share/zsh/vendor-completions/_torchdock
mv /usr/libexec/torchdock/probes /usr/libexec/torchdock/probes.away
step no-probes torchdock doctor --host
SH
$DOCKER run --rm --name "td-pkg-$$" --network=host \
  -v "$DEB:/pkg/torchdock.deb:ro" -v "$WORK/in-container.sh:/in-container.sh:ro" \
  -v "$WORK/out:/out" -v "$WORK/shared:$WORK/shared" \
  -v "$TORCHDOCK_CACHE/apt-package/archives:/var/cache/apt/archives" \
  -v "${DOCKER_HOST#unix://}:/var/run/docker.sock" \
  -e SHARED="$WORK/shared" -e IMAGE="$BASE" \
  "$BASE" bash /in-container.sh >"$WORK/run.log" 2>&1
check "the container ran ($(tail -2 "$WORK/run.log" | tr '\n' ' '))" test $? = 0
O=$WORK/out
rc_of() { cat "$O/$1.rc" 2>/dev/null || echo none; }
in_out() { grep -qF -- "$2" "$O/$1"; }
check "apt installs the .deb with its dependencies (exit $(rc_of apt-install): $(tail -2 "$O/apt-install.err" 2>/dev/null | tr '\n' ' '))" \
  test "$(rc_of apt-install)" = 0
check "torchdock is /usr/bin/torchdock" in_out which.out /usr/bin/torchdock
check "--version: version, commit and the installed knowledge base's date" \
  grep -qE '^torchdock [0-9.]+ \(commit [0-9a-f]{7,}(-dirty)?, knowledge base [0-9]{4}-[0-9]{2}-[0-9]{2}\)$' "$O/version.out"
check "--version names this checkout's commit" in_out version.out "commit $(git -C "$ROOT" rev-parse --short=12 HEAD)"
n_manifests=$(ls "$ROOT"/dockerfiles | grep -vc '^index.json$')
check "render of the packaged manifests (exit $(rc_of render): $(head -c 300 "$O/render.err"))" test "$(rc_of render)" = 0
check "...renders the bundled matrix ($n_manifests variants, as dockerfiles/ has)" \
  test "$(grep -vc '^index.json$' "$O/rendered")" = "$n_manifests"
check "explain names the missing libcudart (EX101, exit $(rc_of explain))" \
  bash -c "test '$(rc_of explain)' = 0 && grep -q EX101 '$O/explain.out'"
# `torchdock checks [ID]` (the check catalog) comes from another branch: judged when the
# installed binary's --help lists it, otherwise skipped with that reason.
if ! grep -qE '^ +checks( |$)' "$O/help.out"; then
  skipped "checks: the installed torchdock has no \`checks\` subcommand yet (not in --help)"
else
  check "checks lists the check catalog with TD119 (exit $(rc_of checks))" \
    bash -c "test '$(rc_of checks)' = 0 && grep -q TD119 '$O/checks.out'"
fi
check "doctor --host runs the installed probes (fingerprint written, $(head -c 200 "$O/doctor.err"))" test -s "$O/doctor.json"
status_of() { python3 -c "import json; d=json.load(open('$O/validate.json')); print(next((c['status']+'|'+c['message'] for c in d['images'][0]['checks'] if c['id']=='$1'), 'missing|'))" 2>/dev/null; }
check "validate of plain Debian exits 1, as documented (got $(rc_of validate): $(tail -c 300 "$O/validate.err"))" \
  test "$(rc_of validate)" = 1
check "...with TD119: no PyTorch found" bash -c "[[ '$(status_of TD119)' == fail\|*'no PyTorch found'* ]]"
check "without its probes doctor --host is an error (exit 2, got $(rc_of no-probes))" test "$(rc_of no-probes)" = 2
check "...naming /usr/libexec/torchdock/probes and \$TORCHDOCK_PROBES" \
  bash -c "grep -qF 'no probes in /usr/libexec/torchdock/probes (relative to the binary /usr/bin/torchdock)' '$O/no-probes.err' && grep -qF 'TORCHDOCK_PROBES' '$O/no-probes.err'"
check "zsh parses the installed completion (zsh -n: $(head -c 200 "$O/zsh-parse.err"))" \
  bash -c "test '$(rc_of zsh-install)' = 0 && test '$(rc_of zsh-parse)' = 0"
echo "# figure: e2e_package took $((SECONDS - start)) s"
finish
