#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hello under a launcher: every rank must print "ok" and the job must exit 0.
# usage: hello.sh run|openmpi|mpich NPROCS PROVIDER HELLO FASTMSG_RUN
set -u
launcher=$1 n=$2 provider=$3 hello=$4 fmrun=$5
export FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=60
case $launcher in
  run) cmd=("$fmrun" -n "$n" "$hello") ;;
  openmpi)
    command -v mpirun.openmpi >/dev/null || { echo "no mpirun.openmpi"; exit 77; }
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cmd=(mpirun.openmpi --oversubscribe -n "$n" -x FM_PROVIDER -x FI_TCP_IFACE -x FM_TIMEOUT
         --mca btl self --mca pml ob1 "$hello") ;;
  mpich)
    command -v mpirun.mpich >/dev/null || { echo "no mpirun.mpich"; exit 77; }
    cmd=(mpirun.mpich -n "$n" "$hello") ;;
  *) echo "unknown launcher $launcher"; exit 2 ;;
esac
out=$(timeout -k 5 90 "${cmd[@]}" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: $launcher -n $n over $provider exited $rc"; exit 1; }
ok=$(grep -c "greetings ok" <<<"$out")
[ "$ok" -eq "$n" ] || { echo "FAIL: $ok of $n ranks reported ok"; exit 1; }
echo "PASS: hello, $launcher -n $n, $provider"
