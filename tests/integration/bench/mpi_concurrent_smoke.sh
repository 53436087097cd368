#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-bench-mpi-concurrent-* smoke test: every rank a root at once under one MPI's launcher
# with N ranks on this host (shared memory; launcher traffic on lo). Behaviour only, no timings:
# a row for both methods (p2p, bcast) and every size, in the table and in CSV (the header exactly
# fastmsg-bench-mcast --concurrent's), the bcast method's communicator line, every copy checked
# (a wrong one fails the job), one root a round (--roots 1), clear refusals of bad options.
# usage: mpi_concurrent_smoke.sh openmpi|mpich N MPI_CONCURRENT
set -u
mpi=$1 n=$2 cc=$3
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"
mpi_launch "$mpi" "$n" "$cc"
num='-?[0-9]+\.[0-9]+'
k=2

# Options, without a launcher.
"$cc" -h | grep -q -- "--methods" || fail "-h does not list --methods"
refuse() {
  local msg=$1
  shift
  "$cc" "$@" >/dev/null 2>"$tmp/err"
  [ $? -eq 2 ] && grep -qF -- "$msg" "$tmp/err"
}
refuse "unrecognized option" --no-such-option || fail "took a bad option"
refuse "bad value" --methods p2p,nosuch || fail "took an unknown method"
refuse "bad value" --methods p2p,p2p || fail "took a method twice"
refuse "--trees is fastmsg-bench-mcast's option" --trees flat || fail "took --trees"
refuse "MPI counts are int" --sizes 3G || fail "took a size over 2 GiB"
refuse "--roots takes a number of roots from 1 to 4096, not '0'" --concurrent 1 --roots 0 ||
  fail "took --roots 0"
refuse "--roots takes a number of roots" --concurrent 1 --roots many || fail "took --roots many"
refuse "--roots needs --concurrent K" --roots 1 || fail "took --roots without --concurrent"

# Table: both methods, two sizes (a one-packet and a multi-packet size in fastmsg's terms).
# A table row per method and size (3 rounds each), and nothing else; $1 prefixes failures.
rows_ok() {
  for m in p2p bcast; do
    for s in 8 3000; do
      grep -Eq "^$m +$s +$k( +$num){4} +3$" <<<"$out" || fail "${1}no table row for $m $s B"
    done
  done
  [ "$(grep -vc '^#' <<<"$out")" -eq 4 ] || fail "${1}expected 4 rows (2 methods x 2 sizes)"
}

quiet 60 "${launch[@]}" "$cc" --concurrent $k --common-clock -r 1 -i 3 --sizes 8,3000
grep -q "^# fastmsg-bench-mpi-concurrent-$mpi --concurrent $k --roots $n (.*): $n ranks, every rank a root" \
  <<<"$out" ||
  fail "header"
rows_ok ""
grep -Eq "^# bcast: [0-9]+ communicators created in $num ms \([0-9]+ us each\), not in the figures above$" <<<"$out" ||
  fail "no communicator creation line"

# CSV, fastmsg-bench-mcast --concurrent's header; bcast alone, more rounds.
quiet 60 "${launch[@]}" "$cc" --concurrent $k --common-clock --csv --methods bcast -r 2 -i 3 \
  --sizes 1,64K
[ "$(head -1 <<<"$out")" = "provider,ranks,packet_size,credits,tree,size,dests,each_us,each_max_us,round_us,aggregate_MBps,rounds" ] ||
  fail "bad CSV header"
for s in 1 65536; do
  grep -Eq "^$mpi,$n,-,-,bcast,$s,$k(,$num){3},[0-9]+\.[0-9]+,6$" <<<"$out" ||
    fail "no CSV row for bcast $s B"
done
[ "$(grep -vc '^#' <<<"$out")" -eq 3 ] || fail "expected a CSV header and 2 rows"
! grep -q "^$mpi,$n,-,-,p2p," <<<"$out" || fail "--methods bcast ran p2p"

# Every other rank a destination: p2p first, K = N - 1.
quiet 60 "${launch[@]}" "$cc" --concurrent $((n - 1)) --common-clock --methods p2p,bcast -r 1 \
  -i 2 --sizes 100
[ "$(grep -v '^#' <<<"$out" | awk '{print $1}' | tr '\n' ' ')" = "p2p bcast " ] ||
  fail "the methods not in the order given"

# One root a round (--roots 1), both methods; bcast creates communicators only for the rounds'
# (root, set) pairs: at most one a round (a warm-up and 3 rounds per size).
quiet 60 "${launch[@]}" "$cc" --concurrent $k --roots 1 --common-clock -r 1 -i 3 --sizes 8,3000
grep -q "^# fastmsg-bench-mpi-concurrent-$mpi --concurrent $k --roots 1 (.*): $n ranks, R of them" \
  <<<"$out" || fail "--roots 1: header"
rows_ok "--roots 1: "
groups=$(sed -En 's/^# bcast: ([0-9]+) communicators created.*/\1/p' <<<"$out")
if [ -z "$groups" ] || [ "$groups" -lt 1 ] || [ "$groups" -gt 8 ]; then
  fail "--roots 1: '$groups' communicators for 8 rounds of one root"
fi
capture 60 "${launch[@]}" "$cc" --concurrent $k --roots $((n + 1)) --common-clock --sizes 8 -r 1 -i 1
[ "$rc" -ne 0 ] || fail "--roots $((n + 1)) on $n ranks was not refused"
grep -q -- "--roots $((n + 1)): at most the job's $n ranks can be roots" <<<"$err" ||
  fail "--roots $((n + 1)): no clear message"

# Refusals under the launcher: K not below the ranks, no --common-clock.
for bad in "--concurrent $n --common-clock" "--concurrent $k"; do
  # shellcheck disable=SC2086
  capture 60 "${launch[@]}" "$cc" $bad --sizes 8 -r 1 -i 1
  [ "$rc" -ne 0 ] || fail "$bad was not refused"
  grep -q "needs --concurrent K, K below the job's $n ranks, and --common-clock" <<<"$err" ||
    fail "$bad: no clear message"
done
echo "PASS: bench/mpi concurrent smoke, $mpi, $n ranks"
