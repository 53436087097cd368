#!/usr/bin/env bash
# Install into a scratch DESTDIR, then build and run a program against the installed copy
# using nothing but pkg-config, as a user outside this tree would.
set -eu
build=$1 src=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild >/dev/null
pc=$(dirname "$(find "$dest" -name fastmsg.pc | head -n1)")
[ -n "$pc" ] || { echo "FAIL: no fastmsg.pc installed"; exit 1; }
test -f "$(find "$dest" -name fastmsg.h | head -n1)" || { echo "FAIL: no fastmsg.h"; exit 1; }
export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest
flags=$(pkg-config --cflags --libs fastmsg)
cc -std=c11 -Wall -Wextra -Werror -o "$dest/prog" "$src/tests/integration/install/installed_prog.c" $flags
libdir=$(dirname "$(find "$dest" -name 'libfastmsg.so' | head -n1)")
out=$(env -u FASTMSG_RUN_ADDR LD_LIBRARY_PATH="$libdir" FM_PROVIDER=shm timeout 60 "$dest/prog")
echo "$out"
grep -q "installed fastmsg .* rank 0 of 1" <<<"$out" || { echo "FAIL: unexpected output"; exit 1; }
test -x "$(find "$dest" -name fastmsg-run | head -n1)" || { echo "FAIL: fastmsg-run not installed"; exit 1; }
echo "PASS: built against the installed copy with pkg-config"
