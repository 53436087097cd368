#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One dead_peer job: a rank dies (SIGKILL) or stops (SIGSTOP) mid-transfer, and the job must
# end, non-zero, saying which rank, with no process of it left behind.
# usage: dead_peer.sh LAUNCHER PROVIDER NPROCS FASTMSG_RUN FAKE_PMI1 DEAD_PEER [ARGS...]
#   LAUNCHER  run (fastmsg-run), openmpi (mpirun.openmpi), mpich (mpiexec.mpich), or fake
#             (tests/integration/pmi/fake_pmi1.py: waits for every rank and kills none, so
#             only fastmsg itself can end the job)
#   ARGS      dead_peer's: --mode, --victim R (-1: nobody dies, the job must pass),
#             --signal kill|stop, ...
# The rank is named by the launcher (fastmsg-run, Open MPI) or by fastmsg's own "rank R (pid P)
# has died" line. MPICH's hydra names no rank (its "PID" is often a rank it killed itself) and
# kills the job within milliseconds, racing fastmsg's watcher: there the name is reported when
# it got out, not asserted.
# A stopped rank is alive: the others must fail with FM_ERR_TIMEOUT (FM_TIMEOUT=2).
# Times from the kill (the victim prints its clock just before) to the end of the job are
# printed; only a hang guard is asserted.
set -euo pipefail
launcher=$1 provider=$2 n=$3 fmrun=$4 fake_pmi1=$5 prog=$6
shift 6
GUARD=30

victim=1 sig=kill
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    case ${args[i]} in
    --victim) victim=${args[i + 1]} ;;
    --signal) sig=${args[i + 1]} ;;
    esac
done

# An outer launcher's variables must not leak into the job.
for v in $(env | sed -n 's/^\(PMI[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
unset FASTMSG_RUN_ADDR FM_BOOTSTRAP
export FM_PROVIDER=$provider FI_TCP_IFACE=lo FM_TIMEOUT=60 FM_VERBOSE=0
[ "$sig" = stop ] && FM_TIMEOUT=2

tag=dead-peer-$$-$RANDOM
out=$(mktemp)
mark=$(mktemp) # older than anything the job creates
DEAD_PEER_LOG=$(mktemp) # the victim's line, should the launcher lose the job's output
export DEAD_PEER_LOG
cleanup() {
    # A stopped rank ignores everything but SIGKILL and SIGCONT.
    pkill -CONT -f -- "$tag" 2>/dev/null || true
    pkill -KILL -f -- "$tag" 2>/dev/null || true
    # shm unlinks its /dev/shm region ("fastmsg-<key>-<rank>-<pid>:...", or "<pid>:..." for
    # an endpoint fastmsg did not name) only when an endpoint closes: remove those of this
    # job's killed ranks (made after $mark, by a process now gone), or they hold memory.
    # (fastmsg-run removes its own job's; the other launchers do not.)
    local f p st
    for f in /dev/shm/[0-9]*:* /dev/shm/fastmsg-*:*; do
        [ -e "$f" ] && [ "$f" -nt "$mark" ] || continue
        p=${f#/dev/shm/}
        p=${p%%:*}
        p=${p##*-}
        st=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null || true)
        [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] || rm -f "$f" # gone, or a zombie
    done
    rm -f "$out" "$mark" "$DEAD_PEER_LOG"
}
trap cleanup EXIT

case $launcher in
run) cmd=("$fmrun" -n "$n") ;;
fake) cmd=(python3 "$fake_pmi1" -n "$n" --) ;;
openmpi)
    command -v mpirun.openmpi >/dev/null || { echo "no mpirun.openmpi: skipping"; exit 77; }
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cmd=(mpirun.openmpi --oversubscribe -n "$n" -x FM_PROVIDER -x FI_TCP_IFACE -x FM_TIMEOUT
        -x FM_VERBOSE --mca btl self --mca pml ob1 --mca oob_tcp_if_include lo) ;;
mpich)
    command -v mpiexec.mpich >/dev/null || { echo "no mpiexec.mpich: skipping"; exit 77; }
    cmd=(mpiexec.mpich -n "$n") ;;
*) echo "unknown launcher $launcher"; exit 2 ;;
esac

fail() {
    echo "--- output:"
    cat "$out"
    echo "FAIL: $*"
    exit 1
}

echo "+ FM_PROVIDER=$provider ${cmd[*]} dead_peer $*"
start=$(date +%s%N)
rc=0
timeout -k 5 "$GUARD" "${cmd[@]}" "$prog" "$@" --tag "$tag" >"$out" 2>&1 || rc=$?
end=$(date +%s%N)

# Every process of the job must be gone (the launchers reap before they exit; allow a moment).
left=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
    left=$(pgrep -f -- "$tag" || true)
    [ -z "$left" ] && break
    sleep 0.3
done
[ -z "$left" ] || fail "processes left behind: $(ps -o pid=,stat=,args= -p "${left//$'\n'/,}")"
if [ "$rc" -eq 124 ] || [ $(((end - start) / 1000000000)) -ge "$GUARD" ]; then
    fail "the job hung (still running after $GUARD s)"
fi

if [ "$victim" -lt 0 ]; then
    [ "$rc" -eq 0 ] || fail "exit status $rc with nobody dying"
    pass=$(grep -c "PASS dead_peer" "$out" || true)
    [ "$pass" -eq "$n" ] || fail "$pass of $n ranks passed"
    echo "PASS: nobody died, every rank passed"
    exit 0
fi

[ "$rc" -ne 0 ] || fail "exit status 0 although rank $victim died"
t_kill=$(sed -n "s/^dead_peer: rank $victim raising SIG[A-Z]* at \([0-9]*\)$/\1/p" "$out" \
    "$DEAD_PEER_LOG" | head -1)
[ -n "$t_kill" ] || fail "rank $victim never got to its signal"
secs() { echo "$(($1 / 1000)).$(printf %03d $(($1 % 1000))) s"; }

if [ "$sig" = stop ]; then
    # Alive but silent: a survivor's blocking call gives up with FM_ERR_TIMEOUT, and says so.
    t_fail=$(sed -n 's/^dead_peer: rank [0-9]*: .* failed at \([0-9]*\): timed out (FM_TIMEOUT)$/\1/p' \
        "$out" | sort -n | head -1)
    [ -n "$t_fail" ] || fail "no survivor failed with FM_ERR_TIMEOUT"
    grep -Eq '^fastmsg\[[0-9]+\]: waited 2 s \(FM_TIMEOUT\) for ' "$out" ||
        fail "no survivor said what it waited for"
    ! grep -Eq "rank $victim \(pid [0-9]+\) has died" "$out" || fail "a stopped rank was taken for dead"
    # The job is broken: a survivor's fm_finalize returns its error without waiting again.
    grep -Eq '^dead_peer: rank [0-9]+: fm_finalize: timed out \(FM_TIMEOUT\)$' "$out" ||
        fail "no survivor's fm_finalize reported the timeout"
    ! grep -q 'at finalize; giving up' "$out" || fail "fm_finalize waited FM_TIMEOUT again"
    grep -v "^rank .*zero-copy" "$out"
    echo "stop to first FM_ERR_TIMEOUT: $(secs $(((t_fail - t_kill) / 1000000)))" \
        "(FM_TIMEOUT=$FM_TIMEOUT); stop to end of job: $(secs $(((end - t_kill) / 1000000)))"
    echo "PASS: $launcher $provider: rank $victim stopped; the job failed with FM_ERR_TIMEOUT"
    exit 0
fi

named=""
grep -Eq "fastmsg\[[0-9]+\]: rank $victim \(pid [0-9]+\) has died" "$out" && named="by fastmsg"
case $launcher in
run)
    # The launcher names the killed rank, not a survivor that failed because of it.
    grep -Eq "^fastmsg-run: rank $victim \(pid [0-9]+\) killed by signal 9" "$out" ||
        fail "fastmsg-run did not name rank $victim as the one killed"
    named="${named:+$named and }by fastmsg-run" ;;
openmpi)
    grep -Eq "process rank $victim with PID [0-9]+ on node .* exited on signal 9" "$out" &&
        named="${named:+$named and }by mpirun" ;;
esac
if [ -z "$named" ] && [ "$launcher" = mpich ]; then
    named="by nobody: mpiexec killed every rank before fastmsg's watcher could say"
fi
[ -n "$named" ] || fail "the output does not name rank $victim as dead"
grep -v "^rank .*zero-copy" "$out" || true
echo "kill to end of job: $(secs $(((end - t_kill) / 1000000))) ($launcher, $provider, $*)"
echo "PASS: $launcher $provider: rank $victim killed; the job failed, named $named"
