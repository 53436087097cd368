#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.sh (the main job) in its quick mode against this build: it prints the ping-pong
# table (8 B .. 1 MiB) and the multicast table (every tree and auto at 64 KiB and 1 MiB), and
# writes both CSV files and the four plots. Behaviour only: tiny counts, no timings judged.
# setup-deps is left out (BENCH_SKIP_DEPS): a test must not call apt-get.
# usage: run_smoke.sh RUN_SH BUILD_DIR
set -u
runsh=$1 build=$2
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"
python3 -c 'import matplotlib' 2>/dev/null || /usr/bin/python3 -c 'import matplotlib' 2>/dev/null ||
  { echo "no python3 with matplotlib: skipping"; exit 77; }

dir=$tmp/out
# FM_PROVIDER unset: the main job's own default, sm.
capture 240 env -u FM_PROVIDER BUILD_DIR="$build" BENCH_OUT="$dir" BENCH_QUICK=1 \
  BENCH_SKIP_DEPS=1 FM_TIMEOUT=60 bash "$runsh"
echo "$out"
echo "stderr: $err"
[ $rc -eq 0 ] || fail "run.sh exited $rc"
num='[0-9]+\.[0-9]+'

grep -q "^# ping-pong, one host, sm:" <<<"$out" || fail "no ping-pong table"
for s in 8 16 32 64 128 256 512 1K 2K 4K 8K 16K 32K 64K 128K 256K 512K 1M; do
  grep -Eq "^ *$s +$num +$num$" <<<"$out" || fail "no ping-pong row for $s"
done
grep -q "^# multicast to 4 ranks, one host, sm:" <<<"$out" || fail "no multicast table"
for t in flat chain binomial kbinomial postal auto; do
  for s in 64K 1M; do
    grep -Eq "^ *$s +fastmsg +$t +[a-z]+(:[0-9]+)?(@[0-9]+)? +fpfs( +-?$num){4}$" <<<"$out" ||
      fail "no multicast row for $t at $s"
  done
done

[ "$(head -1 "$dir/pingpong.csv" | tr -d "\r")" = "size,fm_lat,fm_bw" ] || fail "pingpong.csv header"
[ "$(wc -l <"$dir/pingpong.csv")" -eq 19 ] || fail "pingpong.csv: want a header and 18 rows"
head -1 "$dir/mcast.csv" | grep -q "^hosts,who,tree,resolved,mode,size,completion_us," ||
  fail "mcast.csv header"
[ "$(wc -l <"$dir/mcast.csv")" -eq 13 ] || fail "mcast.csv: want a header and 12 rows"
for p in pingpong_lat pingpong_bw mcast_4ranks mcast_skew_4ranks; do
  [ "$(head -c 4 "$dir/$p.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "no $p.png"
done
echo "PASS: bench/run.sh, quick"
