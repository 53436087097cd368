# SPDX-License-Identifier: BSD-3-Clause
# Protocol errors: the launcher names the rank and ends the job. The ranks here speak the
# protocol by hand over bash's /dev/tcp, then sleep until killed.
. "$(dirname "$0")/common.sh"
speak='exec 3<>"/dev/tcp/${FASTMSG_RUN_ADDR%:*}/${FASTMSG_RUN_ADDR##*:}" || exit 9
printf "cmd=hello rank=%s version=2\n" "$FASTMSG_RUN_RANK" >&3
[ "$FASTMSG_RUN_RANK" != 0 ] || printf "%b\n" "$1" >&3
exec sleep 300'

# broken N LINE REASON: every rank of N says hello, then rank 0 says LINE (printf %b: \n
# starts another); the job ends naming rank 0 and REASON (a regular expression).
broken() {
    job -n "$1" -- bash -c "$speak" rank "$2"
    expect_rc 1
    expect_one_failure "^fastmsg-run: rank 0 broke the bootstrap protocol \($3\); ending the job\$"
}

broken 1 'no key value pairs' 'a malformed line'
broken 1 "cmd=put key=k value=$(head -c 3000 /dev/zero | tr '\0' x)" \
    'a line is longer than 2048 bytes'
broken 1 'cmd=launch' 'an unknown cmd'
broken 1 'cmd=hello rank=0 version=2' 'a second cmd=hello'

# Gets: a rank, a count and a key within the job, and not while fencing.
for bad in 'rank=1 key=k count=1' 'rank=-1 key=k count=1' 'rank=+0 key=k count=1' \
    'rank=0x0 key=k count=1' 'rank=99999999999 key=k count=1' 'key=k count=1'; do
    broken 1 "cmd=get $bad" 'cmd=get without a rank of the job'
done
for bad in 'rank=0 key=k count=0' 'rank=0 key=k count=2' 'rank=0 key=k' \
    'rank=0 key=k count=1x'; do
    broken 1 "cmd=get $bad" 'cmd=get without a count from 1 to the ranks left'
done
for bad in 'rank=0 count=1' 'rank=0 key= count=1' 'rank=0 key=a%20b count=1' \
    "rank=0 key=$(head -c 65 /dev/zero | tr '\0' k) count=1"; do
    broken 1 "cmd=get $bad" 'cmd=get without a key of 1 to 64 of \[A-Za-z0-9_.-\]'
done
broken 2 'cmd=fence\ncmd=get rank=0 key=k count=1' 'cmd=get during a fence'

# Puts: a key, and a byte count up to 64 KiB (the bytes follow the line).
broken 1 'cmd=put key=k value=v' 'cmd=put without a byte count up to 65536'
broken 1 'cmd=put key=k bytes=65537' 'cmd=put without a byte count up to 65536'
broken 1 'cmd=put key=k bytes=-1' 'cmd=put without a byte count up to 65536'
broken 1 'cmd=put key=k/1 bytes=1\nx' 'cmd=put without a key of 1 to 64 of \[A-Za-z0-9_.-\]'
broken 2 'cmd=fence\ncmd=put key=k bytes=1\nx' 'cmd=put during a fence'

# A rank puts at most 4 MiB: 65 values of 64 KiB pass it.
job -n 1 -- bash -c 'exec 3<>"/dev/tcp/${FASTMSG_RUN_ADDR%:*}/${FASTMSG_RUN_ADDR##*:}" || exit 9
printf "cmd=hello rank=0 version=2\n" >&3
for i in $(seq 65); do printf "cmd=put key=k%s bytes=65536\n" "$i"; head -c 65536 /dev/zero; done >&3
exec sleep 300'
expect_rc 1
expect_one_failure '^fastmsg-run: rank 0 broke the bootstrap protocol \(cmd=put beyond the 4 MiB a rank may put\); ending the job$'

# A program built with another fastmsg speaks another version: named at once.
job -n 1 -- bash -c 'exec 3<>"/dev/tcp/${FASTMSG_RUN_ADDR%:*}/${FASTMSG_RUN_ADDR##*:}" || exit 9
printf "cmd=hello rank=0\n" >&3; exec sleep 300'
expect_rc 1
expect_one_failure '^fastmsg-run: rank 0 broke the bootstrap protocol \(cmd=hello of another protocol version than fastmsg-run.s 2 \(a program built with another fastmsg\?\)\); ending the job$'

# A connection that never names its rank is dropped, not the job.
job -n 1 -- bash -c 'exec 3<>"/dev/tcp/${FASTMSG_RUN_ADDR%:*}/${FASTMSG_RUN_ADDR##*:}"
echo "cmd=put key=a value=b" >&3; read -r -t 20 reply <&3; echo "$reply"'
expect_rc 0
expect_count '^cmd=error msg=' out 1
echo ok
