# SPDX-License-Identifier: BSD-3-Clause
# A rank that leaves while the others wait in a fence: the launcher ends the job at once
# (instead of the others timing out) and names it.
. "$(dirname "$0")/common.sh"
job -n 2 -- bash -c 'if [ "$FASTMSG_RUN_RANK" = 1 ]; then exit 0; fi; exec "$0"' "$PROBE"
expect_rc 1
expect_one_failure '^fastmsg-run: rank 1 ended without joining the fence rank 0 waits in; ending the job$'
echo ok
