#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dag_bytes.py: the uplink payload a run of the DAG benchmarks' DAG needs on a rack layout,
from the DAG's definition in dag_gen.h (re-implemented here, splitmix64 and all): per task
output, one copy into each other rack that runs a dependent (the least any multicast can
send), against one copy to each other rank that runs one (point to point). Both cross an
uplink twice (up and down). Prints the remote messages too, which the programs print as
"messages": the two implementations must agree.

  dag_bytes.py [--tasks 500] [--width 16] [--degree 4] [--bytes 65536] [--seed 1]
               [--ranks 16] [--racks 4]      (one rank a host, hosts listed round-robin over
                                              the racks, as compare.py's rack_hosts lists them)
"""
import argparse

M64 = (1 << 64) - 1


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


class Stream:
    def __init__(self, seed):
        self.s = seed

    def draw(self, lo, hi):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        return lo + mix(self.s) % (hi - lo + 1)


def inputs(a):
    """Every task's (bytes, inputs), drawn in dag_gen.c's order."""
    s, tasks = Stream(a.seed), []
    for t in range(a.tasks):
        layer = t // a.width
        size = s.draw(a.bytes, a.bytes)
        s.draw(0, 0)  # (its compute time: a draw of the stream, its value not needed here)
        ins = []
        if layer:
            earlier = layer * a.width
            k = min(s.draw(1, a.degree), earlier)
            ins = [s.draw(earlier - a.width, earlier - 1)]
            while len(ins) < k:
                c = s.draw(0, earlier - 1)
                if c not in ins:
                    ins.append(c)
        tasks.append((size, ins))
    return tasks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--degree", type=int, default=4)
    ap.add_argument("--bytes", type=int, default=65536, help="every output's size (one size)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--racks", type=int, default=4)
    a = ap.parse_args()
    tasks = inputs(a)
    per = -(-a.ranks // a.racks)  # (cluster.sh's racks: ceil(hosts / racks) hosts each)
    rack = [k for p in range(per) for k in range(a.racks) if k * per + p < a.ranks]
    ranks_of = [set() for _ in tasks]
    for t, (_, ins) in enumerate(tasks):
        for i in ins:
            ranks_of[i].add(t % a.ranks)
    messages = p2p = tree = 0
    for t, (size, _) in enumerate(tasks):
        src = t % a.ranks
        remote = ranks_of[t] - {src}
        messages += len(remote)
        p2p += 2 * size * sum(1 for r in remote if rack[r] != rack[src])
        tree += 2 * size * len({rack[r] for r in remote} - {rack[src]})
    print(f"messages {messages}")
    print(f"uplink payload a run: {tree / 1e6:.1f} MB a copy per rack, {p2p / 1e6:.1f} MB a copy "
          f"per rank ({tree / p2p:.3f})")


if __name__ == "__main__":
    main()
