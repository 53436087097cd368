#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# compare-pingpong.sh --floor smoke test over shm: fastmsg, fi_pingpong and
# fastmsg-bench-ofi-floor in one run; every row has a positive latency from each, in the table and
# in CSV, and the floor program's own errors are clear. Behaviour only: no timings are judged.
# usage: compare_floor_smoke.sh COMPARE_PINGPONG BUILD_DIR
set -u
compare=$1 build=$2
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"
command -v fi_pingpong >/dev/null || { echo "no fi_pingpong: skipping"; exit 77; }
floor=$build/bench/fastmsg-bench-ofi-floor

# The floor program alone: bad arguments exit 2; a peer that never comes is an error, not a hang.
"$floor" --rank 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "fastmsg-bench-ofi-floor without --dir does not exit 2"
"$floor" --dir /tmp --rank 0 -S 100000 >/dev/null 2>&1
[ $? -eq 2 ] || fail "fastmsg-bench-ofi-floor above 64 KiB does not exit 2"

out=$(timeout -k 5 200 bash "$compare" shm -r 1 -i 200 --min 8 --max 128K --no-stream --floor \
  --csv --build "$build" 2>/dev/null) || fail "compare-pingpong --floor --csv failed"
echo "$out"
header=$(head -1 <<<"$out")
[[ $header == *,floor_lat_us,fm_floor_ratio ]] || fail "no floor columns in the CSV header"
rows=$(tail -n +2 <<<"$out")
[ "$(wc -l <<<"$rows")" -eq 15 ] || fail "want 15 rows (8 B .. 128 KiB)"
while IFS=, read -r _ _ _ size _ fm fi _ _ _ _ _ fl flr; do
  awk -v v="$fm" -v w="$fi" 'BEGIN { exit !(v > 0 && w > 0) }' || fail "$size B: no latency"
  if [ "$size" -le 65536 ]; then
    # (a ratio may round to 0.00 when one floor sample is hit by other load)
    awk -v v="$fl" -v r="$flr" 'BEGIN { exit !(v > 0 && r ~ /^[0-9]+\.[0-9]+$/) }' ||
      fail "$size B: no floor"
  else
    [ "$fl" = - ] && [ "$flr" = - ] || fail "$size B: a floor above its 64 KiB"
  fi
done <<<"$rows"

table=$(timeout -k 5 100 bash "$compare" shm -r 1 -i 200 --min 8 --max 8 --no-stream --floor \
  --build "$build" 2>/dev/null) || fail "compare-pingpong --floor failed"
echo "$table"
grep -q "floor-lat  fm/floor" <<<"$table" || fail "no floor columns in the table"
echo "PASS"
