# SPDX-License-Identifier: BSD-3-Clause
# --agent CMD --hosts LIST: rank r runs as "CMD HOST env FASTMSG_RUN_...=... prog args".
# The agent here drops the host word, logs its arguments and runs the rest.
. "$(dirname "$0")/common.sh"
cat >"$TMP/agent" <<'AGENT'
#!/bin/sh
host=$1
shift
echo "$host $*" >>"$AGENT_LOG"
exec "$@"
AGENT
chmod +x "$TMP/agent"
export AGENT_LOG="$TMP/agent.log"

job -n 4 -v --agent "$TMP/agent" --hosts ha,hb -- "$PROBE"
expect_rc 0
expect_count '^boot_probe: rank [0-3] of 4 ok \(backend run' out 4
for r in 0 1 2 3; do
    host=$([ $((r % 2)) = 0 ] && echo ha || echo hb)
    grep -Eq "^$host env FASTMSG_RUN_ADDR=127\.0\.0\.1:[0-9]+ FASTMSG_RUN_RANK=$r FASTMSG_RUN_SIZE=4 FASTMSG_RUN_JOBKEY=[0-9a-f]{16} $PROBE\$" \
        "$AGENT_LOG" || fail "agent log lacks rank $r on $host: $(cat "$AGENT_LOG")"
    expect_count "^fastmsg-run: rank $r \(pid [0-9]+\) on $host: $TMP/agent $host env " err 1
done

# A multi-word agent and an explicit address.
rm -f "$AGENT_LOG"
job -n 3 --agent "sh $TMP/agent" --hosts h1 --addr 127.0.0.1 "$PROBE"
expect_rc 0
expect_count '^boot_probe: rank [0-2] of 3 ok' out 3
[ "$(grep -c '^h1 env ' "$AGENT_LOG")" -eq 3 ] || fail "agent did not run every rank on h1"

# A failing agent is a failing rank.
job -n 2 --agent false --hosts h1 true
expect_rc 1
expect_one_failure '^fastmsg-run: rank [01] exited with status 1; ending the job$'
echo ok
