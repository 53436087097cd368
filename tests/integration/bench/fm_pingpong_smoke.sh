#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-bench-pingpong smoke test: tiny iteration counts over shm, every byte checked. Behaviour
# only: a row for every size, in the table and in CSV, exit 0, nothing on stderr. No timings.
# usage: fm_pingpong_smoke.sh FASTMSG_RUN FM_PINGPONG
set -u
fmrun=$1 pp=$2
export FM_PROVIDER=shm FM_TIMEOUT=60
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"

"$pp" -h | grep -q -- "--latency-only" || fail "-h does not list the options"
"$pp" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad option does not exit 2"

# fastmsg-bench-pingpong under the launcher, quietly; $out is stdout.
run() { quiet 90 "$fmrun" -n 2 "$pp" "$@"; }

# Table: sizes 0, 1, 2, 4, ... 4 MiB.
run -r 1 -i 20 -n 2 -w 4 --warmup 1 --check
sizes="0"
for ((s = 1; s <= 4194304; s *= 2)); do sizes+=" $s"; done
for s in $sizes; do
  grep -Eq "^$s +[0-9.]+ +[0-9.]+ +[0-9]+ " <<<"$out" || fail "no table row for $s B"
done
[ "$(grep -vc '^#' <<<"$out")" -eq 24 ] || fail "expected 24 rows"
grep -q "provider shm" <<<"$out" || fail "the header does not name the provider"
grep -Eq "^# memory of rank 0: packet buffers receive [0-9.]+ MiB, .*; process VmRSS [0-9.]+ MiB, VmHWM [0-9.]+ MiB$" <<<"$out" ||
  fail "no memory line after the table"

# CSV, a range, and the fm_receive handler.
run -r 3 -i 10 -n 2 --min 1K --max 64K --csv --receive --check
[ "$(head -1 <<<"$out")" = "provider,packet_size,credits,size,latency_us,bandwidth_MBps,rate_msgps,lat_iters,bw_msgs" ] ||
  fail "bad CSV header"
for s in 1024 2048 4096 8192 16384 32768 65536; do
  grep -Eq "^shm,[^,]+,[^,]+,$s,[0-9.]+,[0-9.]+,[0-9]+,[0-9]+,[0-9]+$" <<<"$out" || fail "no CSV row for $s B"
done
[ "$(wc -l <<<"$out")" -eq 8 ] || fail "expected a header and 7 CSV rows"

# One measurement at a time.
run -r 1 -i 10 --min 8 --max 8 --latency-only
grep -Eq "^8 +[0-9.]+ +- +- " <<<"$out" || fail "--latency-only row"
run -r 1 -n 2 --min 8 --max 8 --bw-only
grep -Eq "^8 +- +[0-9.]+ +[0-9]+ " <<<"$out" || fail "--bw-only row"
echo "PASS: fastmsg-bench-pingpong smoke"
