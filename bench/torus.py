#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""torus.py: multicast on the emulated torus (cluster.sh up --torus): the five torus trees
(sepaddr, utorus, storus, mdtorus, mutorus) beside the topology-blind binomial, kbinomial and
postal trees, auto, and both MPIs' MPI_Bcast, on the same hosts, in one run.

For each group size G (the root on host 0, the other G - 1 hosts drawn with --seed and listed
in that drawn order, so that rank order says nothing of place, as on a machine whose host list
is not in torus order) and each message size: completion (the slowest member, one clock, the
median of medians), the root's CPU time per multicast, tree creation at the root, and the
model's prediction; for each tree at 64 KiB, link concentration (Oral & George: link visits
over links used) measured from every link's byte counters around a run of a known number of
multicasts, beside the model's count. Then the model's extrapolation to larger tori
(fastmsg-tree --torus, from the costs calibrated on this one), and the targets of
bench/README.md ("The torus multicasts"). Writes torus.csv, links.csv, extrapolate.csv,
cluster.txt (cluster.sh's account of the links' shaping) and, with python3-matplotlib,
torus.png and links.png to --out. Needs root.

  torus.py [--torus 4x4] [--unidirectional] [--rate 100mbit] [--fifo | --bulk-fifo]
           [--groups 4,8,12,16] [--sizes 8,64K,1M] [-r 3] [--sf] [--no-mpi]
           [--extrapolate 8x8,16x16] [--prefix fmto] [--seed 1] [--out DIR] [--quick]
  torus.py --replot DIR     tables, targets and plots again from DIR's CSV files
  torus.py --replot DIR --remodel   the same with today's model (fastmsg-tree) in the
                            model column, for the same placements and costs
"""
import argparse
import csv
import json
import os
import random
import subprocess
import sys

import compare
from compare import fail, num, run, size_bytes, size_name

sys.path.insert(0, os.path.join(compare.HERE, "cluster"))
import links as linkstat  # noqa: E402 (bench/cluster/links.py)

TORUS_TREES = ["sepaddr", "utorus", "storus", "mdtorus", "mutorus"]
BLIND_TREES = ["binomial", "kbinomial", "postal", "twotree"]
COUNT_SIZE = 64 << 10  # the message of the link-counting runs
COUNT_ITERS = 10
FRAME, SEGMENT = 1514, 1448  # an Ethernet frame and the TCP payload it carries (timestamps on)


class Torus(compare.Cluster):
    """cluster.sh up --torus on entry, down on exit; group(hosts) is the cluster as a job on
    a subset of its hosts sees it (for compare's launch helpers)."""

    def __init__(self, tools, dims, uni, rate, prefix, burst=None, shaping=None):
        a, b = (int(x) for x in dims.split("x"))
        super().__init__(tools, a * b, rate, prefix, burst=burst)
        self.dims, self.uni, self.shaping = dims, uni, shaping  # shaping: cluster.sh's option
        self.up_report = ""
        self.spec = f"torus:{dims}" + (":uni" if uni else "")

    def __enter__(self):
        cmd = ["bash", self.tools.cluster, "up", str(self.n), "--torus", self.dims,
               "--prefix", self.prefix]
        if self.uni:
            cmd.append("--unidirectional")
        if self.rate:
            cmd += ["--rate", self.rate]
        if self.burst:
            cmd += ["--burst", str(self.burst)]
        if self.shaping:
            cmd.append(self.shaping)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 77:
            fail("no emulated torus here: " + p.stderr.strip())
        if p.returncode != 0:
            subprocess.run(["bash", self.tools.cluster, "down", "--prefix", self.prefix])
            fail("cluster.sh up --torus failed: " + p.stderr.strip())
        self.up_report = p.stdout
        self.all_hosts = [f"{self.prefix}{k}" for k in range(self.n)]
        self.hosts = ",".join(self.all_hosts)
        self.addr0 = run(["bash", self.tools.cluster, "addr", "0"]).strip()
        return self

    def bucket(self):
        """The links' tbf bucket in bytes, as cluster.sh sets it."""
        if self.burst:
            return int(self.burst)
        return max(3028, int(compare.rate_bytes_per_s(self.rate)) // 500)

    def group(self, hosts):
        g = Torus.__new__(Torus)
        g.__dict__.update(self.__dict__)
        g.n, g.hosts = len(hosts), ",".join(hosts)
        return g

    def counters(self):
        """Every directed link's counters (links.py's parse_counters)."""
        return linkstat.parse_counters(run(["bash", self.tools.cluster, "counters", "--prefix",
                                            self.prefix]))


def fm_env(cl, costs):
    """The torus's positions, the calibrated costs kept in a file, and what calibration does
    not measure: the links' shaper bucket, and the machine's cores that every host shares."""
    return {"FM_PROVIDER": "tcp", "FM_IFACE": "fm0", "FM_TOPOLOGY": cl.spec,
            "FM_MCAST_COSTS_FILE": costs, "FM_MCAST_COSTS": f"burst_bytes={cl.bucket()}",
            "FM_MCAST_CORES": str(os.cpu_count() or 1)}


def fm_rows(tools, cl, trees, sizes, repeats, modes, costs, extra=()):
    cmd, env = cl.fastmsg([tools.fm_mcast, "--trees", ",".join(trees), "--sizes", sizes,
                           "--modes", modes, "--calibrate", "--common-clock", "-r",
                           str(repeats), "--timeout", "600", "--csv"] + list(extra))
    env.update(fm_env(cl, costs))
    return compare.csv_rows(run(cmd, env=env, timeout=7200))


def link_load(tools, cl, tree, costs):
    """Runs COUNT_ITERS + 1 multicasts of COUNT_SIZE down tree and reads the links' counters
    around them: link visits (bytes over every link, in copies of the run's payload, a copy's
    TCP/IP framing included) and links used (links that carried at least half a copy)."""
    before = cl.counters()
    rows = fm_rows(tools, cl, [tree], str(COUNT_SIZE), 1, "fpfs", costs,
                   ["-i", str(COUNT_ITERS)])
    after = cl.counters()
    iters = int(rows[0]["iters"])
    copy = int((1 + iters) * (COUNT_SIZE + 64) * FRAME / SEGMENT)
    s = linkstat.summary(linkstat.deltas(before, after), copy // 2, copy)
    return {"tree": tree, "resolved": rows[0]["resolved"], "visits": s["link_visits"],
            "used": s["links_used"], "concentration": s["link_concentration"],
            "model_visits": num(rows[0]["model_link_visits"]),
            "model_used": num(rows[0]["model_links_used"])}


def draw_hosts(n, groups, seed):
    """Host 0 and, for every group size, the first G - 1 of the others in one seeded order."""
    others = list(range(1, n))
    random.Random(seed).shuffle(others)
    return {g: [0] + others[:g - 1] for g in groups}


def extrapolate(tools, cl, trees, sizes, tori, costs, packet, credits):
    """The model's completion (fastmsg-tree --torus) on whole tori, from the calibrated costs,
    with the jobs' credit window."""
    rows = []
    with open(costs) as f:
        text = f.read()
    costs = costs + ".torus"
    with open(costs, "w") as f:  # with the bucket the job had from FM_MCAST_COSTS
        f.write(text + f"burst_bytes={cl.bucket()}\n")
    for dims in [cl.dims] + tori:
        spec = dims + (":uni" if cl.uni else "")
        for tree in trees:
            for s in sizes:
                m = max(1, -(-s // packet))
                # (the topology-blind trees over members in a drawn order, as in the runs)
                blind = ["--seed", "1"] if tree in BLIND_TREES else []
                out = run([tools.fm_tree, tree, "--torus", spec, "-m", str(m), "--costs", costs,
                           "--bytes", str(max(s, 1) + 32), "--packet", str(packet),
                           "--credits", str(credits)] + blind)
                vals = dict(line.split(None, 1) for line in out.splitlines()
                            if line.startswith(("seconds", "links")))
                visits, used = (int(x) for x in vals["links"].split())
                rows.append({"torus": spec, "tree": tree, "size": s,
                             "model_us": float(vals["seconds"]) * 1e6,
                             "model_concentration": visits / used if used else None})
    return rows


def report(rows, links, ext, mpis, out):
    fields = ["group", "who", "tree", "resolved", "mode", "size", "completion_us",
              "root_cpu_us", "tree_us", "model_us", "ratio", "model_link_visits",
              "model_links_used"]
    with open(os.path.join(out, "torus.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "links.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["group", "tree", "resolved", "visits", "used",
                                          "concentration", "model_visits", "model_used"],
                           extrasaction="ignore")
        w.writeheader()
        w.writerows(links)
    with open(os.path.join(out, "extrapolate.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["torus", "tree", "size", "model_us",
                                          "model_concentration"])
        w.writeheader()
        w.writerows(ext)
    for g in sorted({r["group"] for r in rows}):
        for s in sorted({int(r["size"]) for r in rows}):
            sel = sorted((r for r in rows if r["group"] == g and int(r["size"]) == s),
                         key=lambda r: num(r["completion_us"]) or 1e300)
            print(f"\n# {g} members, {size_name(s)}: completion (us, slowest member), model, "
                  "root CPU per multicast, tree creation at the root")
            print(f"{'who':>8} {'tree':>10} {'resolved':>14} {'mode':>5} {'time':>10} "
                  f"{'model':>10} {'t/model':>7} {'cpu':>8} {'tree_us':>8}")
            for r in sel:
                t, mo = num(r["completion_us"]), num(r.get("model_us"))
                print(f"{r['who']:>8} {r['tree']:>10} {r['resolved']:>14} {r['mode']:>5} "
                      f"{compare.fmt(t, 1):>10} {compare.fmt(mo, 1):>10} "
                      f"{compare.fmt(compare.ratio(t, mo)):>7} "
                      f"{compare.fmt(num(r['root_cpu_us']), 1):>8} "
                      f"{compare.fmt(num(r.get('tree_us')), 2):>8}")
    print("\n# link concentration (link visits / links used) at 64 KiB: measured from the "
          "link counters, and as the model routes the tree")
    print(f"{'group':>5} {'tree':>10} {'visits':>7} {'used':>5} {'conc':>6} {'model':>12}")
    for l in sorted(links, key=lambda l: (l["group"], l["tree"])):
        mv, mu = l["model_visits"], l["model_used"]
        print(f"{l['group']:>5} {l['tree']:>10} {l['visits']:>7.1f} {l['used']:>5} "
              f"{compare.fmt(l['concentration']):>6} "
              f"{(f'{mv:.0f}/{mu:.0f}=' + compare.fmt(mv / mu)) if mu else '-':>12}")
    print("\n# the model's extrapolation: whole tori, every member (us)")
    tori = sorted({e["torus"] for e in ext}, key=lambda t: int(t.split(":")[0].split("x")[0]))
    for s in sorted({e["size"] for e in ext}):
        print(f"{size_name(s):>6} {'tree':>10} " + " ".join(f"{t:>14}" for t in tori))
        for tree in sorted({e["tree"] for e in ext}):
            cells = [next((e for e in ext if e["torus"] == t and e["tree"] == tree and
                           e["size"] == s), None) for t in tori]
            print(f"{'':>6} {tree:>10} " + " ".join(
                f"{compare.fmt(c['model_us'], 1) if c else '-':>14}" for c in cells))


def best(rows, g, s, trees, mode="fpfs"):
    sel = [r for r in rows if r["group"] == g and int(r["size"]) == s and r["who"] == "fastmsg"
           and r["tree"] in trees and r["mode"] == mode and num(r["completion_us"])]
    return min(sel, key=lambda r: num(r["completion_us"])) if sel else None


def targets(rows, links, groups):
    """bench/README.md's torus targets and the paper's findings, with the figures."""
    g, big, mid = max(groups), 1 << 20, 64 << 10
    checks = []
    aware, blind = best(rows, g, big, TORUS_TREES), best(rows, g, big, ["binomial"])
    if aware and blind:
        r = num(blind["completion_us"]) / num(aware["completion_us"])
        checks.append((f"1 MiB, {g} members: best torus tree ({aware['tree']}) vs binomial",
                       f"{r:.2f}x faster", r >= 1.3))
    auto = best(rows, g, big, ["auto"])
    every = best(rows, g, big, TORUS_TREES + BLIND_TREES)
    if auto and every:
        r = num(auto["completion_us"]) / num(every["completion_us"])
        checks.append((f"1 MiB, {g} members: auto ({auto['resolved']}) vs best "
                       f"({every['tree']})", f"{r:.2f}x", r <= 1.10))
    worst = []
    for r in rows:
        if r["who"] == "fastmsg" and r["tree"] in TORUS_TREES + BLIND_TREES and \
                int(r["size"]) in (mid, big) and r["group"] == g and num(r.get("model_us")):
            worst.append((abs(num(r["completion_us"]) / num(r["model_us"]) - 1), r))
    if worst:
        e, r = max(worst, key=lambda x: x[0])
        checks.append((f"model within 25 % at 64 KiB and 1 MiB, {g} members, every tree "
                       f"and mode (worst: {r['tree']} {r['mode']} {size_name(int(r['size']))})",
                       f"{e * 100:.0f} %", e <= 0.25))
    # (a cell without a completion, a job that failed, counts as outside)
    cells = [(num(r["completion_us"]) / num(r["model_us"]) if num(r["completion_us"])
              else float("inf"), r) for r in rows
             if r["who"] == "fastmsg" and r["tree"] in TORUS_TREES + BLIND_TREES
             and int(r["size"]) in (mid, big) and num(r.get("model_us"))]
    if cells:
        inside = sum(1 for q, _ in cells if abs(q - 1) <= 0.25)
        q, r = max(cells, key=lambda c: abs(c[0] - 1))
        checks.append((f"every group size: model within 25 % at 64 KiB and 1 MiB, every tree "
                       f"and mode (worst: {r['tree']} {r['mode']} {size_name(int(r['size']))} at "
                       f"{r['group']} members, {q:.3f} of its prediction)",
                       f"{inside} of {len(cells)} cells", inside == len(cells)))
    for s in sorted({int(r["size"]) for r in rows}):
        for gg in sorted(groups):
            b = best(rows, gg, s, TORUS_TREES)
            if b:
                checks.append((f"finding: best torus tree at {size_name(s)}, {gg} members",
                               b["tree"], None))
    conc = {}
    for l in links:
        if l["group"] == g and l["concentration"]:
            conc[l["tree"]] = l["concentration"]
    if conc:
        low = sorted(conc, key=conc.get)
        checks.append((f"finding: link concentration, lowest first, {g} members",
                       ", ".join(f"{t} {conc[t]:.2f}" for t in low), None))
    print("\n# targets and findings")
    for what, fig, ok in checks:
        print(f"{'yes' if ok else 'no' if ok is not None else '  -':>4}  {what}: {fig}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR",
                                                      os.path.join(compare.TOP, "build")))
    ap.add_argument("--torus", default="4x4", help="the emulated torus, AxB (default 4x4)")
    ap.add_argument("--unidirectional", action="store_true",
                    help="every route the + way only (the paper's SCI torus)")
    ap.add_argument("--rate", default="100mbit", help="every link's rate (default 100mbit)")
    ap.add_argument("--burst", help="the links' shaper bucket, bytes (default 2 ms of the rate)")
    ap.add_argument("--fifo", action="store_true",
                    help="one tbf FIFO a link and the kernel's TCP congestion control "
                         "(cluster.sh --fifo) instead of small packets first")
    ap.add_argument("--bulk-fifo", action="store_true",
                    help="each link's data in one FIFO (cluster.sh --bulk-fifo) instead of a "
                         "queue per destination")
    ap.add_argument("--groups", default="4,8,12,16", help="group sizes, root included")
    ap.add_argument("--sizes", default="8,64K,1M", help="message sizes")
    ap.add_argument("-r", "--repeats", type=int, default=3)
    ap.add_argument("--sf", action="store_true",
                    help="every tree also store-and-forward (as the paper had to)")
    ap.add_argument("--no-mpi", action="store_true")
    ap.add_argument("--no-links", action="store_true", help="skip the link-counting runs")
    ap.add_argument("--extrapolate", default="8x8,16x16",
                    help="larger tori for the model's extrapolation ('' for none)")
    ap.add_argument("--prefix", default="fmto", help="namespace names of the torus")
    ap.add_argument("--seed", type=int, default=1, help="which hosts each group takes")
    ap.add_argument("--out", default="torus-out")
    ap.add_argument("--quick", action="store_true",
                    help="one repeat, groups 4 and the whole torus, 8 B and 64 KiB")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--replot", metavar="DIR",
                    help="no runs: the report, targets and plots again from DIR's CSV files")
    ap.add_argument("--remodel", action="store_true",
                    help="with --replot: every fastmsg tree's model column again from "
                         "fastmsg-tree, with each group's hosts (picks.json), the run's costs "
                         "(costs.txt), the links' bucket (--rate, --burst) and today's "
                         "FM_PACKET_SIZE and FM_CREDITS, no shared cores; auto's rows keep "
                         "theirs; the CSV files go to --out (not DIR)")
    args = ap.parse_args()
    if args.fifo and args.bulk_fifo:
        fail("--fifo and --bulk-fifo exclude each other")
    if args.replot:
        replot(args)
        return
    tools = compare.Tools(os.path.abspath(args.build))
    a, b = (int(x) for x in args.torus.split("x"))
    groups = sorted({int(g) for g in args.groups.split(",")}, reverse=True)
    if args.quick:
        args.repeats, args.sizes, groups = 1, "8,64K", sorted({4, a * b}, reverse=True)
    if any(g < 2 or g > a * b for g in groups):
        fail(f"--groups: sizes from 2 to {a * b}")
    sizes = [size_bytes(s) for s in args.sizes.split(",")]
    os.makedirs(args.out, exist_ok=True)
    costs = os.path.abspath(os.path.join(args.out, "costs.txt"))
    if os.path.exists(costs):
        os.unlink(costs)  # the largest group's calibration is written there, then used
    trees = TORUS_TREES + BLIND_TREES + ["auto"]
    modes = "fpfs,sf" if args.sf else "fpfs"
    rows, links = [], []
    shaping = "--fifo" if args.fifo else "--bulk-fifo" if args.bulk_fifo else None
    with Torus(tools, args.torus, args.unidirectional, args.rate, args.prefix, args.burst,
               shaping) as cl:
        with open(os.path.join(args.out, "cluster.txt"), "w") as f:
            f.write(cl.up_report)  # what cluster.sh made: shaping, congestion control
        picks = draw_hosts(cl.n, groups, args.seed)
        for g in groups:
            gc = cl.group([cl.all_hosts[h] for h in picks[g]])
            for r in fm_rows(tools, gc, trees, args.sizes, args.repeats, modes, costs):
                rows.append(dict(r, who="fastmsg", group=g))
            if not args.no_links:
                for t in TORUS_TREES + BLIND_TREES:
                    links.append(dict(link_load(tools, gc, t, costs), group=g))
            for m in ([] if args.no_mpi else tools.mpis):
                for r in compare.mcast_mpi(tools, gc, args, m):
                    rows.append(dict(r, who=m, group=g, tree=m, resolved="MPI_Bcast",
                                     mode="-", model_us=None, tree_us=None))
        packet = tools.packet_size({"FM_PROVIDER": "tcp"})
        credits = tools.setting({"FM_PROVIDER": "tcp"}, "FM_CREDITS")
        tori = [t for t in args.extrapolate.split(",") if t]
        ext = extrapolate(tools, cl, TORUS_TREES + BLIND_TREES, sizes, tori, costs, packet,
                          credits)
    report(rows, links, ext, tools.mpis, args.out)
    targets(rows, links, groups)
    with open(os.path.join(args.out, "picks.json"), "w") as f:
        json.dump({str(g): picks[g] for g in groups}, f)
    if not args.no_plots:
        plot(rows, links, args.out, f"{args.torus} torus{' (one way)' if args.unidirectional else ''}, "
             f"links {args.rate}")


def read_csv(path, ints=(), floats=()):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ints:
            r[k] = int(r[k])
        for k in floats:
            r[k] = num(r[k])
    return rows


def remodel(args, d, rows, out):
    """Each fastmsg row's model_us and ratio from today's fastmsg-tree, with the job's member
    placement, costs, links' bucket and today's FM_PACKET_SIZE and FM_CREDITS (torus positions
    are host numbers). fastmsg-tree models no shared cores (FM_MCAST_CORES), which a job's
    own column does."""
    tools = compare.Tools(os.path.abspath(args.build))
    with open(os.path.join(d, "picks.json")) as f:
        picks = json.load(f)
    bucket = int(args.burst) if args.burst else \
        max(3028, int(compare.rate_bytes_per_s(args.rate)) // 500)
    costs = os.path.join(out, "costs-remodel.txt")
    with open(os.path.join(d, "costs.txt")) as f, open(costs, "w") as c:
        c.write(f.read() + f"burst_bytes={bucket}\n")
    packet = tools.packet_size({"FM_PROVIDER": "tcp"})
    credits = tools.setting({"FM_PROVIDER": "tcp"}, "FM_CREDITS")
    spec = args.torus + (":uni" if args.unidirectional else "")
    for r in rows:
        if r["who"] != "fastmsg" or r["tree"] == "auto":
            continue
        tree, _, at = r["resolved"].partition("@")  # (tree@PAYLOAD: its own packets)
        place = ",".join(str(p) for p in picks[str(r["group"])])
        text = run([tools.fm_tree, tree, "--torus", spec, "--place", place, "--costs", costs,
                    "--bytes", str(max(r["size"], 1) + 32), "--packet", at or str(packet),
                    "--credits", str(credits)] + (["--store-forward"] if r["mode"] == "sf" else []))
        secs = [float(x.split()[1]) for x in text.splitlines() if x.startswith("seconds")]
        r["model_us"] = secs[0] * 1e6
        r["ratio"] = num(r["completion_us"]) / r["model_us"]


def replot(args):
    """The report, targets and plots of an earlier run, from its torus.csv, links.csv and
    extrapolate.csv (the plots' title from the arguments given now)."""
    d = args.replot
    rows = read_csv(os.path.join(d, "torus.csv"), ints=("group", "size"))
    links = read_csv(os.path.join(d, "links.csv"), ints=("group", "used"),
                     floats=("visits", "concentration", "model_visits", "model_used"))
    ext = read_csv(os.path.join(d, "extrapolate.csv"), ints=("size",),
                   floats=("model_us", "model_concentration"))
    out = d
    if getattr(args, "remodel", False):  # (into --out: DIR keeps the run's own model column)
        out = args.out
        if os.path.realpath(out) == os.path.realpath(d):
            fail(f"--remodel writes into --out, which must not be {d} itself")
        os.makedirs(out, exist_ok=True)
        remodel(args, d, rows, out)
    report(rows, links, ext, [], out)
    targets(rows, links, sorted({r["group"] for r in rows}))
    if not args.no_plots:
        plot(rows, links, out, f"{args.torus} torus"
             f"{' (one way)' if args.unidirectional else ''}, links {args.rate}")


def line(tree):
    """Dashed for what knows nothing of the torus (blind trees, MPIs)."""
    return "--" if tree in BLIND_TREES + compare.MPIS else "-"


def plot(rows, links, out, where):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("torus: no matplotlib (python3-matplotlib): no plots", file=sys.stderr)
        return
    # one colour per tree in every figure
    names = sorted({r["tree"] for r in rows} | {l["tree"] for l in links})
    color = dict(zip(names, plt.get_cmap("tab20").colors[::2] + plt.get_cmap("tab20").colors[1::2]))
    sizes = sorted({int(r["size"]) for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4), squeeze=False)
    for ax, s in zip(axes[0], sizes):
        for tree in sorted({r["tree"] for r in rows if r["mode"] in ("fpfs", "-")}):
            pts = sorted((r["group"], num(r["completion_us"])) for r in rows
                         if r["tree"] == tree and int(r["size"]) == s and
                         r["mode"] in ("fpfs", "-"))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], marker="o",
                        label=tree, color=color[tree],
                        linestyle=line(tree))
        ax.set_title(size_name(s))
        ax.set_xlabel("group size")
        ax.set_ylabel("completion (ms)")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"multicast completion, {where}")
    fig.savefig(os.path.join(out, "torus.png"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    # the paper's other two figures: CPU time at the root, and tree creation at the root
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    big = max(sizes)
    for ax, key, scale, what in (
            (axes[0], "root_cpu_us", 1e3, f"root CPU per multicast, {size_name(big)} (ms)"),
            (axes[1], "tree_us", 1, "tree creation at the root (us)")):
        for tree in sorted({r["tree"] for r in rows if num(r.get(key)) is not None}):
            pts = sorted((r["group"], num(r[key])) for r in rows if r["tree"] == tree and
                         int(r["size"]) == big and r["mode"] in ("fpfs", "-") and
                         num(r.get(key)) is not None)
            ax.plot([p[0] for p in pts], [p[1] / scale for p in pts], marker="o", label=tree,
                    color=color[tree], linestyle=line(tree))
        ax.set_xlabel("group size")
        ax.set_ylabel(what)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"the root's costs, {where}")
    fig.savefig(os.path.join(out, "torus_root.png"), dpi=110, bbox_inches="tight")
    plt.close(fig)
    if links:
        fig, ax = plt.subplots(figsize=(6, 4))
        for tree in sorted({l["tree"] for l in links}):
            pts = sorted((l["group"], l["concentration"]) for l in links
                         if l["tree"] == tree and l["concentration"])
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=tree,
                    color=color[tree])
        ax.set_xlabel("group size")
        ax.set_ylabel("link concentration (visits / links used)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.suptitle(f"link concentration at 64 KiB, {where}")
        fig.savefig(os.path.join(out, "links.png"), dpi=110, bbox_inches="tight")
        plt.close(fig)


if __name__ == "__main__":
    main()
