#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg jobs under a throwaway single-node Slurm (bench/slurm/slurm-local.sh), started once
# for this test and always stopped: hello, boot_probe and an all-to-all stream test with every
# byte checked, each as `srun --mpi=MPI -n 4 -O`, over PROVIDER. Every rank must report and must
# have joined through the bootstrap that MPI implies (pmix: PMIx, pmi2: fastmsg's PMI-1 client,
# which Slurm's pmi2 plugin accepts). Skips (77) when Slurm is not installed, its daemons do not
# start, or MPI=pmix and fastmsg was built without PMIx.
#
# usage: slurm_job.sh pmix|pmi2 shm|tcp SLURM_LOCAL HAVE_PMIX HELLO BOOT_PROBE STREAM_CHECK
set -euo pipefail

N=4
JOB_SECS=60 # each srun; slurm-local.sh bounds the whole run, meson the whole test

if [ "${1:-}" != --in-slurm ]; then
  [ $# -eq 7 ] || {
    echo "usage: slurm_job.sh pmix|pmi2 shm|tcp SLURM_LOCAL HAVE_PMIX HELLO BOOT_PROBE STREAM_CHECK"
    exit 2
  }
  mpi=$1 slurm_local=$3 have_pmix=$4
  if [ "$mpi" = pmix ] && [ "$have_pmix" != true ]; then
    echo "skip: fastmsg was built without PMIx (-Dpmix)"
    exit 77
  fi
  export SLURM_LOCAL_START_TIMEOUT=30 SLURM_LOCAL_RUN_TIMEOUT=120
  # The inner run names its Slurm directory here, so that we can check it is all gone after.
  note=$(mktemp)
  trap 'rm -f "$note"' EXIT
  rc=0
  SLURM_JOB_NOTE=$note bash "$slurm_local" run -- bash "$0" --in-slurm "$@" || rc=$?
  dir=$(cat "$note")
  if [ -n "$dir" ]; then
    [ ! -e "$dir" ] || { echo "FAIL: $dir left behind"; exit 1; }
    if pgrep -f -- "$dir/" >/dev/null; then
      echo "FAIL: processes of $dir left behind:"
      pgrep -a -f -- "$dir/"
      exit 1
    fi
  fi
  exit "$rc"
fi

shift
mpi=$1 provider=$2 hello=$5 probe=$6 stream=$7
export FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=30
echo "$SLURM_LOCAL_DIR" >"$SLURM_JOB_NOTE"

fail() {
  echo "FAIL: $*"
  exit 1
}

if ! srun --mpi=list 2>&1 | grep -qw "$mpi"; then
  echo "skip: this Slurm has no mpi/$mpi plugin"
  exit 77
fi

# Runs srun with the job's options; output in $out.
job() {
  local rc=0
  echo "+ srun --mpi=$mpi -n $N -O $*"
  out=$(timeout -k 5 "$JOB_SECS" srun --mpi="$mpi" -n "$N" -O "$@" 2>&1) || rc=$?
  echo "$out"
  [ $rc -ne 124 ] || fail "srun --mpi=$mpi timed out after $JOB_SECS s"
  [ $rc -eq 0 ] || fail "srun --mpi=$mpi over $provider exited $rc"
}

count() { grep -cE "$1" <<<"$out" || true; }

# What each launch gives fastmsg to find its bootstrap by.
case $mpi in
  pmix) want_var=PMIX_RANK want_boot=pmix ;;
  pmi2) want_var=PMI_FD want_boot=pmi1 ;;
  *) fail "unknown mpi type $mpi" ;;
esac
job bash -c "echo \"$want_var=\${$want_var:-unset}\""
[ "$(count "^$want_var=[0-9]+$")" -eq $N ] || fail "$want_var not set in every task"

FM_VERBOSE=1 job "$hello"
[ "$(count "greetings ok")" -eq $N ] || fail "$(count "greetings ok") of $N ranks greeted"
[ "$(count "rank [0-9]+ of $N( \(pid [0-9]+\))?, bootstrap $want_boot$")" -eq $N ] ||
  fail "not every rank joined through bootstrap $want_boot"

job "$probe"
[ "$(count "ok \(backend $want_boot,")" -eq $N ] || fail "boot_probe: not every rank ok"

# Every rank to every other, 3 messages open per destination, sizes around packet edges.
FM_PACKET_SIZE=4K job "$stream" --sizes '0,1,P-1,P,P+1,3P+7,100000,1M+7' --batch 3
[ "$(count "PASS")" -eq $N ] || fail "stream_check: $(count "PASS") of $N ranks passed"

echo "PASS: hello, boot_probe, stream_check under srun --mpi=$mpi -n $N -O over $provider"
