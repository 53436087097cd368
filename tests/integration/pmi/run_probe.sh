#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run one boot_probe job and check that every rank reported success on the expected back end.
#   run_probe.sh BACKEND NPROCS LAUNCHER [ARGS...]
# With EXPECT_FAIL=TEXT in the environment the job must fail instead, printing TEXT.
# Exits 77 (meson's "skipped") when the launcher is not installed.
set -u
backend=$1
nprocs=$2
shift 2
if ! command -v "$1" >/dev/null 2>&1; then
    echo "$1 not found: skipping"
    exit 77
fi

# A launcher around this test (Slurm, another mpirun) must not leak into the job.
for v in $(env | sed -n 's/^\(PMI[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
unset FASTMSG_RUN_ADDR FM_BOOTSTRAP

out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout -k 5 100 "$@" >"$out" 2>&1
rc=$?
cat "$out"

if [ -n "${EXPECT_FAIL:-}" ]; then
    if [ $rc -eq 0 ]; then
        echo "FAIL: the job succeeded but was expected to fail with: $EXPECT_FAIL"
        exit 1
    fi
    if ! grep -qF -- "$EXPECT_FAIL" "$out"; then
        echo "FAIL: the job failed (exit $rc) without the expected message: $EXPECT_FAIL"
        exit 1
    fi
    echo "PASS: failed as expected"
    exit 0
fi

if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && echo "FAIL: timed out" || echo "FAIL: exit status $rc"
    exit 1
fi
r=0
while [ $r -lt "$nprocs" ]; do
    if ! grep -q "^boot_probe: rank $r of $nprocs ok (backend ${backend}[,)]" "$out"; then
        echo "FAIL: no success line from rank $r of $nprocs on back end $backend"
        exit 1
    fi
    r=$((r + 1))
done
echo "PASS: $nprocs ranks on $backend"
