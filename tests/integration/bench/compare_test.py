#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/compare.py's concurrent and dag comparisons without a cluster: the benchmarks' CSV
output (fixed samples in the programs' formats) into rows, the uplink counters, the hosts'
round-robin order over racks, the ratios, issue 18's target decisions (met and not met), and
concurrent.csv / dag.csv read back as --replot reads them.

usage: compare_test.py BENCH_DIR    (the directory holding compare.py)
"""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(__file__), "../../../bench"))
import compare  # noqa: E402

CC_HEAD = ("provider,ranks,packet_size,credits,tree,size,dests,each_us,each_max_us,round_us,"
           "aggregate_MBps,rounds")
DAG_HEAD = ("provider,ranks,tasks,width,degree,bytes_min,bytes_max,compute_min_us,"
            "compute_max_us,seed,layers,edges,remote_edges,messages,bytes_sent,cp_us,work_us,"
            "repeats,makespan_us,min_us,max_us,checksum")
K64, M1 = 64 << 10, 1 << 20


def fm_cc(each, agg):
    """fastmsg-bench-mcast --concurrent 8 --csv: each / agg map (tree, size) to figures."""
    lines = [CC_HEAD]
    for (tree, size), e in each.items():
        lines.append(f"tcp,16,default,default,{tree},{size},8,{e:.2f},{e * 1.5:.2f},"
                     f"{e * 1.2:.2f},{agg[tree, size]:.3f},6")
    return "\n".join(lines) + "\n"


def mpi_cc(mpi, each, agg, comms=12, ms=30.0):
    """fastmsg-bench-mpi-concurrent's CSV and its bcast creation line."""
    lines = [CC_HEAD]
    for (method, size), e in each.items():
        lines.append(f"{mpi},16,-,-,{method},{size},8,{e:.2f},{e * 2:.2f},{e * 1.1:.2f},"
                     f"{agg[method, size]:.3f},6")
    lines.append(f"# bcast: {comms} communicators created in {ms:.1f} ms "
                 f"({ms * 1000 / comms:.0f} us each), not in the figures above")
    return "\n".join(lines) + "\n"


def dag_out(who, makespan, repeats=5, checksum="OK"):
    return (f"{DAG_HEAD}\n{who},16,1000,16,4,64,4096,10,100,1,63,2544,1912,1297,2735161,3949,"
            f"54293,{repeats},{makespan:.1f},{makespan * 0.9:.1f},{makespan * 1.1:.1f},"
            f"{checksum}\n")


def cc_sample(single_prefix, single_bcast, single_p2p, agg_prefix, agg_p2p):
    """Rows of one comparison: --roots 1 (each_us) and every rank a root (agg_MBps), 64K and
    1M, fastmsg prefix, prefix:4, flat and Open MPI p2p, bcast."""
    rows = []
    for roots, fm_each, fm_agg, mpi_each, mpi_agg in (
            ("1", single_prefix, 10.0, {"p2p": single_p2p, "bcast": single_bcast},
             {"p2p": 10.0, "bcast": 10.0}),
            ("all", 1000.0, agg_prefix, {"p2p": 1000.0, "bcast": 900.0},
             {"p2p": agg_p2p, "bcast": 50.0})):
        each = {(t, s): fm_each for t in ("prefix", "prefix:4", "flat") for s in (K64, M1)}
        agg = {(t, s): fm_agg for t in ("prefix", "prefix:4", "flat") for s in (K64, M1)}
        rows += compare.cc_rows(fm_cc(each, agg), "fastmsg", roots)
        each = {(m, s): mpi_each[m] for m in ("p2p", "bcast") for s in (K64, M1)}
        agg = {(m, s): mpi_agg[m] for m in ("p2p", "bcast") for s in (K64, M1)}
        rows += compare.cc_rows(mpi_cc("openmpi", each, agg), "openmpi", roots)
    for r in rows:
        r.update(hosts=16, racks=4, rate="100mbit")
    return rows


def dag_sample(prefix_ms, mpi_ms, prefix_up, binomial_up):
    rows = [compare.dag_row(dag_out("fastmsg", prefix_ms), "fastmsg", "prefix", prefix_up * 6),
            compare.dag_row(dag_out("fastmsg", prefix_ms), "fastmsg", "prefix:4",
                            prefix_up * 6),
            compare.dag_row(dag_out("fastmsg", 99000), "fastmsg", "binomial", binomial_up * 6),
            compare.dag_row(dag_out("openmpi", mpi_ms), "openmpi", "p2p", 7.9e6 * 6)]
    for r in rows:
        r.update(hosts=16, racks=4, rate="100mbit")
    return rows


def decisions(checks):
    return {what: ok for what, _, ok in checks}


class Parsing(unittest.TestCase):
    def test_rack_hosts(self):
        self.assertEqual(compare.rack_hosts("fmx", 16, 4),
                         "fmx0,fmx4,fmx8,fmx12,fmx1,fmx5,fmx9,fmx13,fmx2,fmx6,fmx10,fmx14,"
                         "fmx3,fmx7,fmx11,fmx15")
        self.assertEqual(compare.rack_hosts("fmh", 4, 2), "fmh0,fmh2,fmh1,fmh3")
        # 10 in 4 racks are 3, 3, 3, 1 (cluster.sh's split): the last rack runs out first.
        self.assertEqual(compare.rack_hosts("p", 10, 4), "p0,p3,p6,p9,p1,p4,p7,p2,p5,p8")

    def test_uplink_bytes(self):
        text = ("# rack up_bytes down_bytes up_packets down_packets\n"
                "0 1000 2000 10 20\n1 30 40 1 1\n")
        self.assertEqual(compare.uplink_bytes(text), 3070)
        self.assertEqual(compare.uplink_bytes("# rack up_bytes down_bytes\n"), 0)

    def test_busiest(self):
        # Rack 1's down direction moved most between the readings: 900 bytes.
        before = compare.uplink_dirs("# rack up_bytes down_bytes\n0 1000 2000 1 1\n1 30 40 1 1\n")
        after = compare.uplink_dirs("0 1500 2100 2 2\n1 60 940 2 2\n")
        self.assertEqual(before[("1", "down")], 40)
        self.assertEqual(compare.busiest(before, after), 900)
        # cluster.sh's uplinks: 16 hosts in 4 racks at 100 Mbit/s, 4 a rack: 100 Mbit/s; 4 in
        # 2 racks: 2 a rack, 50 Mbit/s; 10 in 4: 3 a rack, 75 Mbit/s.
        self.assertAlmostEqual(compare.uplink_rate("100mbit", 16, 4), 12.5e6)
        self.assertAlmostEqual(compare.uplink_rate("100mbit", 4, 2), 6.25e6)
        self.assertAlmostEqual(compare.uplink_rate("100mbit", 10, 4), 9.375e6)
        self.assertIsNone(compare.uplink_rate(None, 16, 4))

    def test_cc_rows(self):
        text = "# a comment line\n" + fm_cc({("prefix:4", K64): 123.45},
                                             {("prefix:4", K64): 67.891})
        (r,) = compare.cc_rows(text, "fastmsg", "all")
        self.assertEqual((r["who"], r["method"], r["roots"], r["dests"], r["size"]),
                         ("fastmsg", "prefix:4", "all", 8, K64))
        self.assertAlmostEqual(r["each_us"], 123.45)
        self.assertAlmostEqual(r["agg_MBps"], 67.891)
        self.assertEqual(r["rounds"], 6)
        self.assertIsNone(r["comms"])

    def test_cc_rows_creation(self):
        text = mpi_cc("mpich", {("p2p", M1): 10.0, ("bcast", M1): 20.0},
                      {("p2p", M1): 1.0, ("bcast", M1): 2.0}, comms=7, ms=14.0)
        rows = {r["method"]: r for r in compare.cc_rows(text, "mpich", "1")}
        self.assertEqual(set(rows), {"p2p", "bcast"})
        self.assertEqual((rows["bcast"]["comms"], rows["bcast"]["create_ms"]), (7, 14.0))
        self.assertIsNone(rows["p2p"]["comms"])
        # One multicast with its communicator's creation: 20 us + 14 ms / 7.
        self.assertAlmostEqual(compare.bcast_with_creation(rows["bcast"]), 2020.0)

    def test_dag_row(self):
        r = compare.dag_row(dag_out("fastmsg", 74200.0, repeats=5), "fastmsg", "prefix", 6000)
        self.assertEqual((r["tasks"], r["repeats"], r["checksum"]), (1000, 5, "OK"))
        self.assertAlmostEqual(r["makespan_us"], 74200.0)
        self.assertEqual(r["uplink_per_run"], 1000)  # a warm-up and 5 runs
        self.assertIsNone(r["floor_us"])
        # The busiest direction's 6 MB over 6 runs at 12.5 MB/s: 80 ms, of a 100 ms makespan.
        r = compare.dag_row(dag_out("fastmsg", 100000.0, repeats=5), "fastmsg", "prefix", 9e6,
                            6e6, 12.5e6)
        self.assertAlmostEqual(r["busiest_per_run"], 1e6)
        self.assertAlmostEqual(r["floor_us"], 80000.0)
        self.assertAlmostEqual(r["link_use"], 0.8)
        with self.assertRaises(ValueError):
            compare.dag_row(DAG_HEAD + "\n", "openmpi", "p2p")


class Targets(unittest.TestCase):
    def test_all_met(self):
        # prefix: 0.9x bcast, 2.5x faster than p2p; 2.2x p2p's aggregate; DAG 0.6x, fewer
        # uplink bytes than binomial.
        checks = compare.issue18_targets(cc_sample(900, 1000, 2250, 88, 40),
                                         dag_sample(60000, 100000, 6.3e6, 8.8e6))
        self.assertEqual(len(checks), 2 * (2 * 3 + 2))  # 2 prefix trees x (2 sizes x 3 + dag 2)
        self.assertTrue(all(ok for _, _, ok in checks), checks)
        d = {w: q for w, q, _ in checks}
        self.assertAlmostEqual(d["one multicast, 64K: prefix / openmpi bcast <= 1.0"], 0.9)
        self.assertAlmostEqual(d["one multicast, 1M: openmpi p2p / prefix:4 >= 2"], 2.5)
        self.assertAlmostEqual(d["every rank a root, 64K: prefix aggregate / openmpi p2p >= 2"],
                               2.2)
        self.assertAlmostEqual(d["DAG makespan: prefix / openmpi p2p <= 0.7"], 0.6)

    def test_not_met(self):
        # The README's measured figures: aggregate 1.78x, makespan 0.84x; and a single
        # multicast slower than bcast and under 2x p2p. Uplink: prefix more than binomial.
        checks = decisions(compare.issue18_targets(cc_sample(1100, 1000, 2000, 72.7, 40.8),
                                                   dag_sample(74200, 88200, 9e6, 8.8e6)))
        for what in ("one multicast, 64K: prefix / openmpi bcast <= 1.0",
                     "one multicast, 1M: openmpi p2p / prefix >= 2",
                     "every rank a root, 1M: prefix:4 aggregate / openmpi p2p >= 2",
                     "DAG makespan: prefix / openmpi p2p <= 0.7",
                     "DAG uplink bytes: prefix / binomial < 1"):
            self.assertIs(checks[what], False, what)

    def test_boundaries(self):
        # Exactly 1.0x bcast and exactly 2x p2p are met; 0.7x makespan is met; equal uplink
        # bytes are not fewer.
        checks = decisions(compare.issue18_targets(cc_sample(1000, 1000, 2000, 80, 40),
                                                   dag_sample(70000, 100000, 8.8e6, 8.8e6)))
        self.assertIs(checks["one multicast, 64K: prefix / openmpi bcast <= 1.0"], True)
        self.assertIs(checks["one multicast, 64K: openmpi p2p / prefix >= 2"], True)
        self.assertIs(checks["every rank a root, 64K: prefix aggregate / openmpi p2p >= 2"],
                      True)
        self.assertIs(checks["DAG makespan: prefix / openmpi p2p <= 0.7"], True)
        self.assertIs(checks["DAG uplink bytes: prefix / binomial < 1"], False)

    def test_missing_rows_not_met(self):
        # No MPI ran: every ratio is missing and no target is met; only concurrent ran: no
        # DAG targets.
        cc = [r for r in cc_sample(900, 1000, 2250, 88, 40) if r["who"] == "fastmsg"]
        checks = compare.issue18_targets(cc, [])
        self.assertTrue(checks)
        self.assertTrue(all(q is None and not ok for _, q, ok in checks))
        self.assertFalse(any(w.startswith("DAG") for w, _, _ in checks))

    def test_mpich_when_no_openmpi(self):
        cc = [dict(r, who="mpich") if r["who"] == "openmpi" else r
              for r in cc_sample(900, 1000, 2250, 88, 40)]
        checks = decisions(compare.issue18_targets(cc, []))
        self.assertIs(checks["one multicast, 1M: prefix / mpich bcast <= 1.0"], True)

    def test_only_measured_sizes(self):
        cc = [r for r in cc_sample(900, 1000, 2250, 88, 40) if r["size"] == K64]
        self.assertFalse(any("1M" in w for w, _, _ in compare.issue18_targets(cc, [])))


class Reports(unittest.TestCase):
    def test_csv_round_trip(self):
        cc = cc_sample(900, 1000, 2250, 88, 40)
        dg = dag_sample(60000, 100000, 6.3e6, 8.8e6)
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                compare.concurrent_report(cc, d, "16 hosts in 4 racks, links 100mbit")
                compare.dag_report(dg, d, "16 hosts in 4 racks, links 100mbit")
            text = out.getvalue()
            self.assertIn("# openmpi bcast: 12 communicators created in 30.0 ms", text)
            self.assertIn("# one multicast from a random root to 8 random others", text)
            self.assertIn("# every rank a root at once, each to 8 random others", text)
            cc2, dg2 = compare.read_cc_dag(d)
        self.assertEqual(len(cc2), len(cc))
        self.assertEqual(len(dg2), len(dg))
        self.assertEqual(compare.rack_place(cc2[0]), "16 hosts in 4 racks, links 100mbit")
        # The targets decide the same from the CSV as from the rows.
        self.assertEqual(decisions(compare.issue18_targets(cc2, dg2)),
                         decisions(compare.issue18_targets(cc, dg)))
        one = next(r for r in cc2 if (r["who"], r["method"], r["roots"], r["size"]) ==
                   ("fastmsg", "prefix", "1", K64))
        self.assertAlmostEqual(one["each_vs_bcast"], 0.9)
        self.assertAlmostEqual(one["each_vs_p2p"], 0.4)
        mpi = next(r for r in dg2 if r["who"] == "openmpi")
        self.assertAlmostEqual(mpi["vs_mpi"], 1.0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
