#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# latency-rounds.sh: small-message one-way latency of fastmsg (sm), Open MPI (vader) and MPICH
# (UCX sm) in rounds of three launches a few seconds apart, the ratio taken per round. On a
# shared VM whose two vCPUs land close together or far apart from one launch to the next
# (two latency modes, 2.5x apart), ratios between far-apart launches mean nothing; ratios
# within a round do, and their median over many rounds is the figure. Rounds where fastmsg
# and Open MPI landed in different modes are shown and left out of the per-mode medians.
#
# usage: bench/latency-rounds.sh [-n ROUNDS] [--size BYTES] [--build DIR]
set -euo pipefail

rounds=20 size=8
build=${BUILD_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}
while [ $# -gt 0 ]; do
  case $1 in
    -n) rounds=$2; shift ;;
    --size) size=$2; shift ;;
    --build) build=$2; shift ;;
    -h | --help) sed -n '3,11p' "$0"; exit 0 ;;
    *) echo "latency-rounds.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

args=(--min "$size" --max "$size" --latency-only -r 7 -i 50000 --csv)
fm=("$build/runtime/launcher/fastmsg-run" -n 2 "$build/bench/fastmsg-bench-pingpong")
ompi=(mpirun.openmpi --bind-to none --mca pml ob1 --mca btl "self,vader"
      --mca oob_tcp_if_include lo -n 2 "$build/bench/mpi/fastmsg-bench-mpi-pingpong-openmpi")
mpich=(mpiexec.mpich -iface lo -n 2 "$build/bench/mpi/fastmsg-bench-mpi-pingpong-mpich")
for b in "${fm[3]}" "${ompi[-1]}" "${mpich[-1]}"; do
  [ -x "$b" ] || { echo "latency-rounds.sh: $b not built" >&2; exit 1; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# One-way latency (us): field 5 of the last CSV row.
lat() { "$@" "${args[@]}" 2>/dev/null | grep -v '^#' | tail -1 | cut -d, -f5; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "# $size B one-way latency (us), $rounds rounds: fastmsg (sm), Open MPI (vader), MPICH (UCX sm)"
echo "# round fastmsg openmpi mpich fm/openmpi fm/mpich"
for i in $(seq "$rounds"); do
  f=$(FM_PROVIDER=sm lat "${fm[@]}")
  o=$(lat "${ompi[@]}")
  m=$(UCX_TLS=self,sm lat "${mpich[@]}")
  echo "$i $f $o $m" | tee -a "$out" |
    awk '{printf "%s %s %s %s %.3f %.3f\n", $1, $2, $3, $4, $2 / $3, $2 / $4}'
done
python3 - "$out" <<'EOF'
import statistics as st, sys
rows = [[float(x) for x in l.split()[1:]] for l in open(sys.argv[1])]
med = lambda xs: st.median(xs) if xs else float('nan')
print("# per-round medians: fastmsg/Open MPI %.3f, fastmsg/MPICH %.3f (%d rounds)"
      % (med([f / o for f, o, m in rows]), med([f / m for f, o, m in rows]), len(rows)))
# A mode is a launch's distance between the two vCPUs: split at the gap in fastmsg's figures.
cut = 2 * min(r[0] for r in rows)
for name, keep in (("near", lambda x: x < cut), ("far", lambda x: x >= cut)):
    rs = [r for r in rows if keep(r[0]) and keep(r[1])]
    if rs:
        print("# %s launches (%d rounds): fastmsg %.3f, Open MPI %.3f, MPICH %.3f us; "
              "fastmsg/Open MPI %.3f (%.3f-%.3f)"
              % (name, len(rs), med([r[0] for r in rs]), med([r[1] for r in rs]),
                 med([r[2] for r in rs]), med([r[0] / r[1] for r in rs]),
                 min(r[0] / r[1] for r in rs), max(r[0] / r[1] for r in rs)))
EOF
