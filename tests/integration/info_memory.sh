#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-info --memory under fastmsg-run: rank 0 alone prints the packet buffers its context
# holds after fm_init, receive buffers exactly as fastmsg.h describes them: two regions of
# 256 KiB and 64 bytes for FM_RECV_POOL=64K with 4000-byte packets, and with
# FM_RECV_POOL=0 4 ranks x (FM_CREDITS + 1) buffers of the 40-byte header and FM_PACKET_SIZE
# rounded up to 64.
# usage: info_memory.sh FASTMSG_RUN FASTMSG_INFO
set -u
fmrun=$1 info=$2
export FM_PROVIDER=shm FM_TIMEOUT=30 FM_CREDITS=5 FM_PACKET_SIZE=4000
fail() { echo "FAIL: $*"; echo "$out" | sed 's/^/    /'; exit 1; }

for pool in 64K 0; do
  if [ "$pool" = 0 ]; then
    export FM_RECV_POOL=0
    want=$((4 * (5 + 1) * ((40 + 4000 + 63) / 64 * 64)))
  else
    export FM_RECV_POOL=64K # below the per-peer buffers (98,304 B): two regions
    want=$((2 * (256 * 1024 + 64)))
  fi
  out=$(timeout -k 5 60 "$fmrun" -n 4 "$info" --memory 2>&1) || fail "fastmsg-info --memory exited $?"
  echo "$out"
  [ "$(grep -c '^memory ' <<<"$out")" -eq 1 ] || fail "want one memory line (rank 0's)"
  grep -Eq "^memory +rank 0 of 4 after fm_init: receive $want B, send [0-9]+ B, copy 0 B, registered [0-9]+ B, peak [0-9]+ B$" <<<"$out" ||
    fail "FM_RECV_POOL=$pool: want receive $want B in the memory line"
done
"$info" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad option does not exit 2"
echo "PASS: fastmsg-info --memory"
