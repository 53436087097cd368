#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole test suite with AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer,
# gcc, in build-asan/. Only fastmsg's binaries are instrumented: mpirun, mpiexec, srun and
# python start them but load no instrumented code, so they need nothing special.
# usage: tests/sanitize.sh [meson test arguments, e.g. --suite unit]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ASAN_BUILD_DIR:-build-asan}
opts=("-Db_sanitize=address,undefined" -Db_lundef=false -Dwerror=true)
if [ -d "$build" ]; then
  meson setup --reconfigure "$build" "${opts[@]}" >/dev/null
else
  CC=${CC:-gcc} meson setup "$build" "${opts[@]}" >/dev/null
fi
meson compile -C "$build" >"$build/compile.log" 2>&1 || { cat "$build/compile.log"; exit 1; }

# verify_asan_link_order=0: the install test builds an uninstrumented program against the
# installed (instrumented) libfastmsg.so, so libasan is loaded after libc there; everywhere
# else the executables themselves are instrumented and load it first anyway.
asan=detect_leaks=1:verify_asan_link_order=0:strict_string_checks=1
# Leak stacks are recorded with the fast unwinder, which stops at the first frame of a library
# built without frame pointers (libpmix, MPI's plugins). bench/mpi's programs need the full
# stack for tests/lsan.supp to recognise MPI's own leaks: those (the executables that link an
# MPI library) get the slow unwinder, through a per-executable options file (%b = its name).
# Everything else keeps the fast one: the slow one doubles the suite's time.
optdir=$(mktemp -d)
trap 'rm -rf "$optdir"' EXIT
while IFS= read -r exe; do
  if readelf -d "$exe" 2>/dev/null | grep -qE 'NEEDED.*\[lib(mpi|mpich)\.so'; then
    echo "fast_unwind_on_malloc=0" >"$optdir/$(basename "$exe")"
  fi
done < <(find "$build" -type f -perm -u+x ! -name '*.so*' ! -path '*/meson-*' ! -path '*.p/*')
export ASAN_OPTIONS=$asan:include_if_exists=$optdir/%b
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Every test runs but those of two suites:
# - `uninstrumented`: they run none of this build's code (the sim and mpi tests build fastmsg
#   again with SimGrid's smpicc or an MPI's mpicc, without the sanitizers; the layer checks read
#   the build's files; the torus routes test and links.py's run no fastmsg program), so here
#   they would repeat the first step's runs exactly (about 6 minutes);
# - `long`: the emulated cluster's racks, ipmc, hybrid and torus jobs and the 128- and 256-rank
#   jobs, 13 minutes under ASan on 2 cores, a third of the step, which kept the whole CI near
#   its 90-minute limit. Their providers' code still runs here in the unit tests
#   (test_hybrid_transport, test_ipmc_wire), cluster-dgram (datagrams within and between
#   hosts) and cluster-plain, and the fuzzers take ipmc's wire format; the two-stage multicast
#   across hosts and the hybrid provider between namespaces run under ASan only when asked:
#   `bash tests/sanitize.sh --suite long`.
# Processes are 2-3x slower under ASan; the tests' own time limits (FM_TIMEOUT, the scripts'
# `timeout`s) leave room for that, and meson's are doubled. Arguments replace the exclusions.
status=0
[ $# -gt 0 ] || set -- --no-suite uninstrumented --no-suite long
meson test -C "$build" --print-errorlogs --num-processes 2 --timeout-multiplier 2 "$@" ||
  status=$?
# A memory or UB error in a process whose failure a test expects (a rank of a job a test
# kills, say) would not fail that test: look for reports in every log as well. Leaks are left
# out here: a process that fails on purpose exits from the middle of its work.
if grep -qE "ERROR: AddressSanitizer|runtime error:" "$build/meson-logs/testlog.txt"; then
  echo "sanitize: sanitizer reports in $build/meson-logs/testlog.txt:"
  grep -nE "ERROR: AddressSanitizer|runtime error:" "$build/meson-logs/testlog.txt" | head -n 20
  status=1
fi
exit $status
