# Sourced by the end-to-end suites and scripts/main-job.sh. Starts a private dockerd and a
# local registry (Debian's docker-registry on 127.0.0.1:5000), makes a real Debian base
# image with debootstrap and pushes it to the registry as library/debian:bookworm. Every
# service this file starts is stopped by services_stop (install it with `trap`).
#
# Reuse: the debootstrap tarball is cached in $TORCHDOCK_CACHE (default /var/tmp/torchdock)
# across runs on the same machine; an engine or registry already answering at the chosen
# socket/port is used as it is and left running.

: "${TORCHDOCK_CACHE:=/var/tmp/torchdock}"
: "${TD_SVC_DIR:=$TORCHDOCK_CACHE/services}"
: "${TD_REGISTRY:=127.0.0.1:5000}"
export DOCKER_HOST="${TD_DOCKER_HOST:-unix://$TD_SVC_DIR/docker.sock}"
TD_STARTED_PIDS=()

svc_log() { echo "services: $*" >&2; }

services_stop() {
  local pid
  for pid in "${TD_STARTED_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${TD_STARTED_PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  TD_STARTED_PIDS=()
}

engine_ping() { curl -sf --max-time 3 --unix-socket "${DOCKER_HOST#unix://}" http://localhost/_ping >/dev/null 2>&1; }

# await_engine HOST WHAT LOG: waits up to 30 s for the engine at HOST (unix://...) to answer;
# status 1, with LOG's last lines, when it does not.
await_engine() {
  local host=$1 what=$2 log=$3
  for _ in $(seq 1 60); do
    DOCKER_HOST=$host engine_ping && { svc_log "$what started ($host)"; return 0; }
    sleep 0.5
  done
  svc_log "$what did not start; last log lines:"; tail -20 "$log" >&2
  return 1
}

start_engine() {
  mkdir -p "$TD_SVC_DIR"
  if engine_ping; then svc_log "using the engine already at $DOCKER_HOST"; return 0; fi
  rm -f "${DOCKER_HOST#unix://}"
  # A dockerd that died (or was killed) leaves its pid file behind.
  local old
  old=$(cat "$TD_SVC_DIR/dockerd.pid" 2>/dev/null || true)
  if [ -n "$old" ] && { ! kill -0 "$old" 2>/dev/null || grep -q '^State:.*Z' "/proc/$old/status" 2>/dev/null; }; then
    rm -f "$TD_SVC_DIR/dockerd.pid"
  fi
  # ...and a containerd it supervised keeps running with our exec root.
  # Its pid file may name a zombie that nothing reaps here, which dockerd takes for alive.
  pkill -9 -f "containerd.*$TD_SVC_DIR/exec" 2>/dev/null && sleep 0.5
  rm -f "$TD_SVC_DIR/exec/containerd/containerd.pid"
  dockerd --bridge=none --iptables=false --ip6tables=false \
    --data-root "$TD_SVC_DIR/docker" --exec-root "$TD_SVC_DIR/exec" \
    --pidfile "$TD_SVC_DIR/dockerd.pid" -H "$DOCKER_HOST" >"$TD_SVC_DIR/dockerd.log" 2>&1 &
  TD_STARTED_PIDS+=($!)
  TD_DOCKERD_PID=$!
  await_engine "$DOCKER_HOST" dockerd "$TD_SVC_DIR/dockerd.log"
}

# podman_serve NAME [SHM_SIZE]: Podman's Docker-compatible API (`podman system service`) on a
# private socket, with its own storage, run root and containers.conf under $TD_SVC_DIR/NAME;
# SHM_SIZE ("256m") is its containers' default /dev/shm. Sets TD_SERVED_HOST to its
# DOCKER_HOST; `td_podman ARGS` runs the podman CLI on the same storage (e.g. to load an
# image saved from dockerd; the storage is kept across runs). The local registry
# $TD_REGISTRY is marked insecure (plain HTTP).
# Call it in this shell, not in $(...): services_stop stops what it started.
podman_serve() {
  local name=$1 shm=${2:-} dir="$TD_SVC_DIR/$1"
  local host="unix://$dir/podman.sock"
  mkdir -p "$dir"
  TD_SERVED_HOST=$host
  TD_PODMAN_DIR=$dir
  # default_ulimits: none; Podman 4.3's default (nproc 4194304) is above what this host's
  # runc may set, and docker's containers get none either.
  { printf '[containers]\ndefault_ulimits = []\n'
    [ -z "$shm" ] || printf 'shm_size = "%s"\n' "$shm"; } >"$dir/containers.conf"
  printf '[[registry]]\nlocation = "%s"\ninsecure = true\n' "$TD_REGISTRY" >"$dir/registries.conf"
  # Always a fresh service, so it runs with this containers.conf (one left from an earlier
  # run may have had another).
  pkill -f "podman --root $dir/root .*system service" 2>/dev/null && sleep 1
  rm -f "$dir/podman.sock"
  CONTAINERS_CONF="$dir/containers.conf" CONTAINERS_REGISTRIES_CONF="$dir/registries.conf" \
    podman --root "$dir/root" --runroot "$dir/run" system service --time=0 "$host" \
    >"$dir/podman.log" 2>&1 &
  TD_STARTED_PIDS+=($!)
  await_engine "$host" "podman $name" "$dir/podman.log"
}
td_podman() {
  CONTAINERS_CONF="$TD_PODMAN_DIR/containers.conf" CONTAINERS_REGISTRIES_CONF="$TD_PODMAN_DIR/registries.conf" \
    podman --root "$TD_PODMAN_DIR/root" --runroot "$TD_PODMAN_DIR/run" "$@"
}

registry_ping() { curl -sf --max-time 3 "http://${1:-$TD_REGISTRY}/v2/" >/dev/null 2>&1; }

# registry_serve ADDR DIR: Debian's docker-registry on ADDR (host:port) storing in DIR,
# stopped by services_stop; an answering ADDR is used as it is.
registry_serve() {
  local addr=$1 dir=$2
  mkdir -p "$dir"
  if registry_ping "$addr"; then svc_log "using the registry already at $addr"; return 0; fi
  cat >"$dir.yml" <<YML
version: 0.1
storage:
  filesystem:
    rootdirectory: $dir
  delete:
    enabled: true
http:
  addr: $addr
log:
  level: warn
YML
  docker-registry serve "$dir.yml" >"$dir.log" 2>&1 &
  TD_STARTED_PIDS+=($!)
  for _ in $(seq 1 40); do registry_ping "$addr" && { svc_log "registry started ($addr)"; return 0; }; sleep 0.25; done
  svc_log "registry did not start:"; tail -20 "$dir.log" >&2
  return 1
}

start_registry() { registry_serve "$TD_REGISTRY" "$TD_SVC_DIR/registry"; }

# debian_rootfs_tarball SUITE [MIRROR] [ARCH] [PACKAGES]: prints the path of a `debootstrap
# --variant=minbase SUITE` root file system (with PACKAGES, comma-separated, where given) as a
# tarball in $TORCHDOCK_CACHE, made once (about a minute) from MIRROR (a setting the caller
# takes from its user), else debootstrap's default mirror. ARCH (arm64) is another architecture's complete root: debootstrap's second stage
# runs its maintainer scripts under qemu-user, so the binfmt handler must be enabled
# (lib/binfmt.sh; about two minutes here). Status 1, with debootstrap's last lines, when it
# fails (a suite that mirror no longer carries, no network).
debian_rootfs_tarball() {
  local suite=$1 mirror=${2:-} arch=${3:-} include=${4:-}
  local name="$suite${arch:+-$arch}-minbase${include:+-${include//,/+}}"
  local tarball="$TORCHDOCK_CACHE/debian-$name.tar" log="$TORCHDOCK_CACHE/debootstrap-$suite${arch:+-$arch-full}${include:+-${include//,/+}}.log"
  if [ ! -s "$tarball" ]; then
    svc_log "debootstrap ${arch:+--arch=$arch }$suite (about a minute${arch:+, more under qemu-user})"
    local root="$TORCHDOCK_CACHE/rootfs-$suite${arch:+-$arch}.$$"
    rm -rf "$root"
    mkdir -p "$TORCHDOCK_CACHE"
    debootstrap ${arch:+--arch="$arch"} --variant=minbase ${include:+--include="$include"} "$suite" "$root" ${mirror:+"$mirror"} >"$log" 2>&1 \
      || { svc_log "debootstrap $suite ${arch} failed:"; tail -5 "$log" >&2; rm -rf "$root"; return 1; }
    # What docker's debian images do: no apt cache kept, no recommends.
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
    tar -C "$root" -cf "$tarball.$$.tmp" . && mv "$tarball.$$.tmp" "$tarball"
    rm -rf "$root"
  fi
  echo "$tarball"
}

# debian_arm64_files_tarball SUITE PACKAGES: prints the path of an arm64 Debian SUITE root file
# system (minbase plus PACKAGES, comma-separated) as a tarball in $TORCHDOCK_CACHE, made once
# on this x86 host without running arm64 code: `debootstrap --foreign` fetches and unpacks
# the required packages, and every other package it fetched is unpacked with `dpkg-deb -x`
# (what the second stage would install; maintainer scripts are not run, so there is no
# ld.so.cache). Status 1 with debootstrap's last lines when it fails.
debian_arm64_files_tarball() {
  local suite=$1 packages=$2
  local tarball="$TORCHDOCK_CACHE/debian-$suite-arm64-files.tar" log="$TORCHDOCK_CACHE/debootstrap-$suite-arm64.log"
  if [ ! -s "$tarball" ]; then
    svc_log "debootstrap --foreign --arch=arm64 $suite (about a minute)"
    local root="$TORCHDOCK_CACHE/rootfs-$suite-arm64.$$"
    rm -rf "$root"
    mkdir -p "$TORCHDOCK_CACHE"
    debootstrap --foreign --arch=arm64 --variant=minbase --include="$packages" "$suite" "$root" >"$log" 2>&1 \
      || { svc_log "debootstrap $suite arm64 failed:"; tail -5 "$log" >&2; rm -rf "$root"; return 1; }
    local deb
    for deb in "$root"/var/cache/apt/archives/*.deb; do dpkg-deb -x "$deb" "$root" || return 1; done
    rm -rf "$root/debootstrap" "$root"/var/cache/apt/archives/*.deb
    tar -C "$root" -cf "$tarball.$$.tmp" . && mv "$tarball.$$.tmp" "$tarball"
    rm -rf "$root"
  fi
  echo "$tarball"
}

# A real Debian bookworm base: debootstrap (cached tarball), docker import, push. The
# engine keeps the tag too (tests tag and push it elsewhere): pulled back when the registry
# has it and the engine lost it (an image prune, a removed tag).
ensure_debian_base() {
  local tarball
  local ref="$TD_REGISTRY/library/debian:bookworm"
  if curl -sf --max-time 5 -o /dev/null \
       -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
       "http://$TD_REGISTRY/v2/library/debian/manifests/bookworm"; then
    if ! /usr/bin/docker image inspect "$ref" >/dev/null 2>&1; then
      /usr/bin/docker pull -q "$ref" >/dev/null || return 1
      svc_log "base $ref pulled back from the registry"
    fi
    svc_log "base $ref already in the registry"; return 0
  fi
  tarball=$(debian_rootfs_tarball bookworm) || return 1
  /usr/bin/docker import -c 'CMD ["bash"]' "$tarball" "$ref" >/dev/null
  /usr/bin/docker push -q "$ref" >/dev/null
  svc_log "base $ref pushed"
}

# disk_free: GiB free where the engine and the caches keep their data. Said when the services
# start, so that a suite that ran out of disk shows how much it had.
disk_free() { df -BG --output=avail "$TORCHDOCK_CACHE" 2>/dev/null | tail -1 | tr -dc 0-9; }

services_start() {
  start_engine && start_registry && ensure_debian_base && svc_log "$(disk_free) GiB free on $TORCHDOCK_CACHE"
}

# engine_release IMAGE...: removes these images (REPOSITORY:TAG, or a REPOSITORY for all its
# tags) from the test engine, then the dangling images and the build cache's layers that
# nothing holds now; BuildKit's cache mounts (pip's downloads) stay for the next build. A
# multi-GB torch image goes when its suite is done with it: the suites' images together
# outgrow a CI disk that holds any one of them.
engine_release() {
  local before ref ids
  before=$(disk_free)
  for ref in "$@"; do
    if [[ ${ref##*/} == *:* ]]; then ids=$ref; else ids=$(/usr/bin/docker images -q "$ref" | sort -u); fi
    [ -z "$ids" ] || /usr/bin/docker rmi -f $ids >/dev/null 2>&1
  done
  /usr/bin/docker image prune -f >/dev/null 2>&1
  /usr/bin/docker builder prune -f --filter type=regular >/dev/null 2>&1
  svc_log "released $*: $before GiB free before, $(disk_free) GiB after"
}

# engine_serve NAME [DOCKERD_FLAG...]: a second, private dockerd (its own data root, exec
# root and socket under $TD_SVC_DIR/NAME) with these flags, e.g. --default-shm-size=256m:
# another engine on the same host, as another node would have. Sets TD_SERVED_HOST to its
# DOCKER_HOST (call it in this shell, not in $(...): services_stop stops what it started).
# One already answering at that socket is used as it is.
engine_serve() {
  local name=$1 dir="$TD_SVC_DIR/$1"; shift
  local host="unix://$dir/docker.sock"
  mkdir -p "$dir"
  TD_SERVED_HOST=$host
  if DOCKER_HOST=$host engine_ping; then return 0; fi
  pkill -9 -f "containerd.*$dir/exec" 2>/dev/null && sleep 0.5
  rm -f "$dir/docker.sock" "$dir/dockerd.pid" "$dir/exec/containerd/containerd.pid"
  dockerd --bridge=none --iptables=false --ip6tables=false "$@" \
    --data-root "$dir/docker" --exec-root "$dir/exec" --pidfile "$dir/dockerd.pid" \
    -H "$host" >"$dir/dockerd.log" 2>&1 &
  TD_STARTED_PIDS+=($!)
  await_engine "$host" "second engine $name" "$dir/dockerd.log"
}
