# SPDX-License-Identifier: BSD-3-Clause
# What fastmsg-run answers, byte for byte: ranks here speak run_protocol.h by hand over
# bash's /dev/tcp (LC_ALL=C: read -N counts bytes).
. "$(dirname "$0")/common.sh"
export LC_ALL=C
connect='exec 3<>"/dev/tcp/${FASTMSG_RUN_ADDR%:*}/${FASTMSG_RUN_ADDR##*:}" || exit 9
R=$FASTMSG_RUN_RANK
printf "cmd=hello rank=%s version=2\n" "$R" >&3
say() { printf "%s\n" "$1" >&3; }
put() { printf "cmd=put key=%s bytes=%d\n%s" "$1" "${#2}" "$2" >&3; }
# reply: the next line and the bytes it announces, printed as "LINE|BYTES".
reply() {
    local line payload=
    IFS= read -r -t 20 line <&3 || { echo "no reply"; exit 8; }
    case $line in *" bytes="*) IFS= read -r -d "" -N "${line##* bytes=}" -t 20 payload <&3 ;; esac
    printf "%s|%s\n" "$line" "$payload"
}'

# Two ranks put; a get sees only what a fence has made visible; a key nobody put is "-".
job -n 2 -- bash -c "$connect"'
put k "value-of-$R"
if [ "$R" = 1 ]; then say cmd=fence; reply >/dev/null; say cmd=fini; exit 0; fi
say "cmd=get rank=1 key=k count=1"; reply
say cmd=fence; reply
say "cmd=get rank=0 key=k count=2"; reply
say "cmd=get rank=1 key=none count=1"; reply
put k2 later
say "cmd=get rank=0 key=k2 count=1"; reply
say cmd=fini'
expect_rc 0
printf '%s\n' 'cmd=vals rank=1 key=k count=1 bytes=2|-' '' 'cmd=fence_done|' \
    'cmd=vals rank=0 key=k count=2 bytes=26|10' 'value-of-010' 'value-of-1' \
    'cmd=vals rank=1 key=none count=1 bytes=2|-' '' 'cmd=vals rank=0 key=k2 count=1 bytes=2|-' \
    '' >"$TMP/want"
diff "$TMP/want" "$TMP/out" >&2 || fail "rank 0 saw other replies"

# Five ranks put 60000 bytes each: a get for all five is answered with as many as fit in
# 256 KiB (four), and the rank asks on from there.
job -n 5 -- bash -c "$connect"'
put k "$(head -c 60000 /dev/zero | tr "\0" x)"
say cmd=fence; reply >/dev/null
if [ "$R" = 0 ]; then
    say "cmd=get rank=0 key=k count=5"; reply | head -n 1 | cut -c1-60
    say "cmd=get rank=4 key=k count=1"; reply | head -n 1 | cut -c1-60
fi
say cmd=fini'
expect_rc 0
printf '%s\n' 'cmd=vals rank=0 key=k count=4 bytes=240024|60000' \
    'cmd=vals rank=4 key=k count=1 bytes=60006|60000' >"$TMP/want"
diff "$TMP/want" "$TMP/out" >&2 || fail "the 256 KiB cut differs"

# A rank that sends 200 gets for a 60000-byte value before reading any reply (12 MB): the
# launcher stops reading it while 1 MiB waits, and then answers every one.
job -n 1 -- bash -c "$connect"'
put k "$(head -c 60000 /dev/zero | tr "\0" x)"
say cmd=fence; reply >/dev/null
for i in $(seq 200); do say "cmd=get rank=0 key=k count=1"; done
sleep 0.5
h="cmd=vals rank=0 key=k count=1 bytes=60006"
echo "got $(timeout 20 head -c $((200 * (${#h} + 1 + 60006))) <&3 | wc -c) of $((200 * (${#h} + 1 + 60006)))"
say cmd=fini'
expect_rc 0
expect_count '^got ([0-9]+) of \1$' out 1
echo ok
