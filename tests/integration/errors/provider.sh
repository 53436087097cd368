#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What libfabric's providers cannot do, said plainly, and what fastmsg does about it. Each case
# runs hello under fastmsg-run (bounded by `timeout`) and asserts the job's status and its
# messages, never timing.
# usage: provider.sh CASE FASTMSG_RUN HELLO
#   enable-busy   a real provider failure: rank 1's shm region name is taken by a file that is
#                 no region, so fi_enable fails; rank 1 names the call and libfabric's reason
#   rx-size       FI_SHM_RX_SIZE set below what the job posts: fm_init says so, naming it
#   shm-128       128 ranks over shm (more receives than shm's default queue of 1024) pass
#   default-256   256 ranks with FM_PROVIDER unset (sm; shm holds 256 exactly), no fallback
#   shm-257       FM_PROVIDER=shm beyond shm's 256 peers: the ranks fail, each naming the limit
#   fallback      FM_PROVIDER unset and a job shm could not hold (its 32768 receives, here
#                 with FM_CREDITS=4096 on 8 ranks): the default, sm, holds it; nothing falls
#                 back (a job spanning hosts falls back to tcp: tests/integration/cluster)
#   fallback-set  the same with FM_PROVIDER=shm set: no rank falls back, the ranks fail
#                 naming the limit (the ranks decide alike)
set -u
case_=$1 fmrun=$2 hello=$3
unset FM_PROVIDER FM_CREDITS FM_PACKET_SIZE FI_SHM_RX_SIZE FI_PROVIDER FM_BOOTSTRAP \
    FASTMSG_RUN_ADDR FASTMSG_RUN_RANK FASTMSG_RUN_SIZE FASTMSG_RUN_JOBKEY
export FI_TCP_IFACE=lo FM_TIMEOUT=120
out=$(mktemp)
junk=""
trap 'rm -f "$out" $junk' EXIT

fail() {
    echo "--- output:"
    cat "$out"
    echo "FAIL: $case_: $*"
    exit 1
}

# job N [fastmsg-run arguments...]: run it, status in rc, output in $out.
job() {
    local n=$1
    shift
    echo "+ FM_PROVIDER=${FM_PROVIDER-(unset)} fastmsg-run -n $n $*"
    rc=0
    timeout -k 5 240 "$fmrun" -n "$n" "$@" >"$out" 2>&1 || rc=$?
    [ "$rc" -ne 124 ] || fail "the job hung"
}

# count REGEX: lines of the output that match.
count() { grep -Ec -- "$1" "$out" || true; }

expect_pass() { # N: exit 0 and every rank's greetings ok
    [ "$rc" -eq 0 ] || fail "exit status $rc"
    [ "$(count 'greetings ok')" -eq "$1" ] || fail "not every rank passed"
}

# expect_ranks_fail_alike REGEX: the job fails, a rank printed REGEX, every rank that said
# anything said that, and none got past fm_init. (fastmsg-run ends the job at the first rank's
# failure, so on a loaded machine not every rank may get to say it.)
expect_ranks_fail_alike() {
    expect_a_rank_fails "$1"
    local other
    other=$(grep -E '^fastmsg\[[0-9]+\]: ' "$out" | grep -Ev -- "^fastmsg\[[0-9]+\]: $1" | head -1)
    [ -z "$other" ] || fail "a rank said something else: $other"
    [ "$(count 'greetings ok')" -eq 0 ] || fail "a rank got past fm_init"
}

# expect_a_rank_fails REGEX: the job fails and a rank printed REGEX (a check each process makes
# for itself: the first to fail may end the job before the others get there).
expect_a_rank_fails() {
    [ "$rc" -ne 0 ] || fail "exit status 0, expected a failure"
    grep -Eq -- "^fastmsg\[[0-9]+\]: $1" "$out" || fail "no rank said /$1/"
}

case $case_ in
enable-busy)
    # libfabric's shm refuses to take over a file under its region's name that is not a region.
    wrap='f=/dev/shm/fastmsg-$FASTMSG_RUN_JOBKEY-1-$$:$(id -u):0
          if [ "$FASTMSG_RUN_RANK" = 1 ]; then echo junk >"$f"; echo "junk: $f"; fi
          exec "$0" "$@"'
    export FM_PROVIDER=shm
    job 2 sh -c "$wrap" "$hello"
    junk=$(sed -n 's/^junk: //p' "$out")
    [ "$rc" -ne 0 ] || fail "exit status 0: the region's name was not the one expected"
    grep -Eq '^fastmsg\[1\]: .*fi_enable: Device or resource busy \(-16\)' "$out" ||
        fail "rank 1 did not name fi_enable and its error"
    ;;
rx-size)
    # 8 ranks post 8 x (FM_CREDITS 8 + 1) receives, and room for 8 zero-copy ones.
    export FM_PROVIDER=shm FI_SHM_RX_SIZE=64
    job 8 "$hello"
    expect_a_rank_fails "FM_PROVIDER=\"shm\": libfabric's shm queues at most 64 posted receives .*FI_SHM_RX_SIZE=64.*posts up to 80"
    ;;
shm-128)
    export FM_PROVIDER=shm
    job 128 "$hello"
    expect_pass 128
    ;;
default-256)
    job 256 "$hello"
    expect_pass 256
    [ "$(count 'using tcp')" -eq 0 ] || fail "the job fell back to tcp"
    ;;
shm-257)
    export FM_PROVIDER=shm
    job 257 "$hello"
    expect_ranks_fail_alike 'FM_PROVIDER="shm": libfabric.s shm connects at most 256 processes \(SMR_MAX_PEERS .*\), this job has 257 ranks'
    ;;
fallback)
    # FM_PROVIDER unset on one host is sm, which holds what shm cannot: no fallback.
    export FM_CREDITS=4096 FM_PACKET_SIZE=64
    job 8 "$hello"
    expect_pass 8
    [ "$(count 'using tcp')" -eq 0 ] || fail "the job fell back to tcp"
    ;;
fallback-set)
    # FM_PROVIDER=shm set: no rank falls back, every rank fails naming shm's limit.
    export FM_CREDITS=4096 FM_PACKET_SIZE=64 FM_PROVIDER=shm
    job 8 "$hello"
    expect_ranks_fail_alike 'FM_PROVIDER="shm": libfabric.s shm queues at most 32768 posted receives'
    [ "$(count 'using tcp')" -eq 0 ] || fail "a rank fell back to tcp"
    ;;
*)
    echo "unknown case $case_"
    exit 2
    ;;
esac
grep -E '^fastmsg\[' "$out" | sort | uniq -c | sort -rn | head -5
echo "PASS: $case_"
