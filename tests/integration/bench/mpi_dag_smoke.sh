#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-bench-mpi-dag-* smoke test: the DAG scheduler's MPI baseline under one MPI's launcher
# with N ranks on this host (shared memory; launcher traffic on lo). Behaviour only, no
# timings: small DAGs run with every task's output matching the reference (checksum OK), the
# table and the CSV, a corrupted output caught (checksum FAIL, non-zero exit), clear refusals
# of bad options.
# usage: mpi_dag_smoke.sh openmpi|mpich N MPI_DAG
set -u
mpi=$1 n=$2 dag=$3
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"
mpi_launch "$mpi" "$n" "$dag"
num='[0-9]+\.[0-9]'
small=(--tasks 200 --width 16 --degree 4 --bytes 64-4K --compute-us 0-10 --seed 1)

# Options, without a launcher.
"$dag" -h | grep -q -- "--compute-us" || fail "-h does not list the options"
refuse() {
  local msg=$1
  shift
  "$dag" "$@" >/dev/null 2>"$tmp/err"
  [ $? -eq 2 ] && grep -qF -- "$msg" "$tmp/err"
}
refuse "unrecognized option" --no-such-option || fail "took a bad option"
refuse "--width is 1 .. --tasks" --tasks 10 --width 11 || fail "took a width over the tasks"
refuse "--bytes is MIN[-MAX], MIN <= MAX" --bytes 4K-64 || fail "took --bytes MIN above MAX"
refuse "bad value" --degree 65 || fail "took --degree 65"
refuse "beyond --tasks" --tasks 10 --width 5 --corrupt 10 || fail "took --corrupt past the last task"

# The smoke DAG: table, every output checked on every run.
quiet 120 "${launch[@]}" "$dag" "${small[@]}" -r 3
grep -q "^# fastmsg-bench-mpi-dag-$mpi (.*): $n ranks" <<<"$out" || fail "header"
grep -q "^# DAG: 200 tasks, width 16, 13 layers, 1-4 inputs, outputs 64-4096 B" <<<"$out" ||
  fail "DAG line"
grep -Eq "^ +200 +$n +13 +477 +[0-9]+ +[0-9]+ +[0-9]+ +92 +996 +$num +$num +$num +OK$" <<<"$out" ||
  fail "no table row with checksum OK"
grep -q "^# checksum OK: 0 of 200 task outputs x 4 runs" <<<"$out" || fail "no 'checksum OK'"

# CSV: a header and one row.
head='provider,ranks,tasks,width,degree,bytes_min,bytes_max,compute_min_us,compute_max_us,seed,'
head+='layers,edges,remote_edges,messages,bytes_sent,cp_us,work_us,repeats,makespan_us,min_us,'
head+='max_us,checksum'
quiet 120 "${launch[@]}" "$dag" "${small[@]}" -r 2 --csv
[ "$(head -1 <<<"$out")" = "$head" ] || fail "CSV header"
grep -Eq "^$mpi,$n,200,16,4,64,4096,0,10,1,13,477(,[0-9]+){5},2(,$num){3},OK$" <<<"$out" ||
  fail "no CSV row with checksum OK"
[ "$(wc -l <<<"$out")" -eq 2 ] || fail "expected a CSV header and one row"

# Another shape: a width that is not a multiple of the ranks, wide fan-in, empty outputs
# among them, no warm-up.
quiet 120 "${launch[@]}" "$dag" --tasks 61 --width 7 --degree 9 --bytes 0-100 --compute-us 0 \
  --seed 99 -r 2 --warmup 0
grep -q "^# checksum OK" <<<"$out" || fail "no 'checksum OK' for the 61-task DAG"

# One flipped byte after its producer's check: its dependents (on this rank and others) must
# fail, and so must the job. Task 3 is in layer 0 and has dependents in this DAG.
capture 120 "${launch[@]}" "$dag" "${small[@]}" -r 1 --corrupt 3
[ $rc -ne 0 ] || fail "a corrupted output exited 0"
grep -q "^# checksum FAIL" <<<"$out" || fail "no 'checksum FAIL' for a corrupted output"
grep -q "differed from the reference" <<<"$err" || fail "no rank named its failures"
echo "PASS: bench/mpi DAG smoke, $mpi, $n ranks"
