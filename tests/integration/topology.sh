#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-info --topology under fastmsg-run: every rank agrees on the topology at fm_init and
# rank 0 prints it. 4 ranks on this one host with FM_TOPOLOGY=torus:2x2 get one position per
# rank (x = rank % 2, y = rank / 2); a torus that fits neither the hosts nor the ranks fails
# fm_init with a message naming FM_TOPOLOGY.
# usage: topology.sh FASTMSG_RUN FASTMSG_INFO
set -u
fmrun=$1 info=$2
export FM_PROVIDER=shm FM_TIMEOUT=30
fail() { echo "FAIL: $*"; echo "$out" | sed 's/^/    /'; exit 1; }

out=$(FM_TOPOLOGY=torus:2x2 timeout -k 5 60 "$fmrun" -n 4 "$info" --topology 2>&1) ||
  fail "fastmsg-info --topology exited $?"
echo "$out"
grep -q "4 ranks on 1 host" <<<"$out" || fail "no summary of 4 ranks on 1 host"
grep -qi "torus 2x2" <<<"$out" || fail "the summary does not name the 2x2 torus"
# One table row per rank: its rank first, its coordinates last ("(x,y)" or "x y").
for r in 0 1 2 3; do
  x=$((r % 2)) y=$((r / 2))
  row=$(grep -E "^ *$r[[:space:]]" <<<"$out" | head -1)
  [ -n "$row" ] || fail "no row for rank $r"
  grep -qE "\(?$x,? ?$y\)? *$" <<<"$row" || fail "rank $r: want coordinates $x,$y in: $row"
done

out=$(FM_TOPOLOGY=torus:2x2:uni timeout -k 5 60 "$fmrun" -n 4 "$info" --topology 2>&1) ||
  fail "fastmsg-info --topology (torus:2x2:uni) exited $?"
grep -q "torus 2x2 (unidirectional), one position per rank" <<<"$out" ||
  fail "the summary does not name the unidirectional 2x2 torus"

out=$(FM_TOPOLOGY=torus:3x3 timeout -k 5 60 "$fmrun" -n 4 "$info" --topology 2>&1)
rc=$?
[ $rc -ne 0 ] || fail "a 3x3 torus on 4 ranks of 1 host was accepted"
grep -q 'FM_TOPOLOGY="torus:3x3"' <<<"$out" || fail "no message naming FM_TOPOLOGY"
echo "PASS: topology"
