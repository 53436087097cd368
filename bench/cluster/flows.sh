#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Simultaneous TCP flows between hosts of a cluster that is up (cluster.sh up), each SRC:DST
# a flow from host SRC to host DST (host numbers), all started at the same moment (flow.py);
# prints each flow's rate as its receiver measured it, then, for a cluster with racks, how
# many bytes each uplink carried meanwhile, for a torus each link that sent more than 64 KiB
# (cluster.sh counters, after minus before; links.py).
#
#   flows.sh [--prefix P] [--bytes B] [--port PORT] SRC:DST [SRC:DST...]
#
# Every DST must differ (one receiver per host and port). Needs root; exits 77 without.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=fmh bytes=8M port=5001
pairs=()

fl_fail() {
    echo "flows.sh: $*" >&2
    exit 1
}

while (($#)); do
    case $1 in
    --prefix | --bytes | --port)
        (($# >= 2)) || fl_fail "$1 needs a value"
        case $1 in
        --prefix) prefix=$2 ;;
        --bytes) bytes=$2 ;;
        --port) port=$2 ;;
        esac
        shift 2
        ;;
    -h | --help)
        sed -n '3,9p' "$0"
        exit 0
        ;;
    [0-9]*:[0-9]*)
        [[ $1 =~ ^[0-9]+:[0-9]+$ ]] || fl_fail "bad flow '$1' (SRC:DST, host numbers)"
        pairs+=("$1")
        shift
        ;;
    *) fl_fail "unknown argument '$1' (see flows.sh --help)" ;;
    esac
done
((${#pairs[@]})) || fl_fail "no flows given (SRC:DST ...)"
[ "$(id -u)" -eq 0 ] || {
    echo "flows.sh: skipped: entering the hosts needs root" >&2
    exit 77
}
command -v python3 >/dev/null || {
    echo "flows.sh: skipped: no python3" >&2
    exit 77
}
dsts=$(printf '%s\n' "${pairs[@]}" | cut -d: -f2 | sort | uniq -d)
[ -z "$dsts" ] || fl_fail "host $dsts receives two flows (one receiver per host)"
for p in "${pairs[@]}"; do
    for k in ${p/:/ }; do
        [ -e "/run/netns/$prefix$k" ] || fl_fail "no host $prefix$k (cluster.sh up?)"
    done
done

tmp=$(mktemp -d)
receivers=()
fl_cleanup() {
    local pid
    for pid in "${receivers[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    rm -rf "$tmp"
}
trap fl_cleanup EXIT

# The cluster's link counters, header included (it tells racks from a torus), or nothing
# for a star.
counters() {
    bash "$here/cluster.sh" counters --prefix "$prefix" 2>/dev/null || true
}

for p in "${pairs[@]}"; do
    ip netns exec "$prefix${p#*:}" python3 "$here/flow.py" recv --port "$port" --timeout 120 \
        >"$tmp/recv-$p" &
    receivers+=($!)
done
before=$(counters)
# Far enough ahead that every sender has started and connected.
at=$(python3 -c 'import time; print(f"{time.time() + 0.5:.3f}")')
senders=()
for p in "${pairs[@]}"; do
    ip netns exec "$prefix${p%:*}" python3 "$here/flow.py" send "$prefix${p#*:}" \
        --port "$port" --bytes "$bytes" --at "$at" --timeout 120 >/dev/null &
    senders+=($!)
done
rc=0
for pid in "${senders[@]}" "${receivers[@]}"; do
    wait "$pid" || rc=1
done
receivers=()
((rc == 0)) || fl_fail "a flow failed"
after=$(counters)

for p in "${pairs[@]}"; do
    awk -v f="$prefix${p%:*} -> $prefix${p#*:}" '$1 == "flow" {
        printf "%-16s %10d bytes %8.4f s %8.1f Mbit/s\n", f, $6, $8, $10 }' "$tmp/recv-$p"
done
if [[ $before == "# host x y dev"* ]]; then
    echo "torus links that sent more than 64 KiB during the flows (host x y link bytes):"
    python3 "$here/links.py" --min-bytes 65536 <(echo "$before") <(echo "$after") |
        awk '$NF == "used" { printf "  %s %s %s %s %d\n", $1, $2, $3, $4, $5 }'
elif [ -n "$before" ]; then
    echo "uplink bytes during the flows:"
    awk '/^#/ { next } NR == FNR { up[$1] = $2; down[$1] = $3; next }
        { printf "  rack %d  up %d  down %d\n", $1, $2 - up[$1], $3 - down[$1] }' \
        <(echo "$before") <(echo "$after")
fi
