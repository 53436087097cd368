#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An emulated cluster on one machine: N hosts, each a network namespace with one interface
# (fm0) on a Linux bridge that lives in a switch namespace of its own, so nothing is added to
# the root namespace. Addresses come from 198.18.0.0/15 (RFC 2544, benchmarking only) and
# exist only inside these namespaces. With --racks R the hosts sit on R rack bridges joined to
# a core bridge by one uplink each, all in that switch namespace, still one L2 domain. With
# --torus AxB there is no switch: each host is joined to its four torus neighbours by veth pairs
# and routes (dimension-ordered) to every other host through them; its address sits on an
# inert fm0 (a dummy, or an ifb). See README.md beside this file.
#
#   cluster.sh up N [--racks R [--uplink-rate RATE] | --torus AxB [--unidirectional]]
#                   [--rate RATE] [--burst BYTES] [--fifo | --bulk-fifo] [--delay DELAY]
#                   [--prefix P]
#   cluster.sh down [--prefix P]
#   cluster.sh run N [the options of up] -- CMD [ARGS...]
#   cluster.sh hosts N [--prefix P]
#   cluster.sh topo N --racks R|--torus AxB [--prefix P]
#   cluster.sh counters [--prefix P]
#   cluster.sh addr K
#
# Exits 77 (the test suite's "skip") with a one-line reason where namespaces, veth pairs,
# bridges, dummy/ifb interfaces or the requested shaping cannot be had here.
set -euo pipefail

readonly CL_SKIP=77
readonly CL_MAX_HOSTS=1000
# Queue limit of every shaping qdisc: two 16 MiB bursts wait instead of being dropped.
readonly CL_QLIMIT=$((32 * 1024 * 1024))
readonly CL_NETEM_PKTS=100000
# The largest lump of TCP data a shaped device takes at once (cl_small_first).
readonly CL_GSO_MAX=16384
# A torus link's data queues (one per destination, by its address's low bits; a power of 2)
# and the bytes each sends in its turn: one full frame (cl_dest_classes).
readonly CL_DEST_QUEUES=16
readonly CL_DEST_QUANTUM=1514
# A torus host's links, in the order of their MAC addresses' last byte (cl_torus_mac).
readonly CL_TORUS_DEVS=(xp xm yp ym)
# The TTL every torus host sends with: the kernel's default 64 is less than the longest
# unidirectional path of a large torus (A + B - 2 hops).
readonly CL_TORUS_TTL=255

cl_prefix=fmh
cl_racks=
cl_uplink_rate=
cl_rate=
cl_burst=
cl_delay=
cl_n=
cl_torus=
cl_uni=
cl_fifo=
cl_bulk_fifo=
cl_shaper=
cl_ta=
cl_tb=

cl_usage() {
    cat <<'EOF'
usage: cluster.sh up N [--racks R [--uplink-rate RATE] | --torus AxB [--unidirectional]]
                       [--rate RATE] [--burst BYTES] [--fifo | --bulk-fifo] [--delay DELAY]
                       [--prefix P]
       cluster.sh down [--prefix P]
       cluster.sh run N [the options of up] -- CMD [ARGS...]
       cluster.sh hosts N [--prefix P]
       cluster.sh topo N --racks R|--torus AxB [--prefix P]
       cluster.sh counters [--prefix P]
       cluster.sh addr K
  up     create hosts P0..P{N-1} (network namespaces) on a bridge in namespace Psw;
         every host has lo and fm0 (198.18.0.K+1/15), a route for 224.0.0.0/4 via fm0,
         and /etc/netns/PK/hosts naming every host. With --racks or --torus, also writes the
         topology file /run/fastmsg-cluster-P.topo and says so
  down   remove cluster P (idempotent)
  run    up, run CMD in the root namespace (use netns-agent to enter a host), down always;
         exits with CMD's status. CMD sees CLUSTER_HOSTS, CLUSTER_N, CLUSTER_PREFIX,
         CLUSTER_ADDR0 and CLUSTER_AGENT (the netns-agent beside this script); with
         --racks also CLUSTER_RACKS and CLUSTER_TOPO (the topology file); with --torus
         CLUSTER_TORUS (AxB), CLUSTER_TOPO_SPEC (the FM_TOPOLOGY value: torus:AxB, with
         --unidirectional torus:AxB:uni) and CLUSTER_TOPO
  hosts  print P0,P1,...,P{N-1}
  topo   print an FM_TOPOLOGY file for N hosts: "PK RACK POSITION" per host in R racks,
         "PK X Y" per host of an AxB torus
  counters  racks: print each uplink's bytes and packets, up (out of the rack) and down (into
         it); torus: each link's bytes and packets from its sending end, "HOST X Y DEV ..."
  addr   print host K's address
  --racks R      R rack bridges (1..N) joined to a core bridge by one uplink each; rack k
                 holds hosts k*S..k*S+S-1 with S = ceil(N/R), so only the last rack may be
                 smaller (and none may be empty)
  --uplink-rate RATE  shape every uplink to RATE both ways (default with --rate: RATE x S / 4,
                 4:1 oversubscribed; without --rate or --uplink-rate uplinks are unshaped)
  --torus AxB    no switch: an A x B torus (A, B >= 2, N = A*B) of veth links, host k at
                 (k % A, k / A), 198.18.0.K+1/32 on fm0 (a dummy, else an ifb), no multicast,
                 dimension-ordered static routes (X first, then Y; the shorter way round, +
                 on a tie); not with --racks
  --unidirectional  with --torus: every route goes the + way (xp, yp) only
  --rate RATE    shape every host link to RATE both ways (tc units: 1gbit, 100mbit, ...)
  --burst BYTES  the host links' bucket: bytes an idle link passes at once
                 (default 2 ms of the rate, at least 3028 = two full frames; uplinks always
                 take the default of their own rate)
  --fifo         shape with one tbf FIFO per device and keep the kernel's TCP congestion
                 control, instead of small packets (acknowledgements, credits) first in an
                 htb and cubic or reno in every host
  --bulk-fifo    on a torus, queue each link's data in one FIFO, not in one queue per
                 destination taking turns (which makes flows that share a link share its rate)
  --delay DELAY  add DELAY one way at every host's egress (netem; e.g. 50us); on a torus at
                 both ends of every link, so DELAY a hop
  --prefix P     namespace names (default fmh); letters, digits, '-' and '_', starting
                 with a letter, not ending with a digit, so that two prefixes never clash
EOF
}

cl_fail() {
    echo "cluster.sh: $*" >&2
    exit 1
}

cl_skip() {
    echo "cluster.sh: skipped: $*" >&2
    exit "$CL_SKIP"
}

cl_addr() {
    local k=$(($1 + 1))
    printf '198.18.%d.%d\n' $((k >> 8)) $((k & 255))
}

# Host $2's address into variable $1, without a subshell (the torus's route loops are N^2).
cl_addr_to() {
    local k=$(($2 + 1))
    printf -v "$1" '198.18.%d.%d' $((k >> 8)) $((k & 255))
}

cl_ns() {
    echo "$cl_prefix$1"
}

cl_switch() {
    echo "${cl_prefix}sw"
}

cl_check_n() {
    if ! [[ $1 =~ ^[0-9]+$ ]] || (($1 < 1 || $1 > CL_MAX_HOSTS)); then
        cl_fail "N must be a number of hosts in 1..$CL_MAX_HOSTS, not '$1'"
    fi
}

# Options after the subcommand's positional argument; stops at "--" (for run).
cl_parse_opts() {
    cl_rest=()
    while (($#)); do
        case $1 in
        --rate | --burst | --delay | --prefix | --racks | --uplink-rate | --torus)
            (($# >= 2)) || cl_fail "$1 needs a value"
            case $1 in
            --racks) cl_racks=$2 ;;
            --torus) cl_torus=$2 ;;
            --uplink-rate) cl_uplink_rate=$2 ;;
            --rate) cl_rate=$2 ;;
            --burst) cl_burst=$2 ;;
            --delay) cl_delay=$2 ;;
            --prefix) cl_prefix=$2 ;;
            esac
            shift 2
            ;;
        --unidirectional)
            cl_uni=1
            shift
            ;;
        --fifo)
            cl_fifo=1
            shift
            ;;
        --bulk-fifo)
            cl_bulk_fifo=1
            shift
            ;;
        --)
            shift
            cl_rest=("$@")
            return 0
            ;;
        -h | --help)
            cl_usage
            exit 0
            ;;
        *) cl_fail "unknown argument '$1' (see cluster.sh --help)" ;;
        esac
    done
    [[ $cl_prefix =~ ^[A-Za-z]([A-Za-z0-9_-]{0,14}[A-Za-z_-])?$ ]] ||
        cl_fail "bad --prefix '$cl_prefix': letters, digits, '-', '_', at most 16, starting" \
            "with a letter and not ending with a digit"
}

# RATE in tc's units -> bytes per second (integer), or nothing if it does not parse.
cl_rate_bytes() {
    awk -v r="$1" 'BEGIN {
        if (!match(r, /^[0-9]+(\.[0-9]+)?/)) exit 1
        v = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
        m["bit"] = 1 / 8; m[""] = 1 / 8; m["bps"] = 1
        m["kbit"] = 1e3 / 8; m["mbit"] = 1e6 / 8; m["gbit"] = 1e9 / 8; m["tbit"] = 1e12 / 8
        m["kibit"] = 1024 / 8; m["mibit"] = 1048576 / 8; m["gibit"] = 1073741824 / 8
        m["kbps"] = 1e3; m["mbps"] = 1e6; m["gbps"] = 1e9; m["tbps"] = 1e12
        if (!(u in m)) exit 1
        printf "%d\n", v * m[u]
    }'
}

# Bits per second -> tc's units, in the largest unit that keeps it whole: 1gbit, 250mbit, ...
cl_bits_name() {
    local b=$1 u
    for u in gbit:1000000000 mbit:1000000 kbit:1000; do
        ((b < ${u#*:} || b % ${u#*:})) || {
            echo "$((b / ${u#*:}))${u%:*}"
            return 0
        }
    done
    echo "${b}bit"
}

cl_require_root() {
    command -v ip >/dev/null || cl_skip "no 'ip' command (Debian package iproute2)"
    [ "$(id -u)" -eq 0 ] || cl_skip "network namespaces need root (uid is $(id -u))"
}

# Namespaces of cluster cl_prefix that exist now, hosts first, the switch last.
cl_existing() {
    local names
    names=$(ip netns list 2>/dev/null | awk '{print $1}') || true
    grep -E "^${cl_prefix}[0-9]+\$" <<<"$names" || true
    grep -Fx "$(cl_switch)" <<<"$names" || true
}

# Shaping of one device: tbf for a rate alone; netem when there is a delay (with the rate
# folded in, as netem's own rate).
cl_shape() {
    local ns=$1 dev=$2 delay=$3 out
    if [ -n "$delay" ]; then
        local netem_rate=()
        [ -z "$cl_rate" ] || netem_rate=(rate "$cl_rate")
        out=$(tc -n "$ns" qdisc add dev "$dev" root netem delay "$delay" "${netem_rate[@]}" \
            limit "$CL_NETEM_PKTS" 2>&1) && return 0
        if grep -qi "unknown" <<<"$out"; then
            cl_skip "--delay needs the netem qdisc, which this kernel lacks" \
                "(CONFIG_NET_SCH_NETEM); --rate alone works, through tbf"
        fi
        cl_fail "tc netem on $ns/$dev: $out"
    fi
    cl_tbf "$ns" "$dev" "$cl_rate" "$cl_burst"
}

# The shaper of one device at rate $3 with bucket $4 (empty: the default for that rate): small
# packets first (cl_small_first), or with --fifo (or where the kernel lacks htb or u32) one tbf
# FIFO.
cl_tbf() {
    local ns=$1 dev=$2 rate=$3 burst=$4 out
    # 2 ms worth of tokens, at least two full frames: smooth at 1gbit, not bursty when slow.
    if [ -z "$burst" ]; then
        burst=$(($(cl_rate_bytes "$rate") / 500))
        ((burst >= 3028)) || burst=3028
    fi
    if [ -z "$cl_fifo" ] && cl_small_first "$ns" "$dev" "$rate" "$burst"; then
        cl_shaper="small packets first (htb)"
        ! cl_dest_queues ||
            cl_shaper="small packets first, then data in a queue per destination (htb)"
        return 0
    fi
    cl_shaper="one FIFO (tbf)"
    out=$(tc -n "$ns" qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" \
        limit "$CL_QLIMIT" 2>&1) && return 0
    if grep -qi "unknown" <<<"$out"; then
        cl_skip "--rate and --uplink-rate need the tbf qdisc, which this kernel lacks" \
            "(CONFIG_NET_SCH_TBF)"
    fi
    cl_fail "tc tbf on $ns/$dev: $out"
}

# Small packets first: one htb class at the link's rate and bucket, and under it a class for
# IPv4 packets under 256 bytes (TCP acknowledgements, fastmsg's credits, other control; the
# u32 filter reads the IP total length) served before the bulk class. In one FIFO a TCP
# acknowledgement or a credit waits behind every byte of data queued on its link: on a
# one-way torus ring the way back crosses the links that carry the data (bench/cluster/
# README.md, Shaping). A Linux host's default fq_codel would keep the two apart; this kernel
# has none. The device also hands TCP's data to the shaper in lumps of at most 16 KiB
# (gso_max_size; the default 64 KiB lumps cross the shaper whole, so a hop could forward
# nothing of a lump before all of it had come). On a torus the data is queued per
# destination (cl_dest_classes). Returns non-zero, nothing left on the device, where htb or
# u32 is missing.
cl_small_first() {
    local ns=$1 dev=$2 rate=$3 burst=$4 bytes small bulk=20
    bytes=$(cl_rate_bytes "$rate") || return 1
    small=$((bytes / 10))
    ((small > 0)) || small=1
    ! cl_dest_queues || bulk=$(printf '%x' $((0x100 + CL_DEST_QUEUES - 1)))
    if ! {
        cat <<EOF
qdisc add dev $dev root handle 1: htb default $bulk
class add dev $dev parent 1: classid 1:1 htb rate ${bytes}bps burst $burst cburst $burst
class add dev $dev parent 1:1 classid 1:10 htb rate ${small}bps ceil ${bytes}bps burst $burst cburst $burst prio 0
class add dev $dev parent 1:1 classid 1:20 htb rate $((bytes - small))bps ceil ${bytes}bps burst $burst cburst $burst prio 1
qdisc add dev $dev parent 1:10 bfifo limit $CL_QLIMIT
filter add dev $dev parent 1: protocol ip prio 1 u32 match u16 0x0000 0xff00 at 2 flowid 1:10
EOF
        if cl_dest_queues; then
            cl_dest_classes "$dev" $((bytes - small)) "$bytes" "$burst"
        else
            echo "qdisc add dev $dev parent 1:20 bfifo limit $CL_QLIMIT"
        fi
    } | tc -n "$ns" -batch - >/dev/null 2>&1; then
        tc -n "$ns" qdisc del dev "$dev" root >/dev/null 2>&1 || true
        return 1
    fi
    ip -n "$ns" link set dev "$dev" gso_max_size "$CL_GSO_MAX" >/dev/null 2>&1 || true
}

# True when data is queued per destination: on a torus, unless --bulk-fifo.
cl_dest_queues() {
    [ -n "$cl_torus" ] && [ -z "$cl_bulk_fifo" ]
}

# Device $1's data in CL_DEST_QUEUES queues under class 1:20 (their rates add up to $2; each
# may take $3, with bucket $4), one per destination by the low bits of its address (hosts k
# and k + 16 share one), taking turns by the frame's worth (equal rates and quanta: htb's
# deficit round robin; a lump of TCP data goes whole, and its bytes count against its queue's
# later turns). So the copies that share a link share its rate, as the torus model has them do
# (runtime/mcast/model.c); in one FIFO, TCP let one flow ahead of another (bench/README.md,
# "A queue per destination"). Each queue has the link's bucket: with a one-frame bucket
# (smaller than TCP's 16 KiB lumps) they shared worse (bench/cluster/README.md, Shaping).
# The last queue takes what no filter does (htb's default: not IPv4).
cl_dest_classes() {
    local dev=$1 rate=$2 ceil=$3 burst=$4 q id match
    for ((q = 0; q < CL_DEST_QUEUES; q++)); do # (printf -v: no subshell per queue and link)
        printf -v id '%x' $((0x100 + q))
        printf -v match '0x%x 0x%x' "$q" $((CL_DEST_QUEUES - 1))
        echo "class add dev $dev parent 1:20 classid 1:$id htb rate $((rate / CL_DEST_QUEUES))bps" \
            "ceil ${ceil}bps burst $burst cburst $burst quantum $CL_DEST_QUANTUM prio 1"
        echo "qdisc add dev $dev parent 1:$id bfifo limit $CL_QLIMIT"
        echo "filter add dev $dev parent 1: protocol ip prio 2 u32 match u8 $match at 19 flowid 1:$id"
    done
}

# TCP congestion control of host namespace $1: cubic (Debian's default) where the kernel allows
# it, else reno. Some kernels default to bbr, which over these shaped veth links estimated a
# bottleneck of several Gbit/s with a 26 us minimum round trip, and a chain's hops ran at
# half the link rate in some multicasts and not in others. --fifo keeps the kernel's default.
cl_host_tcp() {
    [ -z "$cl_fifo" ] || return 0
    # shellcheck disable=SC2016 # expanded by the inner sh
    ip netns exec "$1" sh -c 'for cc in cubic reno; do
        echo "$cc" >/proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null && exit 0; done'
}

cl_hosts_file() {
    local i
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n'
    for ((i = 1; i <= cl_n; i++)); do
        printf '198.18.%d.%d\t%s%d\n' $((i >> 8)) $((i & 255)) "$cl_prefix" $((i - 1))
    done
}

# The switch: a namespace with a bridge. Failures here mean namespaces or bridges cannot be
# had at all, a skip rather than an error.
cl_switch_up() {
    local sw out
    sw=$(cl_switch)
    out=$(ip netns add "$sw" 2>&1) || cl_skip "cannot create a network namespace: $out"
    # No STP, no forwarding delay: ports forward at once. No multicast snooping: IP multicast
    # floods to every port, as nothing here sends IGMP queries.
    out=$(ip -n "$sw" link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0 \
        2>&1) || cl_skip "cannot create a bridge: $out"
    ip -n "$sw" link set br0 up
    ip -n "$sw" link set lo up
    [ -z "$cl_racks" ] || cl_racks_up "$sw"
}

# Hosts per rack: S = ceil(N/R).
cl_rack_size() {
    echo $(((cl_n + cl_racks - 1) / cl_racks))
}

# The bridge that host $1 plugs into: br0 in a star, its rack's bridge rkR with racks.
cl_host_bridge() {
    if [ -z "$cl_racks" ]; then
        echo br0
    else
        echo "rk$(($1 / $(cl_rack_size)))"
    fi
}

# Racks: bridges rk0..rk{R-1}, each joined to the core bridge (br0) by one veth pair, uK on
# rack K's side and cK on the core's; uK's egress is rack K's way up, cK's its way down, and
# both are shaped at the uplink rate. IPv6 is off in the switch namespace, so that the
# bridges and ports send no neighbour or listener messages over the uplinks.
cl_racks_up() {
    local sw=$1 k
    # shellcheck disable=SC2016 # expanded by the inner sh
    ip netns exec "$sw" sh -c 'for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do
        [ ! -w "$f" ] || echo 1 >"$f"; done'
    for ((k = 0; k < cl_racks; k++)); do
        ip -n "$sw" link add "rk$k" type bridge stp_state 0 forward_delay 0 mcast_snooping 0
        ip -n "$sw" link set "rk$k" up
        ip -n "$sw" link add "u$k" type veth peer name "c$k"
        ip -n "$sw" link set "u$k" master "rk$k"
        ip -n "$sw" link set "c$k" master br0
        if [ -n "$cl_uplink_rate" ]; then
            command -v tc >/dev/null || cl_skip "shaping needs 'tc' (Debian package iproute2)"
            cl_tbf "$sw" "u$k" "$cl_uplink_rate" ""
            cl_tbf "$sw" "c$k" "$cl_uplink_rate" ""
        fi
        ip -n "$sw" link set "u$k" up
        ip -n "$sw" link set "c$k" up
    done
}

# The FM_TOPOLOGY file of N hosts in R racks: x = rack, y = position in the rack; of a torus:
# its (x, y).
cl_topo_text() {
    local k s
    if [ -n "$cl_torus" ]; then
        echo "# FM_TOPOLOGY=file:PATH for cluster.sh's $cl_n hosts in a $cl_torus torus" \
            "(prefix $cl_prefix): NAME X Y"
        for ((k = 0; k < cl_n; k++)); do
            echo "$(cl_ns "$k") $((k % cl_ta)) $((k / cl_ta))"
        done
        return 0
    fi
    s=$(cl_rack_size)
    echo "# FM_TOPOLOGY=file:PATH for cluster.sh's $cl_n hosts in $cl_racks racks" \
        "(prefix $cl_prefix): NAME RACK POSITION"
    for ((k = 0; k < cl_n; k++)); do
        echo "$(cl_ns "$k") $((k / s)) $((k % s))"
    done
}

cl_topo_path() {
    echo "/run/fastmsg-cluster-$cl_prefix.topo"
}

cl_host_up() {
    local k=$1 ns sw out
    ns=$(cl_ns "$k")
    sw=$(cl_switch)
    ip netns add "$ns"
    # IPv4 only: no link-local IPv6 address that a provider could pick instead of 198.18.
    # shellcheck disable=SC2016 # expanded by the inner sh
    ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 \
        /proc/sys/net/ipv6/conf/default/disable_ipv6; do [ ! -w "$f" ] || echo 1 >"$f"; done'
    if ! out=$(ip -n "$sw" link add "p$k" type veth peer name fm0 netns "$ns" 2>&1); then
        [ "$k" -ne 0 ] || cl_skip "cannot create a veth pair: $out"
        cl_fail "veth for $ns: $out"
    fi
    ip -n "$sw" link set "p$k" master "$(cl_host_bridge "$k")"
    ip -n "$sw" link set "p$k" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$(cl_addr "$k")/15" dev fm0
    ip -n "$ns" link set fm0 up
    ip -n "$ns" route add 224.0.0.0/4 dev fm0
    cl_host_tcp "$ns"
    if [ -n "$cl_rate$cl_delay" ]; then
        command -v tc >/dev/null || cl_skip "shaping needs 'tc' (Debian package iproute2)"
        cl_shape "$ns" fm0 "$cl_delay"
        # The switch port sends at the same rate towards the host, so a host receives no
        # faster than it could send: incast queues at its port as on a real switch.
        [ -z "$cl_rate" ] || cl_shape "$sw" "p$k" ""
    fi
    # ip netns exec bind-mounts this over /etc/hosts: every host resolves every other.
    mkdir -p "/etc/netns/$ns"
    echo "$cl_hosts_text" >"/etc/netns/$ns/hosts"
}

# --torus AxB: A and B at least 2 (a ring of one would join a host to itself), A*B = N, not
# with racks. Sets cl_ta, cl_tb and cl_torus (canonical, no leading zeros).
cl_check_torus() {
    local longest
    [ -n "$cl_torus" ] || {
        [ -z "$cl_uni" ] || cl_fail "--unidirectional needs --torus"
        return 0
    }
    [ -z "$cl_racks" ] || cl_fail "--torus and --racks exclude each other"
    [[ $cl_torus =~ ^([0-9]{1,4})x([0-9]{1,4})$ ]] ||
        cl_fail "--torus must be AxB, two sizes (e.g. 4x4), not '$cl_torus'"
    cl_ta=$((10#${BASH_REMATCH[1]}))
    cl_tb=$((10#${BASH_REMATCH[2]}))
    ((cl_ta >= 2 && cl_tb >= 2)) || cl_fail "--torus $cl_torus: both sizes must be at least 2"
    ((cl_ta * cl_tb == cl_n)) ||
        cl_fail "--torus $cl_torus has $((cl_ta * cl_tb)) hosts, but N is $cl_n"
    cl_torus=${cl_ta}x$cl_tb
    # A path of H hops passes H - 1 routers, each of which needs a TTL above 1.
    if [ -n "$cl_uni" ]; then
        longest=$((cl_ta + cl_tb - 2))
    else
        longest=$((cl_ta / 2 + cl_tb / 2))
    fi
    ((longest <= CL_TORUS_TTL)) ||
        cl_fail "--torus $cl_torus: its longest route is $longest hops, more than a TTL" \
            "of $CL_TORUS_TTL allows"
}

# The FM_TOPOLOGY value of the torus: torus:AxB, with :uni when unidirectional.
cl_torus_spec() {
    echo "torus:$cl_torus${cl_uni:+:uni}"
}

# Host $1's neighbour through its link $2 (xp, xm, yp, ym), host k being at (k % A, k / A).
cl_torus_peer() {
    local x=$(($1 % cl_ta)) y=$(($1 / cl_ta))
    case $2 in
    xp) echo $((y * cl_ta + (x + 1) % cl_ta)) ;;
    xm) echo $((y * cl_ta + (x + cl_ta - 1) % cl_ta)) ;;
    yp) echo $(((y + 1) % cl_tb * cl_ta + x)) ;;
    ym) echo $(((y + cl_tb - 1) % cl_tb * cl_ta + x)) ;;
    esac
}

# The name of the other end of link $1: a host's xp is its + neighbour's xm, and so on.
cl_torus_other_end() {
    case $1 in
    xp) echo xm ;;
    xm) echo xp ;;
    yp) echo ym ;;
    ym) echo yp ;;
    esac
}

# The MAC address of host $1's link $2, fixed (locally administered, 02:...: the host's number
# and the link's) so that every neighbour entry can be written without asking the peer.
cl_torus_mac() {
    local i
    for i in "${!CL_TORUS_DEVS[@]}"; do
        [ "${CL_TORUS_DEVS[i]}" != "$2" ] || break
    done
    printf '02:18:00:%02x:%02x:%02x\n' $(($1 >> 8)) $(($1 & 255)) $((i + 1))
}

# The first hop from host $1 to host $2 under dimension-ordered routing: along X until the
# column is right, then along Y; always the + way on a unidirectional torus, else the shorter
# way round, + on a tie. Sets cl_hop_dev (xp, xm, yp or ym) and cl_hop_next (the neighbour's
# host number); variables rather than output, as it runs N^2 times.
cl_torus_hop() {
    local sx=$(($1 % cl_ta)) sy=$(($1 / cl_ta)) dim ring from to fwd
    if ((sx != $2 % cl_ta)); then
        dim=x ring=$cl_ta from=$sx to=$(($2 % cl_ta))
    else
        dim=y ring=$cl_tb from=$sy to=$(($2 / cl_ta))
    fi
    fwd=$(((to - from + ring) % ring))
    if [ -n "$cl_uni" ] || ((2 * fwd <= ring)); then
        cl_hop_dev=${dim}p
        from=$(((from + 1) % ring))
    else
        cl_hop_dev=${dim}m
        from=$(((from + ring - 1) % ring))
    fi
    if [ "$dim" = x ]; then
        cl_hop_next=$((sy * cl_ta + from))
    else
        cl_hop_next=$((from * cl_ta + sx))
    fi
}

# Host $1's fm0 in namespace $2: a dummy interface, or where the kernel has no dummy driver (as
# this machine's has not) an ifb, which is as inert: it has a carrier, no peer and no ARP, and
# drops whatever is sent to it (only tc redirects through it). Nothing is routed to fm0 anyway;
# it only holds the host's address. The first host finds out which the kernel has.
cl_torus_fm0() {
    local out
    if [ -z "${cl_fm0_type:-}" ]; then
        for cl_fm0_type in dummy ifb; do
            out=$(ip -n "$2" link add fm0 type "$cl_fm0_type" 2>&1) && return 0
        done
        cl_skip "cannot create a dummy or ifb interface (CONFIG_DUMMY, CONFIG_IFB): $out"
    fi
    out=$(ip -n "$2" link add fm0 type "$cl_fm0_type" 2>&1) ||
        cl_fail "$cl_fm0_type fm0 in $2: $out"
}

# A torus host: a namespace that is a router (forwarding on), with its address as a /32 on an
# inert fm0 (cl_torus_fm0), so that FM_IFACE=fm0 and the MPIs' interface options name the host's address as
# in the star, whichever link a packet takes. rp_filter is off: on a unidirectional torus a
# reply comes back on another link than its request left by. IPv6 is off as in the star.
cl_torus_host_up() {
    local k=$1 ns out
    ns=$(cl_ns "$k")
    if ! out=$(ip netns add "$ns" 2>&1); then
        [ "$k" -ne 0 ] || cl_skip "cannot create a network namespace: $out"
        cl_fail "namespace $ns: $out"
    fi
    # shellcheck disable=SC2016 # expanded by the inner sh
    ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/all/disable_ipv6 \
        /proc/sys/net/ipv6/conf/default/disable_ipv6; do [ ! -w "$f" ] || echo 1 >"$f"; done
        echo 1 >/proc/sys/net/ipv4/ip_forward
        echo 0 >/proc/sys/net/ipv4/conf/all/rp_filter
        echo 0 >/proc/sys/net/ipv4/conf/default/rp_filter
        echo "$1" >/proc/sys/net/ipv4/ip_default_ttl' sh "$CL_TORUS_TTL"
    cl_torus_fm0 "$k" "$ns"
    cl_host_tcp "$ns"
    ip -n "$ns" -batch - <<EOF
link set lo up
addr add $(cl_addr "$k")/32 dev fm0
link set fm0 up
EOF
    mkdir -p "/etc/netns/$ns"
    echo "$cl_hosts_text" >"/etc/netns/$ns/hosts"
}

# The link from host $1's end $2 to host $3's end $4: one veth pair, shaped at both ends (each
# end shapes what its host sends), so the link's two directions are independent, as on a
# full-duplex cable.
cl_torus_link() {
    local ns pns out
    ns=$(cl_ns "$1")
    pns=$(cl_ns "$3")
    if ! out=$(ip -n "$ns" link add "$2" address "$(cl_torus_mac "$1" "$2")" type veth \
        peer name "$4" address "$(cl_torus_mac "$3" "$4")" netns "$pns" 2>&1); then
        [ "$1" -ne 0 ] || cl_skip "cannot create a veth pair: $out"
        cl_fail "veth $ns/$2 - $pns/$4: $out"
    fi
    if [ -n "$cl_rate$cl_delay" ]; then
        command -v tc >/dev/null || cl_skip "shaping needs 'tc' (Debian package iproute2)"
        cl_shape "$ns" "$2" "$cl_delay"
        cl_shape "$pns" "$4" "$cl_delay"
    fi
    ip -n "$ns" link set "$2" up
    ip -n "$pns" link set "$4" up
}

# Host $1's links towards +: xp to its X neighbour's xm, yp to its Y neighbour's ym. Its xm
# and ym are made by the hosts before it (-), so every host ends with all four; a ring of 2
# still has two links between the two hosts.
cl_torus_links_up() {
    local dev
    for dev in xp yp; do
        cl_torus_link "$1" "$dev" "$(cl_torus_peer "$1" "$dev")" "$(cl_torus_other_end "$dev")"
    done
}

# Host $1's neighbour and route entries, as `ip -batch` lines: the neighbour at the far end of
# each link, permanent, with its known MAC, so that no ARP ever travels (on a unidirectional
# torus nothing at all may go the - way); then a /32 to every other host via the neighbour that
# dimension-ordered routing picks. The neighbour is named by its own address, reached over a
# link that has none (onlink); src is this host's address, whatever the link.
cl_torus_routes() {
    local s=$1 d dev j src addr next
    cl_addr_to src "$s"
    for dev in "${CL_TORUS_DEVS[@]}"; do
        j=$(cl_torus_peer "$s" "$dev")
        cl_addr_to addr "$j"
        echo "neigh replace $addr lladdr $(cl_torus_mac "$j" "$(cl_torus_other_end "$dev")")" \
            "dev $dev nud permanent"
    done
    for ((d = 0; d < cl_n; d++)); do
        ((d != s)) || continue
        cl_torus_hop "$s" "$d"
        cl_addr_to addr "$d"
        cl_addr_to next "$cl_hop_next"
        echo "route add $addr/32 via $next dev $cl_hop_dev onlink src $src"
    done
}

# Once every link exists: rp_filter off on each link too (the kernel takes the larger of the
# link's and all's), no IPv6 on them, then the neighbours and routes in one batch.
cl_torus_host_routes() {
    local ns out
    ns=$(cl_ns "$1")
    # shellcheck disable=SC2016 # expanded by the inner sh
    ip netns exec "$ns" sh -c 'for d; do echo 0 >"/proc/sys/net/ipv4/conf/$d/rp_filter"
        f=/proc/sys/net/ipv6/conf/$d/disable_ipv6; [ ! -w "$f" ] || echo 1 >"$f"; done' \
        sh fm0 "${CL_TORUS_DEVS[@]}"
    out=$(cl_torus_routes "$1" | ip -n "$ns" -batch - 2>&1) || cl_fail "routes of $ns: $out"
}

# The torus: every host, then every link, then the routes (which name the links).
cl_torus_up() {
    local k
    for ((k = 0; k < cl_n; k++)); do
        cl_torus_host_up "$k"
    done
    for ((k = 0; k < cl_n; k++)); do
        cl_torus_links_up "$k"
    done
    for ((k = 0; k < cl_n; k++)); do
        cl_torus_host_routes "$k"
    done
}

cl_up_abort() {
    local rc=$?
    trap - EXIT
    cl_down >/dev/null 2>&1 || true
    exit "$rc"
}

cl_up() {
    local k
    cl_require_root
    [ -z "$cl_rate" ] || [ -n "$(cl_rate_bytes "$cl_rate")" ] ||
        cl_fail "bad --rate '$cl_rate' (tc units: 1gbit, 100mbit, 10mbps, ...)"
    [ -z "$cl_burst" ] || { [[ $cl_burst =~ ^[0-9]+$ ]] && ((cl_burst >= 1514)); } ||
        cl_fail "bad --burst '$cl_burst' (bytes, at least one full frame: 1514)"
    [ -z "$cl_burst" ] || [ -n "$cl_rate" ] || cl_fail "--burst needs --rate"
    if [ -n "$cl_bulk_fifo" ]; then # (it changes nothing elsewhere: say so)
        [ -n "$cl_torus" ] || cl_fail "--bulk-fifo needs --torus"
        [ -n "$cl_rate" ] || cl_fail "--bulk-fifo needs --rate"
        [ -z "$cl_fifo$cl_delay" ] || cl_fail "--bulk-fifo excludes --fifo and --delay"
    fi
    cl_check_torus
    cl_check_racks
    [ -z "$cl_uplink_rate" ] || [ -n "$(cl_rate_bytes "$cl_uplink_rate")" ] ||
        cl_fail "bad --uplink-rate '$cl_uplink_rate' (tc units: 1gbit, 100mbit, 10mbps, ...)"
    if [ -n "$cl_racks" ] && [ -z "$cl_uplink_rate" ] && [ -n "$cl_rate" ]; then
        # 4:1 oversubscribed: a rack's hosts together could send 4 times what its uplink can.
        cl_uplink_rate=$(cl_bits_name $(($(cl_rate_bytes "$cl_rate") * 8 * $(cl_rack_size) / 4)))
    fi
    [ -z "$(cl_existing)" ] ||
        cl_fail "cluster '$cl_prefix' is up already (cluster.sh down --prefix $cl_prefix)"
    # Anything that fails from here on (set -e included) removes what was made.
    trap cl_up_abort EXIT
    cl_hosts_text=$(cl_hosts_file)
    if [ -n "$cl_torus" ]; then
        cl_torus_up
    else
        cl_switch_up
        for ((k = 0; k < cl_n; k++)); do
            cl_host_up "$k"
        done
    fi
    [ -z "$cl_racks$cl_torus" ] || cl_topo_text >"$(cl_topo_path)"
    trap - EXIT
}

# --racks R: a number in 1..N such that no rack is left empty.
cl_check_racks() {
    local s
    [ -n "$cl_racks" ] || {
        [ -z "$cl_uplink_rate" ] || cl_fail "--uplink-rate needs --racks"
        return 0
    }
    if ! [[ $cl_racks =~ ^[0-9]+$ ]] || ((cl_racks < 1 || cl_racks > cl_n)); then
        cl_fail "--racks must be a number of racks in 1..$cl_n (the hosts), not '$cl_racks'"
    fi
    cl_racks=$((10#$cl_racks))
    s=$(cl_rack_size)
    (((cl_racks - 1) * s < cl_n)) ||
        cl_fail "$cl_n hosts in racks of $s (ceil($cl_n/$cl_racks)) fill only" \
            "$(((cl_n + s - 1) / s)) racks, not $cl_racks"
}

# Link counters: a cluster with a switch namespace has racks (or is a star, which has none to
# show); one without is a torus.
cl_counters() {
    local names
    cl_require_root
    names=$(ip netns list 2>/dev/null | awk '{print $1}') || true
    if grep -qFx "$(cl_switch)" <<<"$names"; then
        cl_rack_counters
    elif grep -qFx "$(cl_ns 0)" <<<"$names"; then
        cl_torus_counters
    else
        cl_fail "cluster '$cl_prefix' is not up (no namespace $(cl_ns 0))"
    fi
}

# Bytes and packets each torus link sent, from its sending end: one line per host and link,
# "HOST X Y DEV TX_BYTES TX_PACKETS". The hosts and their coordinates come from the topology
# file that up wrote; one `ip netns exec` per host.
cl_torus_counters() {
    local topo name x y k dev files=() v
    topo=$(cl_topo_path)
    [ -f "$topo" ] || cl_fail "cluster '$cl_prefix' has no racks and no torus (no $topo)"
    for dev in "${CL_TORUS_DEVS[@]}"; do
        files+=("/sys/class/net/$dev/statistics/"{tx_bytes,tx_packets})
    done
    echo "# host x y dev tx_bytes tx_packets"
    while read -r name x y; do
        [[ $name != \#* ]] || continue
        k=${name#"$cl_prefix"}
        ip netns exec "$name" test -e /sys/class/net/xp </dev/null ||
            cl_fail "cluster '$cl_prefix' is not a torus (host $name has no link xp)"
        mapfile -t v < <(ip netns exec "$name" cat "${files[@]}" </dev/null)
        ((${#v[@]} == 2 * ${#CL_TORUS_DEVS[@]})) || cl_fail "cannot read $name's link counters"
        for dev in "${!CL_TORUS_DEVS[@]}"; do
            echo "$k $x $y ${CL_TORUS_DEVS[dev]} ${v[2 * dev]} ${v[2 * dev + 1]}"
        done
    done <"$topo"
}

# Bytes and packets through each uplink, from the rack's end (uK): tx is up, rx is down.
cl_rack_counters() {
    local sw racks k files=()
    sw=$(cl_switch)
    racks=$(ip -n "$sw" -o link show | grep -cE '^[0-9]+: u[0-9]+@') || true
    ((racks > 0)) || cl_fail "cluster '$cl_prefix' has no racks (cluster.sh up N --racks R)"
    for ((k = 0; k < racks; k++)); do
        files+=("/sys/class/net/u$k/statistics/"{tx_bytes,rx_bytes,tx_packets,rx_packets})
    done
    echo "# rack up_bytes down_bytes up_packets down_packets"
    ip netns exec "$sw" cat "${files[@]}" |
        awk '{ v[NR % 4] = $1 } NR % 4 == 0 { print (NR / 4) - 1, v[1], v[2], v[3], v[0] }'
}

# Processes still inside namespace $1 (left by a job that did not clean up) keep it alive
# after `ip netns del`; end them first.
cl_kill_inside() {
    local pids i
    pids=$(ip netns pids "$1" 2>/dev/null | tr '\n' ' ') || true
    [ -n "${pids// /}" ] || return 0
    # shellcheck disable=SC2086 # a list of pids
    kill -TERM $pids 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
        pids=$(ip netns pids "$1" 2>/dev/null | tr '\n' ' ') || true
        [ -n "${pids// /}" ] || return 0
        sleep 0.05
    done
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
}

cl_down() {
    local ns left d
    command -v ip >/dev/null || return 0
    for ns in $(cl_existing); do
        cl_kill_inside "$ns"
        ip netns del "$ns" 2>/dev/null || echo "cluster.sh: cannot remove namespace $ns" >&2
    done
    for d in /etc/netns/"$cl_prefix"*; do
        [[ -d $d && ${d##*/} =~ ^${cl_prefix}([0-9]+|sw)$ ]] || continue
        rm -f "$d/hosts"
        rmdir "$d" 2>/dev/null || true
    done
    rmdir /etc/netns 2>/dev/null || true
    rm -f "$(cl_topo_path)"
    left=$(cl_existing)
    # Returns rather than exits: the traps that call this keep their own status.
    [ -z "$left" ] || {
        echo "cluster.sh: still there: $(tr '\n' ' ' <<<"$left")" >&2
        return 1
    }
}

# What up made, when there is more to say than the hosts' names (racks, torus, shaping).
cl_up_report() {
    [ -z "$cl_shaper" ] || echo "shaping: $cl_shaper; TCP congestion control" \
        "$(ip netns exec "$(cl_ns 0)" cat /proc/sys/net/ipv4/tcp_congestion_control)"
    if [ -n "$cl_torus" ]; then
        echo "cluster $cl_prefix: $cl_n hosts in a $cl_torus torus," \
            "$([ -n "$cl_uni" ] && echo unidirectional || echo bidirectional)," \
            "links ${cl_rate:-unshaped}, fm0 is $cl_fm0_type"
        echo "topology: $(cl_topo_path) (FM_TOPOLOGY=$(cl_torus_spec)" \
            "or FM_TOPOLOGY=file:$(cl_topo_path))"
        return 0
    fi
    [ -n "$cl_racks" ] || return 0
    echo "cluster $cl_prefix: $cl_n hosts in $cl_racks racks of at most $(cl_rack_size)," \
        "host links ${cl_rate:-unshaped}, uplinks ${cl_uplink_rate:-unshaped}"
    echo "topology: $(cl_topo_path) (FM_TOPOLOGY=file:$(cl_topo_path))"
}

cl_hosts() {
    local k out=
    for ((k = 0; k < cl_n; k++)); do
        out+="${out:+,}$(cl_ns "$k")"
    done
    echo "$out"
}

cl_run_cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    cl_down || rc=1
    exit "$rc"
}

# Process $1 and all its descendants, parents first.
cl_tree() {
    local c
    echo "$1"
    for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        cl_tree "$c"
    done
}

# A signal ends CMD and whatever it started (TERM, then KILL after 5 s), then the cluster.
# CMD shares our process group, so it is ended by pid.
cl_run_signal() {
    local sig=$1 i p pids alive
    trap - INT TERM
    if [ -n "${cl_child:-}" ]; then
        mapfile -t pids < <(cl_tree "$cl_child")
        kill -TERM "${pids[@]}" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            alive=0
            for p in "${pids[@]}"; do
                kill -0 "$p" 2>/dev/null && alive=1
            done
            ((alive)) || break
            sleep 0.1
        done
        ((alive == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
    fi
    exit $((128 + sig))
}

cl_run() {
    local rc here
    ((${#cl_rest[@]})) || cl_fail "run needs a command after --"
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    cl_up
    trap cl_run_cleanup EXIT
    trap 'cl_run_signal 2' INT
    trap 'cl_run_signal 15' TERM
    CLUSTER_HOSTS=$(cl_hosts) CLUSTER_N=$cl_n CLUSTER_PREFIX=$cl_prefix
    CLUSTER_ADDR0=$(cl_addr 0) CLUSTER_AGENT=$here/netns-agent
    export CLUSTER_HOSTS CLUSTER_N CLUSTER_PREFIX CLUSTER_ADDR0 CLUSTER_AGENT
    if [ -n "$cl_racks" ]; then
        CLUSTER_RACKS=$cl_racks CLUSTER_TOPO=$(cl_topo_path)
        export CLUSTER_RACKS CLUSTER_TOPO
    fi
    if [ -n "$cl_torus" ]; then
        CLUSTER_TORUS=$cl_torus CLUSTER_TOPO_SPEC=$(cl_torus_spec) CLUSTER_TOPO=$(cl_topo_path)
        export CLUSTER_TORUS CLUSTER_TOPO_SPEC CLUSTER_TOPO
    fi
    # In the background so that a signal reaches the traps at once; stdin stays CMD's.
    "${cl_rest[@]}" <&0 &
    cl_child=$!
    rc=0
    wait "$cl_child" || rc=$?
    cl_child=
    exit "$rc"
}

main() {
    local cmd=${1:-}
    (($#)) && shift
    case $cmd in
    up | run | hosts | topo)
        (($#)) || cl_fail "$cmd needs N (see cluster.sh --help)"
        cl_check_n "$1"
        cl_n=$((10#$1))
        shift
        cl_parse_opts "$@"
        [ "$cmd" = run ] || ((${#cl_rest[@]} == 0)) || cl_fail "unexpected '${cl_rest[0]}'"
        case $cmd in
        up)
            cl_up
            cl_up_report
            ;;
        run) cl_run ;;
        hosts) cl_hosts ;;
        topo)
            [ -n "$cl_racks$cl_torus" ] || cl_fail "topo needs --racks R or --torus AxB"
            cl_check_torus
            cl_check_racks
            cl_topo_text
            ;;
        esac
        ;;
    down)
        cl_parse_opts "$@"
        cl_down
        ;;
    counters)
        cl_parse_opts "$@"
        ((${#cl_rest[@]} == 0)) || cl_fail "unexpected '${cl_rest[0]}'"
        cl_counters
        ;;
    addr)
        if (($# != 1)) || ! [[ $1 =~ ^[0-9]+$ ]] || (($1 >= CL_MAX_HOSTS)); then
            cl_fail "addr needs a host number in 0..$((CL_MAX_HOSTS - 1))"
        fi
        cl_addr "$1"
        ;;
    -h | --help)
        cl_usage
        ;;
    *)
        cl_usage >&2
        exit 2
        ;;
    esac
}

main "$@"
