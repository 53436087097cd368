# SPDX-License-Identifier: BSD-3-Clause
# Bad or missing arguments: a message and the usage on stderr, exit 2. --help: stdout, 0.
. "$(dirname "$0")/common.sh"
bad() {
    job "$@"
    expect_rc 2
    expect_count '^fastmsg-run: ' err 1
    expect_count '^usage: fastmsg-run -n N' err 1
    [ ! -s "$TMP/out" ] || fail "stdout is not empty"
}
bad
bad -n 2
bad -n 0 true
bad -n 4097 true
bad -n abc true
bad -n
bad --bogus -n 1 true
bad -n 1 --agent ssh true
bad -n 1 --hosts a,b true
bad -n 1 --agent ssh --hosts , true
bad -n 1 --agent ' ' --hosts a true
expect_count 'needs a command' err 1

job --help
expect_rc 0
expect_count '^usage: fastmsg-run -n N' out 1
job -h
expect_rc 0
echo ok
