#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The mpi provider and bootstrap over a real MPI: builds fastmsg with that MPI's compiler and
# -Dmpi=enabled into BUILD/mpi-MPI, then under its launcher (4 ranks, one host, under a
# timeout): hello (every pair of ranks) and fastmsg-bench-mcast down every tree at 8 B to
# 1 MiB, every copy checked byte by byte (the program fails on a wrong one), and that the job
# really ran over FM_PROVIDER=mpi with FM_BOOTSTRAP=mpi.
# usage: mpi_provider_test.sh openmpi|mpich BUILD_ROOT SOURCE_ROOT
set -euo pipefail
mpi=$1 build=$2 src=$3
case "$mpi" in
  openmpi) cc=mpicc.openmpi
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    launch=(mpirun.openmpi --oversubscribe --mca btl 'self,vader' --mca pml ob1
            --mca oob_tcp_if_include lo --mca mpi_yield_when_idle 1 -x FM_PROVIDER -x FM_VERBOSE -n 4) ;;
  mpich) cc=mpicc.mpich
    launch=(mpiexec.mpich -iface lo -n 4) ;;
  *) echo "usage: mpi_provider_test.sh openmpi|mpich BUILD_ROOT SOURCE_ROOT" >&2; exit 2 ;;
esac
command -v "$cc" >/dev/null || { echo "SKIP: no $cc"; exit 77; }
dir=$build/mpi-$mpi
if [ -f "$dir/build.ninja" ]; then
  meson setup --reconfigure "$dir" "$src" >/dev/null
else
  CC=$cc meson setup "$dir" "$src" -Dmpi=enabled -Dtests=false -Dpmix=disabled >/dev/null
fi
meson compile -C "$dir" hello fastmsg-bench-mcast >/dev/null
export FM_PROVIDER=mpi FM_TIMEOUT=60 UCX_TLS=self,sm

rc=0
out=$(FM_VERBOSE=1 timeout -k 5 120 "${launch[@]}" "$dir/examples/hello" 2>&1) || rc=$?
[ $rc -eq 0 ] || { echo "$out"; echo "FAIL: hello over $mpi exited $rc"; exit 1; }
[ "$(grep -c 'greetings ok' <<<"$out")" -eq 4 ] || { echo "$out"; echo "FAIL: not every rank said ok"; exit 1; }
grep -q 'bootstrap mpi' <<<"$out" && grep -q 'provider mpi (fabric MPI point-to-point)' <<<"$out" ||
  { echo "$out"; echo "FAIL: the job did not run over the mpi provider and bootstrap"; exit 1; }

trees=flat,chain,binomial,kbinomial,postal,prefix,node,auto
timeout -k 5 300 "${launch[@]}" "$dir/bench/fastmsg-bench-mcast" --trees "$trees" \
  --sizes 8,100K,1M -r 1 -i 3 --csv > "$build/mpi-$mpi.csv" || rc=$?
[ $rc -eq 0 ] || { echo "FAIL: fastmsg-bench-mcast over $mpi exited $rc"; exit 1; }
rows=$(grep -c '^mpi,4,' "$build/mpi-$mpi.csv")
[ "$rows" -eq 24 ] || { cat "$build/mpi-$mpi.csv"; echo "FAIL: $rows rows, want 24 (8 trees x 3 sizes)"; exit 1; }
# More region places than the provider posts at once (FM_MPI_MAX_POSTED, 64): 1 MiB of regions
# in 8 KiB packets is 128 places (credits enough that the core takes regions, not a buffer per
# credit per peer); the rest are posted as places take messages. A place never posted would
# keep its region from coming back, and the senders would run out of receive room.
timeout -k 5 300 "${launch[@]}" env FM_PACKET_SIZE=8K FM_CREDITS=64 FM_RECV_POOL=1M \
  "$dir/bench/fastmsg-bench-mcast" --trees flat,binomial --sizes 8,1M -r 1 -i 3 --csv \
  > "$build/mpi-$mpi-places.csv" || rc=$?
[ $rc -eq 0 ] || { echo "FAIL: fastmsg-bench-mcast over $mpi with 128 places exited $rc"; exit 1; }
rows=$(grep -c '^mpi,4,8K,64,' "$build/mpi-$mpi-places.csv")
[ "$rows" -eq 4 ] || { cat "$build/mpi-$mpi-places.csv"; echo "FAIL: $rows rows, want 4"; exit 1; }
echo "PASS: hello and every tree over FM_PROVIDER=mpi, $mpi, 4 ranks"
