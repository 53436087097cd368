# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the launcher tests, run as: bash TEST.sh FASTMSG_RUN BOOT_PROBE [ARGS...]
# Tests check exit statuses and messages; the timeouts only guard against hangs.
set -u
RUN=$1
PROBE=$2
shift 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
GUARD=50

# Do not let an outer launcher's variables leak into the jobs we start.
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE PMIX_RANK PMIX_NAMESPACE FM_BOOTSTRAP \
    FASTMSG_RUN_ADDR FASTMSG_RUN_RANK FASTMSG_RUN_SIZE FASTMSG_RUN_JOBKEY

fail() {
    echo "FAIL: $*" >&2
    for f in "$TMP/out" "$TMP/err"; do
        if [ -f "$f" ]; then
            echo "--- ${f##*/}:" >&2
            cat "$f" >&2
        fi
    done
    exit 1
}

# job ARGS...: run fastmsg-run ARGS; output in $TMP/out and $TMP/err, status in $rc.
job() {
    echo "+ fastmsg-run $*" >&2
    local start=$SECONDS
    timeout -k 5 "$GUARD" "$RUN" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    # 124: the guard's SIGTERM ended it; 137 that late: its SIGKILL did.
    if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ $((SECONDS - start)) -ge "$GUARD" ]; }; then
        fail "fastmsg-run $* hung"
    fi
}

# alive PID: the process exists and is not a zombie.
alive() {
    local state
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

expect_rc() {
    [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"
}

expect_rc_nonzero() {
    [ "$rc" -ne 0 ] || fail "exit status 0, expected a failure"
}

# expect_count REGEX FILE N: exactly N lines of FILE (out or err) match.
expect_count() {
    local n
    n=$(grep -Ec -- "$1" "$TMP/$2")
    [ "$n" -eq "$3" ] || fail "$n lines of $2 match /$1/, expected $3"
}

# The launcher names the failure on exactly one line.
expect_one_failure() {
    expect_count "$1" err 1
    expect_count '; ending the job$' err 1
}

