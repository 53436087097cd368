#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shellcheck disable=SC2015 # A && B || fail ...: fail exits
# examples/dag under a launcher: one job, and what it must print and return.
# usage: dag.sh LAUNCHER PROVIDER N FASTMSG_RUN DAG EXPECT [VAR=VALUE...] [DAG ARGS...]
#   LAUNCHER  run (fastmsg-run), openmpi (mpirun.openmpi), mpich (mpiexec.mpich)
#   EXPECT    ok: exit 0, the table (or CSV) row and "checksum OK";
#             corrupt: (with --corrupt T) non-zero, "checksum FAIL", a rank naming its failures;
#             die: (with --die-at T) the rank running T kills itself: the job must end within
#             the guard, non-zero, and the output must name that rank as dead (fastmsg's
#             "rank R (pid P) has died", fastmsg-run's or mpirun's own line);
#             options: no job: -h, refusals.
#   --workers W in the dag arguments (W > 0): the header must name the W worker threads.
#   VAR=VALUE FM_* settings for every rank (passed on with -x under Open MPI).
set -u
launcher=$1 provider=$2 n=$3 fmrun=$4 dag=$5 expect=$6
shift 6
GUARD=45
export FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=30
vars=(FM_PROVIDER FI_TCP_IFACE FM_TIMEOUT)
while [ $# -gt 0 ] && [[ $1 == FM_*=* ]]; do
    export "${1?}"
    vars+=("${1%%=*}")
    shift
done
fail() { echo "--- stdout:"; echo "$out"; echo "--- stderr:"; cat "$errf"; echo "FAIL: $*"; exit 1; }
errf=$(mktemp)
trap 'rm -f "$errf"' EXIT
out=""

if [ "$expect" = options ]; then
    "$dag" -h | grep -q -- "--tree T" || fail "-h does not list --tree"
    "$dag" -h | grep -q -- "--workers N" || fail "-h does not list --workers"
    "$dag" --workers -1 >/dev/null 2>"$errf"
    [ $? -eq 2 ] && grep -q "^dag: bad value '-1' for --workers" "$errf" || fail "took --workers -1"
    "$dag" --die-at 5 --tasks 5 --width 5 >/dev/null 2>"$errf"
    [ $? -eq 2 ] && grep -q "beyond --tasks" "$errf" || fail "took --die-at past the last task"
    out=$(timeout -k 5 "$GUARD" "$fmrun" -n 2 "$dag" --tree no-such-tree --tasks 8 --width 4 2>"$errf")
    [ $? -eq 2 ] && grep -q "^dag: --tree no-such-tree: unknown multicast tree" "$errf" ||
        fail "took an unknown tree"
    for mpi in "$@"; do # the MPI baselines share the options, not --tree
        [ -x "$mpi" ] || continue
        "$mpi" --tree flat >/dev/null 2>"$errf"
        [ $? -eq 2 ] && grep -q "fastmsg version's options" "$errf" || fail "$mpi took --tree"
    done
    echo "PASS: dag options"
    exit 0
fi

case $launcher in
run) cmd=("$fmrun" -n "$n") ;;
openmpi)
    command -v mpirun.openmpi >/dev/null || { echo "no mpirun.openmpi: skipping"; exit 77; }
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cmd=(mpirun.openmpi --oversubscribe -n "$n" --mca btl self --mca pml ob1
        --mca oob_tcp_if_include lo)
    for v in "${vars[@]}"; do cmd+=(-x "$v"); done ;;
mpich)
    command -v mpiexec.mpich >/dev/null || { echo "no mpiexec.mpich: skipping"; exit 77; }
    cmd=(mpiexec.mpich -n "$n") ;;
*) echo "unknown launcher $launcher"; exit 2 ;;
esac

shown=""
for v in "${vars[@]}"; do shown+="$v=${!v} "; done
echo "+ $shown${cmd[*]} $dag $*"
start=$(date +%s)
out=$(timeout -k 5 "$GUARD" "${cmd[@]}" "$dag" "$@" 2>"$errf")
rc=$?
secs=$(($(date +%s) - start))
# 124, or 137 from timeout's SIGKILL (a --die-at job's own status may be 137 too): a hang.
if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && [ "$expect" != die ]; } || [ "$secs" -ge "$GUARD" ]; then
    fail "the job hung or was killed (exit $rc after $secs s)"
fi
left=$(pgrep -f -- "^$dag( |$)" || true)
[ -z "$left" ] || { sleep 1; left=$(pgrep -f -- "^$dag( |$)" || true); }
[ -z "$left" ] || fail "processes left behind: $left"

arg() { # the value after option $1 in the dag arguments
    local prev=""
    for a in "${@:2}"; do [ "$prev" = "$1" ] && { echo "$a"; return; }; prev=$a; done
}
case $expect in
ok)
    [ $rc -eq 0 ] || fail "exit status $rc"
    if [[ " $* " == *" --csv "* ]]; then
        grep -Eq "^fastmsg,$n,([0-9]+,){15}[0-9]+(,[0-9]+\.[0-9]){3},OK$" <<<"$out" ||
            fail "no CSV row with OK"
        [ "$(wc -l <<<"$out")" -eq 2 ] || fail "expected a CSV header and one row"
    else
        grep -Eq "^ +[0-9]+ +$n( +[0-9]+){7}( +[0-9]+\.[0-9]){3} +OK$" <<<"$out" ||
            fail "no table row with OK"
        grep -q "^# checksum OK: 0 of" <<<"$out" || fail "no 'checksum OK'"
        w=$(arg --workers "$@")
        [ "${w:-0}" -eq 0 ] || grep -q "^# dag (.*, $w workers$" <<<"$out" ||
            fail "the header names no $w workers"
    fi
    ! grep -q "^dag:" "$errf" || fail "a rank complained" ;;
corrupt)
    [ $rc -ne 0 ] || fail "a corrupted output exited 0"
    grep -q "^# checksum FAIL" <<<"$out" || fail "no 'checksum FAIL'"
    grep -q "differed from the reference" "$errf" || fail "no rank named its failures" ;;
die)
    t=$(arg --die-at "$@")
    victim=$((t % n))
    [ $rc -ne 0 ] || fail "exit status 0 although rank $victim died"
    grep -q "^dag: rank $victim dies (SIGKILL) at task $t$" <<<"$out" ||
        fail "rank $victim never got to task $t"
    all="$out"$'\n'"$(cat "$errf")"
    grep -Eq "fastmsg\[[0-9]+\]: rank $victim \(pid [0-9]+\) has died|^fastmsg-run: rank $victim \(pid [0-9]+\) killed by signal 9|process rank $victim with PID [0-9]+ on node .* exited on signal 9" <<<"$all" ||
        fail "nothing names rank $victim as dead" ;;
*) echo "unknown expectation $expect"; exit 2 ;;
esac
grep -v "^dag: rank .* dies" <<<"$out" | tail -2
echo "PASS: dag $expect, $launcher -n $n over $provider ($secs s)"
