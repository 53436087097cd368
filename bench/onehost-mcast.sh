#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Multicast on one host, in one run: fastmsg over sm with shared payloads read in place (the
# defaults: FM_SM_SHARE=1 FM_SM_LEND=1; series fastmsg), shared but copied into receive buffers
# (FM_SM_LEND=0; fastmsg-nolend) and not shared (FM_SM_SHARE=0, a copy per member;
# fastmsg-noshare), beside Open MPI's MPI_Bcast over vader with
# mpi_yield_when_idle (ranks > cores, so idle ranks must give the core up) and, unless
# --no-plain, without it. Launches alternate between the series; each launch reports the
# median of its repeats, and the table the median (min-max) over the launches, in us.
#
#   bash bench/onehost-mcast.sh [--ranks "4 8 16"] [--sizes 8,64K,1M] [--trees auto,flat]
#        [-l LAUNCHES] [-r REPEATS] [--no-plain] [--build DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build ranks="4 8 16" sizes=8,64K,1M trees=auto,flat,binomial launches=3
repeats=5 plain=1
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --trees) trees=$2; shift 2 ;;
    -l) launches=$2; shift 2 ;;
    -r) repeats=$2; shift 2 ;;
    --no-plain) plain=0; shift ;;
    --build) build=$2; shift 2 ;;
    *) echo "onehost-mcast: unknown argument $1" >&2; exit 2 ;;
  esac
done
run=$build/runtime/launcher/fastmsg-run
fm=$build/bench/fastmsg-bench-mcast
ompi=$build/bench/mpi/fastmsg-bench-mpi-bcast-openmpi
for f in "$run" "$fm"; do
  [ -x "$f" ] || { echo "onehost-mcast: $f is not built (meson compile -C $build)" >&2; exit 1; }
done
have_ompi=0
if [ -x "$ompi" ] && command -v mpirun.openmpi >/dev/null; then have_ompi=1; fi
[ $have_ompi = 1 ] || echo "# no Open MPI (mpirun.openmpi and $ompi): fastmsg only"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FM_TIMEOUT=120
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# "series tree/resolved size us" lines from one benchmark's output.
rows() { grep -v '^#' | awk -v s="$1" 'NF >= 5 { print s, $1 "/" $2, $4, $5 }'; }

for n in $ranks; do
  for l in $(seq "$launches"); do
    echo "# $n ranks, launch $l of $launches" >&2
    for series in fastmsg:1:1 fastmsg-nolend:1:0 fastmsg-noshare:0:0; do
      IFS=: read -r name share lend <<<"$series"
      FM_PROVIDER=sm FM_SM_SHARE=$share FM_SM_LEND=$lend timeout 900 "$run" -n "$n" "$fm" \
        --trees "$trees" --sizes "$sizes" --common-clock -r "$repeats" | rows "$name" >>"$out/$n"
    done
    [ $have_ompi = 1 ] || continue
    yields="1"
    [ $plain = 1 ] && yields="1 0"
    for y in $yields; do
      timeout 900 mpirun.openmpi --oversubscribe --bind-to none --mca pml ob1 \
        --mca btl self,vader --mca oob_tcp_if_include lo --mca mpi_yield_when_idle "$y" \
        -n "$n" "$ompi" --sizes "$sizes" --common-clock -r "$repeats" |
        rows "openmpi-yield$y" >>"$out/$n"
    done
  done
done

echo "ranks series tree/resolved size median_us min_us max_us launches"
for n in $ranks; do
  # Per series, tree and size: the median of the launches' figures (auto's resolved tree
  # may change between launches: the last one is named).
  awk -v n="$n" '{ k = $1 " " $3 " " substr($2, 1, index($2, "/") - 1); v[k] = v[k] " " $4;
                   name[k] = $2 }
    END { for (k in v) { split(substr(v[k], 2), a, " "); m = length(a);
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2;
            split(k, f, " "); print n, f[1], name[k], f[2], med, a[1], a[m], m } }' "$out/$n" |
    sort -k4,4n -k2,2 -k3,3
done
