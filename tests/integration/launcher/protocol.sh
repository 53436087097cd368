# SPDX-License-Identifier: BSD-3-Clause
# Protocol errors: the launcher names the rank and ends the job. The rank here speaks the
# protocol by hand over bash's /dev/tcp, then sleeps until killed.
. "$(dirname "$0")/common.sh"
speak='exec 3<>"/dev/tcp/${FASTMSG_RUN_ADDR%:*}/${FASTMSG_RUN_ADDR##*:}" || exit 9
printf "cmd=hello rank=%s\n%s\n" "$FASTMSG_RUN_RANK" "$1" >&3
exec sleep 300'

job -n 1 -- bash -c "$speak" rank 'no key value pairs'
expect_rc 1
expect_one_failure '^fastmsg-run: rank 0 broke the bootstrap protocol \(a malformed line\); ending the job$'

job -n 1 -- bash -c "$speak" rank "cmd=put key=k value=$(head -c 3000 /dev/zero | tr '\0' x)"
expect_rc 1
expect_one_failure '^fastmsg-run: rank 0 broke the bootstrap protocol \(a line is longer than 2048 bytes\); ending the job$'

job -n 1 -- bash -c "$speak" rank 'cmd=launch'
expect_rc 1
expect_one_failure 'rank 0 broke the bootstrap protocol \(an unknown cmd\)'

# A connection that never names its rank is dropped, not the job.
job -n 1 -- bash -c 'exec 3<>"/dev/tcp/${FASTMSG_RUN_ADDR%:*}/${FASTMSG_RUN_ADDR##*:}"
echo "cmd=put key=a value=b" >&3; read -r -t 20 reply <&3; echo "$reply"'
expect_rc 0
expect_count '^cmd=error msg=' out 1
echo ok
