#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""model_check.py: reduce model-check.sh's raw CSV; does the model predict, does auto choose?

  model_check.py --raw FILE [--auto-bound 0.10] [--model-bound 0.25] [--detail] [--out CSV]

The raw file is fastmsg-bench-mcast's CSV (MC_CSV_HEADER in bench/mc.h) with a leading `repeat`
column, one block of rows per invocation, and `#` comment lines; a `# grid: ...` line names
what was asked for, so that a missing row is noticed. A cell is (provider, members, mode,
size). Per cell and tree, over the repeats: the median completion and its range (min..max),
the median of model_us (each invocation calibrates its own costs) and the model ratio
model / measured median (the benchmark's own `ratio` column is the inverse). The best tree is
the named tree (not auto) with the least median. auto is met when its median is within
--auto-bound of the best's (auto <= (1 + bound) x best) or its range overlaps the best tree's;
both criteria are counted. The model is met for (cell, named tree) when
|model / measured - 1| <= --model-bound.

Prints a table per cell, then the summary lines; exits 1 when rows are missing (or there are
none), 0 otherwise: a benchmark does not fail for speed.

  model_check.py --shuffle LIST --seed S --key K    LIST in an order fixed by (S, K): how
                                                    model-check.sh orders the trees of a run
"""
import argparse
import collections
import csv
import io
import random
import statistics
import sys

AUTO = "auto"
EPS = 1e-9  # the bounds are met at equality: 130/100 is 1.3 though not in binary


def fail(msg):
    sys.exit(f"model_check: {msg}")


def size_name(n):
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def percent(a, b):
    return "-" if not b else f"{100 * a / b:.0f}%"


def shuffled(items, seed, key):
    """items in an order that depends only on (seed, key): a string seed is hashed the same
    way by every Python 3."""
    out = list(items)
    random.Random(f"{seed}:{key}").shuffle(out)
    return out


# ---------------------------------------------------------------------------------------------
# Reading


def parse_grid(line):
    """'# grid: members=4,8 sizes=8,65536 trees=flat,auto repeats=5 ...' -> dict of lists."""
    grid = {}
    for word in line.split(":", 1)[1].split():
        k, _, v = word.partition("=")
        grid[k] = [x for x in v.split(",") if x]
    for k in ("members", "sizes", "trees", "repeats"):
        if k not in grid:
            fail(f"the grid line names no {k}: {line.strip()}")
    grid["members"] = [int(x) for x in grid["members"]]
    grid["sizes"] = [int(x) for x in grid["sizes"]]
    grid["repeats"] = int(grid["repeats"][0])
    return grid


def read_raw(text):
    """(grid or None, rows): the rows as dicts with repeat (1 without the column), ranks and
    size as ints, completion_us and model_us as floats."""
    grid, lines = None, []
    for line in text.splitlines():
        if line.startswith("# grid:"):
            grid = parse_grid(line)
        elif line.strip() and not line.startswith("#"):
            lines.append(line)
    if not lines:
        return grid, []
    header = lines[0]
    body = [l for l in lines[1:] if l != header]  # concatenated files repeat it
    rows = []
    for r in csv.DictReader(io.StringIO("\n".join([header] + body))):
        try:
            r["repeat"] = int(r.get("repeat") or 1)
            r["ranks"] = int(r["ranks"])
            r["size"] = int(r["size"])
        except (KeyError, TypeError, ValueError):
            fail(f"bad row: {r}")
        r["completion_us"] = num(r.get("completion_us"))
        r["model_us"] = num(r.get("model_us"))
        if r["completion_us"] is None:
            fail(f"a row without completion_us: {r}")
        rows.append(r)
    return grid, rows


def missing_rows(grid, rows):
    """What the grid asked for and no row gives: 'repeat R, N members, TREE, SIZE B' (every
    mode that ran must have it)."""
    if grid is None:  # no grid line: what every (repeat, members) run should have had
        grid = {"members": sorted({r["ranks"] for r in rows}),
                "sizes": sorted({r["size"] for r in rows}),
                "trees": sorted({r["tree"] for r in rows}),
                "repeats": max([r["repeat"] for r in rows], default=0)}
    have = {(r["repeat"], r["ranks"], r["tree"], r["mode"], r["size"]) for r in rows}
    modes = sorted({r["mode"] for r in rows}) or ["fpfs"]
    out = []
    for rep in range(1, grid["repeats"] + 1):
        for n in grid["members"]:
            for tree in grid["trees"]:
                for mode in modes:
                    for size in grid["sizes"]:
                        if (rep, n, tree, mode, size) not in have:
                            out.append(f"repeat {rep}, {n} members, {tree} {mode}, {size} B")
    return out


# ---------------------------------------------------------------------------------------------
# Reducing


class Stat:
    """One tree in one cell, over the repeats."""

    def __init__(self, tree, rows):
        self.tree = tree
        times = [r["completion_us"] for r in rows]
        self.n = len(times)
        self.median = statistics.median(times)
        self.lo, self.hi = min(times), max(times)
        models = [r["model_us"] for r in rows if r["model_us"] is not None]
        self.model = statistics.median(models) if models else None
        self.model_ratio = self.model / self.median if self.model is not None and \
            self.median > 0 else None
        names = collections.Counter(r["resolved"] for r in rows)
        # most common; a tie goes to the name seen first
        self.resolved, self.resolved_n = names.most_common(1)[0]

    def overlaps(self, other):
        return self.lo <= other.hi and other.lo <= self.hi


class Cell:
    def __init__(self, key, by_tree, auto_bound, model_bound):
        self.provider, self.members, self.mode, self.size = key
        self.stats = {t: Stat(t, rows) for t, rows in by_tree.items()}
        named = [s for s in self.stats.values() if s.tree != AUTO]
        self.best = min(named, key=lambda s: s.median) if named else None
        self.auto = self.stats.get(AUTO)
        self.auto_ratio = self.within = self.overlap = None
        if self.best and self.auto:
            self.auto_ratio = self.auto.median / self.best.median if self.best.median > 0 \
                else None
            self.within = self.auto.median <= (1 + auto_bound) * self.best.median * (1 + EPS)
            self.overlap = self.auto.overlaps(self.best)
        self.model_met = {s.tree: abs(s.model_ratio - 1) <= model_bound + EPS
                          for s in named if s.model_ratio is not None}

    @property
    def auto_met(self):
        return None if self.within is None else self.within or self.overlap


def reduce(rows, auto_bound, model_bound):
    """Cells in (provider, members, mode, size) order."""
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        groups[(r["provider"], r["ranks"], r["mode"], r["size"])][r["tree"]].append(r)
    return [Cell(k, groups[k], auto_bound, model_bound) for k in sorted(groups)]


def summarize(cells, auto_bound, model_bound):
    """The summary lines and their counts."""
    m_met = sum(sum(c.model_met.values()) for c in cells)
    m_all = sum(len(c.model_met) for c in cells)
    judged = [c for c in cells if c.auto_met is not None]
    within = sum(c.within for c in judged)
    overlap = sum(c.overlap for c in judged)
    met = sum(c.auto_met for c in judged)
    a, m = f"{auto_bound * 100:g}%", f"{model_bound * 100:g}%"
    lines = [
        f"summary: model within {m} in {m_met}/{m_all} cells ({percent(m_met, m_all)}); "
        f"auto within {a} of best in {within}/{len(judged)} cells "
        f"({percent(within, len(judged))}), ranges overlap in {overlap}/{len(judged)} "
        f"({percent(overlap, len(judged))})",
        f"summary: auto met (within {a} or ranges overlap) in {met}/{len(judged)} cells "
        f"({percent(met, len(judged))})",
    ]
    counts = {"model_met": m_met, "model_cells": m_all, "auto_within": within,
              "auto_overlap": overlap, "auto_met": met, "auto_cells": len(judged)}
    return lines, counts


# ---------------------------------------------------------------------------------------------
# Printing


def tree_order(cells, grid):
    named = {t for c in cells for t in c.stats if t != AUTO}
    first = [t for t in (grid or {}).get("trees", []) if t in named]
    return first + sorted(named - set(first))


def met_word(c):
    if c.auto_met is None:
        return "-"
    if c.within and c.overlap:
        return "both"
    return "within" if c.within else "overlap" if c.overlap else "NO"


def print_table(cells, trees, auto_bound, model_bound, repeats):
    modes = {c.mode for c in cells}
    print(f"# model check: fastmsg-bench-mcast completion (us, the slowest member), medians over "
          f"{repeats} repeats interleaved across trees")
    print(f"# best: the named tree with the least median; auto -> the tree auto resolved to most "
          f"often (k/{repeats} when it varied)")
    print(f"# met: auto <= (1+{auto_bound:g}) x best ('within'), auto's min..max overlaps the "
          f"best's ('overlap'), 'both', or 'NO'")
    print(f"# per tree: model_us / measured median; '*' outside 1 +- {model_bound:g}")
    head = f"{'prov':>4} {'members':>7}" + (f" {'mode':>4}" if len(modes) > 1 else "") + \
        f" {'size':>6}  {'best':<12} {'best_us':>9}  {'auto ->':<16} {'auto_us':>9} " \
        f"{'auto/best':>9} {'met':>7}" + "".join(f" {t[:10]:>10}" for t in trees)
    print(head)
    for c in cells:
        line = f"{c.provider:>4} {c.members:>7}" + (f" {c.mode:>4}" if len(modes) > 1 else "")
        line += f" {size_name(c.size):>6}  "
        line += f"{c.best.tree:<12} {c.best.median:>9.2f}  " if c.best else f"{'-':<12} {'-':>9}  "
        if c.auto:
            name = c.auto.resolved + ("" if c.auto.resolved_n == c.auto.n
                                      else f" {c.auto.resolved_n}/{c.auto.n}")
            line += f"{name:<16} {c.auto.median:>9.2f} "
        else:
            line += f"{'-':<16} {'-':>9} "
        line += f"{fmt(c.auto_ratio):>9} {met_word(c):>7}"
        for t in trees:
            s = c.stats.get(t)
            q = s.model_ratio if s else None
            mark = "" if q is None or c.model_met.get(t, True) else "*"
            line += f" {fmt(q) + mark:>10}"
        print(line)


def print_detail(cells, trees):
    print("\n# per tree: median [min..max] us over the repeats, model_us (median), model/measured, "
          "the tree it resolved to")
    print(f"{'prov':>4} {'members':>7} {'mode':>4} {'size':>6}  {'tree':<12} {'median':>9} "
          f"{'min':>9} {'max':>9} {'model':>9} {'ratio':>6}  resolved")
    for c in cells:
        for t in trees + [AUTO]:
            s = c.stats.get(t)
            if s:
                print(f"{c.provider:>4} {c.members:>7} {c.mode:>4} {size_name(c.size):>6}  "
                      f"{t:<12} {s.median:>9.2f} {s.lo:>9.2f} {s.hi:>9.2f} "
                      f"{fmt(s.model):>9} {fmt(s.model_ratio):>6}  {s.resolved}")


def write_out(cells, trees, path):
    fields = ["provider", "members", "mode", "size", "tree", "n", "median_us", "min_us",
              "max_us", "model_us", "model_ratio", "model_met", "resolved", "best", "auto_met"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for c in cells:
            for t in trees + [AUTO]:
                s = c.stats.get(t)
                if s:
                    met = c.model_met.get(t)
                    w.writerow([c.provider, c.members, c.mode, c.size, t, s.n, f"{s.median:.2f}",
                                f"{s.lo:.2f}", f"{s.hi:.2f}", fmt(s.model), fmt(s.model_ratio, 3),
                                "-" if met is None else int(met),
                                s.resolved, int(c.best is s),
                                met_word(c) if t == AUTO else "-"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--raw", help="model-check.sh's raw CSV (- for stdin)")
    ap.add_argument("--auto-bound", type=float, default=0.10,
                    help="auto is met within (1 + this) x the best tree's median (0.10)")
    ap.add_argument("--model-bound", type=float, default=0.25,
                    help="the model is met within 1 +- this of the measured median (0.25)")
    ap.add_argument("--detail", action="store_true",
                    help="also every tree's median, range and model in every cell")
    ap.add_argument("--out", metavar="CSV", help="write the reduced figures per cell and tree")
    ap.add_argument("--shuffle", metavar="LIST", help="print LIST (comma-separated) shuffled")
    ap.add_argument("--seed", default="1", help="--shuffle's seed")
    ap.add_argument("--key", default="", help="--shuffle's key (a run's repeat and members)")
    args = ap.parse_args(argv)
    if args.shuffle is not None:
        print(",".join(shuffled([t for t in args.shuffle.split(",") if t], args.seed, args.key)))
        return 0
    if not args.raw:
        ap.error("--raw FILE is needed")
    if args.auto_bound < 0 or args.model_bound < 0:
        ap.error("the bounds must not be negative")
    try:
        if args.raw == "-":
            text = sys.stdin.read()
        else:
            with open(args.raw) as f:
                text = f.read()
    except OSError as e:
        fail(f"{args.raw}: {e.strerror}")
    grid, rows = read_raw(text)
    if not rows:
        print(f"model_check: {args.raw}: no rows", file=sys.stderr)
        return 1
    cells = reduce(rows, args.auto_bound, args.model_bound)
    trees = tree_order(cells, grid)
    repeats = grid["repeats"] if grid else max(r["repeat"] for r in rows)
    print_table(cells, trees, args.auto_bound, args.model_bound, repeats)
    if args.detail:
        print_detail(cells, trees)
    if args.out:
        write_out(cells, trees, args.out)
    lines, _ = summarize(cells, args.auto_bound, args.model_bound)
    print()
    print("\n".join(lines))
    gone = missing_rows(grid, rows)
    if gone:
        print(f"model_check: {len(gone)} rows missing: " + "; ".join(gone[:10]) +
              (" ..." if len(gone) > 10 else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
