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

"$tree" --help | grep -q -- "--store-forward" || fail "--help does not list the options"
for bad in "star -n 4" "kbinomial:0 -n 4" "kbinomial:3x -n 4" "binomial:2 -n 4" "binomial" \
  "binomial -n 0" "binomial -n x" "binomial -n 4 -m 0" "binomial -n 4 --root 4" \
  "binomial -n 4 --lambda 0.5" "binomial -n 4 --bogus" "binomial chain -n 4" "binomial -n"; do
  # shellcheck disable=SC2086
  "$tree" $bad >/dev/null 2>"${TMPDIR:-/tmp}/tree_err.$$"
  rc=$?
  [ $rc -eq 2 ] || fail "'$bad' exited $rc, not 2"
  grep -q "fastmsg-tree:" "${TMPDIR:-/tmp}/tree_err.$$" || fail "'$bad' gave no message"
done
rm -f "${TMPDIR:-/tmp}/tree_err.$$"
echo "PASS: fastmsg-tree"
