#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/cluster/links.py on made-up `cluster.sh counters` outputs whose answers are worked out
by hand below: per-link deltas, the links used under the default and given thresholds, link
visits (rounded half up) and link concentration, the text and JSON outputs, and the refusals
(links that differ, counters that went down, lines that do not parse).

usage: links_test.py CLUSTER_DIR    (the directory holding links.py)
"""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else
                os.path.join(os.path.dirname(__file__), "../../../bench/cluster"))
import links  # noqa: E402

BEFORE = """# host x y dev tx_bytes tx_packets
0 0 0 xp 1000 10
0 0 0 xm 0 0
1 1 0 xp 500 5
1 1 0 xm 20 1
2 0 1 yp 0 0
3 1 1 yp 100 2
"""

# Deltas (AFTER - BEFORE), by hand:
#   0 xp: 201000 - 1000 = 200000 bytes, 150 - 10 = 140 packets
#   0 xm: 0, 0
#   1 xp: 100500 - 500 = 100000, 80 - 5 = 75
#   1 xm: 9020 - 20 = 9000, 9 - 1 = 8         (below every threshold used here)
#   2 yp: 300000, 210
#   3 yp: 50100 - 100 = 50000, 40 - 2 = 38
AFTER = """# host x y dev tx_bytes tx_packets
0 0 0 xp 201000 150
0 0 0 xm 0 0
1 1 0 xp 100500 80
1 1 0 xm 9020 9
2 0 1 yp 300000 210
3 1 1 yp 50100 40
"""

WANT_BYTES = {(0, "xp"): 200000, (0, "xm"): 0, (1, "xp"): 100000, (1, "xm"): 9000,
              (2, "yp"): 300000, (3, "yp"): 50000}
WANT_PACKETS = {(0, "xp"): 140, (0, "xm"): 0, (1, "xp"): 75, (1, "xm"): 8, (2, "yp"): 210,
                (3, "yp"): 38}


def run(*argv):
    """links.main on files holding the given texts: (status, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, text in enumerate(argv[:2]):
            paths.append(os.path.join(d, f"c{i}"))
            with open(paths[-1], "w") as f:
                f.write(text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = links.main(paths + list(argv[2:]))
        return rc, out.getvalue(), err.getvalue()


class Deltas(unittest.TestCase):
    def test_per_link(self):
        d = links.deltas(links.parse_counters(BEFORE), links.parse_counters(AFTER))
        self.assertEqual({(x["host"], x["dev"]): x["bytes"] for x in d}, WANT_BYTES)
        self.assertEqual({(x["host"], x["dev"]): x["packets"] for x in d}, WANT_PACKETS)
        self.assertEqual([(x["x"], x["y"]) for x in d if x["host"] == 3], [(1, 1)])


class Summary(unittest.TestCase):
    def totals(self, **kw):
        d = links.deltas(links.parse_counters(BEFORE), links.parse_counters(AFTER))
        return links.summary(d, **kw), d

    def test_message_bytes(self):
        # M = 100000: used means more than M / 4 = 25000 bytes: 0 xp, 1 xp, 2 yp, 3 yp (1 xm's
        # 9000 is not). 650000 bytes on them, / 100000 = 6.5, rounded half up: 7 visits;
        # concentration 7 / 4 = 1.75.
        t, d = self.totals(message_bytes=100000)
        self.assertEqual(t["min_bytes"], 25000)
        self.assertEqual(t["links_used"], 4)
        self.assertEqual(t["links_total"], 6)
        self.assertEqual(t["used_bytes"], 650000)
        self.assertEqual(t["link_visits"], 7)
        self.assertAlmostEqual(t["link_concentration"], 1.75)
        self.assertEqual(sorted((x["host"], x["dev"]) for x in d if x["used"]),
                         [(0, "xp"), (1, "xp"), (2, "yp"), (3, "yp")])

    def test_min_bytes(self):
        # --min-bytes 60000 with M = 100000: 0 xp, 1 xp, 2 yp used (3 yp's 50000 is not):
        # 600000 bytes, 6 visits, 6 / 3 = 2.0.
        t, _ = self.totals(min_bytes=60000, message_bytes=100000)
        self.assertEqual((t["links_used"], t["used_bytes"], t["link_visits"]), (3, 600000, 6))
        self.assertAlmostEqual(t["link_concentration"], 2.0)

    def test_default_floor(self):
        # No M: used means more than 10000 bytes: 4 links (1 xm's 9000 is not); no visits.
        t, _ = self.totals()
        self.assertEqual((t["min_bytes"], t["links_used"], t["used_bytes"]), (10000, 4, 650000))
        self.assertIsNone(t["link_visits"])
        self.assertIsNone(t["link_concentration"])

    def test_nothing_used(self):
        t, _ = self.totals(min_bytes=10 ** 9, message_bytes=100000)
        self.assertEqual((t["links_used"], t["link_visits"]), (0, 0))
        self.assertIsNone(t["link_concentration"])


class Command(unittest.TestCase):
    def test_text(self):
        rc, out, err = run(BEFORE, AFTER, "--message-bytes", "100000")
        self.assertEqual((rc, err), (0, ""))
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("# host x y dev bytes packets bytes/message"))
        self.assertIn("0 0 0 xp 200000 140 2.00 used", lines)
        self.assertIn("1 1 0 xm 9000 8 0.09", lines)
        self.assertIn("links used: 4 of 6, 650000 bytes on them", lines)
        self.assertIn("link visits: 7 (650000 bytes / 100000 a message)", lines)
        self.assertIn("link concentration: 1.750 (link visits / links used)", lines)

    def test_text_without_message(self):
        rc, out, _ = run(BEFORE, AFTER)
        self.assertEqual(rc, 0)
        self.assertIn("3 1 1 yp 50000 38 used", out.splitlines())
        self.assertIn("link visits, link concentration: - (give --message-bytes)", out)

    def test_json(self):
        rc, out, _ = run(BEFORE, AFTER, "--message-bytes", "100000", "--json")
        self.assertEqual(rc, 0)
        j = json.loads(out)
        self.assertEqual((j["links_used"], j["link_visits"], j["used_bytes"]), (4, 7, 650000))
        self.assertAlmostEqual(j["link_concentration"], 1.75)
        self.assertEqual(len(j["links"]), 6)
        yp2 = [x for x in j["links"] if x["host"] == 2][0]
        self.assertEqual((yp2["dev"], yp2["bytes"], yp2["packets"], yp2["used"]),
                         ("yp", 300000, 210, True))

    def test_refusals(self):
        fewer = "\n".join(AFTER.splitlines()[:-1]) + "\n"
        rc, _, err = run(BEFORE, fewer)
        self.assertEqual(rc, 2)
        self.assertIn("different links", err)
        rc, _, err = run(AFTER, BEFORE)
        self.assertEqual(rc, 2)
        self.assertIn("went down", err)
        rc, _, err = run(BEFORE, AFTER.replace("0 0 0 xm 0 0", "0 0 0 xm zero 0"))
        self.assertEqual(rc, 2)
        self.assertIn("not numbers", err)
        rc, _, err = run(BEFORE, "# rack up_bytes down_bytes up_packets down_packets\n0 1 2 3 4\n")
        self.assertEqual(rc, 2)
        self.assertIn("want HOST X Y DEV", err)
        rc, _, err = run(BEFORE, BEFORE + "0 0 0 xp 5 5\n")
        self.assertEqual(rc, 2)
        self.assertIn("given twice", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
