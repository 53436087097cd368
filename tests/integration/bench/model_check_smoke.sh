#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/model-check.sh on shm with 2 ranks, 2 sizes, 2 trees plus auto, 2 repeats and tiny
# counts: it exits 0 and prints the table and the summary, its raw CSV holds every job's rows
# (with a repeat column), and model_check.py reduces that file alone to the same summary.
# Behaviour only: no figure is judged. Then a bad option exits 2 and a failing job exits 1.
# usage: model_check_smoke.sh MODEL_CHECK_SH BUILD_DIR
set -u
mcsh=$1 build=$2
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"
export FM_TIMEOUT=30

raw=$tmp/raw.csv
capture 50 bash "$mcsh" --build "$build" -n 2 --sizes 64,64K --trees flat,chain -r 2 -i 3 \
  --seed 7 --raw "$raw" --out "$tmp/reduced.csv"
echo "$out"
echo "stderr: $err"
[ "$rc" -eq 0 ] || fail "model-check.sh exited $rc"
pct='\([0-9]+%\)'
summary="^summary: model within 25% in [0-9]+/4 cells $pct; auto within 10% of best in [0-9]/2 cells $pct, ranges overlap in [0-9]/2 $pct\$"
grep -Eq "$summary" <<<"$out" || fail "no summary line"
grep -Eq "^summary: auto met \(within 10% or ranges overlap\) in [0-9]/2 cells $pct\$" <<<"$out" ||
  fail "no auto-met summary"
for s in 64 64K; do
  grep -Eq "^ *shm +2 +$s +(flat|chain) +[0-9.]+ +[a-z@0-9]+.* +(both|within|overlap|NO)( +[0-9.]+\*?){2}\$" \
    <<<"$out" || fail "no table row for $s"
done

# The raw CSV: the grid, a header, 2 repeats x 3 trees x 2 sizes rows, each job's order.
grep -q "^# grid: members=2 sizes=64,65536 trees=flat,chain,auto repeats=2 seed=7$" "$raw" ||
  fail "raw: no grid line"
grep -q "^repeat,provider,ranks,packet_size,credits,calibrated,tree,resolved,mode,size,completion_us," "$raw" ||
  fail "raw: no header"
[ "$(grep -cE '^[12],shm,2,[^,]+,[^,]+,1,(flat|chain|auto),' "$raw")" -eq 12 ] ||
  fail "raw: want 12 calibrated rows"
[ "$(grep -c '^# repeat [12], 2 members: fastmsg-bench-mcast --trees ' "$raw")" -eq 2 ] ||
  fail "raw: want one job line per repeat"
[ "$(wc -l <"$tmp/reduced.csv")" -eq 7 ] || fail "--out: want a header and 6 rows"

# Reduced again from the file alone: the same summary.
again=$(python3 "$(dirname "$mcsh")/model_check.py" --raw "$raw") || fail "model_check.py --raw exited $?"
[ "$(grep '^summary:' <<<"$again")" = "$(grep '^summary:' <<<"$out")" ] ||
  fail "re-reduced summary differs"

capture 10 bash "$mcsh" --build "$build" --no-such-option
[ "$rc" -eq 2 ] || fail "a bad option exited $rc, not 2"
# A tree the benchmark refuses: the job fails, and so does the script.
capture 30 bash "$mcsh" --build "$build" -n 2 --sizes 64 --trees nosuchtree -r 2 -i 1 \
  --raw "$tmp/bad.csv"
[ "$rc" -eq 1 ] || fail "a failing job exited $rc, not 1"
grep -q "the job exited" <<<"$err" || fail "a failing job is not reported"
echo "PASS: bench/model-check.sh smoke"
