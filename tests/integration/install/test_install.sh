#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install into a scratch DESTDIR, then build and run a program against the installed copy
# using nothing but pkg-config, as a user outside this tree would: what bin/ gets (the three
# tools, no benchmarks unless -Dinstall_bench=true), that --cflags carries no private
# dependency's directories, and a program linked with an rpath to a non-system prefix runs.
set -eu
build=$1 src=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild >/dev/null
pc=$(dirname "$(find "$dest" -name fastmsg.pc | head -n1)")
[ -n "$pc" ] || { echo "FAIL: no fastmsg.pc installed"; exit 1; }
test -f "$(find "$dest" -name fastmsg.h | head -n1)" || { echo "FAIL: no fastmsg.h"; exit 1; }
bin=$(dirname "$(find "$dest" -name fastmsg-run | head -n1)")
tools=$(cd "$bin" && ls | sort | tr '\n' ' ')
case " $tools" in
  *" fastmsg-bench-"*) [ "${INSTALL_BENCH:-false}" = true ] ||
    { echo "FAIL: benchmarks installed without -Dinstall_bench: $tools"; exit 1; } ;;
esac
for t in fastmsg-info fastmsg-run fastmsg-tree; do
  [ -x "$bin/$t" ] || { echo "FAIL: $t not installed (bin/: $tools)"; exit 1; }
done
for t in $tools; do
  case $t in fastmsg-*) ;; *) echo "FAIL: bin/$t does not say it is fastmsg's"; exit 1 ;; esac
done
export PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest
cflags=$(pkg-config --cflags fastmsg)
grep -qi pmix <<<"$cflags" && { echo "FAIL: --cflags carries PMIx: $cflags"; exit 1; }
pkg-config --static --libs fastmsg | grep -q -- -lfabric ||
  { echo "FAIL: --static --libs lacks libfabric"; exit 1; }
pkg-config --libs fastmsg | grep -q -- -lfabric &&
  { echo "FAIL: --libs (shared) names private libfabric"; exit 1; }
libdir=$(dirname "$(find "$dest" -name 'libfastmsg.so' | head -n1)")
# The README's way for a non-system prefix: an rpath, so the program finds libfastmsg.so.0.
flags="$cflags $(pkg-config --libs fastmsg) -Wl,-rpath,$libdir"
cc -std=c11 -Wall -Wextra -Werror -o "$dest/prog" "$src/tests/integration/install/installed_prog.c" $flags
out=$(env -u FASTMSG_RUN_ADDR -u LD_LIBRARY_PATH FM_PROVIDER=shm timeout 60 "$dest/prog")
echo "$out"
grep -q "installed fastmsg .* rank 0 of 1" <<<"$out" || { echo "FAIL: unexpected output"; exit 1; }
echo "PASS: built against the installed copy with pkg-config"
