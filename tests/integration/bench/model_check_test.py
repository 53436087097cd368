#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/model_check.py's reduction on hand-written raw CSV whose answers are known: the
medians and ranges over repeats, the best tree, auto met within the bound or by overlapping
ranges (counted apart), the model ratio against its bound, auto's most common resolution, the
summary line, missing rows, and the fixed shuffle.

usage: model_check_test.py BENCH_DIR    (the directory holding model_check.py)
"""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(__file__), "../../../bench"))
import model_check as mc  # noqa: E402

HEAD = ("repeat,provider,ranks,packet_size,credits,calibrated,tree,resolved,mode,size,"
        "completion_us,min_member_us,max_member_us,skew_us,root_cpu_us,model_us,ratio,iters")


def row(rep, tree, size, us, model, resolved=None, ranks=4, mode="fpfs"):
    return (f"{rep},shm,{ranks},default,default,1,{tree},{resolved or tree},{mode},{size},"
            f"{us},0,{us},0,0,{model},{us / model:.3f},20")


def raw(rows, repeats=3, sizes="8,1024,65536", trees="flat,chain,auto", members="4"):
    return "\n".join([f"# grid: members={members} sizes={sizes} trees={trees} "
                      f"repeats={repeats} seed=1", HEAD] + rows) + "\n"


# Three cells of 4 members, three repeats each; flat is the best tree in every one.
#   8 B:    flat 100/101/102, chain 200/210/220, auto = flat exactly (resolved flat):
#           auto/best 1.00, within and overlapping. Model: flat 100 (ratio 0.99, met),
#           chain 260 (260/210 = 1.238, met).
#   1 KiB:  flat 95/100/130, chain 300 x3, auto 110/120/125 (resolved chain@8192 twice,
#           flat once): auto/best 1.20, not within 10%, but 110 <= 130: overlapping. Model:
#           flat 130 (1.30, not met), chain 210 (0.70, not met).
#   64 KiB: flat 99/100/101, chain 150 x3, auto 119/120/121 (resolved binomial): 1.20, no
#           overlap: not met. Model: flat 120 (1.20, met), chain 150 (1.00, met).
CELLS = []
for rep, (f8, f1k, f64k, a1k, a64k) in enumerate(
        [(100, 95, 99, 110, 119), (101, 100, 100, 120, 120), (102, 130, 101, 125, 121)], 1):
    CELLS += [
        row(rep, "flat", 8, f8, 100), row(rep, "chain", 8, 200 + 10 * (rep - 1), 260),
        row(rep, "auto", 8, f8, 100, "flat"),
        row(rep, "flat", 1024, f1k, 130), row(rep, "chain", 1024, 300, 210),
        row(rep, "auto", 1024, a1k, 130, "flat" if rep == 2 else "chain@8192"),
        row(rep, "flat", 65536, f64k, 120), row(rep, "chain", 65536, 150, 150),
        row(rep, "auto", 65536, a64k, 120, "binomial"),
    ]


def reduced(text, auto_bound=0.10, model_bound=0.25):
    grid, rows = mc.read_raw(text)
    return grid, rows, {c.size: c for c in mc.reduce(rows, auto_bound, model_bound)}


def run_main(text, *args):
    """model_check.py --raw FILE ARGS on text: (exit status, stdout, stderr)."""
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(text)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = mc.main(["--raw", f.name] + list(args))
    finally:
        os.unlink(f.name)
    return rc, out.getvalue(), err.getvalue()


class Reduce(unittest.TestCase):
    def setUp(self):
        self.grid, self.rows, self.cells = reduced(raw(CELLS))

    def test_grid_and_rows(self):
        self.assertEqual(self.grid["members"], [4])
        self.assertEqual(self.grid["sizes"], [8, 1024, 65536])
        self.assertEqual(self.grid["repeats"], 3)
        self.assertEqual(len(self.rows), 27)
        self.assertEqual(mc.missing_rows(self.grid, self.rows), [])

    def test_medians_and_ranges(self):
        f = self.cells[1024].stats["flat"]
        self.assertEqual((f.median, f.lo, f.hi, f.n), (100, 95, 130, 3))
        self.assertEqual(self.cells[8].stats["chain"].median, 210)

    def test_best_ignores_auto(self):
        for c in self.cells.values():
            self.assertEqual(c.best.tree, "flat")
        # auto faster than every named tree is still not "best"
        rows = [r for r in CELLS if ",auto,flat,fpfs,8," not in r]
        rows += [row(rep, "auto", 8, 50, 100, "flat") for rep in (1, 2, 3)]
        _, _, cells = reduced(raw(rows))
        self.assertEqual(cells[8].best.tree, "flat")
        self.assertLess(cells[8].auto_ratio, 1)
        self.assertTrue(cells[8].within)

    def test_auto_equal_to_best(self):
        c = self.cells[8]
        self.assertAlmostEqual(c.auto_ratio, 1.0)
        self.assertTrue(c.within and c.overlap and c.auto_met)
        self.assertEqual(mc.met_word(c), "both")

    def test_auto_slower_but_ranges_overlap(self):
        c = self.cells[1024]
        self.assertAlmostEqual(c.auto_ratio, 1.2)
        self.assertFalse(c.within)
        self.assertTrue(c.overlap)
        self.assertTrue(c.auto_met)
        self.assertEqual(mc.met_word(c), "overlap")
        # a bound of 20% takes it in as well
        _, _, cells = reduced(raw(CELLS), auto_bound=0.20)
        self.assertTrue(cells[1024].within)

    def test_auto_slower_apart(self):
        c = self.cells[65536]
        self.assertFalse(c.within or c.overlap or c.auto_met)
        self.assertEqual(mc.met_word(c), "NO")

    def test_auto_resolved_most_common(self):
        a = self.cells[1024].stats["auto"]
        self.assertEqual((a.resolved, a.resolved_n), ("chain@8192", 2))
        self.assertEqual(self.cells[65536].stats["auto"].resolved, "binomial")

    def test_model_ratio(self):
        self.assertAlmostEqual(self.cells[1024].stats["flat"].model_ratio, 1.3)
        self.assertAlmostEqual(self.cells[1024].stats["chain"].model_ratio, 0.7)
        self.assertAlmostEqual(self.cells[8].stats["chain"].model_ratio, 260 / 210)
        self.assertEqual(self.cells[1024].model_met, {"flat": False, "chain": False})
        self.assertEqual(self.cells[8].model_met, {"flat": True, "chain": True})
        self.assertEqual(self.cells[65536].model_met, {"flat": True, "chain": True})
        # a wider bound meets 1.3 and 0.7
        _, _, cells = reduced(raw(CELLS), model_bound=0.3)
        self.assertEqual(cells[1024].model_met, {"flat": True, "chain": True})

    def test_model_median_over_repeats(self):
        rows = [r for r in CELLS if ",flat,flat,fpfs,8," not in r]
        rows += [row(1, "flat", 8, 100, 50), row(2, "flat", 8, 101, 125), row(3, "flat", 8, 102, 500)]
        _, _, cells = reduced(raw(rows))
        self.assertEqual(cells[8].stats["flat"].model, 125)

    def test_summary(self):
        lines, n = mc.summarize(list(self.cells.values()), 0.10, 0.25)
        self.assertEqual(n, {"model_met": 4, "model_cells": 6, "auto_within": 1,
                             "auto_overlap": 2, "auto_met": 2, "auto_cells": 3})
        self.assertEqual(lines[0], "summary: model within 25% in 4/6 cells (67%); auto within "
                         "10% of best in 1/3 cells (33%), ranges overlap in 2/3 (67%)")
        self.assertEqual(lines[1], "summary: auto met (within 10% or ranges overlap) in 2/3 "
                         "cells (67%)")


class Main(unittest.TestCase):
    def test_complete(self):
        rc, out, err = run_main(raw(CELLS), "--detail")
        self.assertEqual(rc, 0, err)
        self.assertIn("summary: model within 25% in 4/6 cells (67%); auto within 10% of best "
                      "in 1/3 cells (33%), ranges overlap in 2/3 (67%)", out)
        line = [l for l in out.splitlines() if l.split()[2:3] == ["1K"]][0].split()
        # prov members size best best_us auto-> k/n auto_us auto/best met flat chain
        self.assertEqual(line, ["shm", "4", "1K", "flat", "100.00", "chain@8192", "2/3",
                                "120.00", "1.20", "overlap", "1.30*", "0.70*"])
        self.assertEqual(err, "")

    def test_bounds_are_options(self):
        rc, out, _ = run_main(raw(CELLS), "--auto-bound", "0.2", "--model-bound", "0.3")
        self.assertEqual(rc, 0)
        self.assertIn("summary: model within 30% in 6/6 cells (100%); auto within 20% of best "
                      "in 3/3 cells (100%), ranges overlap in 2/3 (67%)", out)

    def test_missing_rows_fail(self):
        rows = [r for r in CELLS if not r.startswith("2,shm,4,default,default,1,chain,chain,fpfs,1024,")]
        rc, out, err = run_main(raw(rows))
        self.assertEqual(rc, 1)
        self.assertIn("summary:", out)  # still reduced
        self.assertIn("1 rows missing: repeat 2, 4 members, chain fpfs, 1024 B", err)
        # a grid asking for a repeat that never ran
        rc, _, err = run_main(raw(CELLS, repeats=4))
        self.assertEqual(rc, 1)
        self.assertIn("9 rows missing", err)

    def test_no_rows(self):
        rc, _, err = run_main(raw([]))
        self.assertEqual(rc, 1)
        self.assertIn("no rows", err)

    def test_plain_benchmark_csv(self):
        """fastmsg-bench-mcast's own CSV, without the repeat column and the grid line."""
        text = HEAD.split(",", 1)[1] + "\n" + "\n".join(r.split(",", 1)[1] for r in CELLS
                                                        if r.startswith("1,")) + "\n"
        rc, out, err = run_main(text)
        self.assertEqual(rc, 0, err)
        self.assertIn("auto within 10% of best in 1/3 cells", out)

    def test_shuffle_fixed(self):
        trees = ["flat", "chain", "binomial", "kbinomial", "postal", "auto"]
        a = mc.shuffled(trees, "1", "1:4")
        self.assertEqual(a, mc.shuffled(trees, "1", "1:4"))
        self.assertEqual(sorted(a), sorted(trees))
        orders = {tuple(mc.shuffled(trees, "1", f"{r}:4")) for r in range(1, 9)}
        self.assertGreater(len(orders), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
