#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The layer check must fail when a lower layer reaches a higher one: a fake include of the
# multicast layer's header from the core's send.c must be reported, by file and layer.
# usage: catch.sh CHECK_LAYERS_PY BUILD_DIR SOURCE_DIR
set -u
out=$(python3 "$1" "$2" "$3" --inject runtime/core/send.c:runtime/mcast/mcast.h 2>&1)
rc=$?
want="NOT ALLOWED include: runtime/core/send.c (core) includes runtime/mcast/mcast.h (mcast)"
if [ $rc -ne 1 ] || ! grep -qF "$want" <<<"$out"; then
  echo "FAIL: the check passed (exit $rc) or did not name the violation:"
  echo "$out"
  exit 1
fi
echo "ok: $(grep -F "$want" <<<"$out")"
