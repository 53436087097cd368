# SPDX-License-Identifier: BSD-3-Clause
# A rank that joined the job and exits 0 without finalizing ends the job as a failure.
. "$(dirname "$0")/common.sh"
job -n 2 "$PROBE" --no-fini
expect_rc_nonzero
expect_one_failure '^fastmsg-run: rank [01] exited without calling fm_finalize; ending the job$'
echo ok
