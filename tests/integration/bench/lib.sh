# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the bench smoke tests: fail, a scratch directory ($tmp, removed on exit), and
# running a command under a timeout with its output kept apart.

fail() { echo "FAIL: $*"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# capture SECONDS CMD...: $out is CMD's stdout, $err its stderr, $rc its status.
capture() {
  local t=$1
  shift
  out=$(timeout -k 5 "$t" "$@" 2>"$tmp/err")
  rc=$?
  err=$(cat "$tmp/err")
}

# quiet SECONDS CMD...: the same, shown, and CMD must exit 0 with nothing on stderr.
quiet() {
  capture "$@"
  shift
  echo "$out"
  [ -z "$err" ] || echo "stderr: $err"
  [ $rc -eq 0 ] || fail "$* exited $rc"
  [ -z "$err" ] || fail "$* wrote to stderr"
}
