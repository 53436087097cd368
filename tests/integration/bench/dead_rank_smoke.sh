#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/dead-rank.sh smoke test: one job per row under fastmsg-run and the fake PMI-1 server over
# shm; a row with a number for every launcher and case, the fake rows (where nothing but fastmsg
# ends the job) with every survivor's times, and bad arguments refused. Behaviour only: no
# timings are judged.
# usage: dead_rank_smoke.sh DEAD_RANK_SH BUILD_DIR
set -u
script=$1 build=$2
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"

capture 10 bash "$script" --launchers nosuch --build "$build"
[ "$rc" -eq 2 ] || fail "an unknown launcher does not exit 2 (exit $rc)"
[[ $err == *"unknown launcher 'nosuch'"* ]] || fail "an unknown launcher is not named: $err"

capture 100 bash "$script" -r 1 --launchers run,fake --providers shm --build "$build"
echo "$out"
[ -z "$err" ] || echo "stderr: $err"
[ "$rc" -eq 0 ] || fail "dead-rank.sh exited $rc"
num='[0-9]+\.[0-9]'
for l in run fake; do
  for c in stream mcast; do
    grep -Eq "^$l +shm +$c +$num +$num +$num +1 " <<<"$out" || fail "no $l $c row"
  done
done
for c in stream mcast; do # failed, exited, all: every survivor's times in the one job
  grep -Eq "^fake +shm +$c( +$num){3} +1 +$num +$num +1$" <<<"$out" ||
    fail "the fake $c row lacks the survivors' times"
done
echo "PASS"
