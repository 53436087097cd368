#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bad FM_* values at fm_init: for every variable in runtime/util/config_table.h and every kind of
# badness (not a number, out of range, unknown name, malformed, too long, ranks that disagree),
# a 2-rank job must exit with the program's own status 1 (no crash, no hang) and say
# VAR="value" on one line. Then one good run, so a broken program cannot pass.
# usage: bad_env.sh FASTMSG_RUN API_ERRORS
set -u
fmrun=$1 prog=$2
export FI_TCP_IFACE=lo
long=$(printf 'x%.0s' $(seq 200))
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
runs=0

# check_one NAME VALUE [PROVIDER]: the job fails cleanly and names NAME="VALUE"; says "ok: ..."
# or "FAIL: ..." with the job's output.
check_one() {
  local name=$1 value=$2 provider=${3:-shm} out rc
  out=$(env FM_PROVIDER="$provider" FM_TIMEOUT=10 "$name=$value" \
        timeout -k 5 60 "$fmrun" -n 2 "$prog" --init-only 2>&1)
  rc=$?
  local shown=$value
  [ ${#shown} -le 60 ] || shown=${shown:0:60}
  if [ $rc -ne 1 ]; then
    echo "FAIL: $name=\"$value\": job exited $rc, want 1 (the program's own failure)"
  elif ! grep -qF "$name=\"$shown" <<<"$out"; then
    echo "FAIL: $name=\"$value\": no message naming $name=\"$shown\""
  elif grep -qE "signal|Segmentation|Aborted|core dumped|Sanitizer" <<<"$out"; then
    echo "FAIL: $name=\"$value\": a process crashed"
  else
    echo "ok: $(grep -F "$name=\"$shown" <<<"$out" | head -1 | cut -c1-160)"
    return
  fi
  echo "$out" | sed 's/^/    /'
}

# check NAME VALUE [PROVIDER]: check_one, four at a time (each job is two processes that mostly
# wait for each other to start), its lines kept for the end in the order of the checks.
check() {
  runs=$((runs + 1))
  check_one "$@" >"$results/$(printf '%04d' "$runs")" &
  [ "$(jobs -rp | wc -l)" -lt 4 ] || wait -n
}

check FM_PROVIDER bogus
check FM_PROVIDER ""
check FM_PROVIDER "verbs;ofi_rxm"
check FM_PROVIDER "$long"
check FM_IFACE nosuchif0 tcp
check FM_IFACE "$long" tcp
check FM_BOOTSTRAP nonsense
check FM_BOOTSTRAP ""
check FM_BOOTSTRAP pmi1
for v in abc 0 -1 86401 "" 1.5 10s " 5 " 99999999999999999999; do check FM_TIMEOUT "$v"; done
for v in abc 63 0 2M -64 64Q 1K1 ""; do check FM_PACKET_SIZE "$v"; done
for v in 0 4097 x 1.0 -8; do check FM_CREDITS "$v"; done
for v in -1 2T x 2000G; do check FM_ZCOPY "$v"; done
for v in -1 x 2000G 1KB; do check FM_OVERFLOW "$v"; done
for v in 0 -1 x 16777217 1K; do check FM_REQUESTS "$v"; done
for v in -1 x 2000G 1KB 4K4 ""; do check FM_MESSAGE_BUFFER "$v"; done
for v in maybe 2 ""; do check FM_WAIT_FD "$v"; done
for v in bogus kbinomial:x kbinomial:0 flat:2 postal:0 ""; do check FM_TREE "$v"; done
for v in 1:2 a:b:c -1:0:0 0:0:0 1:2:3:4; do check FM_MCAST_COSTS "$v"; done
for v in 1 257 x ""; do check FM_PREFIX_BASE "$v"; done
for v in closest "" Random; do check FM_PREFIX_CHOICE "$v"; done
for v in -1 x 2M 8KB; do check FM_PREFIX_SEGMENT "$v"; done
# on: a job on one host has no datagram multicast (lo has none)
for v in bogus "" ON on; do check FM_MCAST_DGRAM "$v"; done
for v in 10.0.0.1:5000 239.1.1.1 239.1.1.1:0 239.1.1.1:70000 x:1 239.1.1:5; do
  check FM_MCAST_GROUP "$v"
done
for v in -1 x 1KB; do check FM_MCAST_RATE "$v"; done
for v in 0 x 10000001; do check FM_MCAST_REPAIR_WAIT "$v"; done
for v in bogus "" NACK; do check FM_MCAST_REPAIR "$v"; done
for v in -1 x; do check FM_MCAST_ROOT_DELAY "$v"; done
for v in maybe 2; do check FM_MCAST_SYNC "$v"; done
for v in 1.5 -0.1 x "" 0.5x nan; do check FM_MCAST_DROP "$v"; done
# malformed, and well-formed but fitting neither the 2 ranks nor the 1 host
for v in bogus torus: torus:0x2 torus:2x torus:-2 "torus:2 " file:/nonexistent torus:4 torus:3x3 \
  torus:2:both torus:2:uni: torus:3x3:uni; do
  check FM_TOPOLOGY "$v"
done
for v in 4 -1 x; do check FM_VERBOSE "$v"; done
for v in 2 maybe; do check FM_STATS "$v"; done

wait
cat "$results"/*
fails=$(cat "$results"/* | grep -c '^FAIL:')

# Settings that must agree across the job: rank 1 starts with another FM_CREDITS.
runs=$((runs + 1))
out=$(env FM_PROVIDER=shm FM_TIMEOUT=10 timeout -k 5 60 "$fmrun" -n 2 \
      sh -c 'FM_CREDITS=$((FASTMSG_RUN_RANK + 4)) exec "$0" --init-only' "$prog" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -qE 'FM_CREDITS="[45]", this rank with FM_CREDITS="[45]"' <<<"$out"; then
  echo "ok: FM_CREDITS=4 on rank 0, 5 on rank 1: $(grep FM_CREDITS <<<"$out" | head -1)"
else
  echo "FAIL: ranks with different FM_CREDITS: job exited $rc"
  echo "$out" | sed 's/^/    /'
  fails=$((fails + 1))
fi

# The same program with good settings passes.
runs=$((runs + 1))
out=$(env FM_PROVIDER=tcp FM_IFACE=lo FM_TREE=kbinomial:2 FM_TIMEOUT=10 \
      timeout -k 5 60 "$fmrun" -n 2 "$prog" --init-only 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ "$(grep -c "fm_init ok" <<<"$out")" -ne 2 ]; then
  echo "FAIL: good settings: job exited $rc"
  echo "$out" | sed 's/^/    /'
  fails=$((fails + 1))
fi

echo "$((runs - fails)) of $runs runs as expected"
[ "$fails" -eq 0 ] || { echo "FAIL"; exit 1; }
echo "PASS"
