# Sourced by the Slurm suites. Starts a real Slurm on this host: munged with its own key
# and socket, slurmctld, and one slurmd per node name (`slurmd -N NAME`, each on its own
# port, all at 127.0.0.1), from Debian's slurm-wlm and munge. Everything lives under
# $TD_SLURM_DIR; SLURM_CONF is exported so srun, sinfo and scontrol (and torchdock fleet)
# find this cluster. slurm_stop stops what slurm_start started.
#
# Per-node differences are planted the way sites have them: a slurmd started with other
# resource limits (PropagateResourceLimits=NONE, so a task gets its node's limits, not the
# submitter's), and a TaskProlog that exports per-node variables (TD_SLURM_NODE_ENV_<node>).

: "${TD_SLURM_DIR:=/var/tmp/torchdock/slurm}"
: "${TD_SLURM_PORT:=6917}"
export SLURM_CONF="$TD_SLURM_DIR/slurm.conf"
TD_SLURM_PIDS=()

slurm_log() { echo "slurm: $*" >&2; }

# slurm_start NODE... : a cluster of these node names (node1 node2 node3), partition "fleet"
# holding them all; the default partition, unless TD_SLURM_MAIN_NODES ("node1,node2") makes
# a default partition "main" of those nodes alone (a node then in two partitions).
# A node's slurmd runs under `prlimit $TD_SLURM_LIMITS_<node>` when that is set
# (e.g. TD_SLURM_LIMITS_node1="--memlock=65536"), and its tasks get the lines of
# $TD_SLURM_NODE_ENV_<node> ("NAME=value" per line) in their environment.
# TD_SLURM_HEALTH_CHECK names a HealthCheckProgram, run every TD_SLURM_HEALTH_INTERVAL s (and
# when slurmd starts); slurmd runs it with SLURMD_NODENAME and nothing else in its
# environment (seen with Slurm 22.05: no PATH either). TD_SLURM_PROLOG names a Prolog, run
# by slurmd before a job's first step on each of its nodes.
slurm_start() {
  local nodes=("$@") d=$TD_SLURM_DIR n i port
  slurm_stop
  rm -rf "$d"
  mkdir -p "$d/state" "$d/spool"
  chmod 700 "$d"
  dd if=/dev/urandom of="$d/munge.key" bs=1 count=1024 status=none
  chmod 400 "$d/munge.key"
  munged --force --socket="$d/munge.sock" --key-file="$d/munge.key" \
    --pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/munged.seed" || {
    slurm_log "munged did not start:"; tail -5 "$d/munged.log" >&2; return 1; }
  TD_SLURM_PIDS+=("$(cat "$d/munged.pid")")
  # The task prolog: each line it prints as `export NAME=value` lands in the task's
  # environment; the values are per node.
  {
    echo '#!/bin/sh'
    echo 'case "$SLURMD_NODENAME" in'
    for n in "${nodes[@]}"; do
      local var="TD_SLURM_NODE_ENV_$n"
      [ -n "${!var:-}" ] || continue
      echo "  $n)"
      while IFS= read -r line; do [ -n "$line" ] && echo "    echo 'export $line'"; done <<<"${!var}"
      echo "    ;;"
    done
    echo 'esac'
  } >"$d/task_prolog.sh"
  chmod 755 "$d/task_prolog.sh"
  local host
  host=$(hostname -s)
  cat >"$SLURM_CONF" <<CONF
ClusterName=torchdock
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$TD_SLURM_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
PropagateResourceLimits=NONE
TaskProlog=$d/task_prolog.sh
${TD_SLURM_HEALTH_CHECK:+HealthCheckProgram=$TD_SLURM_HEALTH_CHECK}
${TD_SLURM_HEALTH_CHECK:+HealthCheckInterval=${TD_SLURM_HEALTH_INTERVAL:-30}}
${TD_SLURM_PROLOG:+Prolog=$TD_SLURM_PROLOG}
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
CONF
  i=0
  for n in "${nodes[@]}"; do
    port=$((TD_SLURM_PORT + 10 + i))
    echo "NodeName=$n NodeAddr=127.0.0.1 Port=$port CPUs=2 RealMemory=1000 State=UNKNOWN" >>"$SLURM_CONF"
    i=$((i + 1))
  done
  local part="MaxTime=INFINITE State=UP OverSubscribe=FORCE:4" fleet_default=YES
  if [ -n "${TD_SLURM_MAIN_NODES:-}" ]; then
    echo "PartitionName=main Nodes=$TD_SLURM_MAIN_NODES Default=YES $part" >>"$SLURM_CONF"
    fleet_default=NO
  fi
  echo "PartitionName=fleet Nodes=$(IFS=,; echo "${nodes[*]}") Default=$fleet_default $part" >>"$SLURM_CONF"
  slurmctld -i >"$d/slurmctld.out" 2>&1 || { slurm_log "slurmctld did not start:"; tail -20 "$d/slurmctld.log" >&2; return 1; }
  for _ in $(seq 1 50); do [ -s "$d/slurmctld.pid" ] && break; sleep 0.2; done
  TD_SLURM_PIDS+=("$(cat "$d/slurmctld.pid" 2>/dev/null)")
  for n in "${nodes[@]}"; do
    mkdir -p "$d/spool/$n"
    local lim="TD_SLURM_LIMITS_$n" pre=()
    [ -n "${!lim:-}" ] && pre=(prlimit ${!lim} --)
    "${pre[@]}" slurmd -N "$n" >"$d/slurmd.$n.out" 2>&1 || {
      slurm_log "slurmd -N $n did not start:"; tail -20 "$d/slurmd.$n.log" >&2; return 1; }
  done
  for n in "${nodes[@]}"; do
    for _ in $(seq 1 50); do [ -s "$d/slurmd.$n.pid" ] && break; sleep 0.2; done
    TD_SLURM_PIDS+=("$(cat "$d/slurmd.$n.pid" 2>/dev/null)")
  done
  # Every node registered (idle, or drained by a health check) before a test asks for them.
  for _ in $(seq 1 100); do
    [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | grep -cE ' (idle|drain|drained)$')" -eq ${#nodes[@]} ] && {
      slurm_log "cluster up: ${nodes[*]} (SLURM_CONF=$SLURM_CONF)"; return 0; }
    sleep 0.3
  done
  slurm_log "nodes not idle:"; sinfo -N >&2; tail -20 "$d/slurmctld.log" >&2
  return 1
}

# Every daemon of this cluster, by its pid file under $TD_SLURM_DIR (one a test restarted, or
# a killed earlier run left, too), and the ones slurm_start tracked; waits until they are gone.
slurm_stop() {
  local pid f pids=("${TD_SLURM_PIDS[@]}")
  for f in "$TD_SLURM_DIR"/*.pid; do [ -f "$f" ] && pids+=("$(cat "$f")"); done
  for pid in "${pids[@]}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    [ -n "$pid" ] || continue
    for _ in $(seq 1 25); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  TD_SLURM_PIDS=()
}
