#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fastmsg's real code under SimGrid (bench/sim): builds the SMPI flavour into BUILD/sim, then
#   every-tree: 16 simulated ranks on the star platform, every tree builder and auto, each
#     copy checked byte by byte (fastmsg-bench-mcast fails on a wrong one), and MPI_Bcast;
#   fpfs-steps: 16 ranks on the ideal platform (no latency, no transfer time, 1 us charged
#     per packet sent: lambda = 1), m-packet multicasts down flat, chain and binomial trees
#     finish in exactly ../shared/DESIGN.md's FPFS step counts, and a second run (with the
#     payload in SMPI's shared memory) gives the same times to the nanosecond; the split
#     two-tree multicast on 3 ranks in exactly the steps counted by hand;
#   calibrate: fm_mcast_calibrate under SimGrid finishes, the calibrated model is exact on the
#     ideal platform, and auto is never slower than flat, chain and binomial there; on the
#     fat tree told its leaves as racks, it measures twice the latency to another leaf.
# Skips (77) only when SimGrid is not installed; tests/setup-deps.sh installs it.
# usage: sim_test.sh every-tree|fpfs-steps|calibrate BUILD_ROOT SOURCE_ROOT
set -euo pipefail
what=$1 build=$2 src=$3
if ! command -v smpicc >/dev/null || ! command -v smpirun >/dev/null; then
  echo "SKIP: SimGrid (smpicc, smpirun) is not installed: apt-get install libsimgrid-dev"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Both tests build into the same directory: one at a time (meson test runs them in order).
exec 9>"$build/sim.lock"
flock 9
run=("$src/bench/sim/run" --build "$build/sim")

case "$what" in
every-tree)
  trees=flat,chain,binomial,kbinomial,kbinomial:3,postal,postal:2,prefix,node,sepaddr,utorus
  trees+=,storus,mdtorus,mutorus,twotree,auto
  "${run[@]}" --platform star --ranks 16 --sizes 8,100K,1M --trees "$trees" -r 1 -i 3 \
    --mpi binomial_tree --csv > "$out/rows.csv"
  python3 - "$out/rows.csv" "$trees" <<'PY'
import csv, sys
lines = [l for l in open(sys.argv[1]) if not l.startswith('#')]
rows = [r for r in csv.DictReader(lines[:1] + [l for l in lines[1:] if l != lines[0]])]
want = sys.argv[2].split(',') + ['smpi-bcast']
seen = {(r['tree'], r['size']) for r in rows}
missing = [(t, s) for t in want for s in ('8', '102400', '1048576') if (t, s) not in seen]
if missing:
    sys.exit(f"FAIL: no row for {missing}")
for r in rows:
    if not float(r['completion_us']) > 0:
        sys.exit(f"FAIL: {r['tree']} at {r['size']} B: completion {r['completion_us']} us")
print(f"ok: {len(rows)} rows, every tree delivered every byte to 15 members")
PY
  ;;
fpfs-steps)
  # Sizes 8 + k x 1 KiB take k + 1 packets of 1 KiB, whatever the first packet's header
  # leaves of it (between 8 bytes and a packet). 64 credits: no credit packet mid-multicast.
  # The second pass takes its payload from SMPI's shared memory (run's default above 256
  # ranks), which must change nothing simulated either.
  for pass in 1 2; do
    payload=private
    [ "$pass" = 1 ] || payload=shared
    FM_CREDITS=64 "${run[@]}" --platform ideal --ranks 16 --packet 1K --costs send=1e-6,recv=0 \
      --sizes 8,2056,8200 --trees flat,chain,binomial -r 1 -i 3 --payload "$payload" --csv \
      > "$out/pass$pass.csv"
  done
  cmp "$out/pass1.csv" "$out/pass2.csv" ||
    { echo "FAIL: the same simulation (private, then shared payload) gave different times"
      diff "$out/pass1.csv" "$out/pass2.csv"; exit 1; }
  python3 - "$out/pass1.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#')))
n, P = 16, 1024
# DESIGN.md: T = t_1 + (m - 1) d_root steps; flat: t_1 = n - 1 = d_root; chain: t_1 = n - 1,
# d_root = 1; binomial on 16 = 2^4 members: t_1 = 4 = d_root.
steps = {'flat': lambda m: (n - 1) + (m - 1) * (n - 1),
         'chain': lambda m: (n - 1) + (m - 1),
         'binomial': lambda m: 4 + (m - 1) * 4}
checked = 0
for r in rows:
    m = (int(r['size']) - 8) // P + 1
    want = steps[r['tree']](m) * 1.0  # one step = 1 us
    got = float(r['completion_us'])
    if abs(got - want) > 1e-3:
        sys.exit(f"FAIL: {r['tree']}, {m} packets: {got} us, FPFS says {want:.0f} steps of 1 us")
    checked += 1
if checked != 9:
    sys.exit(f"FAIL: {checked} rows, want 9")
print("ok: flat, chain and binomial at 1, 3 and 9 packets took exactly their FPFS steps")
PY
  # The split two-tree multicast on 3 ranks, same platform, by hand (tree 0: root -> 1 -> 2,
  # tree 1: root -> 2 -> 1; a packet's send is a step, nothing else costs): one packet goes
  # down tree 0 alone, a chain: 2 steps. Two (8 + 1 KiB: each half's first packet carries the
  # descriptor): p0 to 1 in step 1, p1 to 2 in step 2 while 1 sends p0 on to 2, then 2 sends
  # p1 on to 1: 3 steps. Four (8 + 3 KiB): the root sends p0..p3 in steps 1-4 (to 1, 2, 1, 2);
  # 1 sends p0 on in step 2 and p2 in step 4, 2 sends p1 on in step 3 and p3 in step 5: 5.
  FM_CREDITS=64 "${run[@]}" --platform ideal --ranks 3 --packet 1K --costs send=1e-6,recv=0 \
    --sizes 8,1032,3080 --trees twotree -r 1 -i 3 --csv > "$out/two.csv"
  python3 - "$out/two.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#')))
want = {'8': 2.0, '1032': 3.0, '3080': 5.0}
got = {r['size']: float(r['completion_us']) for r in rows if r['tree'] == 'twotree'}
if sorted(got) != sorted(want) or any(abs(got[k] - want[k]) > 1e-3 for k in want):
    sys.exit(f"FAIL: twotree on 3 ranks took {got} us, by hand {want}")
print("ok: twotree on 3 ranks at 1, 2 and 4 packets took exactly the hand-counted steps")
PY
  ;;
calibrate)
  # fm_mcast_calibrate (run's default) under SimGrid (its waits block in the simulated
  # transport: polling moves no simulated time, and before they did it never finished), on
  # the ideal platform of fpfs-steps: the calibrated model predicts flat, chain and binomial
  # exactly, and auto is no slower than the fastest of the three at each size.
  FM_CREDITS=64 "${run[@]}" --platform ideal --ranks 16 --packet 1K --costs send=1e-6,recv=0 \
    --sizes 8,2056,8200 --trees flat,chain,binomial,auto -r 1 -i 3 --csv > "$out/rows.csv"
  python3 - "$out/rows.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#')))
best = {}
for r in rows:
    got = float(r['completion_us'])
    if r['calibrated'] not in ('1', 'yes'):
        sys.exit(f"FAIL: {r['tree']} at {r['size']} B: model not calibrated ({r['calibrated']})")
    if r['tree'] == 'auto':
        continue
    model = float(r['model_us'])
    if abs(model - got) > 0.01 * got:
        sys.exit(f"FAIL: {r['tree']} at {r['size']} B: model {model} us, simulated {got} us")
    best[r['size']] = min(best.get(r['size'], got), got)
autos = [r for r in rows if r['tree'] == 'auto']
if len(best) != 3 or len(autos) != 3:
    sys.exit(f"FAIL: {len(rows)} rows: want flat, chain, binomial and auto at 3 sizes")
for r in autos:
    got = float(r['completion_us'])
    if got > best[r['size']] * 1.0001:
        sys.exit(f"FAIL: auto ({r['resolved']}) at {r['size']} B: {got} us, "
                 f"the best of flat, chain and binomial {best[r['size']]} us")
print("ok: the calibrated model predicts flat, chain and binomial exactly; auto is never slower")
PY
  # Racks: 128 ranks on the fat tree, told its two leaves as racks (run's FM_TOPOLOGY file).
  # Calibration measures against the first rank of the other leaf (rank 64), whose route has
  # 4 links of 250 ns against 2 within a leaf, so its small messages take 2x the latency
  # (SMPI scales both by the same factor).
  FM_VERBOSE=1 "${run[@]}" --platform fattree --ranks 128 --rack-hosts 64 --sizes 8 --trees binomial -r 1 -i 1 \
    > "$out/racks.txt" 2>&1
  ratio=$(sed -n "s/.*calibrated latency to rank 64's rack \([0-9.]*\)x.*/\1/p" "$out/racks.txt")
  if [ -z "$ratio" ] || ! python3 -c "import sys; sys.exit(not 1.8 <= float(sys.argv[1]) <= 2.2)" "$ratio"; then
    echo "FAIL: latency across the fat tree's leaves: '${ratio}'x that within one, want 2 (+-10 %)"
    grep -i "calibrated\|error" "$out/racks.txt" | head -5
    exit 1
  fi
  echo "ok: calibration measured the latency to another leaf at ${ratio}x that within one"
  ;;
*) echo "usage: sim_test.sh every-tree|fpfs-steps|calibrate BUILD_ROOT SOURCE_ROOT" >&2; exit 2 ;;
esac
