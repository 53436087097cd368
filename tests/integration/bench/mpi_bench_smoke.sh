#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/mpi smoke test: fastmsg-bench-mpi-pingpong-* and fastmsg-bench-mpi-bcast-* under one
# MPI's launcher with N ranks on this host (shared memory; launcher traffic on lo). Behaviour
# only, no timings: a row for every size, in the table and in CSV, the CSV headers exactly
# fastmsg-bench-pingpong's and fastmsg-bench-mcast's, every byte checked, clear failures for bad
# options and rank counts.
# usage: mpi_bench_smoke.sh openmpi|mpich N MPI_PINGPONG MPI_BCAST FASTMSG_RUN FM_PINGPONG FM_MCAST
set -u
mpi=$1 n=$2 pp=$3 bc=$4 fmrun=$5 fmpp=$6 fmmc=$7
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"
mpi_launch "$mpi" "$n" "$pp"
tree=$mpi-bcast
[ "$mpi" = openmpi ] && tree=ompi-bcast
export FM_PROVIDER=shm FM_TIMEOUT=30
num='-?[0-9]+\.[0-9]+'

# A program under the launcher; $out is stdout, $err stderr, $rc the status.
launch() { capture 60 "${launch[@]}" "$@"; }
# The same, and it must succeed quietly.
run() { quiet 60 "${launch[@]}" "$@"; }

# A command that must fail with status $1 ("any": not 0) and $2 in its stderr.
refused() {
  local want=$1 msg=$2
  shift 2
  "$@" >/dev/null 2>"$tmp/err"
  local st=$?
  grep -q -- "$msg" "$tmp/err" || return 1
  if [ "$want" = any ]; then [ $st -ne 0 ]; else [ $st -eq "$want" ]; fi
}

# Options, without a launcher: the same as fastmsg's programs, and clear refusals of theirs.
"$pp" -h | grep -q -- "--latency-only" || fail "MPI pingpong -h does not list the options"
"$bc" -h | grep -q -- "--settle" || fail "MPI bcast -h does not list the options"
refused 2 "unrecognized option" "$pp" --no-such-option || fail "MPI pingpong: a bad option"
refused 2 "unrecognized option" "$bc" --no-such-option || fail "MPI bcast: a bad option"
refused 2 "--receive picks fastmsg's receive path" "$pp" --receive ||
  fail "MPI pingpong does not refuse --receive clearly"
for opt in --trees --sf-too --modes --calibrate; do
  arg=()
  [ $opt = --trees ] && arg=(flat)
  [ $opt = --modes ] && arg=(fcfs)
  refused 2 "$opt is fastmsg-bench-mcast's option" "$bc" "$opt" "${arg[@]}" ||
    fail "MPI bcast took $opt"
done
refused 2 "MPI counts are int" "$bc" --sizes 3G || fail "MPI bcast took a size over 2 GiB"
refused 2 "MPI counts are int" "$pp" --max 2G || fail "MPI pingpong took a size of 2 GiB"

# fastmsg's CSV headers, which the MPI programs must match exactly.
fm_pp_head=$(timeout -k 5 30 "$fmrun" -n 2 "$fmpp" --csv -r 1 -i 2 --warmup 0 --min 8 --max 8 \
  --latency-only)
fm_pp_head=${fm_pp_head%%$'\n'*}
fm_mc_head=$(timeout -k 5 30 "$fmrun" -n 2 "$fmmc" --csv -r 1 -i 1 --sizes 8 --trees flat)
fm_mc_head=${fm_mc_head%%$'\n'*}
[ -n "$fm_pp_head" ] || fail "no CSV header from fastmsg-bench-pingpong"
[ -n "$fm_mc_head" ] || fail "no CSV header from fastmsg-bench-mcast"

# fastmsg-bench-mpi-pingpong: with exactly 2 ranks, as fastmsg-bench-pingpong.
if [ "$n" -eq 2 ]; then
  run "$pp" -r 1 -i 20 -n 2 -w 4 --warmup 1 --check
  grep -q "^# fastmsg-bench-mpi-pingpong-$mpi (.*): 2 ranks" <<<"$out" || fail "pingpong header"
  sizes="0"
  for ((s = 1; s <= 4194304; s *= 2)); do sizes+=" $s"; done
  for s in $sizes; do
    grep -Eq "^$s +[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+$" <<<"$out" ||
      fail "no pingpong table row for $s B"
  done
  [ "$(grep -vc '^#' <<<"$out")" -eq 24 ] || fail "expected 24 pingpong rows"

  run "$pp" -r 3 -i 10 -n 2 --min 1K --max 64K --csv --check
  [ "$(head -1 <<<"$out")" = "$fm_pp_head" ] || fail "pingpong CSV header differs from fastmsg's"
  for s in 1024 2048 4096 8192 16384 32768 65536; do
    grep -Eq "^$mpi,-,-,$s,[0-9.]+,[0-9.]+,[0-9]+,[0-9]+,[0-9]+$" <<<"$out" ||
      fail "no pingpong CSV row for $s B"
  done
  [ "$(wc -l <<<"$out")" -eq 8 ] || fail "expected a header and 7 pingpong CSV rows"

  run "$pp" -r 1 -i 10 --min 8 --max 8 --latency-only
  grep -Eq "^8 +[0-9.]+ +- +- " <<<"$out" || fail "--latency-only row"
  run "$pp" -r 1 -n 2 --min 8 --max 8 --bw-only --csv
  grep -Eq "^$mpi,-,-,8,,[0-9.]+,[0-9]+,0,128$" <<<"$out" || fail "--bw-only CSV row"
else
  launch "$pp" -r 1 --max 8
  [ $rc -ne 0 ] || fail "MPI pingpong ran with $n ranks"
  grep -q "needs exactly 2 ranks" <<<"$err" || fail "MPI pingpong: no clear message for $n ranks"
fi

# fastmsg-bench-mpi-bcast: table, 8 B .. 64 KiB.
run "$bc" --max 64K -r 1 -i 3
grep -q "^# fastmsg-bench-mpi-bcast-$mpi (.*): $n ranks, root 0" <<<"$out" || fail "bcast header"
for ((s = 8; s <= 65536; s *= 2)); do
  grep -Eq "^$tree +- +- +$s( +$num){5} +- +- +3 +- +- +- +- +-$" <<<"$out" || fail "no bcast table row for $s B"
done
[ "$(grep -vc '^#' <<<"$out")" -eq 14 ] || fail "expected 14 bcast rows"

# CSV, another root, a list of sizes.
root=$((n - 1))
run "$bc" --csv -r 2 -i 3 --root $root --sizes 1K,64K,1M
[ "$(head -1 <<<"$out")" = "$fm_mc_head" ] || fail "bcast CSV header differs from fastmsg's"
for s in 1024 65536 1048576; do
  grep -Eq "^$mpi,$n,-,-,-,$tree,-,-,$s(,$num){5},-,-,[0-9]+,-,-,-,-,-$" <<<"$out" ||
    fail "no bcast CSV row for $s B"
done
[ "$(wc -l <<<"$out")" -eq 4 ] || fail "expected a header and 3 bcast CSV rows"

# Quiet members: rank 0 hands every rank the quiet time; rows as before (a multicast that
# outlasts it may add a comment line).
run "$bc" --csv --quiet 1 -r 2 -i 3 --sizes 8,4K
for s in 8 4096; do
  grep -Eq "^$mpi,$n,-,-,-,$tree,-,-,$s(,$num){5},-,-,[0-9]+,-,-,-,-,-$" <<<"$out" ||
    fail "no bcast CSV row for $s B with --quiet"
done
[ "$(grep -vc '^#' <<<"$out")" -eq 3 ] || fail "expected a header and 2 bcast CSV rows (--quiet)"

# Refusals under the launcher: a root outside the job, a fastmsg-only option.
refused any "--root below $n" timeout -k 5 60 "${launch[@]}" "$bc" --root "$n" --max 8 ||
  fail "MPI bcast took --root $n"
refused any "--trees is fastmsg-bench-mcast's" timeout -k 5 60 "${launch[@]}" "$bc" --trees flat ||
  fail "MPI bcast under the launcher took --trees"
echo "PASS: bench/mpi smoke, $mpi, $n ranks"
