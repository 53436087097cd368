#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# valgrind memcheck: every unit test, then fastmsg programs under fastmsg-run, each rank under
# valgrind: any memory error or definite leak (fastmsg must free everything at fm_finalize)
# fails. Uses an existing build if BUILD_DIR names one (tests/run.sh passes its own), else
# sets up build-vg/. VG_JOBS=REGEX runs only the whole jobs whose "TOOL PROGRAM ARGS" match
# (TOOL memcheck or helgrind), and no unit tests: e.g. VG_JOBS='helgrind .*dag'.
# usage: tests/valgrind.sh [meson test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-vg}
if [ ! -d "$build" ]; then
  meson setup "$build" -Dwerror=true >/dev/null
fi
meson compile -C "$build" >"$build/compile.log" 2>&1 || { cat "$build/compile.log"; exit 1; }

vg=(valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite
    --show-leak-kinds=definite --num-callers=30 --quiet)
status=0 tool=memcheck only=${VG_JOBS:-}
# valgrind runs the tests 10-50x slower: meson's time limits scale with it.
if [ -z "$only" ]; then
  meson test -C "$build" --suite unit --print-errorlogs --num-processes 2 \
    --timeout-multiplier 4 --wrapper "${vg[*]}" "$@" || status=$?
fi

# Whole jobs: every rank under valgrind. A rank with an error or a leak exits 1 and
# fastmsg-run fails the job.
run=$build/runtime/launcher/fastmsg-run
job() { # PROVIDER N PROGRAM PATTERN COUNT [ARGS]: COUNT output lines must match PATTERN
  local provider=$1 n=$2 prog=$3 pattern=$4 want=$5 out rc=0
  shift 5
  [[ $prog == */* ]] || prog=examples/$prog
  [[ -z $only || "$tool $prog $*" =~ $only ]] || return 0
  out=$(FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=120 \
        timeout -k 5 300 "$run" -n "$n" "${vg[@]}" "$build/$prog" "$@" 2>&1) || rc=$?
  local got
  got=$(grep -c -- "$pattern" <<<"$out" || true)
  if [ $rc -ne 0 ] || [ "$got" -lt "$want" ]; then
    echo "$out"
    echo "valgrind $tool: FAIL: $prog $*, $n ranks over $provider (exit $rc)"
    status=1
  else
    echo "valgrind $tool: ok: $prog $*, $n ranks over $provider"
  fi
}
job shm 2 hello "greetings ok" 2
job tcp 2 hello "greetings ok" 2
job shm 3 multicast "B, correct" 2
# Requests: every one freed, whether tested, waited, detached or freed early, and the streams
# of those finalize finds unfinished.
req=tests/integration/stream/stream_requests
job shm 3 $req "PASS handler" 3 handler
job tcp 2 $req "PASS api" 2 api
# The DAG example: requests with callbacks, multicasts, whole-message handlers, a small DAG;
# then with worker threads starting the requests (the pool's memory freed too).
dag_small=(--tasks 60 --width 5 --degree 4 --bytes 64-8K --compute-us 0 -r 1 --warmup 1)
job shm 3 dag "^# checksum OK" 1 "${dag_small[@]}"
job shm 3 dag "^# checksum OK" 1 "${dag_small[@]}" --workers 2

# Worker threads starting requests while the main thread drives progress, under helgrind
# (libfabric's own locks suppressed: tests/helgrind.supp).
vg=(valgrind --tool=helgrind --suppressions=tests/helgrind.supp --error-exitcode=1 --quiet)
tool=helgrind
thr=tests/integration/stream/stream_threads
job shm 2 $thr "PASS threads" 2 --workers 2 --count 6
job tcp 2 $thr "PASS threads" 2 --workers 2 --count 6
# The DAG example as a task runtime: worker threads run the tasks (reading the inputs the
# main thread's handler wrote) and start their sends; the main thread only drives progress.
job shm 3 dag "^# checksum OK" 1 "${dag_small[@]}" --workers 2
job tcp 2 dag "^# checksum OK" 1 "${dag_small[@]}" --workers 2
exit $status
