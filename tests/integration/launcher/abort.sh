# SPDX-License-Identifier: BSD-3-Clause
# fm_boot_abort: the launcher names the rank, code and message, and exits with the code.
. "$(dirname "$0")/common.sh"
job -n 3 "$PROBE" --abort-rank 2
expect_rc 5
expect_one_failure '^fastmsg-run: rank 2 called fm_abort\(5\): boot_probe: abort as asked; ending the job$'
echo ok
