#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the Slurm tests (see
# ../shared/docs/slurm-local.md for the recipe this follows).
#
#   .ci/slurm.sh start    install slurm-wlm and munge when missing, start munged,
#                         slurmctld and slurmd when they are not running, and wait
#                         until sinfo shows the node idle. Idempotent.
#   .ci/slurm.sh stop     stop the daemons this script started, by the PIDs it
#                         recorded (never by name); a cluster that was already
#                         running before `start` is left alone.
#   .ci/slurm.sh status   print sinfo, or say that no cluster answers.
#
# Needs root (apt-get, /etc/munge, /etc/slurm). The PIDs of the daemons it
# started are recorded in $GOLDSTONE_SLURM_STATE (default /run/goldstone-slurm).
set -euo pipefail

STATE=${GOLDSTONE_SLURM_STATE:-/run/goldstone-slurm}
CONF=/etc/slurm/slurm.conf
MARK="# written by goldstone .ci/slurm.sh"
WAIT_S=${GOLDSTONE_SLURM_WAIT_S:-90}

say() { echo "slurm.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# alive PIDFILE: the PID in PIDFILE names a running process.
alive() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# node_state prints this node's state as sinfo reports it (idle, mix, down*, ...).
node_state() {
  sinfo -h -N -n "$(hostname -s)" -o '%t' 2>/dev/null | head -n1
}

install() {
  if command -v sbatch >/dev/null && command -v slurmctld >/dev/null &&
     command -v slurmd >/dev/null && command -v munged >/dev/null; then
    return
  fi
  [ "$(id -u)" = 0 ] || die "slurm-wlm and munge are missing and installing them needs root"
  say "installing slurm-wlm and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
}

configure() {
  local h cpus mem
  mkdir -p /etc/munge /run/munge /var/log/munge /var/lib/munge \
           /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm /etc/slurm
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  fi
  chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
  chmod 400 /etc/munge/munge.key
  # A slurm.conf someone else wrote is theirs: use it as it is.
  if [ -s "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
    return
  fi
  h=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(free -m | awk '/Mem:/{print $2}') - 1024 ))
  cat > "$CONF.tmp" <<EOF
$MARK
ClusterName=local
SlurmctldHost=$h
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerParameters=sched_interval=2
NodeName=$h CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$h Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.tmp" "$CONF"
}

# start_daemon NAME PIDFILE CMD...: run CMD unless PIDFILE names a live process;
# record the PID of what we started.
start_daemon() {
  local name=$1 pidfile=$2 i
  shift 2
  if alive "$pidfile"; then
    return
  fi
  rm -f "$pidfile"
  "$@"
  for i in $(seq 1 50); do
    alive "$pidfile" && break
    sleep 0.2
  done
  alive "$pidfile" || die "$name did not start (no live PID in $pidfile; see its log)"
  cp "$pidfile" "$STATE/$name.pid"
  say "started $name (pid $(cat "$pidfile"))"
}

start() {
  install
  configure
  mkdir -p "$STATE"
  # munged runs as the munge user, who owns its key, socket and log.
  start_daemon munged /run/munge/munged.pid runuser -u munge -- /usr/sbin/munged
  munge -n | unmunge >/dev/null || die "munge does not work (munge -n | unmunge failed)"
  start_daemon slurmctld /run/slurm/slurmctld.pid /usr/sbin/slurmctld
  start_daemon slurmd /run/slurm/slurmd.pid /usr/sbin/slurmd
  local deadline=$(( SECONDS + WAIT_S )) st="" resumed=""
  while [ $SECONDS -lt $deadline ]; do
    st=$(node_state || true)
    case "$st" in
      idle|mix|alloc) say "node $(hostname -s) is $st"; return ;;
      down*|drain*)
        if [ -z "$resumed" ]; then
          scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
          resumed=1
        fi ;;
    esac
    sleep 1
  done
  die "node $(hostname -s) not idle after ${WAIT_S}s (state: ${st:-no answer}); see /var/log/slurm/"
}

# stop_daemon NAME: stop the process whose PID we recorded when we started NAME.
stop_daemon() {
  local name=$1 rec="$STATE/$1.pid" pid i
  [ -s "$rec" ] || return 0
  pid=$(cat "$rec")
  if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      say "$name (pid $pid) ignored TERM for 10s; sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    say "stopped $name (pid $pid)"
  fi
  rm -f "$rec"
}

stop() {
  local n
  if [ -s "$STATE/slurmctld.pid" ] && n=$(squeue -h 2>/dev/null | wc -l) && [ "$n" -gt 0 ]; then
    say "stopping with $n job(s) in the queue: their running tasks are lost"
  fi
  # Reverse order of start: the node daemon, the controller, then munge.
  stop_daemon slurmd
  stop_daemon slurmctld
  stop_daemon munged
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status)
    if command -v sinfo >/dev/null && sinfo >/dev/null 2>&1; then sinfo; else say "no cluster answers"; exit 1; fi ;;
  *) die "usage: $0 start|stop|status" ;;
esac
