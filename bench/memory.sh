#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Memory per process against the job's size: fastmsg-bench-memory (bench/mem_probe.c) under
# fastmsg-run at each size, and per provider and size the medians over ranks of what each
# rank's context holds right after fm_init (fm_stats.mem_*: packet buffers for receive, send,
# copy, those registered, their peak) and of the process's VmRSS before and after fm_init and
# its VmHWM, then the ratio of the largest size to the smallest.
#
# usage: bench/memory.sh [--ranks "8 256"] [--providers "tcp default"] [--build DIR]
#                        [--timeout SECONDS]
#   --providers  tcp (FM_PROVIDER=tcp, FI_TCP_IFACE=lo), shm, or default (FM_PROVIDER unset:
#                shm up to 256 ranks on one host, tcp on lo beyond)
#   --timeout    seconds one job may take (default 900); FM_TIMEOUT is raised to match unless
#                set (256 ranks over tcp spend minutes wiring up on 2 cores)
# BENCH_OUT=DIR also keeps every job's output there. Needs a built tree (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ranks="8 256" providers="tcp default" build="${BUILD_DIR:-$root/build}" limit=900
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --providers) providers=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        *) sed -n '2,15p' "$0" >&2; exit 2 ;;
    esac
done
for p in $providers; do
    case $p in
        tcp | shm | default) ;;
        *) echo "memory.sh: unknown provider '$p' (tcp, shm or default)" >&2; exit 2 ;;
    esac
done
run="$build/runtime/launcher/fastmsg-run" probe="$build/bench/fastmsg-bench-memory"
[ -x "$run" ] && [ -x "$probe" ] || { echo "memory.sh: build $build first (ninja -C $build)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/fastmsg-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT
export FM_TIMEOUT=${FM_TIMEOUT:-$limit}

# Columns: the probe's fields, bytes and KiB, shown in MiB.
fields="recv send copy registered peak rss0 rss hwm"

# once PROVIDER N: one job; prints the medians over ranks (MiB, in the order of $fields) and
# the job's seconds, or "failed" with the job's last lines on stderr.
once() {
    local p=$1 n=$2 out="$work/out" start secs
    local env=(env -u FM_PROVIDER)
    case $p in
        tcp) env=(env FM_PROVIDER=tcp FI_TCP_IFACE=lo) ;;
        shm) env=(env FM_PROVIDER=shm) ;;
    esac
    start=$(date +%s%N)
    if ! timeout -k 5 "$limit" "${env[@]}" "$run" -n "$n" "$probe" >"$out" 2>"$work/err" ||
        [ "$(grep -c '^memprobe rank=' "$out")" -ne "$n" ]; then
        echo failed
        tail -5 "$work/err" | sed "s/^/memory.sh: $p n=$n: /" >&2
        return
    fi
    secs=$(( ($(date +%s%N) - start) / 1000000 ))
    [ -z "${BENCH_OUT:-}" ] || { mkdir -p "$BENCH_OUT"; cp "$out" "$BENCH_OUT/$p-$n.out"; }
    local row=""
    for f in $fields; do
        row+=" $(grep '^memprobe rank=' "$out" | tr ' ' '\n' | sed -n "s/^$f=//p" | sort -n |
            awk -v f="$f" '{ a[NR] = $1 } END {
                m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                printf "%.4f", f ~ /^(rss0|rss|hwm)$/ ? m / 1024 : m / 1048576 }')"
    done
    echo "$row $((secs / 1000)).$((secs % 1000 / 100))"
}

echo "# fastmsg memory per process after fm_init: medians over ranks, MiB (packet buffers from"
echo "# fm_stats.mem_*; VmRSS before (rss0) and after fm_init, VmHWM); $(nproc) cores," \
    "FM_PACKET_SIZE ${FM_PACKET_SIZE:-64K}, FM_CREDITS ${FM_CREDITS:-8}"
printf '%-8s %5s' provider ranks
for f in $fields; do printf ' %10s' "$f"; done
printf ' %8s\n' seconds
for p in $providers; do
    first="" last="" nfirst="" nlast=""
    for n in $ranks; do
        r=$(once "$p" "$n")
        printf '%-8s %5s' "$p" "$n"
        if [ "$r" = failed ]; then
            printf ' %10s\n' failed
            continue
        fi
        printf ' %10.2f' ${r% *}
        printf ' %8s\n' "${r##* }"
        [ -n "$first" ] || { first=$r nfirst=$n; }
        last=$r nlast=$n
    done
    if [ -n "$first" ] && [ "$nlast" != "$nfirst" ]; then
        printf '%-8s %5s' "$p" "x"
        paste <(tr ' ' '\n' <<<"${last% *}" | sed '/^$/d') <(tr ' ' '\n' <<<"${first% *}" | sed '/^$/d') |
            awk '{ if ($2 > 0) printf " %10.2f", $1 / $2; else printf " %10s", "-" }'
        printf '   (%s ranks / %s ranks)\n' "$nlast" "$nfirst"
    fi
done
