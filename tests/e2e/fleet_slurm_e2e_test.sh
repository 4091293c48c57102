#!/usr/bin/env bash
# End to end: `torchdock node-check` and `torchdock fleet` on a real Slurm (Debian's
# slurm-wlm and munge: slurmctld and three slurmd on this host, tests/e2e/lib/slurm.sh) and
# real engines, with differences planted per node the way sites have them:
#   node1  its slurmd runs with `ulimit -l` 64 KiB (PropagateResourceLimits=NONE)
#   node2  its tasks use a second dockerd started with --default-shm-size=256m, whose
#          torchdock/debian-cpu:debian12 is another image (rebuilt with a label)
#   node3  its tasks use Podman (`podman system service`, its Docker-compatible API on a
#          private socket) holding the same image, and its TaskProlog exports
#          NCCL_SOCKET_IFNAME=eth9
# fleet must name each against the majority; a node whose slurmd is gone is a launcher
# failure, a node whose engine lacks the image an image failure, never anything else.
# Podman on this host: validate and node-check through its API give Docker's verdicts; build
# through it is refused with the reason (no BuildKit there; Podman 4.3's builder hangs on the
# rendered Dockerfiles' locked cache mounts).
# Usage: fleet_slurm_e2e_test.sh TORCHDOCK PROBES_DIR
set -uo pipefail
TD=$(realpath "$1")
export TORCHDOCK_PROBES=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tests/e2e/lib/services.sh"
source "$ROOT/tests/e2e/lib/slurm.sh"
WORK=$(mktemp -d /tmp/torchdock-fleet-e2e-XXXXXX)
trap 'slurm_stop; services_stop; rm -rf "$WORK"' EXIT
source "$ROOT/tests/e2e/lib/check.sh"
IMG=torchdock/debian-cpu:debian12
secs() { echo "$(date +%s.%N) - $1" | bc; }
# jq-like: jf FILE EXPR (a Python expression over d)
# (a tuple expression prints its parts separated by blanks)
jf() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

for tool in srun slurmctld slurmd munged; do
  command -v $tool >/dev/null || { echo "FAIL - $tool is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"; echo "0 passed, 1 failed"; exit 1; }
done
services_start || { echo "FAIL - services did not start"; echo "0 passed, 1 failed"; exit 1; }

# --- the image: the bundled Debian CPU manifest, as the main job builds it (cached) -------
mkdir -p "$WORK/cpu/manifests" && cp "$ROOT/manifests/debian-cpu.json" "$WORK/cpu/manifests/"
(cd "$WORK/cpu" && "$TD" lock --mirror "docker.io=$TD_REGISTRY" >/dev/null && "$TD" render --out dockerfiles >/dev/null &&
 "$TD" build --mirror "docker.io=$TD_REGISTRY" >"$WORK/cpu/build.out" 2>&1)
check "built $IMG" test $? = 0

# --- node-check on this host --------------------------------------------------------------
start=$(date +%s.%N)
run node-check "$IMG" --json="$WORK/nc.json"
took=$(secs "$start")
echo "# figure: node-check $IMG on this host as a whole process: $took s"
check "node-check of a healthy node: exit 0 and an OK line ($(head -1 "$WORK/out"))" \
  bash -c "test $(rc) = 0 && grep -q '^OK: torchdock: ' '$WORK/out'"
check "node-check finishes within Slurm's 60 s HealthCheckProgram limit ($took s)" \
  test "$(echo "$took < 60" | bc)" = 1
check "node-check's report: verdict, the image's ID on this engine, /dev/shm in its containers, checks, the host's ulimit -l" \
  test "$(jf "$WORK/nc.json" "d['verdict'], d['image']['id'][:7], d['image']['shm_bytes'], len(d['checks']) > 10, d['fingerprint']['memlock_bytes'] is not None")" = "healthy sha256: 67108864 True True"
check "the TD130 warning is a note, not a drain reason" has out "note: TD130"

run node-check torchdock/no-such:image
check "node-check of an image this engine lacks: exit 3, UNKNOWN, 'pull it first'" \
  bash -c "test $(rc) = 3 && grep -q '^UNKNOWN: torchdock: .*not on this node.s engine (pull it first)' '$WORK/out'"
DOCKER_HOST=unix://$WORK/no-engine.sock "$TD" node-check "$IMG" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "node-check with a dead engine: exit 1 (drain), the engine named ($(head -1 "$WORK/out" | cut -c1-90))" \
  bash -c "test $(rc) = 1 && grep -q '^ERROR: torchdock: .*: the container engine does not answer' '$WORK/out'"
run node-check "$IMG" --deadline 0
check "--deadline 0 is refused (exit 2)" test "$(rc)" = 2
run node-check ""
check "an empty image reference is refused (exit 2)" test "$(rc)" = 2

# --- a second engine for node2: another default /dev/shm, another image behind the tag -----
engine_serve engine-b --default-shm-size=256m || { bad "second dockerd did not start"; finish; exit 1; }
B=$TD_SERVED_HOST
start=$(date +%s.%N)
/usr/bin/docker save "$IMG" | DOCKER_HOST=$B /usr/bin/docker load -q >/dev/null
printf 'FROM %s\nLABEL io.torchdock.test.rebuilt=node2\n' "$IMG" >"$WORK/Dockerfile.b"
DOCKER_HOST=$B DOCKER_BUILDKIT=1 /usr/bin/docker build -q -t "$IMG" -f "$WORK/Dockerfile.b" "$WORK" >/dev/null 2>"$WORK/b.err"
check "the second engine holds another image under $IMG ($(secs "$start") s)" \
  test "$(DOCKER_HOST=$B /usr/bin/docker image inspect -f '{{.Id}}' "$IMG")" != "$(/usr/bin/docker image inspect -f '{{.Id}}' "$IMG")"
/usr/bin/docker tag "$IMG" torchdock/debian-cpu:only-engine-a

# --- Podman for node3: the same image, moved from dockerd ----------------------------------
command -v podman >/dev/null || { bad "podman is not installed (scripts/install-deps.sh installs it)"; finish; exit 1; }
# Podman's own default /dev/shm is 65536000 bytes (62.5 MiB), Docker's 64 MiB: set to
# Docker's here, so that node3's differences are the ones planted.
podman_serve podman 67108864 || { bad "podman system service did not start"; finish; exit 1; }
P=$TD_SERVED_HOST
start=$(date +%s.%N)
/usr/bin/docker save "$IMG" | td_podman load -q >/dev/null
check "Podman holds $IMG with dockerd's image ID ($(secs "$start") s to move it)" \
  test "$(td_podman image inspect -f '{{.Id}}' "$IMG")" = "$(/usr/bin/docker image inspect -f '{{.Id}}' "$IMG" | sed 's/^sha256://')"
run validate "$IMG" --json="$WORK/v-docker.json"
DOCKER_HOST=$P "$TD" validate "$IMG" --json="$WORK/v-podman.json" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
statuses() { jf "$1" "sorted((c['id'], c['status']) for c in $2)" 2>&1; }
counts=$(jf "$WORK/v-podman.json" "d['images'][0]['passed'], d['images'][0]['warned'], d['images'][0]['skipped']")
check "validate through Podman's API: exit 0, checks passed ($counts passed/warned/skipped)" \
  bash -c "test $(rc) = 0 && test ${counts%% *} -gt 5"
check "...every check's status as through dockerd" \
  test "$(statuses "$WORK/v-podman.json" "d['images'][0]['checks']")" = "$(statuses "$WORK/v-docker.json" "d['images'][0]['checks']")"
check "...and the GPU tier is skipped because Podman's API ignores GPU requests, not judged on a container without one" \
  grep -q "GPU tier skipped: Podman's Docker-compatible API ignores the GPU requests" "$WORK/v-podman.json"
start=$(date +%s.%N)
DOCKER_HOST=$P "$TD" node-check "$IMG" --json="$WORK/nc-podman.json" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
echo "# figure: node-check $IMG through Podman as a whole process: $(secs "$start") s"
engine=$(jf "$WORK/nc-podman.json" "d['image']['engine'], d['image']['shm_bytes']")
check "node-check through Podman: healthy, the engine and its /dev/shm named ($engine)" \
  bash -c "test $(rc) = 0 && [[ '$engine' =~ ^podman\ [0-9.]+\ 67108864$ ]]"
check "...the checks as through dockerd" \
  test "$(statuses "$WORK/nc-podman.json" "d['checks']")" = "$(statuses "$WORK/nc.json" "d['checks']")"
DOCKER_HOST=$P "$TD" doctor --image "$IMG" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "doctor --image through Podman: exit 0, the /dev/shm of Podman's containers read (64 MiB)" \
  bash -c "test $(rc) = 0 && grep -q '/dev/shm is 64 MiB' '$WORK/out'"
(cd "$WORK/cpu" && DOCKER_HOST=$P "$TD" build --mirror "docker.io=$TD_REGISTRY" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc")
check "build through Podman's API: refused (exit 3), saying why and what to do" \
  bash -c "test $(rc) = 3 && grep -q \"Podman's Docker-compatible API .*serves no BuildKit.*docker save IMAGE | podman load\" '$WORK/err'"

# --- Slurm: three nodes with their differences ----------------------------------------------
export TD_SLURM_LIMITS_node1="--memlock=65536"
export TD_SLURM_NODE_ENV_node2="DOCKER_HOST=$B"
export TD_SLURM_NODE_ENV_node3="DOCKER_HOST=$P
NCCL_SOCKET_IFNAME=eth9"
# The default partition "main" holds node1 and node2; "fleet" all three (node3 only there).
TD_SLURM_MAIN_NODES=node1,node2 slurm_start node1 node2 node3 || { bad "Slurm did not start"; finish; exit 1; }
ok "Slurm is up: slurmctld and slurmd -N node1/node2/node3 (partitions main*: node1-2, fleet: node1-3)"

# node-check as a health check would run it on a node, draining it through scontrol.
srun --nodelist=node1 -N1 -n1 env DOCKER_HOST="unix://$WORK/no-engine.sock" "$TD" node-check "$IMG" --drain >"$WORK/out" 2>"$WORK/err"
echo $? >"$WORK/rc"
reason=$(sinfo -h -N -n node1 -o '%E')
check "node-check --drain on node1 with a dead engine: exit 1 and Slurm drains node1 ($(sinfo -h -N -n node1 -o '%t'): $reason)" \
  bash -c "test $(rc) = 1 && sinfo -h -N -n node1 -o '%t' | grep -q drain && echo '$reason' | grep -q '^torchdock: the container engine does not answer'"
scontrol update NodeName=node1 State=RESUME
# Resumed is no longer drained: idle, or `idle*` until slurmctld next pings that slurmd, or
# `mix` while an allocation is still on it (seen under the full suite's load; squeue below
# shows what holds it).
for _ in $(seq 1 150); do sinfo -h -N -n node1 -o '%t' | grep -qx idle && break; sleep 0.2; done
echo "# node1 after RESUME: $(sinfo -h -N -n node1 -o '%t %E'); jobs: $(squeue -h -w node1 -o '%i %j %T %M' | tr '\n' ';')"
check "node1 resumed ($(sinfo -h -N -n node1 -o '%t'))" bash -c "sinfo -h -N -n node1 -o '%t' | grep -qxE '(idle|mix)\*?'"
# Slurm's keyword ALL (any case) is every node to scontrol (round 3, R3-8): refused as a node
# name, from --node and from SLURMD_NODENAME, and no node is drained.
DOCKER_HOST="unix://$WORK/no-engine.sock" "$TD" node-check "$IMG" --node all --drain >"$WORK/out" 2>"$WORK/err"
echo $? >"$WORK/rc"
check "node-check --node all --drain (a dead engine): refused, exit 2, naming the keyword" \
  bash -c "test $(rc) = 2 && grep -q 'keyword ALL' '$WORK/err'"
SLURMD_NODENAME=All DOCKER_HOST="unix://$WORK/no-engine.sock" "$TD" node-check "$IMG" --drain >"$WORK/out" 2>"$WORK/err"
echo $? >"$WORK/rc"
check "SLURMD_NODENAME=All node-check --drain: refused, exit 2" bash -c "test $(rc) = 2"
check "...and no node of the cluster was drained ($(sinfo -h -N -o '%N %t' | sort -u | tr '\n' ' '))" \
  bash -c "! sinfo -h -N -o '%t' | grep -q drain"

# --- the fleet report -------------------------------------------------------------------------
start=$(date +%s.%N)
run fleet "$IMG" --partition fleet --json="$WORK/f.json" --markdown="$WORK/f.md" --junit="$WORK/f.xml"
took=$(secs "$start")
echo "# figure: fleet over 3 nodes (node-check on each through srun) as a whole process: $took s"
cp "$WORK/out" "$WORK/fleet.out"
check "fleet: exit 1, the fleet is not uniform" bash -c "test $(rc) = 1 && grep -q 'not uniform' '$WORK/fleet.out'"
outliers=$(jf "$WORK/f.json" "'\n'.join(o['line'] for o in d['outliers'])")
echo "$outliers" | sed 's/^/# outlier: /'
check "node2's other image behind the same tag is named first" \
  test "$(jf "$WORK/f.json" "d['outliers'][0]['node'], d['outliers'][0]['path']")" = "node2 image.id"
check "node1's ulimit -l is named against the majority" \
  grep -qx 'node1: locked memory (ulimit -l) 64 KiB vs 8 MiB on 2 nodes' <<<"$outliers"
check "node2's engine's /dev/shm is named against the majority" \
  grep -qx 'node2: /dev/shm in containers 256 MiB vs 64 MiB on 2 nodes' <<<"$outliers"
check "node3's NCCL_SOCKET_IFNAME is named against the majority" \
  grep -qx 'node3: NCCL_SOCKET_IFNAME eth9 vs (unset) on 2 nodes' <<<"$outliers"
check "node3's engine (Podman) is named against the majority" \
  grep -q '^node3: container engine podman [0-9.]* vs docker .* on 2 nodes$' <<<"$outliers"
check "...and not its image ID: Podman runs the image dockerd has" \
  test "$(grep -c '^node3: image ID' <<<"$outliers")" = 0
check "each node is a group of its own, and every node reported healthy" \
  test "$(jf "$WORK/f.json" "len(d['groups']), d['counts']['healthy'], d['counts']['no_report']")" = "3 3 0"
check "the JUnit report has a failing test case per differing node" \
  python3 -c "import sys, xml.etree.ElementTree as E; s=E.parse(sys.argv[1]).getroot().find('testsuite'); sys.exit(0 if s.get('tests')=='3' and s.get('failures')=='3' else 1)" "$WORK/f.xml"
check "the Markdown report lists the outliers" grep -q 'node3\\: NCCL\\_SOCKET\\_IFNAME eth9' "$WORK/f.md"

# One node: uniform, exit 0. node3 is in no default partition: the step runs in "fleet".
run fleet "$IMG" --nodes node3 --json="$WORK/f1.json"
check "fleet --nodes node3 (a node outside the default partition): it ran there, and one node is uniform: exit 0" \
  test "$(rc) $(jf "$WORK/f1.json" "[n['node'] for n in d['nodes']], d['counts']['healthy']")" = "0 ['node3'] 1"
run fleet "$IMG" --nodes node3 --partition main
check "--nodes with a node outside --partition: exit 2, named before anything runs" \
  bash -c "test $(rc) = 2 && grep -q 'node \"node3\" of --nodes \"node3\" is not in partition \"main\"' '$WORK/err'"

# --- the all-reduce across nodes, inside the image (gloo on these CPU nodes) -----------------
start=$(date +%s.%N)
run allreduce "$IMG" --partition fleet --json="$WORK/ar.json" --nccl-tests-json="$WORK/ar-nt.json" --junit="$WORK/ar.xml"
took=$(secs "$start")
echo "# figure: allreduce over 3 nodes (3 ranks, gloo, one container per rank) as a whole process: $took s"
jf "$WORK/ar.json" "'\n'.join('# figure: all-reduce %d bytes across 3 ranks: %.1f us, busbw %.3f GB/s' % (z['bytes'], z['time_us'], z['busbw_gbps']) for z in d['sizes'])"
check "allreduce: 3 ranks on 3 nodes (node2 through its own dockerd, node3 through Podman), gloo, every sum exact, exit 0" \
  test "$(rc) $(jf "$WORK/ar.json" "d['verdict'], d['world'], d['backend'], [r['node'] for r in d['ranks']], sum(z['wrong'] for z in d['sizes']), len(d['sizes'])")" = "0 pass 3 gloo ['node1', 'node2', 'node3'] 0 3"
check "bandwidth is reported, not judged, without a baseline" has out "bandwidth not judged: no baseline"
check "the nccl-tests JSON has one result per size with in-place times and bus bandwidth" \
  test "$(jf "$WORK/ar-nt.json" "[r['size'] for r in d['results']], all(r['in_place']['bus_bw'] > 0 and r['in_place']['nwrong'] == 0 for r in d['results']), d['average_bus_bandwidth']['okay']")" = "[4096, 1048576, 16777216] True true"
check "the JUnit report: one test case per rank and one for the sums, none failing" \
  python3 -c "import sys, xml.etree.ElementTree as E; s=E.parse(sys.argv[1]).getroot().find('testsuite'); sys.exit(0 if (s.get('tests'), s.get('failures')) == ('4', '0') else 1)" "$WORK/ar.xml"
python3 - "$WORK/ar.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for name, factor in (("fast", 1000.0), ("slow", 0.001)):
    b = dict(d, sizes=[dict(z, busbw_gbps=z["busbw_gbps"] * factor) for z in d["sizes"]])
    json.dump(b, open(sys.argv[1].replace(".json", "-baseline-%s.json" % name), "w"))
PY
run allreduce "$IMG" --partition fleet --baseline "$WORK/ar-baseline-fast.json"
check "against a baseline 1000 times faster every size is slow: exit 1, named" \
  bash -c "test $(rc) = 1 && grep -q 'is under the baseline' '$WORK/out' && grep -q 'against the baseline (3 of 3 sizes)' '$WORK/out'"
run allreduce "$IMG" --partition fleet --baseline "$WORK/ar-baseline-slow.json"
check "against a baseline 1000 times slower: exit 0" test "$(rc)" = 0
run allreduce "$IMG" --nodes 'node[1-2]' --tasks-per-node 2 --json="$WORK/ar4.json"
check "2 nodes x 2 tasks: 4 ranks, exact ($(jf "$WORK/ar4.json" "d['verdict'], [r['node'] for r in d['ranks']]"))" \
  test "$(rc) $(jf "$WORK/ar4.json" "d['verdict'], [r['node'] for r in d['ranks']]")" = "0 pass ['node1', 'node1', 'node2', 'node2']"

# A rank that hangs (its process stopped before the rendezvous): named with its node.
"$TD" allreduce "$IMG" --partition fleet --timeout 5 --json="$WORK/hang.json" >"$WORK/out" 2>"$WORK/err" &
ar_pid=$!
stopped=""
for _ in $(seq 1 400); do
  stopped=$(pgrep -f 'allreduce_probe.py.*--rank=1 ' | head -1)
  [ -n "$stopped" ] && { kill -STOP "$stopped"; break; }
  sleep 0.05
done
wait $ar_pid; echo $? >"$WORK/rc"
[ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
check "a hung rank: exit 1 and the first finding names rank 1 on node2 ($(jf "$WORK/hang.json" "d['findings'][0]" 2>/dev/null))" \
  bash -c "test -n '$stopped' && test $(rc) = 1 && python3 -c \"import json,sys; d=json.load(open('$WORK/hang.json')); sys.exit(0 if d['findings'][0].startswith('rank 1 on node2 hung') else 1)\""

run allreduce-rank "$IMG"
check "allreduce-rank outside an srun step: exit 3, naming SLURM_PROCID" \
  bash -c "test $(rc) = 3 && grep -q 'SLURM_PROCID is not set' '$WORK/err'"
run allreduce "$IMG" --partition fleet --sizes 3
check "allreduce --sizes 3: exit 2" test "$(rc)" = 2

# --- nodes with no engine at all: the image as a .sqsh in a shared cache (pyxis/enroot) ------
# node1's DOCKER_HOST names a socket that does not exist (node2's and node3's engines are there
# but unused); node-check, fleet and allreduce read the image into the sandbox tier, on every
# node, from one store in the shared directory.
SQSH=$WORK/shared/debian-cpu.sqsh
mkdir -p "$WORK/shared/rootfs"
cid=$(/usr/bin/docker create "$IMG" true) && /usr/bin/docker export "$cid" | tar -C "$WORK/shared/rootfs" -xf - &&
  /usr/bin/docker rm "$cid" >/dev/null &&
  /usr/bin/docker inspect "$IMG" --format '{{range .Config.Env}}{{println .}}{{end}}' >"$WORK/shared/rootfs/etc/environment" &&
  mksquashfs "$WORK/shared/rootfs" "$SQSH" -comp lz4 -quiet -no-progress >/dev/null 2>&1
check "an enroot-style $SQSH of $IMG in the shared directory" test $? = 0
rm -rf "$WORK/shared/rootfs"
export TORCHDOCK_CACHE_DIR=$WORK/shared/cache
start=$(date +%s.%N)
DOCKER_HOST=unix://$WORK/no-engine.sock "$TD" fleet "squashfs:$SQSH" --partition fleet --json="$WORK/fs.json" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
echo "# figure: fleet over 3 nodes with no engine (squashfs:, the sandbox tier; the first node unpacks, the others find it): $(secs "$start") s"
check "fleet of a .sqsh on 3 nodes with no engine: every node healthy through the sandbox ($(jf "$WORK/fs.json" "[(n['node'], n['verdict'], n.get('report', {}).get('image', {}).get('engine')) for n in d['nodes']]"))" \
  test "$(jf "$WORK/fs.json" "d['counts']['healthy'], sorted(set(n['report']['image']['engine'] for n in d['nodes']))")" = "3 ['sandbox (bubblewrap)']"
check "each node's node-check stayed inside Slurm's 60 s ($(jf "$WORK/fs.json" "[round(n['report']['seconds'], 1) for n in d['nodes']]") s)" \
  test "$(jf "$WORK/fs.json" "all(n['report']['seconds'] < 60 for n in d['nodes'])")" = True
DOCKER_HOST=unix://$WORK/no-engine.sock "$TD" allreduce "squashfs:$SQSH" --partition fleet --json="$WORK/ars.json" >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "allreduce of the .sqsh across 3 nodes with no engine: gloo, every sum exact, exit $(rc)" \
  test "$(rc) $(jf "$WORK/ars.json" "d['verdict'], d['world'], sum(z['wrong'] for z in d['sizes'])")" = "0 pass 3 0"
unset TORCHDOCK_CACHE_DIR

# --- failures that are not the fleet's differences -------------------------------------------
run fleet torchdock/debian-cpu:only-engine-a --nodes 'node[1-3]' --json="$WORK/f2.json"
check "an image missing on node2's dockerd and node3's Podman is an image failure there, exit 1 ($(jf "$WORK/f2.json" "[n['failure_kind'] for n in d['nodes']]"))" \
  bash -c "test $(rc) = 1 && test \"\$(python3 -c \"import json; d=json.load(open('$WORK/f2.json')); print([n['failure_kind'] for n in d['nodes']])\")\" = \"[None, 'image', 'image']\""

kill -9 "$(cat "$TD_SLURM_DIR/slurmd.node3.pid")"
run fleet "$IMG" --nodes 'node[1-3]' --json="$WORK/f3.json"
# srun aborts the whole step when it cannot launch on node3; fleet asks node1 and node2 again
# without it, so they get their own answer.
check "node3's slurmd gone: a launcher failure naming srun's words, not an NCCL or image one; node1 still judged ($(jf "$WORK/f3.json" "[(n['node'], n['verdict'], n['failure_kind'], n['failure']) for n in d['nodes']]"))" \
  test "$(jf "$WORK/f3.json" "d['nodes'][2]['failure_kind'], 'failed on node node3' in d['nodes'][2]['failure'], d['nodes'][0]['verdict']")" = "launcher True healthy"
slurmd -N node3

# --- node-check as Slurm's HealthCheckProgram -------------------------------------------------
# The wrapper a site would install (docs/commands.md): slurmd gives it SLURMD_NODENAME and no
# other variable, so it sets what node-check needs. node2's engine is dead here.
slurm_stop
cat >"$WORK/health.sh" <<HC
#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF=$SLURM_CONF
export TORCHDOCK_PROBES=$TORCHDOCK_PROBES DOCKER_HOST=$DOCKER_HOST
[ "\$SLURMD_NODENAME" = node2 ] && export DOCKER_HOST=unix://$WORK/no-engine.sock
exec "$TD" -q node-check "$IMG" --drain --deadline 50s >>"$WORK/health.\$SLURMD_NODENAME.log" 2>&1
HC
chmod 755 "$WORK/health.sh"
start=$(date +%s.%N)
TD_SLURM_HEALTH_CHECK="$WORK/health.sh" TD_SLURM_HEALTH_INTERVAL=600 slurm_start node1 node2 ||
  { bad "Slurm with a health check did not start"; finish; exit 1; }
for _ in $(seq 1 150); do
  sinfo -h -N -n node2 -o '%t' | grep -q drain && grep -q '^OK' "$WORK/health.node1.log" 2>/dev/null && break
  sleep 0.2
done
check "slurmd ran node-check as its HealthCheckProgram: node2 (dead engine) drained with torchdock's reason, node1 healthy and idle ($(secs "$start") s; node2: $(sinfo -h -N -n node2 -o '%t %E' | cut -c1-80))" \
  bash -c "sinfo -h -N -n node2 -o '%t %E' | grep -q '^drain torchdock: the container engine does not answer' && sinfo -h -N -n node1 -o '%t' | grep -qx idle && grep -q '^OK: torchdock: node1: healthy' '$WORK/health.node1.log'"

# --- node-check as a Prolog ------------------------------------------------------------------
# The README's prolog: exit 3 (the image is not on this node) lets the job run, anything else
# non-zero makes Slurm drain the node. node2's engine is dead here.
slurm_stop
cat >"$WORK/prolog.sh" <<PR
#!/bin/sh
env >"$WORK/prolog.\$SLURMD_NODENAME.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export TORCHDOCK_PROBES=$TORCHDOCK_PROBES DOCKER_HOST=$DOCKER_HOST
[ "\$SLURMD_NODENAME" = node2 ] && export DOCKER_HOST=unix://$WORK/no-engine.sock
"$TD" -q node-check "$IMG" --deadline 50s >>"$WORK/prolog.\$SLURMD_NODENAME.log" 2>&1
rc=\$?; [ \$rc -eq 3 ] && exit 0; exit \$rc
PR
chmod 755 "$WORK/prolog.sh"
TD_SLURM_PROLOG="$WORK/prolog.sh" slurm_start node1 node2 || { bad "Slurm with a prolog did not start"; finish; exit 1; }
start=$(date +%s.%N)
srun --nodelist=node1 -N1 -n1 true >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "a job on node1 runs after the node-check prolog passes ($(secs "$start") s, the prolog's time included)" \
  bash -c "test $(rc) = 0 && grep -q '^OK: torchdock: node1: healthy' '$WORK/prolog.node1.log'"
srun --nodelist=node2 -N1 -n1 --immediate=30 true >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
for _ in $(seq 1 50); do sinfo -h -N -n node2 -o '%t' | grep -q drain && break; sleep 0.2; done
check "a job on node2 (dead engine) does not run there, and Slurm drains node2 for the prolog ($(sinfo -h -N -n node2 -o '%t %E' | cut -c1-60); srun: $(tail -1 "$WORK/err" | cut -c1-80))" \
  bash -c "test $(rc) != 0 && sinfo -h -N -n node2 -o '%t' | grep -q drain && grep -q '^ERROR: torchdock: node2: the container engine does not answer' '$WORK/prolog.node2.log'"

# --- bad input ------------------------------------------------------------------------------
run fleet "$IMG"
check "fleet without --nodes or --partition: exit 2" bash -c "test $(rc) = 2 && grep -q 'give --nodes' '$WORK/err'"
run allreduce "$IMG" --nodes ''
check "allreduce --nodes '' is refused (exit 2), not run on every node of the cluster" \
  bash -c "test $(rc) = 2 && grep -q 'give --nodes' '$WORK/err'"
run node-check "$IMG" --node 'node[1-3]' --drain
check "node-check --node with a host list is refused (exit 2): --drain drains one node" test "$(rc)" = 2
run node-check 'Torchdock/Debian-CPU:debian12'
check "an image reference the engine refuses (upper case) is UNKNOWN (exit 3), not a drain: the engine answers ($(head -1 "$WORK/out" | cut -c1-90))" \
  bash -c "test $(rc) = 3 && grep -q '^UNKNOWN: torchdock: ' '$WORK/out'"
run node-check 'torchdock/debian-cpu:debian12?x=1'
check "an image reference with characters an API path would take as syntax is refused (exit 2)" \
  bash -c "test $(rc) = 2 && grep -q 'is not an image reference' '$WORK/err'"
run fleet "$IMG" --nodes 'nodeX'
check "a node Slurm does not know: exit 2, named" bash -c "test $(rc) = 2 && grep -q 'nodeX' '$WORK/err'"
run fleet "$IMG" --partition nosuch
check "an unknown partition: exit 2 or 3 with sinfo's words" bash -c "test $(rc) -ge 2 && grep -q 'nosuch' '$WORK/err'"
SLURM_CONF=$WORK/no-slurm.conf "$TD" fleet "$IMG" --partition fleet >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc"
check "no reachable Slurm: exit 3 with Slurm's own error" test "$(rc)" = 3
check "no probe container is left behind on any engine" \
  test "$(/usr/bin/docker ps -aq --filter label=io.torchdock.run | wc -l)$(DOCKER_HOST=$B /usr/bin/docker ps -aq --filter label=io.torchdock.run | wc -l)$(td_podman ps -aq --filter label=io.torchdock.run | wc -l)" = 000
finish
