#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install dependencies, build with warnings as errors and run the whole test suite; then the
# robustness steps: the whole suite again under ASan+UBSan (tests/sanitize.sh), the unit tests
# and whole jobs under valgrind (tests/valgrind.sh), and each fuzzer for a short bounded time
# (tests/fuzz/run.sh). Every step runs; any step failing fails the script.
# usage: tests/run.sh [meson test arguments for the first step]
#        FUZZ_SECONDS (default 15) sets each fuzzer's time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup-deps.sh
build=${BUILD_DIR:-build}

counts() { # the plain closing line of one meson test log
  python3 - "$1" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    key = "OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"
    counts[key] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
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
  echo "suite: $(counts "$build/meson-logs/testlog.json")"
  return "$status"
}

asan() {
  local status=0
  bash tests/sanitize.sh || status=$?
  [ -f build-asan/meson-logs/testlog.json ] &&
    echo "asan: $(counts build-asan/meson-logs/testlog.json)"
  return "$status"
}

# valgrind reuses the first step's build (no instrumentation needed).
valgrind_step() { BUILD_DIR=$build bash tests/valgrind.sh; }

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
