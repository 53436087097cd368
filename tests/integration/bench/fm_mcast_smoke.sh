#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-bench-mcast and examples/multicast smoke test over shm with 4 ranks. Behaviour only: a
# row for every tree and size, in the table and in CSV, exit 0, nothing on stderr. No timings.
# usage: fm_mcast_smoke.sh FASTMSG_RUN FM_MCAST MULTICAST_EXAMPLE
set -u
fmrun=$1 mc=$2 example=$3
export FM_PROVIDER=shm FI_TCP_IFACE=lo FM_TIMEOUT=30
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"

"$mc" -h | grep -q -- "--sf-too" || fail "-h does not list the options"
"$mc" -h | grep -q -- "--modes" || fail "-h does not list --modes"
"$mc" --modes fpfs,nosuchmode >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown mode does not exit 2"
"$mc" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad option does not exit 2"

# A program under the launcher with 4 ranks, quietly; $out is stdout.
run() { quiet 30 "$fmrun" -n 4 "$@"; }
trees="flat chain binomial kbinomial postal auto"
sizes=""
for ((s = 8; s <= 65536; s *= 2)); do sizes+=" $s"; done
num='-?[0-9]+\.[0-9]+'

# Table, 8 B .. 64 KiB, every tree.
run "$mc" --max 64K -r 1 -i 3
grep -q "provider shm" <<<"$out" || fail "the header does not name the provider"
grep -q "4 ranks" <<<"$out" || fail "the header does not give the ranks"
for t in $trees; do
  for s in $sizes; do
    grep -Eq "^$t +[a-z]+(:[0-9]+)?(@[0-9]+)? +fpfs +$s( +$num){7} +3 +[0-9]+ +$num +$num +0 +0$" <<<"$out" ||
      fail "no table row for $t $s B"
  done
done
[ "$(grep -vc '^#' <<<"$out")" -eq 84 ] || fail "expected 84 rows (6 trees x 14 sizes)"

# CSV, store-and-forward too, a few trees and sizes.
run "$mc" --max 64K -r 1 -i 3 --csv --sf-too --trees flat,kbinomial:2 --sizes 1K,64K
[ "$(head -1 <<<"$out")" = "provider,ranks,packet_size,credits,calibrated,tree,resolved,mode,size,completion_us,min_member_us,max_member_us,skew_us,root_cpu_us,model_us,ratio,iters,held_pkts,model_held_pkts,tree_us,model_link_visits,model_links_used" ] ||
  fail "bad CSV header"
for t in flat kbinomial:2; do
  for m in fpfs sf; do
    for s in 1024 65536; do
      grep -Eq "^shm,4,[^,]+,[^,]+,0,$t,[a-z:0-9@]+,$m,$s(,$num){7},3,[0-9]+,$num,$num,0,0$" <<<"$out" ||
        fail "no CSV row for $t $m $s B"
    done
  done
done
[ "$(wc -l <<<"$out")" -eq 9 ] || fail "expected a header and 8 CSV rows"

# Table, FCFS and store-and-forward (each with its model), in the order given.
run "$mc" -r 1 -i 3 --modes fcfs,sf --trees binomial,auto --sizes 1K,64K
for t in binomial auto; do
  for s in 1024 65536; do
    grep -Eq "^$t +[a-z]+(:[0-9]+)?(@[0-9]+)? +fcfs +$s( +$num){7} +3 +[0-9]+ +$num +$num +0 +0$" <<<"$out" ||
      fail "no FCFS table row for $t $s B"
    grep -Eq "^$t +[a-z]+(:[0-9]+)?(@[0-9]+)? +sf +$s( +$num){7} +3 +[0-9]+ +$num +$num +0 +0$" <<<"$out" ||
      fail "no store-and-forward table row for $t $s B"
  done
done
[ "$(grep -vc '^#' <<<"$out")" -eq 8 ] || fail "expected 8 rows (2 trees x 2 modes x 2 sizes)"
[ "$(grep -v '^#' <<<"$out" | head -1 | awk '{print $3}')" = fcfs ] ||
  fail "the modes not in the order given"

# --each: a comment line per row with every member's median time; down a chain each member's
# copy is complete after its parent's, so the medians grow along it (1, 2, 3).
run "$mc" -r 1 -i 5 --csv --each --common-clock --trees chain --sizes 8,64K
for s in 8 65536; do
  line=$(grep "^# each chain fpfs $s:" <<<"$out") || fail "--each printed no line for $s B"
  awk -v l="$line" 'BEGIN { n = split(l, f, /[ =]/); if (n != 11 || f[6] != 1 || f[8] != 2 ||
      f[10] != 3 || !(f[7] <= f[9] && f[9] <= f[11] && f[7] > 0)) exit 1 }' ||
    fail "--each for $s B: $line"
done
[ "$(grep -vc '^#' <<<"$out")" -eq 3 ] || fail "--each: expected a CSV header and 2 rows"
"$mc" --each --concurrent 2 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--each with --concurrent does not exit 2"

# A prefix tree named without its base takes FM_PREFIX_BASE's (the root's, in the descriptor).
FM_PREFIX_BASE=2 run "$mc" -r 1 -i 2 --trees prefix,prefix:3 --sizes 8,3000
for s in 8 3000; do
  grep -Eq "^prefix +prefix:2(@8192)? +fpfs +$s " <<<"$out" || fail "prefix did not take FM_PREFIX_BASE=2"
  grep -Eq "^prefix:3 +prefix:3(@8192)? +fpfs +$s " <<<"$out" || fail "prefix:3 did not keep its base"
done

# Every rank a root at once, each to 2 random others: a row per tree and size, every copy checked
# (a wrong one fails the job).
run "$mc" --concurrent 2 --common-clock --csv -r 1 -i 3 --trees flat,binomial,prefix:2 --sizes 8,3000
[ "$(head -1 <<<"$out")" = "provider,ranks,packet_size,credits,tree,size,dests,each_us,each_max_us,round_us,aggregate_MBps,rounds" ] ||
  fail "bad --concurrent CSV header"
for t in flat binomial prefix:2; do
  for s in 8 3000; do
    grep -Eq "^shm,4,[^,]+,[^,]+,$t,$s,2(,$num){3},[0-9]+\.[0-9]+,3$" <<<"$out" ||
      fail "no --concurrent row for $t $s B"
  done
done
[ "$(wc -l <<<"$out")" -eq 7 ] || fail "expected a header and 6 --concurrent rows"
run "$mc" --concurrent 2 --common-clock -r 1 -i 2 --trees flat --sizes 8
grep -q "^# fastmsg-bench-mcast --concurrent 2 --roots 4: 4 ranks, every rank a root" <<<"$out" ||
  fail "--concurrent without --roots: not every rank a root"
for bad in "--concurrent 4 --common-clock" "--concurrent 2"; do
  # shellcheck disable=SC2086
  timeout -k 5 30 "$fmrun" -n 4 "$mc" $bad --sizes 8 -r 1 -i 1 >/dev/null 2>&1
  [ $? -ne 0 ] || fail "$bad was not refused"
done

# One root a round (--roots 1, drawn per round), to 3 others: a row per tree and size.
run "$mc" --concurrent 3 --roots 1 --common-clock -r 1 -i 3 --trees flat,prefix:2 --sizes 8,3000
grep -q "^# fastmsg-bench-mcast --concurrent 3 --roots 1: 4 ranks, R of them" <<<"$out" ||
  fail "--roots 1: header"
for t in flat prefix:2; do
  for s in 8 3000; do
    grep -Eq "^$t +$s +3( +$num){4} +3$" <<<"$out" || fail "--roots 1: no row for $t $s B"
  done
done
[ "$(grep -vc '^#' <<<"$out")" -eq 4 ] || fail "--roots 1: expected 4 rows"
# Bad --roots: not a count, no --concurrent, more roots than ranks. refused MESSAGE CMD...: CMD
# exits nonzero, MESSAGE on its stderr.
refused() {
  local msg=$1
  shift
  capture 30 "$@"
  [ "$rc" -ne 0 ] && grep -qF -- "$msg" <<<"$err"
}
for bad in 0 x -1; do
  refused "--roots takes a number of roots from 1 to 4096, not '$bad'" "$mc" --concurrent 2 \
    --common-clock --roots "$bad" || fail "--roots $bad: not refused with a clear message"
done
refused "--roots needs --concurrent K" "$mc" --roots 1 || fail "--roots alone was taken"
refused "--roots 5: at most the job's 4 ranks can be roots" "$fmrun" -n 4 "$mc" --concurrent 2 \
  --roots 5 --common-clock --sizes 8 -r 1 -i 1 ||
  fail "--roots 5 on 4 ranks: not refused with a clear message"

# An unknown tree fails cleanly.
timeout -k 5 30 "$fmrun" -n 4 "$mc" --trees nosuchtree --max 8 -r 1 -i 1 >/dev/null 2>&1
[ $? -ne 0 ] || fail "an unknown tree does not fail"

# The example: every non-root rank gets a correct copy.
run "$example"
grep -q "^rank 0: sent 1048576 B to 3 ranks$" <<<"$out" || fail "example: no line from rank 0"
for r in 1 2 3; do
  grep -q "^rank $r: received 1048576 B, correct$" <<<"$out" || fail "example: rank $r"
done
echo "PASS: fastmsg-bench-mcast smoke"
