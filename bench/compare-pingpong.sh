#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# compare-pingpong.sh: fastmsg-bench-pingpong against libfabric's fi_pingpong, same provider,
# same sizes, same iteration counts, in one run. Repeats are interleaved per size (fm, fi, fm,
# fi, ...) so that noise on the machine hits both; each launch is one sample, and the table
# shows medians. Traffic stays on loopback. See bench/README.md.
#
# usage: bench/compare-pingpong.sh [sm|shm|tcp] [-r N] [--min SIZE] [--max SIZE] [-i N]
#                                  [--no-stream] [--floor] [--csv] [--build DIR]
set -euo pipefail

usage() {
  cat <<'EOF'
usage: compare-pingpong.sh [sm|shm|tcp] [options]
  sm|shm|tcp    provider (default sm): fastmsg FM_PROVIDER=sm|shm|tcp against
                fi_pingpong -p shm|shm|"tcp;ofi_rxm" -e rdm, FI_PROVIDER pinned, tcp on lo
                (sm is fastmsg's own shared memory: libfabric's shm is the floor beside it)
  -r N          samples (launches) per size and program; medians are shown (default 5)
  --min SIZE    smallest size (default 0); sizes 0, min, 2*min, ... max; K, M suffixes
  --max SIZE    largest size (default 4M)
  -i N          round trips up to 8 KiB (default 10000; fastmsg-bench-pingpong scales it down for
                larger sizes and fi_pingpong gets the same count)
  --no-stream   skip fastmsg-bench-pingpong's windowed bandwidth column (faster)
  --floor       also run fastmsg-bench-ofi-floor (bench/ofi_floor.c: the same ping-pong straight on
                libfabric, set up as fastmsg sets it up) up to 64 KiB: fastmsg / floor is
                fastmsg's own cost, floor / fi_pingpong that of the set-up
  --csv         comma-separated output
  --build DIR   meson build directory (default $BUILD_DIR, else build/ in the repository)
  -h            this text
EOF
}

provider=sm repeats=5 min=0 max=4194304 iters=10000 stream=1 csv=0 floor=0
build=${BUILD_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}
while [ $# -gt 0 ]; do
  case $1 in
    sm | shm | tcp) provider=$1 ;;
    -r) repeats=$2; shift ;;
    --min) min=$2; shift ;;
    --max) max=$2; shift ;;
    -i) iters=$2; shift ;;
    --no-stream) stream=0 ;;
    --floor) floor=1 ;;
    --csv) csv=1 ;;
    --build) build=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "compare-pingpong: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

fm_pp=$build/bench/fastmsg-bench-pingpong
fm_run=$build/runtime/launcher/fastmsg-run
fl_bin=$build/bench/fastmsg-bench-ofi-floor
floor_max=65536 # fastmsg-bench-ofi-floor's largest message
for f in "$fm_pp" "$fm_run" $([ "$floor" -eq 0 ] || echo "$fl_bin"); do
  [ -x "$f" ] || { echo "compare-pingpong: $f not built (meson compile -C $build)" >&2; exit 1; }
done
command -v fi_pingpong >/dev/null || { echo "compare-pingpong: no fi_pingpong (apt-get install libfabric-bin)" >&2; exit 1; }

# The provider, named explicitly to both programs and pinned through FI_PROVIDER.
case $provider in
  sm) fi_prov=shm; export FM_PROVIDER=sm FI_PROVIDER=shm ;;
  shm) fi_prov=shm; export FM_PROVIDER=shm FI_PROVIDER=shm ;;
  tcp) fi_prov="tcp;ofi_rxm"; export FM_PROVIDER=tcp FI_PROVIDER=tcp,ofi_rxm FI_TCP_IFACE=lo ;;
esac
pkt=${FM_PACKET_SIZE:-default} credits=${FM_CREDITS:-default}

# A size in bytes, with an optional K, M or G (binary) suffix.
bytes() {
  local v=${1%[KkMmGg]} m=1
  case $1 in *[Kk]) m=1024 ;; *[Mm]) m=$((1 << 20)) ;; *[Gg]) m=$((1 << 30)) ;; esac
  [[ $v =~ ^[0-9]+$ ]] || { echo "compare-pingpong: bad size '$1'" >&2; exit 2; }
  echo $((v * m))
}
min=$(bytes "$min") max=$(bytes "$max")
[[ $repeats =~ ^[1-9][0-9]*$ && $iters =~ ^[1-9][0-9]*$ ]] || { echo "compare-pingpong: -r and -i take positive integers" >&2; exit 2; }

sizes=()
[ "$min" -eq 0 ] && sizes+=(0)
for ((s = min > 0 ? min : 1; s <= max; s *= 2)); do sizes+=("$s"); done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One fastmsg-bench-pingpong sample of one size: "latency_us stream_MBps lat_iters".
fm_sample() {
  local s=$1 extra=()
  [ "$stream" -eq 1 ] || extra=(--latency-only)
  timeout -k 5 300 "$fm_run" -n 2 "$fm_pp" --min "$s" --max "$s" -r 1 -i "$iters" --csv \
    "${extra[@]}" >"$tmp/fm.out" 2>"$tmp/fm.err" || {
    echo "compare-pingpong: fastmsg-bench-pingpong failed at $s B:" >&2
    cat "$tmp/fm.err" >&2
    return 1
  }
  awk -F, 'NR == 2 { print $5, ($6 == "" ? "-" : $6), $8 }' "$tmp/fm.out"
}

# One fastmsg-bench-ofi-floor sample (both ranks, meeting through a directory): "latency_us",
# or "-" above its largest size.
floor_sample() {
  local s=$1 n=$2 d pid out
  if [ "$floor" -eq 0 ] || [ "$s" -gt "$floor_max" ]; then echo -; return; fi
  d=$(mktemp -d -p "$tmp")
  timeout -k 5 300 "$fl_bin" --dir "$d" --rank 1 -p "$fi_prov" -S "$s" -I "$n" \
    2>"$tmp/fl1.err" &
  pid=$!
  if ! out=$(timeout -k 5 300 "$fl_bin" --dir "$d" --rank 0 -p "$fi_prov" -S "$s" -I "$n" \
    2>"$tmp/fl0.err"); then
    echo "compare-pingpong: fastmsg-bench-ofi-floor failed at $s B:" >&2
    cat "$tmp/fl0.err" "$tmp/fl1.err" >&2
    kill "$pid" 2>/dev/null || true
    return 1
  fi
  wait "$pid" || true
  echo "$out"
}

free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    # Any state: fi_pingpong cannot bind a port still in TIME_WAIT.
    [ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ] && { echo "$p"; return; }
  done
}

wait_listening() {
  local p=$1
  if ! command -v ss >/dev/null; then sleep 0.5; return; fi
  for _ in $(seq 500); do
    [ -n "$(ss -Hltn "sport = :$p" 2>/dev/null)" ] && return
    sleep 0.01
  done
}

# One fi_pingpong sample (server + client on 127.0.0.1): "latency_us MBps". Its usec/xfer is
# half the round trip (elapsed / (2 * iterations)), printed to 0.01 us; MB/sec is
# 2 * iterations * size / elapsed us, so size / MB/sec is the same latency to 4 digits.
fi_sample() {
  local s=$1 n=$2 port spid line
  port=$(free_port)
  timeout -k 5 300 fi_pingpong -p "$fi_prov" -e rdm -S "$s" -I "$n" -B "$port" \
    >"$tmp/fis.out" 2>&1 &
  spid=$!
  wait_listening "$port"
  if ! timeout -k 5 300 fi_pingpong -p "$fi_prov" -e rdm -S "$s" -I "$n" -P "$port" 127.0.0.1 \
    >"$tmp/fic.out" 2>&1; then
    echo "compare-pingpong: fi_pingpong failed at $s B:" >&2; cat "$tmp/fic.out" "$tmp/fis.out" >&2
    kill "$spid" 2>/dev/null || true
    return 1
  fi
  wait "$spid" || true
  line=$(grep -E '^[0-9.]+[kmg]?[[:space:]]' "$tmp/fic.out" | tail -1)
  awk -v s="$s" '{ mbs = $6; lat = (s > 0 && mbs >= 10) ? s / mbs : $7; print lat, mbs }' <<<"$line"
}

# The median of the numbers on stdin ("-" entries skipped); "-" when there are none.
median() { tr ' ' '\n' | { grep -Ev '^-?$' || true; } | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) { print "-"; exit }
  print ((NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a != "-") printf "%.3f", a / b; else printf "-" }'; }
# Ping-pong bandwidth as fi_pingpong reports it: size over one-way latency, MB/s.
ppbw() { awk -v s="$1" -v l="$2" 'BEGIN { printf "%.2f", (l > 0) ? s / l : 0 }'; }
fmt2() { if [ "$1" = - ]; then echo -; else printf "%.2f" "$1"; fi; }

declare -A fm_lat fm_sbw fi_lat fi_bw n_iter lat_r bw_r fl_lat fl_r
for ((r = 1; r <= repeats; r++)); do
  for s in "${sizes[@]}"; do
    # One retry: a launch can fail for reasons outside both programs (a port taken meanwhile).
    out=$(fm_sample "$s") || out=$(fm_sample "$s") || exit 1
    read -r lat sbw it <<<"$out"
    fm_lat[$s]+=" $lat" fm_sbw[$s]+=" $sbw" n_iter[$s]=$it
    out=$(fi_sample "$s" "$it") || out=$(fi_sample "$s" "$it") || exit 1
    read -r ilat ibw <<<"$out"
    fi_lat[$s]+=" $ilat" fi_bw[$s]+=" $ibw"
    # Each fm sample against the fi sample taken right after it: drift cancels in the pair.
    lat_r[$s]+=" $(ratio "$lat" "$ilat")" bw_r[$s]+=" $(ratio "$(ppbw "$s" "$lat")" "$ibw")"
    out=$(floor_sample "$s" "$it") || out=$(floor_sample "$s" "$it") || exit 1
    fl_lat[$s]+=" $out" fl_r[$s]+=" $(ratio "$lat" "$out")"
  done
  echo "compare-pingpong: repeat $r of $repeats done" >&2
done

fl_head=() fl_csv=""
[ "$floor" -eq 0 ] || fl_head=(floor-lat fm/floor) fl_csv=",floor_lat_us,fm_floor_ratio"
if [ "$csv" -eq 1 ]; then
  echo "provider,packet_size,credits,size,iters,fm_lat_us,fi_lat_us,lat_ratio,fm_bw_MBps,fi_bw_MBps,bw_ratio,fm_stream_bw_MBps$fl_csv"
else
  echo "# compare-pingpong: provider $provider (fastmsg FM_PROVIDER=$FM_PROVIDER; fi_pingpong -p \"$fi_prov\" -e rdm), FI_PROVIDER=$FI_PROVIDER"
  echo "# FM_PACKET_SIZE=$pkt FM_CREDITS=$credits; median of $repeats samples per size, one launch each, fm and fi interleaved"
  echo "# lat: one-way (half round trip), us.  bw: ping-pong MB/s = size / lat (fi_pingpong's MB/sec)"
  echo "# ratio: fastmsg / fi_pingpong, the median of the per-repeat ratios (each fm sample with the fi sample right after it)"
  echo "# fm-stream: fastmsg-bench-pingpong's windowed bandwidth, MB/s (fi_pingpong has none)"
  [ "$floor" -eq 0 ] || echo "# floor-lat: fastmsg-bench-ofi-floor, libfabric set up as fastmsg sets it up; fm/floor: median of per-repeat ratios"
  printf "%-9s %8s %10s %10s %9s %11s %11s %9s %11s" "# size" iters fm-lat fi-lat lat-ratio \
    fm-bw fi-bw bw-ratio fm-stream
  [ "$floor" -eq 0 ] || printf " %10s %9s" "${fl_head[@]}"
  echo
fi
for s in "${sizes[@]}"; do
  fl=$(median <<<"${fm_lat[$s]}") il=$(median <<<"${fi_lat[$s]}")
  sb=$(median <<<"${fm_sbw[$s]}")
  fb=$(ppbw "$s" "$fl") ib=$(median <<<"${fi_bw[$s]}")
  [ "$s" -eq 0 ] && fb=0 ib=0
  lr=$(median <<<"${lat_r[$s]}") br=$(median <<<"${bw_r[$s]}")
  lr=$(fmt2 "$lr") br=$(fmt2 "$br")
  fll=$(median <<<"${fl_lat[$s]}") flr=$(fmt2 "$(median <<<"${fl_r[$s]}")")
  if [ "$csv" -eq 1 ]; then
    echo -n "$provider,$pkt,$credits,$s,${n_iter[$s]},$fl,$il,$lr,$fb,$ib,$br,$sb"
    [ "$floor" -eq 0 ] && echo || echo ",$fll,$flr"
  else
    printf "%-9s %8s %10.3f %10.3f %9s %11.2f %11.2f %9s %11s" "$s" "${n_iter[$s]}" "$fl" "$il" \
      "$lr" "$fb" "$ib" "$br" "$sb"
    [ "$floor" -eq 0 ] && echo || printf " %10s %9s\n" "$fll" "$flr"
  fi
done
