#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The emulated torus (bench/cluster/cluster.sh --torus): hosts joined by veth links to their
# four neighbours, dimension-ordered static routes, each host's address a /32 on fm0.
#   routes: the options (topo, refusals without namespaces); a 3x2 bidirectional torus shaped
#           to 1gbit by one tbf FIFO a link (cluster.sh up --fifo) and, beside it, a 4x4
#           unidirectional one shaped to 1gbit (cluster.sh run):
#           the topology file, each host's addresses, sysctls and links (which veth end meets
#           which), the route of every ordered pair walked hop by hop with `ip route get` and
#           compared with a dimension-ordered path worked out here, TCP between far pairs both
#           ways, and from the link counters that a unidirectional torus sends nothing the -
#           way (a reply from (1,0) to (0,0) goes round through (2,0) and (3,0)) and that a
#           bidirectional ring of 2 uses its two links one way each; that the 4x4's links queue
#           data per destination, and a 2x2 up with --bulk-fifo in one FIFO
#   jobs:   a 4x4 unidirectional torus: fastmsg-run (FM_IFACE=fm0, FM_TOPOLOGY=torus:4x4:uni)
#           with hello (rank k on host k, at k's address), mcast_check with the five torus
#           trees (and binomial, prefix, auto) from every root, and on 11 hosts listed out of
#           order (placed by their names) over member subsets; Open MPI (mpirun) and
#           MPICH (mpiexec.mpich) each run fastmsg-bench-mpi-bcast on 16 hosts, every rank
#           on its own host at its address; every TCP connection seen is between 198.18
#           addresses, and the counters show the jobs' bytes on the + links only
# Afterwards nothing of either torus may be left. Skips (77) where namespaces cannot be made,
# and the MPI part of jobs where that MPI's benchmark was not built.
#
# usage: torus.sh routes CLUSTER_SH
#        torus.sh jobs CLUSTER_SH FASTMSG_RUN HELLO MCAST_CHECK MPI_BCAST_OPENMPI MPI_BCAST_MPICH
#        torus.sh --inside uni|jobs ... (under cluster.sh run)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/cluster/htb.sh
. "$here/htb.sh"

fail() {
    echo "FAIL: $*"
    exit 1
}

skip() {
    echo "SKIP: $*"
    exit 77
}

expect_count() {
    local want=$1 pattern=$2 text=$3 got
    got=$(grep -cE "$pattern" <<<"$text" || true)
    [ "$got" -eq "$want" ] || fail "$got lines match '$pattern', want $want"
}

# Host k's address, computed here: 198.18.0.0 + k + 1.
addr_of() {
    local k=$(($1 + 1))
    echo "198.18.$((k >> 8)).$((k & 255))"
}

# The host number of a 198.18 address.
host_of() {
    local a b
    IFS=. read -r _ _ a b <<<"$1"
    echo $((a * 256 + b - 1))
}

# The path from host $1 to host $2 on an A x B torus ($A, $B, $UNI), as "HOST:LINK ..." for
# each hop: walk x towards the destination first, then y, one step at a time; + only when
# unidirectional, else the shorter way round with a tie going +.
expected_path() {
    local x=$(($1 % A)) y=$(($1 / A)) tx=$(($2 % A)) ty=$(($2 / A)) dir path=""
    dir=p
    if ((!UNI)) && ((2 * ((tx - x + A) % A) > A)); then
        dir=m
    fi
    while ((x != tx)); do
        path+="$((y * A + x)):x$dir "
        if [ $dir = p ]; then x=$(((x + 1) % A)); else x=$(((x + A - 1) % A)); fi
    done
    dir=p
    if ((!UNI)) && ((2 * ((ty - y + B) % B) > B)); then
        dir=m
    fi
    while ((y != ty)); do
        path+="$((y * A + x)):y$dir "
        if [ $dir = p ]; then y=$(((y + 1) % B)); else y=$(((y + B - 1) % B)); fi
    done
    echo "${path% }"
}

# The path the kernel takes from host $1 to host $2, into $walked: ask each host on the way
# which link and next host it picks (`ip route get`), and go there. Answers are kept in
# hop_cache (so this runs in the caller's shell, not in a $(...)).
declare -A hop_cache
walked_path() {
    local cur=$1 d=$2 dst path="" n=0 out via dev
    dst=$(addr_of "$d")
    while ((cur != d)); do
        ((n++ < A * B)) || fail "$P$1 to $P$d: no end after $n hops: $path"
        if [ -z "${hop_cache[$cur,$d]:-}" ]; then
            out=$(ip -n "$P$cur" route get "$dst") || fail "$P$cur has no route to $dst"
            via=$(awk '{ for (i = 1; i < NF; i++) if ($i == "via") print $(i + 1) }' <<<"$out")
            dev=$(awk '{ for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1) }' <<<"$out")
            [[ -n $via && -n $dev ]] || fail "$P$cur to $dst: no via/dev in '$out'"
            hop_cache[$cur,$d]="$dev $(host_of "$via")"
        fi
        read -r dev via <<<"${hop_cache[$cur,$d]}"
        path+="$cur:$dev "
        cur=$via
    done
    walked=${path% }
}

# The host at the other end of host $1's link $2, and that end's name.
peer_of() {
    local x=$(($1 % A)) y=$(($1 / A))
    case $2 in
    xp) echo "$((y * A + (x + 1) % A)) xm" ;;
    xm) echo "$((y * A + (x + A - 1) % A)) xp" ;;
    yp) echo "$(((y + 1) % B * A + x)) ym" ;;
    ym) echo "$(((y + B - 1) % B * A + x)) yp" ;;
    esac
}

# Each host: its address alone on fm0, as a /32; no address on a link; forwarding on and
# rp_filter off; each link's far end in the right host and the right end (the veth's peer
# is named by namespace and interface index, which is per namespace).
check_hosts() {
    local k dev peer pdev out idx got
    for ((k = 0; k < A * B; k++)); do
        out=$(ip -n "$P$k" -4 -o addr show | awk '$2 != "lo" { print $2, $4 }')
        [ "$out" = "fm0 $(addr_of "$k")/32" ] || fail "$P$k's addresses: '$out'"
        out=$(ip netns exec "$P$k" cat /proc/sys/net/ipv4/ip_forward \
            /proc/sys/net/ipv4/conf/{all,default,xp,xm,yp,ym}/rp_filter | tr '\n' ' ')
        [ "$out" = "1 0 0 0 0 0 0 " ] || fail "$P$k: ip_forward and rp_filters are '$out'"
        for dev in xp xm yp ym; do
            read -r peer pdev <<<"$(peer_of "$k" "$dev")"
            out=$(ip -n "$P$k" -d -o link show "$dev") || fail "$P$k has no link $dev"
            [[ $out == *" link-netns $P$peer "* ]] ||
                fail "$P$k's $dev does not lead to $P$peer: $out"
            idx=$(ip netns exec "$P$peer" cat "/sys/class/net/$pdev/ifindex")
            got=$(sed -nE "s/^[0-9]+: $dev@if([0-9]+):.*/\1/p" <<<"$out")
            [ "$got" = "$idx" ] || fail "$P$k's $dev meets $P$peer's interface $got, not $pdev"
        done
    done
    echo "every host: fm0 at its /32 only, forwarding on, rp_filter off, 4 links to the" \
        "right neighbours' ends"
}

# Every ordered pair's route, hop by hop, against the expected path.
check_routes() {
    local s d want got pairs=0 hops=0 walked
    for ((s = 0; s < A * B; s++)); do
        for ((d = 0; d < A * B; d++)); do
            ((s != d)) || continue
            want=$(expected_path "$s" "$d")
            walked_path "$s" "$d"
            [ "$walked" = "$want" ] || fail "route $P$s -> $P$d: took '$walked', want '$want'"
            pairs=$((pairs + 1))
            read -r -a got <<<"$walked"
            hops=$((hops + ${#got[@]}))
        done
    done
    echo "routes: all $pairs ordered pairs dimension-ordered ($hops hops)"
}

# The topology file names every host at (k % A, k / A) and is what `topo` prints.
check_topo() {
    local k
    [ -f "/run/fastmsg-cluster-$P.topo" ] || fail "no topology file /run/fastmsg-cluster-$P.topo"
    for ((k = 0; k < A * B; k++)); do
        expect_count 1 "^$P$k $((k % A)) $((k / A))\$" "$(cat "/run/fastmsg-cluster-$P.topo")"
    done
    expect_count $((A * B)) '^[^#]' "$(cat "/run/fastmsg-cluster-$P.topo")"
    [ "$(bash "$cluster" topo $((A * B)) --torus "${A}x$B" --prefix "$P")" = \
        "$(cat "/run/fastmsg-cluster-$P.topo")" ] || fail "cluster.sh topo differs from the file"
}

# TCP from host $1 to host $2, BYTES ($3) bytes (flow.py, through the hosts' names).
tcp() {
    local pid out
    ip netns exec "$P$2" python3 "$flow" recv --port 5011 --timeout 20 >"$tmp/recv" &
    pid=$!
    ip netns exec "$P$1" python3 "$flow" send "$P$2" --port 5011 --bytes "$3" --timeout 20 \
        >/dev/null || fail "TCP from $P$1 to $P$2"
    wait "$pid" || fail "TCP from $P$1 to $P$2: the receiver failed"
    out=$(cat "$tmp/recv")
    grep -qE "^flow 0 from $(addr_of "$1" | sed 's/\./\\./g') bytes $3 " <<<"$out" ||
        fail "TCP from $P$1 to $P$2: $out"
}

# A link's bytes sent ($1: host, $2: link) in counters output $3.
sent() {
    awk -v h="$1" -v d="$2" '$1 == h && $4 == d { print $5 }' <<<"$3"
}

# The sum of column 5 (bytes) over the lines whose link matches regex $1.
sent_on() {
    awk -v re="$1" '$1 !~ /^#/ && $4 ~ re { s += $5 } END { print s + 0 }' <<<"$2"
}

# Far pairs both ways: each host with the one farthest from it, and corners.
check_tcp() {
    local s d n=$((A * B)) pairs
    pairs="0:$((n - 1)) $((A - 1)):$((n - A)) 0:$((n / 2 + A / 2))"
    for p in $pairs; do
        s=${p%:*} d=${p#*:}
        tcp "$s" "$d" 4096
        tcp "$d" "$s" 4096
    done
    echo "TCP both ways between $pairs"
}

# A unidirectional torus: 64 KiB from (0,0) to (1,0) go over 0's xp, the replies from (1,0)
# go on round the row through (2,0) and (3,0), and no - end of any host sends anything, now or
# ever since up (no ARP, no IPv6, no reply the short way).
check_uni_counters() {
    local before after d h b
    before=$(bash "$cluster" counters --prefix "$P")
    tcp 0 1 65536
    after=$(bash "$cluster" counters --prefix "$P")
    d=$(python3 "$cluster_dir/links.py" <(echo "$before") <(echo "$after") --min-bytes 0)
    echo "$d" | awk '$NF == "used"'
    b=$(sent 0 xp "$d")
    ((b >= 65536)) || fail "0 -> 1: host 0's xp sent $b bytes, want >= 65536"
    for h in 1 2 3; do
        b=$(sent "$h" xp "$d")
        ((b > 0)) || fail "the replies from (1,0) did not go through host $h's xp"
        ((b < 65536)) || fail "host $h's xp sent $b bytes: more than replies"
    done
    b=$(sent_on '^(xp|yp)$' "$d")
    ((b == $(sent 0 xp "$d") + $(sent 1 xp "$d") + $(sent 2 xp "$d") + $(sent 3 xp "$d"))) ||
        fail "0 -> 1 sent on other + links than row 0's"
    b=$(sent_on '^(xm|ym)$' "$after")
    ((b == 0)) || fail "the - ends of a unidirectional torus sent $b bytes"
    echo "unidirectional: 0 -> 1 on 0.xp, its replies through 1.xp 2.xp 3.xp; the - ends" \
        "sent nothing at all"
}

# A bidirectional 3x2: 0 -> 1 goes +, the reply the short way (1.xm); the Y ring of 2 ties
# both ways, so 0 -> 3 goes over 0.yp and 3 -> 0 over 3.yp, the other of the two links, and
# no ym end sends anything. Every link end is shaped, by one tbf (--fifo).
check_bi() {
    local k dev before after d b
    for ((k = 0; k < A * B; k++)); do
        for dev in xp xm yp ym; do
            grep -q "^qdisc tbf .*rate 1Gbit" <<<"$(tc -n "$P$k" qdisc show dev "$dev")" ||
                fail "$P$k's $dev is not shaped to 1gbit by one tbf (--fifo)"
        done
    done
    before=$(bash "$cluster" counters --prefix "$P")
    tcp 0 1 65536
    tcp 0 3 65536
    after=$(bash "$cluster" counters --prefix "$P")
    d=$(python3 "$cluster_dir/links.py" <(echo "$before") <(echo "$after") --min-bytes 0)
    echo "$d" | awk '$NF == "used"'
    (($(sent 0 xp "$d") >= 65536)) || fail "0 -> 1 did not go over 0's xp"
    (($(sent 1 xm "$d") > 0)) || fail "1 -> 0 did not go the short way (1's xm)"
    (($(sent 0 yp "$d") >= 65536)) || fail "0 -> 3 did not go over 0's yp"
    (($(sent 3 yp "$d") > 0)) || fail "3 -> 0 did not go over 3's yp (a tie goes +)"
    b=$(sent_on '^ym$' "$after")
    ((b == 0)) || fail "a ym end sent $b bytes on a ring of 2"
    echo "bidirectional 3x2: shaped; 1 -> 0 the short way (xm); the ring of 2 one way a link"
}

# Bytes that class 1:$3 of device $2 of host $1 has sent.
class_bytes() {
    tc -s -n "$P$1" class show dev "$2" classid "1:$3" | awk '$1 == "Sent" { print $2 }'
}

# Every data queue's bytes sent by device $2 of host $1, "QUEUE BYTES" a line; fails where a
# queue is missing.
queue_bytes() {
    local q b
    for ((q = 0; q < 16; q++)); do
        b=$(class_bytes "$1" "$2" "$(printf '%x' $((0x100 + q)))")
        [ -n "$b" ] || fail "host $1's $2 has no data queue $q"
        echo "$q $b"
    done
}

# A shaped torus queues each link's data per destination (cluster.sh cl_dest_classes: 16
# queues, host k's by (k + 1) mod 16, its address's low bits; unclassified packets in the
# last): 64 KiB from 0 to 1 and to 2 leave host 0's xp in queues 2 and 3, and 1's xp forwards
# 2's in queue 3; no other queue of 0's xp sends anything meanwhile.
check_dest_queues() {
    local b0 a0 b1 a1 q want bytes d
    if no_htb_here "${P}0" xp; then
        echo "no htb or u32 in this kernel: one tbf FIFO a link, no queues to check"
        return 0
    fi
    grep -q "^qdisc htb 1: root .*default 0x10f" <<<"$(tc -n "${P}0" qdisc show dev xp)" ||
        fail "host 0's xp: htb's default is not the last data queue"
    grep -q "^class htb 1:10f parent 1:20 leaf .* ceil 1Gbit" \
        <<<"$(tc -n "${P}0" class show dev xp)" || fail "host 0's xp has no 16 data queues"
    b0=$(queue_bytes 0 xp) b1=$(queue_bytes 1 xp)
    tcp 0 1 65536
    tcp 0 2 65536
    a0=$(queue_bytes 0 xp) a1=$(queue_bytes 1 xp)
    d=$(paste -d' ' <(echo "$b0") <(echo "$a0") | awk '{ print $1, $4 - $2 }')
    echo "host 0's xp, bytes each data queue sent:" "$(tr '\n' ' ' <<<"$d")"
    while read -r q bytes; do
        want=0
        ((q != 2 && q != 3)) || want=65536
        if ((want)); then
            ((bytes >= want)) || fail "0's xp queue $q sent $bytes bytes, want >= $want"
        else
            ((bytes == 0)) || fail "0's xp queue $q sent $bytes bytes, want none"
        fi
    done <<<"$d"
    bytes=$(paste -d' ' <(echo "$b1") <(echo "$a1") | awk '$1 == 3 { print $4 - $2 }')
    ((bytes >= 65536)) || fail "1's xp forwarded $bytes bytes to host 2 in queue 3"
    echo "a queue per destination: 0 -> 1 in 0.xp's queue 2, 0 -> 2 in queue 3 and 1.xp's"
}

# With --bulk-fifo a link's data shares one FIFO: no data queues under class 1:20, which is
# htb's default.
check_bulk_fifo() {
    local classes
    if no_htb_here "${P}0" xp; then
        echo "no htb or u32 in this kernel: one tbf FIFO a link"
        return 0
    fi
    grep -q "^qdisc htb 1: root .*default 0x20" <<<"$(tc -n "${P}0" qdisc show dev xp)" ||
        fail "--bulk-fifo: htb's default is not the bulk class"
    classes=$(tc -n "${P}0" class show dev xp)
    grep -q "^class htb 1:20 parent 1:1 leaf" <<<"$classes" ||
        fail "--bulk-fifo: host 0's xp has no one bulk FIFO: $classes"
    ! grep -q "^class htb 1:10f" <<<"$classes" || fail "--bulk-fifo: data queues were made"
    echo "--bulk-fifo: one bulk FIFO a link"
}

# The checks of one torus, prefix $P, $A x $B, $UNI.
check_torus() {
    check_topo
    check_hosts
    check_routes
    check_tcp
    if ((UNI)); then
        check_uni_counters
    else
        check_bi
    fi
}

# Under cluster.sh run: its variables name the torus.
inside_uni() {
    [ "${CLUSTER_TORUS:-}" = 4x4 ] || fail "CLUSTER_TORUS is '${CLUSTER_TORUS:-}', not 4x4"
    [ "${CLUSTER_TOPO_SPEC:-}" = torus:4x4:uni ] ||
        fail "CLUSTER_TOPO_SPEC is '${CLUSTER_TOPO_SPEC:-}', not torus:4x4:uni"
    [ "${CLUSTER_TOPO:-}" = "/run/fastmsg-cluster-$CLUSTER_PREFIX.topo" ] ||
        fail "CLUSTER_TOPO is '${CLUSTER_TOPO:-}'"
    [ "$CLUSTER_N" = 16 ] || fail "CLUSTER_N is $CLUSTER_N"
    P=$CLUSTER_PREFIX A=4 B=4 UNI=1
    check_torus
    check_dest_queues
}

# TCP endpoints seen in every host, once a second, until killed or the script ends.
sample_connections() {
    local k
    while kill -0 "$$" 2>/dev/null; do # (ends with the script, even one killed by a timeout)
        for ((k = 0; k < A * B; k++)); do
            ip netns exec "$P$k" ss -tnH 2>/dev/null || true
        done
        sleep 1
    done
}

# where.sh's lines: one for each of ranks 0..N-1, rank k on host k at k's /32 (any order).
check_where() {
    local k
    for ((k = 0; k < A * B; k++)); do
        expect_count 1 "^where: rank $k host $P$k netns $P$k fm0 $(addr_of "$k" |
            sed 's/\./\\./g')/32\$" "$1"
    done
}

# A job launched in host 0 through the agent, under a time limit; $out, $rc.
in_host0() {
    local secs=$1
    shift
    rc=0
    out=$(timeout -k 5 "$secs" "$CLUSTER_AGENT" "${P}0" "$@" 2>&1) || rc=$?
    echo "$out"
}

# fastmsg-bench-mpi-bcast's rows for sizes 1 and 65536, no wrong copies.
check_bcast() {
    expect_count 1 "^$1 +- +- +1 " "$out"
    expect_count 1 "^$1 +- +- +65536 " "$out"
    ! grep -q "wrong copies" <<<"$out" || fail "$1: wrong copies"
}

inside_jobs() {
    local sampler before after bad b ompi_bc=$MPI_BCAST_OPENMPI mpich_bc=$MPI_BCAST_MPICH
    P=$CLUSTER_PREFIX A=4 B=4 UNI=1
    [ "$CLUSTER_TOPO_SPEC" = torus:4x4:uni ] || fail "CLUSTER_TOPO_SPEC is $CLUSTER_TOPO_SPEC"
    before=$(bash "$cluster" counters --prefix "$P")
    sample_connections >"$tmp/ss" &
    sampler=$!

    export FM_PROVIDER=tcp FM_IFACE=fm0 FM_TIMEOUT=60 FM_TOPOLOGY=torus:4x4:uni
    in_host0 60 "$fmrun" -n 16 --agent "$CLUSTER_AGENT" --hosts "$CLUSTER_HOSTS" \
        --addr "$CLUSTER_ADDR0" bash "$here/where.sh" "$hello"
    [ "$rc" -eq 0 ] || fail "fastmsg-run hello exited $rc"
    check_where "$out"
    expect_count 16 "greetings ok" "$out"
    in_host0 120 "$fmrun" -n 16 --agent "$CLUSTER_AGENT" --hosts "$CLUSTER_HOSTS" \
        --addr "$CLUSTER_ADDR0" "$mcast" --sizes 0,1,P+1,64K+3 \
        --trees sepaddr,utorus,storus,mdtorus,mutorus,mutorus:3,binomial,prefix,auto
    [ "$rc" -eq 0 ] || fail "fastmsg-run mcast_check exited $rc"
    expect_count 16 "PASS" "$out"
    # 11 of the hosts, listed out of order: each placed by the number its name ends in; the
    # torus trees over some of them from every root
    in_host0 120 "$fmrun" -n 11 --agent "$CLUSTER_AGENT" \
        --hosts "${P}0,${P}13,${P}6,${P}2,${P}15,${P}9,${P}4,${P}11,${P}7,${P}1,${P}10" \
        --addr "$CLUSTER_ADDR0" "$mcast" --subset some --sizes 1,64K+3 \
        --trees sepaddr,utorus,storus,mdtorus,mutorus,auto
    [ "$rc" -eq 0 ] || fail "fastmsg-run mcast_check on 11 hosts exited $rc"
    expect_count 11 "PASS" "$out"

    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    if [ -n "$ompi_bc" ] && command -v mpirun.openmpi >/dev/null; then
        in_host0 120 mpirun.openmpi --mca plm_rsh_agent "$CLUSTER_AGENT" --host "$CLUSTER_HOSTS" \
            -n 16 --bind-to none --mca mpi_yield_when_idle 1 --mca pml ob1 --mca btl tcp,self \
            --mca btl_tcp_if_include fm0 --mca oob_tcp_if_include fm0 \
            bash "$here/where.sh" "$ompi_bc" --sizes 1,64K -r 1 --timeout 60 --warmup 0
        [ "$rc" -eq 0 ] || fail "Open MPI's fastmsg-bench-mpi-bcast exited $rc"
        check_where "$out"
        check_bcast ompi-bcast
    else
        ompi_bc=
    fi
    if [ -n "$mpich_bc" ] && command -v mpiexec.mpich >/dev/null; then
        # MPICH over UCX's tcp often stalls in MPI_Finalize once every rank is done, on the
        # star too (README, known problems); the benchmark's own --timeout then ends it. The
        # rows and every rank's line are the run; a stall is told, not failed.
        in_host0 90 mpiexec.mpich -launcher ssh -launcher-exec "$CLUSTER_AGENT" \
            -hosts "$CLUSTER_HOSTS" -iface fm0 -n 16 -genv UCX_TLS tcp,self \
            -genv UCX_NET_DEVICES fm0 bash "$here/where.sh" "$mpich_bc" --sizes 1,64K -r 1 \
            --timeout 10 --warmup 0
        [ "$rc" -eq 0 ] || echo "NOTE: mpiexec.mpich exited $rc after its rows (the MPI_Finalize stall)"
        check_where "$out"
        check_bcast mpich-bcast
    else
        mpich_bc=
    fi
    kill "$sampler"
    wait "$sampler" 2>/dev/null || true

    # Between hosts only fm0's addresses; a launcher talks to its ranks in a host over the
    # loopback too (both ends 127.x, which no link can carry).
    echo "TCP endpoints seen (address, times): $(grep -oE '([0-9]+\.){3}[0-9]+' "$tmp/ss" |
        sort | uniq -c | awk '{printf " %s %s", $2, $1}')"
    bad=$(awk '{ l = $4; p = $5; sub(/:[0-9]+$/, "", l); sub(/:[0-9]+$/, "", p) }
        !((l ~ /^198\.18\./ && p ~ /^198\.18\./) || (l ~ /^127\./ && p ~ /^127\./)) {
        print l " - " p }' "$tmp/ss" | sort -u)
    [ -z "$bad" ] || fail "TCP connections not between two fm0 addresses: $bad"
    after=$(bash "$cluster" counters --prefix "$P")
    python3 "$cluster_dir/links.py" <(echo "$before") <(echo "$after") | grep "^links used"
    b=$(python3 "$cluster_dir/links.py" --json <(echo "$before") <(echo "$after") |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["links_used"])')
    ((b == 32)) || fail "the jobs used $b of the 32 + links (more than 10000 bytes), want all"
    b=$(sent_on '^(xm|ym)$' "$after")
    ((b == 0)) || fail "the - ends sent $b bytes during the jobs"
    [ -n "$ompi_bc" ] || skip "no Open MPI benchmark (fastmsg-bench-mpi-bcast-openmpi) or mpirun.openmpi"
    [ -n "$mpich_bc" ] || skip "no MPICH benchmark (fastmsg-bench-mpi-bcast-mpich) or mpiexec.mpich"
}

# Arguments that are refused, and the topology text, with no namespaces made.
check_options() {
    local want
    want=$(printf '%s\n' "# FM_TOPOLOGY=file:PATH for cluster.sh's 6 hosts in a 3x2 torus" \
        "q0 0 0" "q1 1 0" "q2 2 0" "q3 0 1" "q4 1 1" "q5 2 1")
    [ "$(bash "$cluster" topo 6 --torus 3x2 --prefix q | sed 's/ (prefix q): NAME X Y$//')" = \
        "$want" ] || fail "topo 6 --torus 3x2: $(bash "$cluster" topo 6 --torus 3x2 --prefix q)"
    local bad
    for bad in "topo 6 --torus 2x2" "topo 6 --torus 6x1" "topo 6 --torus 3x2x1" \
        "topo 6 --torus 3x2 --racks 2" "up 4 --unidirectional --prefix q" \
        "up 1000 --torus 2x500 --unidirectional --prefix q" \
        "up 4 --torus 2x2 --bulk-fifo --prefix q" "up 4 --rate 1gbit --bulk-fifo --prefix q" \
        "up 4 --torus 2x2 --rate 1gbit --fifo --bulk-fifo --prefix q"; do
        # shellcheck disable=SC2086 # the words of one command line
        ! bash "$cluster" $bad 2>/dev/null || fail "cluster.sh $bad was accepted"
    done
    ! ip netns list | grep -qE '^q[0-9]' || fail "a refused up left namespaces q*"
    echo "options: topo 6 --torus 3x2 right; bad sizes, --racks with --torus," \
        "--unidirectional alone, a 2x500 unidirectional torus and --bulk-fifo without a" \
        "shaped torus or with --fifo refused"
}

root_links() {
    ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | sort
}

# Nothing of prefix $1 left: namespaces, /etc/netns entries, the topology file.
left_of() {
    local left
    left=$(ip netns list | awk '{print $1}' | grep -E "^$1[0-9]" || true)
    left+=$(find /etc/netns -maxdepth 1 -name "$1*" 2>/dev/null | tr '\n' ' ' || true)
    [ ! -e "/run/fastmsg-cluster-$1.topo" ] || left+=" /run/fastmsg-cluster-$1.topo"
    echo "$left"
}

outside_cleanup() {
    local p
    for p in "${prefixes[@]}"; do
        bash "$cluster" down --prefix "$p" >/dev/null 2>&1 || true
    done
    rm -rf "$tmp"
}

outside() {
    local mode=$1 rc=0 before after new left p
    [ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
    command -v ip >/dev/null || skip "no ip command (iproute2)"
    command -v python3 >/dev/null || skip "no python3 (bench/cluster/flow.py, links.py)"
    tmp=$(mktemp -d)
    # Unique, so that they cannot meet another cluster; not ending with a digit (cluster.sh).
    pb=fmtb$$x pu=fmtu$$x pf=fmtf$$x
    prefixes=("$pb" "$pu" "$pf")
    trap outside_cleanup EXIT
    before=$(root_links)
    if [ "$mode" = routes ]; then
        check_options
        rc=0
        bash "$cluster" up 6 --torus 3x2 --rate 1gbit --fifo --prefix "$pb" || rc=$?
        [ "$rc" -ne 77 ] || exit 77
        [ "$rc" -eq 0 ] || fail "cluster.sh up 6 --torus 3x2 exited $rc"
        P=$pb A=3 B=2 UNI=0
        check_torus
        # The 4x4 comes up beside the 3x2, through run.
        timeout -k 10 120 bash "$cluster" run 16 --torus 4x4 --unidirectional --rate 1gbit \
            --prefix "$pu" -- bash "$0" --inside uni "$cluster" || rc=$?
        [ "$rc" -ne 77 ] || exit 77
        [ "$rc" -eq 0 ] || fail "the 4x4 unidirectional torus: exited $rc"
        bash "$cluster" down --prefix "$pb" || fail "cluster.sh down --prefix $pb"
        bash "$cluster" down --prefix "$pb" || fail "a second down --prefix $pb"
        bash "$cluster" up 4 --torus 2x2 --unidirectional --rate 1gbit --bulk-fifo \
            --prefix "$pf" >/dev/null || rc=$?
        [ "$rc" -ne 77 ] || exit 77
        [ "$rc" -eq 0 ] || fail "cluster.sh up 4 --torus 2x2 --bulk-fifo exited $rc"
        P=$pf check_bulk_fifo
        bash "$cluster" down --prefix "$pf" || fail "cluster.sh down --prefix $pf"
    else
        timeout -k 10 240 bash "$cluster" run 16 --torus 4x4 --unidirectional --prefix "$pu" -- \
            bash "$0" --inside jobs "$cluster" "$fmrun" "$hello" "$mcast" "$MPI_BCAST_OPENMPI" \
            "$MPI_BCAST_MPICH" || rc=$?
        [ "$rc" -ne 77 ] || exit 77
        [ "$rc" -eq 0 ] || fail "the jobs on the 4x4 torus: exited $rc"
    fi
    for p in "${prefixes[@]}"; do
        left=$(left_of "$p")
        [ -z "$left" ] || fail "left behind: $left"
    done
    after=$(root_links)
    new=$(comm -13 <(echo "$before") <(echo "$after") | grep -E '^(fm0|xp|xm|yp|ym)$' || true)
    [ -z "$new" ] || fail "interfaces added to the root namespace: $new"
    echo "PASS: torus $mode"
}

if [ "${1:-}" = --inside ]; then
    mode=$2 cluster=$3
    cluster_dir=$(dirname "$cluster")
    flow=$cluster_dir/flow.py
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    case $mode in
    uni) inside_uni ;;
    jobs)
        [ $# -eq 8 ] || fail "usage: torus.sh --inside jobs CLUSTER_SH FASTMSG_RUN HELLO" \
            "MCAST_CHECK MPI_BCAST_OPENMPI MPI_BCAST_MPICH"
        fmrun=$4 hello=$5 mcast=$6 MPI_BCAST_OPENMPI=$7 MPI_BCAST_MPICH=$8
        inside_jobs
        ;;
    *) fail "unknown mode $mode" ;;
    esac
else
    case ${1:-} in
    routes)
        [ $# -eq 2 ] || fail "usage: torus.sh routes CLUSTER_SH"
        cluster=$2
        ;;
    jobs)
        [ $# -eq 7 ] || fail "usage: torus.sh jobs CLUSTER_SH FASTMSG_RUN HELLO MCAST_CHECK" \
            "MPI_BCAST_OPENMPI MPI_BCAST_MPICH"
        cluster=$2 fmrun=$3 hello=$4 mcast=$5 MPI_BCAST_OPENMPI=$6 MPI_BCAST_MPICH=$7
        ;;
    *) fail "usage: torus.sh routes|jobs CLUSTER_SH ..." ;;
    esac
    cluster_dir=$(dirname "$cluster")
    flow=$cluster_dir/flow.py
    outside "$1"
fi
