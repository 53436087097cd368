#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install dependencies, build with warnings as errors and run the whole test suite; then the
# robustness steps: the suite again under ASan+UBSan (tests/sanitize.sh; all but the suites
# uninstrumented and long, which it names), the unit tests and whole jobs under valgrind
# (tests/valgrind.sh), and each fuzzer for a short bounded time (tests/fuzz/run.sh). Every
# step runs; any step failing fails the script.
# A skipped test fails its step too: a test skips only without something setup-deps.sh installs
# or this command's machine has (MPI, Slurm, fi_pingpong, matplotlib; root and a kernel with
# namespaces for the emulated cluster), so a skip here is a test that did not run.
# FM_TESTS_ALLOW_SKIP=1 lets skips pass (they are still listed), for a run on a machine left
# without some of those on purpose.
# usage: tests/run.sh [meson test arguments for the first step]
#        FUZZ_SECONDS (default 15) sets each fuzzer's time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup-deps.sh
build=${BUILD_DIR:-build}

# verdict STEP LOG: the closing line of one meson test log and every skipped test with the
# last line it printed (its reason); fails on a skip unless FM_TESTS_ALLOW_SKIP=1.
verdict() {
  python3 - "$1" "$2" "${FM_TESTS_ALLOW_SKIP:-0}" <<'PY'
import json, sys
step, log, allow = sys.argv[1:4]
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
skipped = []
for line in open(log):
    t = json.loads(line)
    r = t["result"]
    key = "OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"
    counts[key] += 1
    if key == "SKIP":
        said = [l for l in (t.get("stdout") or "").splitlines() if l.strip()]
        skipped.append(f"{t['name']}: {said[-1] if said else '(no reason printed)'}")
print(f"{step}: {counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
for s in skipped:
    print(f"{step}: skipped {s}")
if skipped and allow != "1":
    print(f"{step}: FAILED: a skipped test did not run. Install what it needs "
          "(tests/setup-deps.sh), or set FM_TESTS_ALLOW_SKIP=1 to accept skips.")
    sys.exit(1)
PY
}

# set -e is off inside a step (step runs it as `"$@" || rc=$?`): return on failure explicitly.
suite() {
  if [ -d "$build" ]; then
    meson setup --reconfigure "$build" -Dwerror=true >/dev/null || return 1
  else
    meson setup "$build" -Dwerror=true >/dev/null || return 1
  fi
  meson compile -C "$build" || return 1
  local status=0
  meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || status=$?
  verdict suite "$build/meson-logs/testlog.json" || status=1
  return "$status"
}

asan() {
  local status=0
  bash tests/sanitize.sh || status=$?
  if [ -f build-asan/meson-logs/testlog.json ]; then
    verdict asan build-asan/meson-logs/testlog.json || status=1
  fi
  return "$status"
}

# valgrind reuses the first step's build (no instrumentation needed).
valgrind_step() {
  local status=0
  BUILD_DIR=$build bash tests/valgrind.sh || status=$?
  # meson names a log after the --wrapper it ran under
  verdict valgrind "$build/meson-logs/testlog-valgrind.json" || status=1
  return "$status"
}

fuzz() { bash tests/fuzz/run.sh "${FUZZ_SECONDS:-15}"; }

summary=()
failed=0
step() { # NAME FUNCTION [ARGS]: run one step, time it, record the outcome
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "=== $name"
  "$@" || rc=$?
  local took=$((SECONDS - t0))
  local result="passed"
  [ $rc -eq 0 ] || { result="FAILED"; failed=1; }
  echo "=== $name $result in ${took}s"
  summary+=("$name $result (${took}s)")
}

step suite suite "$@"
step asan+ubsan asan
step valgrind valgrind_step
step fuzz fuzz

line=$(printf '%s, ' "${summary[@]}")
echo "steps: ${line%, }"
exit $failed
