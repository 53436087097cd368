#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: ev_loop.sh PROVIDER NPROCS FASTMSG_RUN EV_LOOP
set -u
export FM_PROVIDER=$1 FI_TCP_IFACE=lo
out=$(timeout -k 5 90 "$3" -n "$2" "$4" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
[ "$(grep -c 'through the ev loop ok' <<<"$out")" -eq "$2" ] || { echo "FAIL: not every rank ok"; exit 1; }
echo "PASS"
