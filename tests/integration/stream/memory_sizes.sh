#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The send buffers a context holds after fm_init do not depend on the job's size, nor, over
# shm, its receive regions: `memory init` (which checks every memory field it can on its own)
# at 2 and at 8 ranks, through run.sh, and every rank of both jobs must report the same send
# bytes (and over shm the same receive bytes).
# usage: memory_sizes.sh PROVIDER SECONDS FASTMSG_RUN MEMORY
set -u
provider=$1 secs=$2 fmrun=$3 prog=$4
run=$(dirname "$0")/run.sh
# Below the per-peer buffers of 2 ranks (2 x 9 x 65,600 B): regions at both sizes.
export FM_RECV_POOL=1M
declare -A seen recv
for n in 2 8; do
  out=$(bash "$run" "$provider" "$n" "$secs" "$fmrun" "$prog" init)
  rc=$?
  echo "$out"
  [ $rc -eq 0 ] || { echo "FAIL: memory init at $n ranks"; exit 1; }
  seen[$n]=$(sed -n 's/.*send at fm_init \([0-9]*\) B.*/\1/p' <<<"$out" | sort -u)
  [ "$(wc -l <<<"${seen[$n]}")" -eq 1 ] && [ -n "${seen[$n]}" ] ||
    { echo "FAIL: $n ranks: send bytes at fm_init differ between ranks: ${seen[$n]}"; exit 1; }
  recv[$n]=$(sed -n 's/.*recv at fm_init \([0-9]*\) B.*/\1/p' <<<"$out" | sort -u)
  [ "$(wc -l <<<"${recv[$n]}")" -eq 1 ] && [ -n "${recv[$n]}" ] ||
    { echo "FAIL: $n ranks: receive bytes at fm_init differ between ranks: ${recv[$n]}"; exit 1; }
done
if [ "$provider" = shm ] && [ "${recv[2]}" != "${recv[8]}" ]; then
  echo "FAIL: receive regions at fm_init: ${recv[2]} B at 2 ranks, ${recv[8]} B at 8"
  exit 1
fi
[ "${seen[2]}" = "${seen[8]}" ] ||
  { echo "FAIL: send buffers at fm_init: ${seen[2]} B at 2 ranks, ${seen[8]} B at 8"; exit 1; }
echo "PASS: send buffers at fm_init ${seen[2]} B at 2 and 8 ranks"
