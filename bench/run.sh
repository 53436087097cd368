#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: install dependencies, build, and run the bundled benchmarks on the embedded
# default, fastmsg-run on this host with FM_PROVIDER=sm: fastmsg-bench-pingpong between 2 ranks
# (it takes exactly 2) from 8 B to 1 MiB, and fastmsg-bench-mcast on 4 ranks with every tree and
# auto at 64 KiB and 1 MiB. Prints both tables and writes CSV and PNG plots to
# bench/results/local/ (bench/compare.py local; see bench/README.md).
#
#   BUILD_DIR=DIR       meson build directory (default build/)
#   NPROCS=N            ranks of the multicast (default 4)
#   FM_PROVIDER=shm     another provider (default sm, fastmsg's own shared memory)
#   BENCH_OUT=DIR       where the CSV and PNG files go (default bench/results/local)
#   BENCH_QUICK=1       tiny counts and one repeat: shows that it all runs, measures nothing
#   BENCH_SKIP_DEPS=1   leave out tests/setup-deps.sh (the smoke test must not call apt-get)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${BENCH_SKIP_DEPS:-0}" != 0 ] || bash tests/setup-deps.sh
build=${BUILD_DIR:-build}
[ -d "$build" ] || meson setup "$build" >/dev/null
meson compile -C "$build" >/dev/null
export FM_PROVIDER=${FM_PROVIDER:-sm}
quick=()
[ "${BENCH_QUICK:-0}" = 0 ] || quick=(--quick)
# The plots need matplotlib, which setup-deps installs for Debian's python3; a python3 earlier
# on PATH (pyenv's, a virtualenv's) may not have it.
py=python3
has_mpl() { "$1" -c 'import matplotlib' 2>/dev/null; }
if ! has_mpl python3 && has_mpl /usr/bin/python3; then py=/usr/bin/python3; fi
exec "$py" bench/compare.py local --build "$build" --ranks "${NPROCS:-4}" \
  --out "${BENCH_OUT:-bench/results/local}" "${quick[@]}"
