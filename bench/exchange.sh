#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg-run's key-value exchange, timed from the last rank's put to the last get returning
# (bench/boot_exchange.c, no network opened), at several job sizes: medians of repeats, and
# the bytes all ranks received from the launcher (the kernel's count). With --before COMMIT,
# that commit's fastmsg-run and run back end are built on the side (git archive, meson) and
# measured in alternation with this tree's, so both see the same machine.
#
# usage: bench/exchange.sh [--ranks "64 256 1024"] [--reps 5] [--gets "all few"]
#                          [--before COMMIT] [--build DIR]
#   --gets all   what fm_init does today: every rank gets every rank's card and address
#   --gets few   every rank gets 4 ranks' card and address (addresses on first contact)
# BENCH_OUT=DIR also keeps every run's output there. Needs a configured build (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ranks="64 256 1024" reps=5 gets="all few" before="" build="${BUILD_DIR:-$root/build}"
while [ $# -gt 0 ]; do
    case $1 in
        --ranks) ranks=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --gets) gets=$2; shift 2 ;;
        --before) before=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        *) sed -n '2,14p' "$0" >&2; exit 2 ;;
    esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/fastmsg-exchange.XXXXXX")
trap 'rm -rf "$work"' EXIT

# probe TREE BUILD OUT: boot_exchange.c built against that tree's bootstrap, the same way for
# every tree (the program is this tree's; the bootstrap interface it uses is older than it).
probe() {
    local tree=$1 b=$2 libs=()
    ninja -C "$b" runtime/launcher/fastmsg-run runtime/boot/libfm_boot.a \
        runtime/util/libfm_util.a >/dev/null
    if nm "$b/runtime/boot/libfm_boot.a" 2>/dev/null | grep -q ' U PMIx_'; then
        read -r -a libs <<<"$(pkg-config --libs pmix)"
    fi
    cc -O2 -D_GNU_SOURCE -o "$3" "$root/bench/boot_exchange.c" -I"$tree/runtime/boot" \
        -I"$tree/runtime/util" -I"$tree/api" -I"$b" "$b/runtime/boot/libfm_boot.a" \
        "$b/runtime/util/libfm_util.a" "${libs[@]}" -pthread
}

variants=(after)
probe "$root" "$build" "$work/after-probe"
run_after="$build/runtime/launcher/fastmsg-run"
if [ -n "$before" ]; then
    sha=$(git -C "$root" rev-parse --short "$before")
    old="${TMPDIR:-/tmp}/fastmsg-exchange-$sha" # kept: building it again costs a minute
    if [ ! -x "$old/build/runtime/launcher/fastmsg-run" ]; then
        rm -rf "$old" && mkdir -p "$old"
        git -C "$root" archive "$sha" | tar -x -C "$old"
        meson setup "$old/build" "$old" >/dev/null
    fi
    probe "$old" "$old/build" "$work/before-probe"
    run_before="$old/build/runtime/launcher/fastmsg-run"
    variants=(before after)
fi

# once VARIANT N GETS: one job; prints "SECONDS BYTES" or "failed".
once() {
    local run="run_$1" out="$work/out" t
    if ! timeout 900 "${!run}" -n "$2" "$work/$1-probe" --gets "$3" >"$out" 2>"$work/err" ||
        [ "$(grep -c '^boot_exchange rank=' "$out")" -ne "$2" ]; then
        echo failed
        return
    fi
    [ -z "${BENCH_OUT:-}" ] || { mkdir -p "$BENCH_OUT"; cp "$out" "$BENCH_OUT/$1-$2-$3-$(date +%s%N).out"; }
    awk '/^boot_exchange rank=/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
             if (v["put"] > p) p = v["put"]; if (v["done"] > d) d = v["done"]; b += v["bytes"] }
         END { printf "%.3f %d\n", (d - p) / 1e9, b }' "$out"
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# fastmsg-run exchange: seconds from the last rank's put to the last get returning (medians"
echo "# of $reps), MB all ranks received; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "$before" ] || echo "# before: $sha ($(git -C "$root" log -1 --format=%s "$sha" | cut -c1-60))"
printf '%6s %5s' ranks gets
for v in "${variants[@]}"; do printf ' %9s %9s' "$v" "$v-MB"; done
echo
for n in $ranks; do
    for g in $gets; do
        for v in "${variants[@]}"; do : >"$work/$v.t"; done
        for _ in $(seq "$reps"); do
            for v in "${variants[@]}"; do
                r=$(once "$v" "$n" "$g")
                [ "$r" = failed ] && { echo "  ($v, $n ranks, $g: a run failed)" >&2; continue; }
                echo "${r% *}" >>"$work/$v.t"
                echo "${r#* }" >"$work/$v.b"
            done
        done
        printf '%6s %5s' "$n" "$g"
        for v in "${variants[@]}"; do
            mb=-
            [ ! -f "$work/$v.b" ] || mb=$(awk '{ printf "%.1f", $1 / 1e6 }' "$work/$v.b")
            printf ' %9s %9s' "$(median <"$work/$v.t")" "${mb:--}"
        done
        echo
    done
done
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
