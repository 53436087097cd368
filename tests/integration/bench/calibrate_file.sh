#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fm_mcast_calibrate and FM_MCAST_COSTS_FILE (through fastmsg-bench-mcast --calibrate), over
# the provider given, 3 ranks (two partners: rank 1 and the last):
#   1. no file yet: calibration measures (its log line) and rank 0 writes the file, every key
#      once, each a number within plausibility bounds (not timing: a loaded machine may take
#      10x longer, never 1000x);
#   2. the file exists: it is loaded instead of measured (no log line), and left as it was;
#   3. a file with an absurd latency (5 s): the model's prediction shows it (>= 5 s), so the
#      file is what the model uses; FM_MCAST_COSTS's latency_ns then wins over the file's.
# usage: calibrate_file.sh PROVIDER FASTMSG_RUN FASTMSG_BENCH_MCAST
set -u
provider=$1 fmrun=$2 bench=$3
export FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=30 FM_VERBOSE=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
file=$dir/costs
fail() { echo "FAIL: $*"; exit 1; }
run() { # the flat tree's predicted microseconds for 8 bytes, from the table
  timeout -k 5 120 "$fmrun" -n 3 "$bench" --calibrate --trees flat --sizes 8 -r 1 -i 2 \
    >"$dir/out" 2>"$dir/err" || { cat "$dir/out" "$dir/err"; fail "job exited $?"; }
  awk '$1 == "flat" && $4 == 8 { print $10 }' "$dir/out"
}

FM_MCAST_COSTS_FILE=$file run >/dev/null
grep -q "calibrated in" "$dir/err" || { cat "$dir/err"; fail "no calibration measured"; }
[ -f "$file" ] || fail "rank 0 wrote no $file"
cat "$file"
keys="send_msg_ns send_pkt_ns send_ns_per_kib fill_ns_per_kib gap_ns_per_kib recv_pkt_ns
      recv_ns_per_kib copy_ns_per_kib latency_ns latency_ns_per_kib wake_ns spin_ns burst_bytes
      poll_ns"
for k in $keys; do
  [ "$(grep -c "^$k=" "$file")" -eq 1 ] || fail "$k not once in the file"
done
# Bounds: per-packet costs under 1 ms, per KiB under 1 ms (1 MB/s), latency under 10 ms, the
# wake-up and the polling span under 1 s, its busy part under 100 ms; something measured at all.
awk -F= '/^[a-z]/ {
  v = $2 + 0
  if ($2 !~ /^[0-9.e+-]+$/ || v < 0) { print "not a number >= 0: " $0; bad = 1 }
  lim = 1e12
  if ($1 ~ /_per_kib$/ || $1 ~ /_pkt_ns$/ || $1 == "send_msg_ns") lim = 1e6
  if ($1 == "latency_ns") lim = 1e7
  if ($1 == "wake_ns" || $1 == "spin_ns") lim = 1e9
  if ($1 == "poll_ns") lim = 1e8
  if (v > lim) { print "implausible: " $0; bad = 1 }
  if ($1 == "send_pkt_ns" || $1 == "recv_pkt_ns") sum += v
  if ($1 == "spin_ns") spin = v
  if ($1 == "poll_ns") poll = v
}
END {
  if (sum <= 0) { print "nothing measured"; bad = 1 }
  if (poll > spin) { print "poll_ns (the busy part of the polling) over spin_ns"; bad = 1 }
  exit bad
}' "$file" ||
  fail "implausible costs"
cp "$file" "$dir/first"

FM_MCAST_COSTS_FILE=$file run >/dev/null
! grep -q "calibrated in" "$dir/err" || fail "measured again although the file exists"
cmp -s "$file" "$dir/first" || fail "the file changed"

sed -i 's/^latency_ns=.*/latency_ns=5e9/' "$file"
us=$(FM_MCAST_COSTS_FILE=$file run)
echo "model with the file's 5 s latency: $us us"
awk -v u="$us" 'BEGIN { exit !(u >= 5e6) }' || fail "the file's latency is not used ($us us)"
us=$(FM_MCAST_COSTS_FILE=$file FM_MCAST_COSTS=latency_ns=1000 run)
echo "model with FM_MCAST_COSTS's 1 us latency over it: $us us"
awk -v u="$us" 'BEGIN { exit !(u < 1e6) }' || fail "FM_MCAST_COSTS does not win ($us us)"
echo "PASS"
