#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build fastmsg for SimGrid (bench/sim/README.md): the same sources, compiled by smpicc with
# -Dmpi=enabled into DIR (default build-sim), and the two programs bench/sim/run needs.
# usage: bench/sim/build.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-sim}
if ! command -v smpicc >/dev/null; then
  echo "bench/sim/build.sh: smpicc not found (Debian: apt-get install libsimgrid-dev;" \
       "tests/setup-deps.sh installs it)" >&2
  exit 1
fi
# meson runs the compiler while it configures: smpicc then acts as a plain compiler
# (SMPI_PRETEND_CC); ninja's compilations run without it, so the programs are SimGrid's.
# A release build: smpirun copies the program once per rank (1024 copies of a 1.9 MB debug
# build against 0.4 MB); asserts stay on.
opts=(-Dbuildtype=release -Db_ndebug=false)
if [ -f "$dir/build.ninja" ]; then
  SMPI_PRETEND_CC=1 meson setup --reconfigure "$dir" "${opts[@]}" >/dev/null
else
  SMPI_PRETEND_CC=1 CC="$PWD/bench/sim/smpicc-meson" meson setup "$dir" -Dmpi=enabled \
    -Dtests=false -Dpmix=disabled "${opts[@]}" >/dev/null
fi
meson compile -C "$dir" fastmsg-bench-mcast fastmsg-bench-mpi-bcast-smpi >/dev/null
echo "$dir"
