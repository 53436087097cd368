# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# Sourced by run.sh and torus.sh (which define fail): whether cluster.sh could shape with htb.

# True (0) where namespace $1's device $2 has no htb because this kernel lacks htb or u32, so
# that cluster.sh shaped it with one tbf FIFO (probed on the namespace's lo); false where the
# device has htb; fails where it has none though htb and u32 work here.
no_htb_here() {
    local ns=$1 dev=$2
    ! grep -q '^qdisc htb' <<<"$(tc -n "$ns" qdisc show dev "$dev")" || return 1
    if tc -n "$ns" qdisc add dev lo root handle 1: htb 2>/dev/null &&
        tc -n "$ns" filter add dev lo parent 1: protocol ip prio 1 u32 \
            match u16 0x0000 0xff00 at 2 classid 1:1 2>/dev/null; then
        tc -n "$ns" qdisc del dev lo root
        fail "$ns's $dev has no htb, though htb and u32 work here"
    fi
    tc -n "$ns" qdisc del dev lo root 2>/dev/null || true
}
