#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install everything fastmsg's build, tests and benchmarks need on Debian 12.
# Idempotent; quiet and quick when everything is already there. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential meson ninja-build pkg-config            # build
  libfabric-dev libfabric-bin                             # transport, fi_pingpong, fi_info
  libev-dev libcmocka-dev libjemalloc-dev libpmix-dev     # libraries
  openmpi-bin libopenmpi-dev mpich libmpich-dev           # launchers and MPI comparisons
  slurmctld slurmd slurm-client                           # srun tests (mpi/pmix needs libpmix-dev)
  python3-matplotlib                                      # bench/compare.py's plots
  iproute2 procps psmisc python3                          # test scripts
  clang libclang-rt-14-dev                                # fuzzers: libFuzzer is in libclang-rt,
                                                          # which clang only recommends
  valgrind                                                # memcheck (pulls libc6-dbg)
  libsimgrid-dev bc                                       # bench/sim and its tests (smpicc)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-deps: done"
