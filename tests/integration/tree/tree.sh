#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-tree's exact output for DESIGN.md's worked examples, and exit status 2 on bad input.
# usage: tree.sh FASTMSG_TREE
set -u
tree=$1
fail() { echo "FAIL: $*"; exit 1; }

out=$("$tree" binomial -n 8 -m 3) || fail "binomial -n 8 -m 3 exited $?"
want='0: 4 2 1
1:
2: 3
3:
4: 6 5
5:
6: 7
7:
steps 9'
[ "$out" = "$want" ] || fail "binomial -n 8 -m 3 printed:
$out"

last() { "$tree" "$@" 2>/dev/null | tail -1; }
[ "$(last kbinomial -n 64 -m 64)" = "steps 126" ] || fail "kbinomial -n 64 -m 64"
[ "$(last binomial -n 64 -m 64)" = "steps 384" ] || fail "binomial -n 64 -m 64"
[ "$(last binomial -n 4 -m 3)" = "steps 6" ] || fail "binomial -n 4 -m 3"
[ "$(last chain -n 4 -m 3)" = "steps 5" ] || fail "chain -n 4 -m 3"
[ "$(last chain -n 4 -m 3 --store-forward)" = "steps 9" ] || fail "chain --store-forward"
[ "$(last postal:2 -n 10)" = "steps 6" ] || fail "postal:2 -n 10 (F(6) = 13 >= 10 > F(5))"
[ "$("$tree" kbinomial -n 64 -m 64 2>&1 >/dev/null)" = "# k=1" ] || fail "no '# k=1' on stderr"
[ "$("$tree" flat -n 64 | wc -l)" -eq 65 ] || fail "flat -n 64: not 64 member lines + steps"

out=$("$tree" chain -n 3 --root 1) || fail "chain --root 1 exited $?"
[ "$out" = $'0:\n1: 2\n2: 0\nsteps 2' ] || fail "chain --root 1 printed: $out"

# Torus trees on a whole 4x4 torus (member i at position i = x + 4y), worked by hand: the
# S-torus chain in row-major order, Md-torus's rings, link visits of separate addressing (the
# hop counts from (0,0): 0 1 2 1 along a bidirectional ring, 0 1 2 3 one way; 4 x 4 per axis)
# and of the unidirectional S-torus (3 hops in each row, 2 between rows: 4 x 3 + 3 x 2).
out=$("$tree" storus --torus 4x4 | head -16 | tr '\n' ';')
[ "$out" = "0: 1;1: 2;2: 3;3: 4;4: 5;5: 6;6: 7;7: 8;8: 9;9: 10;10: 11;11: 12;12: 13;13: 14;14: 15;15:;" ] ||
  fail "storus --torus 4x4 printed: $out"
out=$("$tree" mdtorus --torus 4x4 | head -5 | tr '\n' ';')
[ "$out" = "0: 1 4 8 12;1: 2;2: 3;3:;4: 5;" ] || fail "mdtorus --torus 4x4 printed: $out"
costs=${TMPDIR:-/tmp}/tree_costs.$$
printf '%s\n' send_msg_ns=0 send_pkt_ns=1000 send_ns_per_kib=0 fill_ns_per_kib=0 \
  gap_ns_per_kib=1024 recv_pkt_ns=0 recv_ns_per_kib=0 copy_ns_per_kib=0 latency_ns=500 \
  wake_ns=0 spin_ns=0 poll_ns=0 burst_bytes=0 >"$costs"
[ "$(last sepaddr --torus 4x4 --costs "$costs" --bytes 65536)" = "links 32 15" ] ||
  fail "sepaddr on a bidirectional 4x4: link visits"
[ "$(last sepaddr --torus 4x4:uni --costs "$costs" --bytes 65536)" = "links 48 15" ] ||
  fail "sepaddr on a unidirectional 4x4: link visits"
[ "$(last storus --torus 4x4:uni --costs "$costs" --bytes 65536)" = "links 18 18" ] ||
  fail "storus on a unidirectional 4x4: link visits"
# One 1000-byte packet on a one-way ring of 3, separate addressing: the copy to member 1
# leaves the CPU at 1 us and the link at 2, there at 2.5; the copy to 2 leaves the CPU at 2,
# the link at 3, and crosses a router, which passes on the frame (1000 B and 66 of headers)
# once it has it: + 0.5 + 1066 B at 1 ns/B.
out=$("$tree" sepaddr --torus 3:uni --costs "$costs" --bytes 1000 --packet 1000 | tail -2 |
  tr '\n' ';')
[ "$out" = "seconds 4.566e-06;links 3 2;" ] || fail "sepaddr on a ring of 3: $out"
# The same members placed the other way (--place: member 1 at position 2, member 2 at 1), each
# member's time (--each): separate addressing sends in the ring's order (member 2, at position
# 1, first), so the copies leave as above and member 1 now has the router's time.
out=$("$tree" sepaddr --torus 3:uni --place 0,2,1 --costs "$costs" --bytes 1000 --packet 1000 \
  --each | grep '^member' | tr '\n' ';')
[ "$out" = "member 0 0;member 1 4.566e-06;member 2 2.5e-06;" ] ||
  fail "sepaddr on a ring of 3, placed: $out"
# A chain of 3 on a ring, 8 packets, a window of 2: the copies take the same links one way
# round or both ways (as fast without credits), but one way round member 1's credits to the
# root go round behind its own copies to member 2, so the chain is slower there. Posts of
# 200 ns: with a window of 2 member 1 also sends a credit packet per packet, and at 1 us a
# post its CPU, not the link, would bind both ways alike.
sed 's/^send_pkt_ns=1000$/send_pkt_ns=200/' "$costs" >"$costs.fast"
secs() { "$tree" chain "$@" --costs "$costs.fast" --bytes 8000 --packet 1000 -m 8 | sed -n 's/^seconds //p'; }
slower() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(a > f * b) }'; }
[ "$(secs --torus 3:uni)" = "$(secs --torus 3)" ] || fail "a chain of 3: one way != both ways"
slower "$(secs --torus 3:uni --credits 2)" "$(secs --torus 3 --credits 2)" 1.1 ||
  fail "credits going round a one-way ring cost nothing"
rm -f "$costs" "$costs.fast"

"$tree" --help | grep -q -- "--store-forward" || fail "--help does not list the options"
for bad in "star -n 4" "kbinomial:0 -n 4" "kbinomial:3x -n 4" "binomial:2 -n 4" "binomial" \
  "binomial -n 0" "binomial -n x" "binomial -n 4 -m 0" "binomial -n 4 --root 4" \
  "binomial -n 4 --lambda 0.5" "binomial -n 4 --bogus" "binomial chain -n 4" "binomial -n" \
  "storus --torus 4y4" "storus --torus 4x4 -n 17" "storus --torus 4x4:both" \
  "storus -n 4 --costs /nonexistent" "chain -n 4 --credits x" "chain -n 4 --credits -1" \
  "chain --torus 3 --place 0,1,1" "chain --torus 3 --place 0,1,3" "chain --torus 3 --place x" \
  "chain --torus 3 -n 2 --place 0,1,2" "chain -n 3 --place 0,1,2" "chain -n 3 --each" \
  "chain --torus 3 --place 0,1," "chain --torus 3 --place 0,1 --seed 2" \
  "chain -n 2 --costs /dev/null --bytes 10 --packet 0"; do
  # shellcheck disable=SC2086
  "$tree" $bad >/dev/null 2>"${TMPDIR:-/tmp}/tree_err.$$"
  rc=$?
  [ $rc -eq 2 ] || fail "'$bad' exited $rc, not 2"
  grep -q "fastmsg-tree:" "${TMPDIR:-/tmp}/tree_err.$$" || fail "'$bad' gave no message"
done
rm -f "${TMPDIR:-/tmp}/tree_err.$$"
echo "PASS: fastmsg-tree"
