#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run one stream test under fastmsg-run: every rank must print "PASS" and the job exit 0.
# usage: run.sh PROVIDER NPROCS SECONDS FASTMSG_RUN PROG [ARGS...]
# Settings (FM_PACKET_SIZE, FM_CREDITS, ...) come from the environment. ST_CORES=0,1 pins
# the whole job to those cores (taskset), to oversubscribe them on any machine.
set -u
provider=$1 n=$2 secs=$3 fmrun=$4
shift 4
export FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=${FM_TIMEOUT:-30}
pin=()
if [ -n "${ST_CORES:-}" ] && command -v taskset >/dev/null; then
  pin=(taskset -c "$ST_CORES")
fi
echo "FM_PROVIDER=$provider FM_PACKET_SIZE=${FM_PACKET_SIZE:-default}" \
     "FM_CREDITS=${FM_CREDITS:-default} FM_OVERFLOW=${FM_OVERFLOW:-default} n=$n: $*"
start=$(date +%s%N)
out=$(timeout -k 5 "$secs" "${pin[@]}" "$fmrun" -n "$n" "$@" 2>&1)
rc=$?
echo "$out"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "took $((ms / 1000)).$((ms % 1000 / 100)) s"
[ $rc -ne 124 ] || { echo "FAIL: timed out after $secs s (hang?)"; exit 1; }
[ $rc -eq 0 ] || { echo "FAIL: job exited $rc"; exit 1; }
pass=$(grep -c "PASS" <<<"$out")
[ "$pass" -eq "$n" ] || { echo "FAIL: $pass of $n ranks passed"; exit 1; }
echo "PASS"
