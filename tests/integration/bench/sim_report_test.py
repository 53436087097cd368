#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/sim_report.py (compare.py sim) without a simulation: bench/sim/run-style CSV files
written by hand (the header repeated per program, comment lines), read back, reduced to the
table and to issue 22's targets, whose answers were worked out by hand; and sim.csv read back.

usage: sim_report_test.py BENCH_DIR    (the directory holding sim_report.py)
"""
import contextlib
import csv
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(__file__), "../../../bench"))
import sim_report  # noqa: E402

HEADER = ("provider,ranks,packet_size,credits,calibrated,tree,resolved,mode,size,completion_us,"
          "min_member_us,max_member_us,skew_us,root_cpu_us,model_us,ratio,iters,held_pkts,"
          "model_held_pkts,tree_us,model_link_visits,model_links_used")
M1 = 1 << 20


def fm(n, tree, size, t, model, resolved=None):
    return (f"mpi,{n},default,default,1,{tree},{resolved or tree},fpfs,{size},{t},1,{t},1,1,"
            f"{model},1,1,1,1,0,0,0")


def smpi(n, alg, size, t):
    return f"mpi,{n},default,default,-,smpi-bcast,{alg},-,{size},{t},1,{t},0,1,-,-,1,-,-,-,-,-"


# The fat tree. Model within 10 %: 1024/8 binomial (10.5/10) chain no (80/50) auto yes;
# 1024/1M binomial no (800/1000) chain yes (590/600) auto yes (650/700); 64/8 both yes:
# 6 of 8. Auto within 10 % of the best tree: 1024/8 yes (10.5 <= 11), 1024/1M no (700 > 660),
# 64/8 yes: 2 of 3. At 1024 ranks the best SMPI algorithm over auto: 8 B ompi 9 / 10.5 =
# 0.86 (target 1.0), 1 MiB scatter 900 / 700 = 1.29 (target 1.3): neither met.
FAT = [
    "# fastmsg-bench-mcast ...", HEADER,
    fm(1024, "binomial", 8, 10, 10.5), fm(1024, "chain", 8, 50, 80),
    fm(1024, "auto", 8, 10.5, 10.5, "binomial"),
    fm(1024, "binomial", M1, 1000, 800), fm(1024, "chain", M1, 600, 590),
    fm(1024, "auto", M1, 700, 650, "chain"),
    fm(64, "binomial", 8, 5, 5), fm(64, "auto", 8, 5, 5, "binomial"),
    HEADER,
    smpi(1024, "binomial_tree", 8, 12), smpi(1024, "ompi", 8, 9),
    smpi(1024, "scatter_LR_allgather", M1, 900), smpi(1024, "binomial_tree", M1, 1200),
]
# Another platform: its model is far off, but the fat tree's rows alone decide the targets.
TORUS = [HEADER, fm(64, "mdtorus", M1, 500, 100), fm(64, "auto", M1, 900, 100, "binomial")]


def write(d, name, lines):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


class SimReport(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.rows = (sim_report.read_rows("fattree", write(self.dir, "fat.csv", FAT)) +
                     sim_report.read_rows("torus8x8", write(self.dir, "torus.csv", TORUS)))

    def test_rows(self):
        self.assertEqual(len(self.rows), 14)
        r = self.rows[0]
        self.assertEqual((r["platform"], r["ranks"], r["size"], r["completion_us"]),
                         ("fattree", 1024, 8, 10.0))
        cols = sim_report.cells(self.rows)[("fattree", M1, 1024)]
        self.assertEqual(sorted(cols), ["SMPI binomial_tree", "SMPI scatter_LR_allgather",
                                        "auto", "binomial", "chain"])
        self.assertIsNone(cols["SMPI binomial_tree"]["model_us"])

    def test_targets(self):
        got = sim_report.targets(self.rows)
        self.assertEqual([ok for ok, _ in got], [False, False, False, False])
        text = "\n".join(t for _, t in got)
        self.assertIn("6 of 8 cells (75%", text)
        self.assertIn("2 of 3 cells (67%", text)
        self.assertIn("8 B: SMPI ompi / auto = 0.86", text)
        self.assertIn("1048576 B: SMPI scatter_LR_allgather / auto = 1.29 (target at least 1.3)",
                      text)

    def test_targets_met(self):
        # auto at 1 MiB 600: within 10 % of chain, and 900 / 600 = 1.5; models exact.
        rows = [dict(r) for r in self.rows if r["platform"] == "fattree"]
        for r in rows:
            if r["tree"] == "auto" and r["size"] == M1:
                r["completion_us"] = 600.0
            if r["tree"] == "smpi-bcast" and r["size"] == 8:
                r["completion_us"] = 11.0
            if r["model_us"] is not None:
                r["model_us"] = r["completion_us"]
        self.assertTrue(all(ok for ok, _ in sim_report.targets(rows)))

    def test_report_and_csv(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sim_report.report(self.rows, self.dir, plots=False)
        text = out.getvalue()
        self.assertIn("# fattree, 1048576 B: completion (us) against ranks", text)
        self.assertIn("1024,700.00,1000.00,600.00,1200.00,900.00", text)
        self.assertIn("NOT met", text)
        with open(os.path.join(self.dir, "sim.csv")) as f:
            back = list(csv.DictReader(f))
        self.assertEqual(len(back), 14)
        self.assertEqual(back[-1]["platform"], "torus8x8")

    def test_row_before_header(self):
        with self.assertRaises(ValueError):
            sim_report.read_rows("x", write(self.dir, "bad.csv", [fm(4, "chain", 8, 1, 1)]))


if __name__ == "__main__":
    unittest.main()
