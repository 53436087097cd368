# SPDX-License-Identifier: BSD-3-Clause
# SIGINT to the launcher ends the whole job: every rank and what it started, even a rank
# that ignores SIGTERM (SIGKILL follows). Exit status 128+2.
. "$(dirname "$0")/common.sh"
prog='echo $$ >"$0/pid.$FASTMSG_RUN_RANK.tmp"
if [ "$FASTMSG_RUN_RANK" = 1 ]; then trap "" TERM; fi
sleep 300 &
echo $! >"$0/child.$FASTMSG_RUN_RANK"
mv "$0/pid.$FASTMSG_RUN_RANK.tmp" "$0/pid.$FASTMSG_RUN_RANK"
wait'
# --foreground: timeout passes our SIGINT to the launcher alone.
timeout --foreground -k 5 "$GUARD" "$RUN" -n 3 -- bash -c "$prog" "$TMP" \
    >"$TMP/out" 2>"$TMP/err" &
tpid=$!
for i in $(seq 1 400); do
    [ -f "$TMP/pid.0" ] && [ -f "$TMP/pid.1" ] && [ -f "$TMP/pid.2" ] && break
    sleep 0.1
done
[ -f "$TMP/pid.0" ] && [ -f "$TMP/pid.1" ] && [ -f "$TMP/pid.2" ] || fail "ranks did not start"
kill -INT "$tpid"
wait "$tpid"
rc=$?
expect_rc 130
expect_one_failure '^fastmsg-run: caught signal 2 \(Interrupt\); ending the job$'
# Signals take a moment to land on processes the launcher cannot wait for: poll, with a guard.
for f in "$TMP"/pid.? "$TMP"/child.?; do
    pid=$(cat "$f")
    for i in $(seq 1 100); do
        alive "$pid" || break
        sleep 0.1
    done
    if alive "$pid"; then
        kill -KILL "$pid"
        fail "process $pid (${f##*/}) outlived the job"
    fi
done
echo ok
