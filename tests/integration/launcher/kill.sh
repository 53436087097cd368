# SPDX-License-Identifier: BSD-3-Clause
# A rank killed by a signal ends the job with 128+signal and one line naming it.
. "$(dirname "$0")/common.sh"
job -n 4 "$PROBE" --die-rank 1
expect_rc_nonzero
expect_rc 137
expect_one_failure '^fastmsg-run: rank 1 \(pid [0-9]+\) killed by signal 9 \(Killed\); ending the job$'
echo ok
