#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg across an emulated 4-host cluster (bench/cluster): each rank in its own network
# namespace, started by fastmsg-run through netns-agent, FM_PROVIDER=tcp over fm0.
#   plain:  every rank on its own host; hello; multicasts of every builder, every byte checked
#           on every member; every TCP connection seen is between 198.18 addresses
#   shaped: links shaped to 1gbit (tbf); multicasts up to 16 MiB; no qdisc drops
# Afterwards nothing of the cluster may be left. Skips (77) where namespaces cannot be made.
#
# usage: run.sh plain|shaped CLUSTER_SH FASTMSG_RUN HELLO MCAST_CHECK
#        run.sh --inside plain|shaped FASTMSG_RUN HELLO MCAST_CHECK   (under cluster.sh run)
set -euo pipefail

readonly N=4
here=$(cd "$(dirname "$0")" && pwd)

fail() {
    echo "FAIL: $*"
    exit 1
}

# One fastmsg-run job launched in host 0, every rank through netns-agent on its own host.
# Prints the output and leaves it in $out; fails the test if the job fails.
job() {
    local secs=$1 rc=0
    shift
    out=$(timeout -k 5 "$secs" "$CLUSTER_AGENT" "${CLUSTER_PREFIX}0" "$fmrun" -n "$N" \
        --agent "$CLUSTER_AGENT" --hosts "$CLUSTER_HOSTS" --addr "$CLUSTER_ADDR0" "$@" 2>&1) ||
        rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fail "job exited $rc: ${*##*/}"
}

expect_count() {
    local want=$1 pattern=$2 text=$3 got
    got=$(grep -cE "$pattern" <<<"$text" || true)
    [ "$got" -eq "$want" ] || fail "$got lines match '$pattern', want $want"
}

# TCP endpoints seen in every host while the jobs run, until killed.
sample_connections() {
    local k
    while :; do
        for ((k = 0; k < N; k++)); do
            ip netns exec "$CLUSTER_PREFIX$k" ss -tnH 2>/dev/null || true
        done
        sleep 0.3
    done
}

inside_plain() {
    local k addr host bad sampler
    job 60 bash "$here/where.sh" "$hello"
    for ((k = 0; k < N; k++)); do
        addr=$("$cluster" addr "$k")
        host=$CLUSTER_PREFIX$k
        expect_count 1 "^where: rank $k host $host netns $host fm0 ${addr//./\\.}/15\$" "$out"
    done
    expect_count "$N" "greetings ok" "$out"

    sample_connections >"$tmp/ss" &
    sampler=$!
    job 120 "$mcast" --trees "$every_tree" --sizes 0,1,P+1,1M+7
    expect_count "$N" "PASS" "$out"
    job 120 "$mcast" --how multi --trees flat --sizes 0,1,P+1,1M+7
    expect_count "$N" "PASS" "$out"
    kill "$sampler"
    wait "$sampler" 2>/dev/null || true

    echo "TCP endpoints seen (address, times): $(grep -oE '([0-9]+\.){3}[0-9]+' "$tmp/ss" |
        sort | uniq -c | awk '{printf " %s %s", $2, $1}')"
    bad=$(grep -oE '([0-9]+\.){3}[0-9]+' "$tmp/ss" | grep -v '^198\.1[89]\.' | sort -u || true)
    [ -z "$bad" ] || fail "connections to addresses outside the cluster: $bad"
}

# Queue statistics of every shaped device: each host's fm0 and the switch's ports.
qdisc_stats() {
    local k
    tc -s -n "${CLUSTER_PREFIX}sw" qdisc show
    for ((k = 0; k < N; k++)); do
        tc -s -n "$CLUSTER_PREFIX$k" qdisc show dev fm0
    done
}

inside_shaped() {
    local k stats
    for ((k = 0; k < N; k++)); do
        tc -n "$CLUSTER_PREFIX$k" qdisc show dev fm0 | grep -q "tbf.*rate 1Gbit" ||
            fail "host $k's fm0 is not shaped: $(tc -n "$CLUSTER_PREFIX$k" qdisc show dev fm0)"
    done
    job 150 "$mcast" --roots 0 --trees flat,binomial,auto --sizes 1,1M+7,16M
    expect_count "$N" "PASS" "$out"
    stats=$(qdisc_stats)
    echo "$stats"
    ! grep -qE "dropped [1-9]" <<<"$stats" || fail "a shaping qdisc dropped packets"
}

# The root namespace's interfaces, by name.
root_links() {
    ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort
}

outside() {
    local mode=$1 prefix rc=0 before after new shape=()
    [ "$(id -u)" -eq 0 ] || {
        echo "SKIP: network namespaces need root"
        exit 77
    }
    command -v ip >/dev/null || {
        echo "SKIP: no ip command (iproute2)"
        exit 77
    }
    # Unique, so that it cannot meet another cluster; not ending with a digit (cluster.sh).
    prefix=fmt$$x
    [ "$mode" != shaped ] || shape=(--rate 1gbit)
    before=$(root_links)
    timeout -k 10 240 bash "$cluster" run "$N" "${shape[@]}" --prefix "$prefix" -- \
        bash "$0" --inside "$mode" "$fmrun" "$hello" "$mcast" || rc=$?
    [ "$rc" -ne 77 ] || exit 77

    local left=
    left=$(ip netns list | awk '{print $1}' | grep -E "^$prefix" || true)
    [ ! -d "/etc/netns/${prefix}0" ] || left+=" /etc/netns/${prefix}0"
    after=$(root_links)
    new=$(comm -13 <(echo "$before") <(echo "$after") | grep -E '^(fm0|br0|p[0-9]+)$' || true)
    bash "$cluster" down --prefix "$prefix" || true
    [ -z "$left" ] || fail "left behind after the run: $left"
    [ -z "$new" ] || fail "interfaces added to the root namespace: $new"
    [ "$rc" -eq 0 ] || fail "cluster run exited $rc"
    echo "PASS: $mode"
}

every_tree=flat,chain,binomial,kbinomial,kbinomial:2,postal,postal:3,auto
export FM_PROVIDER=tcp FM_IFACE=fm0 FM_TIMEOUT=60
if [ "${1:-}" = --inside ]; then
    [ $# -eq 5 ] || fail "usage: run.sh --inside MODE FASTMSG_RUN HELLO MCAST_CHECK"
    mode=$2 fmrun=$3 hello=$4 mcast=$5
    cluster=$(dirname "$CLUSTER_AGENT")/cluster.sh
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    case $mode in
    plain) inside_plain ;;
    shaped) inside_shaped ;;
    *) fail "unknown mode $mode" ;;
    esac
else
    [ $# -eq 5 ] || fail "usage: run.sh plain|shaped CLUSTER_SH FASTMSG_RUN HELLO MCAST_CHECK"
    cluster=$2 fmrun=$3 hello=$4 mcast=$5
    outside "$1"
fi
