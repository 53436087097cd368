#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer harnesses (clang, build-fuzz/) and run each for a bounded time.
# usage: tests/fuzz/run.sh [SECONDS [TARGET...]]   (default 20 s each; targets: wire,
#        mcast_desc, pmi1, run, prefix_dests, ipmc_wire, sm_ring). New inputs go to a temporary
#        directory, never into the repository.
# A crash leaves its input under that directory (kept, path printed): fix the bug, then copy
# the input to tests/fuzz/regressions/TARGET/ so the 'fuzz' test suite replays it forever.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(wire mcast_desc pmi1 run prefix_dests ipmc_wire sm_ring)
build="build-fuzz"

# The compiler is fixed when a build directory is first set up: start over if it is not clang.
if [ -d "$build" ] && ! grep -qs "clang" "$build/meson-info/intro-compilers.json"; then
  rm -rf "$build"
fi
if [ -d "$build" ]; then
  meson setup --reconfigure "$build" -Dfuzz=true -Dwerror=true >/dev/null
else
  CC=clang meson setup "$build" -Dfuzz=true -Dwerror=true >/dev/null
fi
meson compile -C "$build" "${targets[@]/#/tests/fuzz/fuzz_}" >"$build/compile.log" 2>&1 ||
  { cat "$build/compile.log"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/fastmsg-fuzz.XXXXXX")
failed=()
summary=()
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  log="$work/$t.log"
  # The first directory receives new inputs; the repository's corpora are only read.
  # -timeout: an input takes microseconds, so 60 s is a hang, not a busy machine (whole
  # seconds of stall have been seen on 2 shared cores); -rss_limit_mb bounds memory.
  if "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=60 \
      -print_final_stats=1 -artifact_prefix="$work/$t-" \
      "$work/$t" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    summary+=("$t: ${runs:-?} runs ok")
  else
    failed+=("$t")
    summary+=("$t: FAILED")
    echo "fuzz: $t failed; the end of its log ($log):"
    tail -n 40 "$log"
    for f in "$work/$t"-*; do
      if [ -e "$f" ]; then echo "fuzz: crashing input: $f"; fi
    done
  fi
done

line=$(printf '%s; ' "${summary[@]}")
echo "fuzz (${secs} s each): ${line%; }"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: inputs and logs kept in $work"
  exit 1
fi
rm -rf "$work"
