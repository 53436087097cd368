# SPDX-License-Identifier: BSD-3-Clause
# Values travel only when asked for: what each rank receives is counted in bytes, as the
# kernel counts them on its connection to the launcher (boot_probe --bytes), never timed.
. "$(dirname "$0")/common.sh"

# bytes_at_most LIMIT: every rank reports, and none received more than LIMIT bytes.
bytes_at_most() {
    local n worst
    n=$(grep -c '^boot_probe: rank [0-9]* received [0-9]* bytes$' "$TMP/out")
    [ "$n" -eq "$2" ] || fail "$n ranks report their bytes, expected $2"
    worst=$(sed -n 's/^boot_probe: rank [0-9]* received \([0-9]*\) bytes$/\1/p' "$TMP/out" |
        sort -n | tail -1)
    [ "$worst" -le "$1" ] || fail "a rank received $worst bytes, expected at most $1"
}

# 16 ranks each put 1000 + 8 bytes; a rank that gets one 7-byte value receives that value and
# fence_done (under 200 bytes with the headers), not everyone's values (16 KiB and more).
job -n 16 "$PROBE" --only-next --bytes
expect_rc 0
expect_count '^boot_probe: rank [0-9]+ of 16 ok' out 16
bytes_at_most 200 16

# A rank that reads every value receives each once, as bytes (no hex): at most 1.25 times the
# values themselves (16 ranks x (1000 + 7..8 + 8) bytes) plus 2 KiB of headers.
job -n 16 "$PROBE" --bytes
expect_rc 0
expect_count '^boot_probe: rank [0-9]+ of 16 ok' out 16
bytes_at_most $((16 * 1016 * 5 / 4 + 2048)) 16

# A get for a key nobody put fails at once and says which.
job -n 4 "$PROBE" --get-missing
expect_rc 0
expect_count "^boot_probe: rank [0-3]: get of a key nobody put: run bootstrap: rank [0-3] published nothing under 'probe.none' before the last fence$" out 4

# Values of 16000 bytes: replies are cut at run_protocol.h's FM_RUN_VALS_MAX, and each rank
# reads on from where a reply ended.
job -n 64 "$PROBE" --big 16000
expect_rc 0
expect_count '^boot_probe: rank [0-9]+ of 64 ok' out 64
echo ok
