# SPDX-License-Identifier: BSD-3-Clause
# boot_probe on its own: the singleton back end, rank 0 of 1.
. "$(dirname "$0")/common.sh"
timeout -k 5 "$GUARD" "$PROBE" >"$TMP/out" 2>"$TMP/err"
rc=$?
expect_rc 0
expect_count '^boot_probe: rank 0 of 1 ok \(backend singleton, key [0-9a-f]{16}\)$' out 1
echo ok
