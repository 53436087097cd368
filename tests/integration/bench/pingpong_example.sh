#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/pingpong runs over shm under fastmsg-run -n 2 and prints its latency line.
# usage: pingpong_example.sh FASTMSG_RUN PINGPONG
set -u
export FM_PROVIDER=shm FM_TIMEOUT=60
out=$(timeout -k 5 90 "$1" -n 2 "$2" 200 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -Eq "^pingpong: 200 round trips of 8 B, one-way latency [0-9.]+ us$" <<<"$out" ||
  { echo "FAIL: no latency line"; exit 1; }
[ "$(wc -l <<<"$out")" -eq 1 ] || { echo "FAIL: unexpected output"; exit 1; }
echo "PASS: examples/pingpong"
