# SPDX-License-Identifier: BSD-3-Clause
# A rank's exit status becomes the job's, and the line names the rank.
. "$(dirname "$0")/common.sh"

# The others sleep: only the launcher ending the job lets this finish before the guard.
job -n 4 -- bash -c 'if [ "$FASTMSG_RUN_RANK" = 2 ]; then exit 3; fi; exec sleep 300'
expect_rc 3
expect_one_failure '^fastmsg-run: rank 2 exited with status 3; ending the job$'

# One rank: a second might be ended before its own exec fails.
job -n 1 /nonexistent/fastmsg-test-prog
expect_rc 127
expect_count "^fastmsg-run: rank 0: cannot run '/nonexistent/fastmsg-test-prog': " err 1
expect_one_failure '^fastmsg-run: rank 0 exited with status 127; ending the job$'

# Programs that never join the exchange may end normally.
job -n 2 true
expect_rc 0
[ ! -s "$TMP/err" ] || fail "stderr is not empty"
echo ok
