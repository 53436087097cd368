#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/memory.sh smoke test: 2 and 4 ranks over shm and tcp, a row of figures per provider and
# size and the ratio row; send buffers the same at 4 ranks as at 2, receive buffers too over
# shm (receive regions), exactly twice as large over tcp (64 KiB packets: a buffer per credit
# per peer, providers/ofi/README.md) (the pools' sizes, not timings); a bad provider refused.
# usage: memory_smoke.sh MEMORY_SH BUILD_DIR
set -u
script=$1 build=$2
# shellcheck source=tests/integration/bench/lib.sh
. "$(dirname "$0")/lib.sh"

capture 10 bash "$script" --providers nosuch --build "$build"
[ "$rc" -eq 2 ] || fail "an unknown provider does not exit 2 (exit $rc)"
[[ $err == *"unknown provider 'nosuch'"* ]] || fail "an unknown provider is not named: $err"

# Below the per-peer buffers of 2 ranks (2 x 9 x 65,600 B): shm takes regions at both sizes.
export FM_RECV_POOL=1M
quiet 100 bash "$script" --ranks "2 4" --providers "shm tcp" --build "$build" --timeout 60
num='[0-9]+\.[0-9]+'
for p in shm tcp; do
  for n in 2 4; do
    grep -Eq "^$p +$n( +$num){9}$" <<<"$out" || fail "no $p row for $n ranks"
  done
  ratio=$(grep -E "^$p +x " <<<"$out") || fail "no $p ratio row"
  read -r _ _ recv send _ <<<"$ratio"
  want=1.00
  [ "$p" = tcp ] && want=2.00
  [ "$recv" = "$want" ] || fail "$p: receive buffers x$recv from 2 to 4 ranks, want x$want"
  [ "$send" = 1.00 ] || fail "$p: send buffers x$send from 2 to 4 ranks, want x1.00"
done
echo "PASS: memory.sh smoke"
