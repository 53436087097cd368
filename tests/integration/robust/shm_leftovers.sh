#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A job over shm with a rank killed by SIGKILL leaves no region of its own in /dev/shm:
# fastmsg-run removes what its ranks left. (libfabric's shm unlinks a region when its endpoint
# closes, or when its process dies by SIGINT, SIGTERM, SIGBUS or SIGSEGV; not on SIGKILL.)
# usage: shm_leftovers.sh FASTMSG_RUN DEAD_PEER [PROVIDER: shm (default) or sm, whose segments
# are memfds that have no name: nothing of the job may appear there either]
# dead_peer's rank 1 of 4 kills itself half way through a stream. Each rank prints its pid and
# the job key before it starts; afterwards no /dev/shm entry may carry the job key (fastmsg's
# names, runtime/boot/job_names.h) or start with a rank's pid (libfabric's own names,
# "<pid>:<uid>:<n>"). Other jobs' entries are never looked at.
set -u
fmrun=$1 prog=$2 provider=${3:-shm}
n=4 args=(--mode stream --victim 1 --size 8M)
unset FM_BOOTSTRAP FASTMSG_RUN_ADDR FASTMSG_RUN_RANK FASTMSG_RUN_SIZE FASTMSG_RUN_JOBKEY
export FM_PROVIDER=$provider FM_TIMEOUT=30
out=$(mktemp)
trap 'rm -f "$out"' EXIT

wrap='echo "leftovers: rank $FASTMSG_RUN_RANK pid $$ key $FASTMSG_RUN_JOBKEY"; exec "$0" "$@"'
echo "+ fastmsg-run -n $n $prog ${args[*]}"
rc=0
timeout -k 5 60 "$fmrun" -n "$n" sh -c "$wrap" "$prog" "${args[@]}" >"$out" 2>&1 || rc=$?
[ "$rc" -ne 124 ] || { cat "$out"; echo "FAIL: the job hung"; exit 1; }
[ "$rc" -ne 0 ] || { cat "$out"; echo "FAIL: the job passed; it should have failed"; exit 1; }

key=$(sed -n 's/^leftovers: rank 0 pid [0-9]* key \([0-9a-f]*\)$/\1/p' "$out")
pids=$(sed -n 's/^leftovers: rank [0-9]* pid \([0-9]*\) key .*/\1/p' "$out")
[ -n "$key" ] && [ "$(wc -w <<<"$pids")" -eq "$n" ] || { cat "$out"; echo "FAIL: no pids"; exit 1; }
grep -E '^fastmsg-run: ' "$out"

left=()
for f in /dev/shm/*; do
    name=${f#/dev/shm/}
    mine=0
    [[ $name == fastmsg-$key-* ]] && mine=1
    for p in $pids; do
        [[ $name == "$p":* ]] && mine=1
    done
    [ $mine -eq 1 ] && left+=("$name")
done
if [ ${#left[@]} -gt 0 ]; then
    for name in "${left[@]}"; do
        rm -f "/dev/shm/$name" # (ours: every process of the job has ended)
    done
    echo "FAIL: the job left ${#left[@]} region(s) in /dev/shm: ${left[*]}"
    exit 1
fi
echo "PASS: no region of the job is left in /dev/shm"
