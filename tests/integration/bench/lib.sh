# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the bench smoke tests: fail, a scratch directory ($tmp, removed on exit), and
# running a command under a timeout with its output kept apart.

fail() { echo "FAIL: $*"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# capture SECONDS CMD...: $out is CMD's stdout, $err its stderr, $rc its status.
capture() {
  local t=$1
  shift
  out=$(timeout -k 5 "$t" "$@" 2>"$tmp/err")
  rc=$?
  err=$(cat "$tmp/err")
}

# quiet SECONDS CMD...: the same, shown, and CMD must exit 0 with nothing on stderr.
quiet() {
  capture "$@"
  shift
  echo "$out"
  [ -z "$err" ] || echo "stderr: $err"
  [ $rc -eq 0 ] || fail "$* exited $rc"
  [ -z "$err" ] || fail "$* wrote to stderr"
}

# mpi_launch openmpi|mpich N [PROGRAM_GIVEN]: $launch, the launcher for N ranks of that MPI on this
# host (shared memory; launcher traffic on lo), or exit 77 (skip) when it or the bench/mpi
# program (PROGRAM_GIVEN empty: configure found no such MPI) is missing; exit 2 for another MPI.
mpi_launch() {
  local mpi=$1 n=$2
  [ $# -lt 3 ] || [ -n "$3" ] || { echo "no bench/mpi programs for $mpi: configure did not find its MPI"; exit 77; }
  case $mpi in
    openmpi)
      command -v mpirun.openmpi >/dev/null || { echo "no mpirun.openmpi"; exit 77; }
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      # shellcheck disable=SC2054 # self,vader is one argument
      launch=(mpirun.openmpi --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader
              --mca oob_tcp_if_include lo -n "$n") ;;
    mpich)
      command -v mpiexec.mpich >/dev/null || { echo "no mpiexec.mpich"; exit 77; }
      export UCX_TLS=self,sm # shared memory only: no network transport opened
      launch=(mpiexec.mpich -iface lo -n "$n") ;;
    *) echo "unknown MPI $mpi"; exit 2 ;;
  esac
}
