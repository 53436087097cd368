#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two jobs at once (fastmsg-run -n 2 each), each flooding the other's rank 0 with packets from
# outside (isolation.c): both must drop and count every one, keep their own traffic intact,
# and exit 0. Over tcp the flood includes a packet larger than the receive buffers (over shm it
# hangs the receiver inside libfabric 1.17, which then loops on process_vm_readv of 0 bytes).
# usage: isolation.sh PROVIDER FASTMSG_RUN ISOLATION
set -euo pipefail
provider=$1 fmrun=$2 prog=$3
for v in $(env | sed -n 's/^\(PMI[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
unset FASTMSG_RUN_ADDR FM_BOOTSTRAP
export FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=60
oversize=0
[ "$provider" = tcp ] && oversize=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

echo "+ FM_PROVIDER=$provider: fastmsg-run -n 2 isolation --name A & ... --name B"
timeout -k 5 70 "$fmrun" -n 2 "$prog" --dir "$dir" --name A --peer B --oversize "$oversize" >"$dir/A.out" 2>&1 &
a=$!
timeout -k 5 70 "$fmrun" -n 2 "$prog" --dir "$dir" --name B --peer A --oversize "$oversize" >"$dir/B.out" 2>&1 &
b=$!
rc_a=0 rc_b=0
wait "$a" || rc_a=$?
wait "$b" || rc_b=$?
status=0
for job in A B; do
    rc=$([ $job = A ] && echo "$rc_a" || echo "$rc_b")
    echo "--- job $job (exit $rc):"
    cat "$dir/$job.out"
    pass=$(grep -c "PASS isolation" "$dir/$job.out" || true)
    if [ "$rc" -ne 0 ] || [ "$pass" -ne 2 ]; then
        echo "FAIL: job $job exited $rc with $pass of 2 ranks passing"
        status=1
    fi
done
[ $status -eq 0 ] && echo "PASS: both jobs dropped every packet from outside and kept working"
exit $status
