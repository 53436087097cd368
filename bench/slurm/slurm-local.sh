#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# slurm-local.sh: a throwaway single-node Slurm on this host, for running fastmsg jobs under
# srun (--mpi=pmix, --mpi=pmi2) in tests. Everything lives in one private temporary directory
# (slurm.conf, cgroup.conf, state, spool, logs, pid files), the daemons listen on free ports
# picked from 20000-32767 (below the kernel's ephemeral range), the cluster name is unique, and
# the one node is this host at 127.0.0.1, so several instances can run side by side.
#
# usage: slurm-local.sh start          start it; prints "export VAR=..." lines for eval
#        slurm-local.sh stop [DIR]     stop it, remove DIR (default $SLURM_LOCAL_DIR); idempotent
#        slurm-local.sh run -- CMD...  start, run CMD with SLURM_CONF set, always stop; exits
#                                      with CMD's status (CMD gets /dev/null as stdin)
#
#   eval "$(bench/slurm/slurm-local.sh start)"
#   srun --mpi=pmix -n 4 -O ./build/examples/hello
#   bench/slurm/slurm-local.sh stop
#
# Exits 77 (skip) with a one-line reason when Slurm is not installed or its daemons do not
# start. Settings: SLURM_LOCAL_START_TIMEOUT (s until the node is idle, default 60),
# SLURM_LOCAL_RUN_TIMEOUT (s for CMD under run, default 600), SLURM_LOCAL_AUTH (none|munge;
# default none while this Slurm still has auth/none, i.e. before 23.11), TMPDIR.
set -euo pipefail

SKIP=77
PORT_LO=20000 PORT_HI=32767
START_TIMEOUT=${SLURM_LOCAL_START_TIMEOUT:-60}
RUN_TIMEOUT=${SLURM_LOCAL_RUN_TIMEOUT:-600}
MARK=.slurm-local # only a directory holding this file is ever removed by stop

log() { echo "slurm-local: $*" >&2; }
skip() {
  log "skip: $*"
  exit "$SKIP"
}

usage() {
  sed -n '7,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# ---- helpers ----

# Client commands talk to our slurmctld only, and never wait long.
sl() { SLURM_CONF=$dir/slurm.conf timeout -k 2 15 "$@"; }

port_busy() {
  ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q . && return 0
  # Without ss, a listener still shows up as an accepted connection.
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Two distinct ports that nothing on this host uses now.
pick_ports() {
  local span=$((PORT_HI - PORT_LO + 1)) p tries=0
  ports=()
  while [ ${#ports[@]} -lt 2 ]; do
    tries=$((tries + 1))
    [ $tries -le 200 ] || return 1
    p=$((PORT_LO + (RANDOM * 32768 + RANDOM) % span))
    [ ${#ports[@]} -eq 0 ] || [ "${ports[0]}" != "$p" ] || continue
    port_busy "$p" || ports+=("$p")
  done
}

# The pid in FILE if that process is alive and was started with our directory in its
# command line (a stale pid file must not make us signal someone else's process).
our_pid() {
  local pid
  [ -r "$1" ] || return 1
  pid=$(head -c 32 "$1" | tr -dc 0-9)
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/" || return 1
  echo "$pid"
}

# Processes other than us that hold a file or their working directory inside $dir: step
# daemons (they keep the slurmd log open), anything a daemon left behind, and daemons caught
# before they wrote their pid files. stop ends them all.
holders() {
  {
    find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$dir" -o -lname "$dir/*" \) 2>/dev/null || true
    find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 \( -lname "$dir" -o -lname "$dir/*" \) \
      2>/dev/null || true
  } | cut -d/ -f3 | sort -u | { grep -vxE "$$|$BASHPID" || true; }
}

# Last error-looking line of a log, for a one-line reason.
last_error() {
  local l=
  [ -r "$1" ] && l=$({ grep -iE 'error|fatal|cannot|unable|fail' "$1" || true; } | tail -n 1)
  echo "${l:-no error in its log}" | cut -c1-200
}

# SIGTERM the pids, then SIGKILL whatever is left after $2 tenths of a second.
end_pids() {
  local pids=$1 tenths=$2 i p alive
  [ -n "$pids" ] || return 0
  # shellcheck disable=SC2086 # word splitting intended: a list of pids
  kill -TERM $pids 2>/dev/null || true
  for ((i = 0; i < tenths; i++)); do
    alive=
    for p in $pids; do [ -d "/proc/$p" ] && alive="$alive $p"; done
    [ -n "$alive" ] || return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL $alive 2>/dev/null || true
}

# ---- configuration ----

slurm_version() {
  local v
  v=$(slurmctld -V 2>/dev/null | awk '{print $2}')
  echo "${v:-0.0}"
}

write_conf() {
  local host=$1 cpus=$2 auth=$3 cluster
  cluster="fm$(date +%s | tail -c 5)$$${RANDOM}"
  {
    echo "ClusterName=${cluster:0:30}"
    echo "SlurmctldHost=$host(127.0.0.1)"
    echo "SlurmctldPort=${ports[0]}"
    echo "SlurmdPort=${ports[1]}"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$dir/spool"
    echo "TmpFS=$dir/tmp"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/slurmd.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    if [ "$auth" = none ]; then
      echo "AuthType=auth/none"
      echo "CredType=cred/none"
    else
      echo "AuthType=auth/munge"
      echo "CredType=cred/munge"
      echo "AuthInfo=socket=$dir/munge/munge.socket"
    fi
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SwitchType=switch/none"
    # Listen on 127.0.0.1 only, not on every interface.
    echo "CommunicationParameters=NoInAddrAny"
    echo "MpiDefault=none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "SchedulerType=sched/builtin"
    # Trust the node line over what slurmd measures; come back to service without help.
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "MinJobAge=10"
    echo "KillWait=2"
    echo "InactiveLimit=0"
    echo "SlurmdTimeout=60"
    echo "NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN"
    echo "PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
  } >"$dir/slurm.conf"
  # Process tracking and task placement use no cgroups; keep Slurm off the host's.
  echo "CgroupAutomount=no" >"$dir/cgroup.conf"
  # pmix: client temporary files under our directory too.
  echo "PMIxCliTmpDirBase=$dir/tmp" >"$dir/mpi.conf"
}

start_munge() {
  command -v munged >/dev/null || skip "auth/munge needed but munged is not installed"
  mkdir -p "$dir/munge"
  chmod 0700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  # --force: munged otherwise wants its socket's directory open to all users; ours is 0700.
  if ! timeout -k 2 15 munged --force --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" 2>>"$dir/log/munged.log"; then
    local why
    why=$(last_error "$dir/log/munged.log")
    do_stop
    skip "munged did not start${why:+: $why}"
  fi
}

# The name is set before the directory exists, so that a signal at any point leaves stop
# something to remove (mktemp -d would create it inside a command substitution first).
make_dir() {
  local i
  for i in 1 2 3 4 5 6 7 8; do
    dir=${TMPDIR:-/tmp}/fm-slurm.$$.$RANDOM$RANDOM
    if mkdir -m 0700 "$dir" 2>/dev/null; then
      touch "$dir/$MARK"
      return 0
    fi
  done
  dir=
  skip "cannot create a directory in ${TMPDIR:-/tmp}"
}

# ---- subcommands ----

do_start() {
  local v auth host cpus t0 why state=
  local c
  for c in slurmctld slurmd srun sinfo; do
    command -v "$c" >/dev/null ||
      skip "Slurm is not installed (need slurmctld, slurmd, srun: apt-get install slurm-wlm)"
  done
  v=$(slurm_version)
  auth=${SLURM_LOCAL_AUTH:-}
  if [ -z "$auth" ]; then
    # auth/none was removed in Slurm 23.11.
    if [ "$(printf '%s\n23.11\n' "$v" | sort -V | head -n 1)" != 23.11 ]; then
      auth=none
    else
      auth=munge
    fi
  fi
  host=$(hostname -s)
  cpus=$(nproc)
  make_dir
  mkdir -p "$dir/state" "$dir/spool" "$dir/tmp" "$dir/log"
  [ "$auth" = none ] || start_munge
  # A port taken between our check and the daemon's bind: pick again.
  for _ in 1 2 3; do
    pick_ports || {
      do_stop
      skip "no free ports in $PORT_LO-$PORT_HI"
    }
    write_conf "$host" "$cpus" "$auth"
    : >"$dir/log/slurmctld.log"
    : >"$dir/log/slurmd.log"
    # -c: clean state; -i: ignore a missing state file. Both daemonize and write pid files.
    why='' state=''
    timeout -k 2 15 slurmctld -f "$dir/slurm.conf" -c -i >>"$dir/log/slurmctld.log" 2>&1 ||
      why="slurmctld exited: $(last_error "$dir/log/slurmctld.log")"
    [ -n "$why" ] || timeout -k 2 15 slurmd -f "$dir/slurm.conf" -N "$host" \
      >>"$dir/log/slurmd.log" 2>&1 || why="slurmd exited: $(last_error "$dir/log/slurmd.log")"
    t0=$SECONDS
    while [ -z "$why" ] && [ $((SECONDS - t0)) -lt "$START_TIMEOUT" ]; do
      sleep 0.3
      # The pid files appear once the daemons have forked; give them a moment.
      if [ $((SECONDS - t0)) -ge 3 ]; then
        our_pid "$dir/slurmctld.pid" >/dev/null ||
          why="slurmctld exited: $(last_error "$dir/log/slurmctld.log")"
        our_pid "$dir/slurmd.pid" >/dev/null ||
          why="${why:-slurmd exited: $(last_error "$dir/log/slurmd.log")}"
      fi
      state=$(sl sinfo -h -N -n "$host" -o %T 2>/dev/null || true)
      [ "$state" != idle ] || break
    done
    [ "$state" = idle ] && break
    [ -n "$why" ] || why="node not idle within $START_TIMEOUT s (state '${state:-none}')"
    end_pids "$(our_pid "$dir/slurmd.pid" || true) $(our_pid "$dir/slurmctld.pid" || true)" 30
    grep -qiE 'address already in use' "$dir/log/"slurm*.log || break
  done
  if [ "$state" != idle ]; then
    do_stop
    skip "Slurm daemons did not start: $why"
  fi
  echo "export SLURM_CONF=$dir/slurm.conf"
  echo "export SLURM_LOCAL_DIR=$dir"
  log "Slurm $v up in $dir (auth/$auth, ports ${ports[0]},${ports[1]})"
}

do_stop() {
  local pids p i
  [ -n "${dir:-}" ] && [ -d "$dir" ] || return 0
  if [ ! -e "$dir/$MARK" ]; then
    # Interrupted between creating it and marking it: it is still empty.
    rmdir "$dir" 2>/dev/null && return 0
    log "not removing $dir: no $MARK in it, so not made by slurm-local.sh"
    return 1
  fi
  # Bounded, and half done is worse than done: finish even if told to stop, or if whoever
  # reads our output goes away.
  trap '' INT TERM HUP PIPE
  # Cancel jobs first so their step daemons end their tasks.
  if our_pid "$dir/slurmctld.pid" >/dev/null; then
    sl scancel --quiet --user=root >/dev/null 2>&1 || true
    for ((i = 0; i < 50; i++)); do
      [ -z "$(sl squeue -h -o %i 2>/dev/null || true)" ] && break
      sleep 0.1
    done
  fi
  pids="$(our_pid "$dir/slurmd.pid" || true) $(our_pid "$dir/slurmctld.pid" || true)"
  end_pids "$pids" 50
  end_pids "$(holders | tr '\n' ' ')" 30
  if p=$(our_pid "$dir/munge/munged.pid"); then end_pids "$p" 30; fi
  rm -rf "$dir"
}

do_run() {
  local rc=0 child=
  [ "${1:-}" = -- ] && shift
  [ $# -gt 0 ] || usage
  # shellcheck disable=SC2317 # reached through the traps
  on_signal() {
    [ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true
    [ -z "$child" ] || wait "$child" 2>/dev/null || true
    do_stop || true
    exit "$1"
  }
  # Set before starting, so that a signal during the start leaves nothing behind either.
  dir=
  trap 'do_stop || true' EXIT
  trap 'on_signal 130' INT
  trap 'on_signal 143' TERM
  trap 'on_signal 129' HUP
  do_start >/dev/null
  export SLURM_LOCAL_DIR=$dir SLURM_CONF=$dir/slurm.conf
  # In the background, so that a signal to us is handled at once rather than after CMD.
  timeout -k 5 "$RUN_TIMEOUT" "$@" &
  child=$!
  wait "$child" || rc=$?
  child=
  [ $rc -ne 124 ] || log "CMD timed out after $RUN_TIMEOUT s"
  exit "$rc"
}

case ${1:-} in
  start) do_start ;;
  stop)
    trap '' INT TERM HUP PIPE
    dir=${2:-${SLURM_LOCAL_DIR:-}}
    if [ -z "$dir" ] && [ -n "${SLURM_CONF:-}" ]; then dir=$(dirname "$SLURM_CONF"); fi
    do_stop
    ;;
  run)
    shift
    do_run "$@"
    ;;
  *) usage ;;
esac
