# SPDX-License-Identifier: BSD-3-Clause
# boot_probe under fastmsg-run -n N: every rank checks every rank's values and the job key.
. "$(dirname "$0")/common.sh"
N=$1
job -n "$N" "$PROBE"
expect_rc 0
expect_count "^boot_probe: rank [0-9]+ of $N ok \(backend run, key [0-9a-f]{16}\)$" out "$N"
keys=$(sed -n 's/.*key \([0-9a-f]*\))$/\1/p' "$TMP/out" | sort -u | wc -l)
[ "$keys" -eq 1 ] || fail "ranks report $keys different job keys"
expect_count 'ending the job' err 0
echo "ok: $N ranks"
