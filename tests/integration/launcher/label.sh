# SPDX-License-Identifier: BSD-3-Clause
# --label: every line, partial last lines included, carries its rank; without it, nothing.
. "$(dirname "$0")/common.sh"
prog='echo out$FASTMSG_RUN_RANK; echo err$FASTMSG_RUN_RANK >&2; printf partial$FASTMSG_RUN_RANK'

job -n 3 --label -- bash -c "$prog"
expect_rc 0
for r in 0 1 2; do
    expect_count "^\[$r\] out$r$" out 1
    expect_count "^\[$r\] partial$r$" out 1
    expect_count "^\[$r\] err$r$" err 1
done
expect_count '^\[[0-9]\] ' out 6
expect_count '^\[[0-9]\] ' err 3

job -n 2 -l -- bash -c 'printf "a\nb\n"'
expect_count '^\[[01]\] [ab]$' out 4

job -n 2 -- bash -c 'echo out$FASTMSG_RUN_RANK; echo err$FASTMSG_RUN_RANK >&2'
expect_rc 0
expect_count '^out[01]$' out 2
expect_count '^err[01]$' err 2
expect_count '^\[' out 0
echo ok
