#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's list of FM_* variables must be exactly what the table in config_table.h says
# (regenerate it with: fastmsg-info --markdown).
set -eu
info=$1 readme=$2
want=$("$info" --markdown)
# The whole block, in order (grep -F would accept any single line of it).
if ! python3 -c 'import sys; sys.exit(0 if sys.argv[1] in open(sys.argv[2]).read() else 1)' \
    "$want" "$readme"; then
  echo "FAIL: README.md's variable table is out of date; replace it with:"
  echo "$want"
  exit 1
fi
echo "PASS: README lists every FM_* variable as the table defines it"
