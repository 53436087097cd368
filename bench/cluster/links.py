#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Link use on an emulated torus, from two `cluster.sh counters` outputs taken before and
after a run: the bytes and packets each directed link sent meanwhile, the links used, link
visits and link concentration.

  links.py BEFORE AFTER [--min-bytes B] [--message-bytes M] [--json]

BEFORE and AFTER are files ('-': standard input) holding `cluster.sh counters --prefix P` of a
torus: "HOST X Y DEV TX_BYTES TX_PACKETS" per link end, '#' lines ignored. A link is used when
it sent more than B bytes meanwhile (default M / 4 with --message-bytes, else 10000: more than
the odd stray packet). With --message-bytes M (the bytes of one message, e.g. a multicast's
payload), link visits = the bytes sent over the used links / M, rounded: how many times the
message crossed a link, and link concentration = link visits / links used (Oral and George's
measure of how a multicast's traffic piles onto few links; 1.0 when no link carries the message
twice). The counters are link-layer bytes, headers included (about 4.6 % over the payload for
full TCP segments at a 1500-byte MTU, plus the transport's own headers), so visits come out
that much high for large counts: read the per-link ratio column as well.

Prints one line per link end ("HOST X Y DEV BYTES PACKETS [BYTES/M] [used]"), then the
totals; --json prints the same as one JSON object. Exits 2 on unreadable or mismatched input
(a link in one output and not the other, or a counter that went down: the cluster was made
anew between the two).
"""
import argparse
import json
import sys

DEFAULT_MIN_BYTES = 10000


class CountersError(ValueError):
    pass


def parse_counters(text, name="counters"):
    """{(host, dev): (x, y, tx_bytes, tx_packets)} from `cluster.sh counters` of a torus."""
    links = {}
    for no, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        f = line.split()
        if len(f) != 6:
            raise CountersError(f"{name}:{no}: want HOST X Y DEV TX_BYTES TX_PACKETS, "
                                f"got '{line}'")
        try:
            host, x, y, nbytes, pkts = int(f[0]), int(f[1]), int(f[2]), int(f[4]), int(f[5])
        except ValueError:
            raise CountersError(f"{name}:{no}: not numbers: '{line}'") from None
        key = (host, f[3])
        if key in links:
            raise CountersError(f"{name}:{no}: host {host} link {f[3]} given twice")
        links[key] = (x, y, nbytes, pkts)
    if not links:
        raise CountersError(f"{name}: no link counters (a torus's `cluster.sh counters`?)")
    return links


def deltas(before, after):
    """Per link end, in AFTER's order: dicts host, x, y, dev, bytes, packets (AFTER - BEFORE)."""
    if set(before) != set(after):
        odd = sorted(set(before) ^ set(after))
        raise CountersError("the two outputs name different links, e.g. host %d %s" % odd[0])
    out = []
    for key, (x, y, nbytes, pkts) in after.items():
        b = before[key]
        if nbytes < b[2] or pkts < b[3]:
            raise CountersError(f"host {key[0]} link {key[1]}: counters went down "
                                "(was the cluster made anew?)")
        out.append({"host": key[0], "x": x, "y": y, "dev": key[1], "bytes": nbytes - b[2],
                    "packets": pkts - b[3]})
    return out


def min_bytes_for(min_bytes, message_bytes):
    if min_bytes is not None:
        return min_bytes
    return message_bytes // 4 if message_bytes else DEFAULT_MIN_BYTES


def summary(links, min_bytes=None, message_bytes=None):
    """Marks each link used or not and returns the totals: links_used, links_total, used_bytes,
    link_visits and link_concentration (None without message_bytes, or with no link used)."""
    floor = min_bytes_for(min_bytes, message_bytes)
    used = [link for link in links if link["bytes"] > floor]
    for link in links:
        link["used"] = link["bytes"] > floor
        link["per_message"] = link["bytes"] / message_bytes if message_bytes else None
    used_bytes = sum(link["bytes"] for link in used)
    visits = int(used_bytes / message_bytes + 0.5) if message_bytes else None
    return {
        "min_bytes": floor,
        "message_bytes": message_bytes,
        "links_total": len(links),
        "links_used": len(used),
        "used_bytes": used_bytes,
        "link_visits": visits,
        "link_concentration": visits / len(used) if visits is not None and used else None,
    }


def report(links, totals, out):
    m = totals["message_bytes"]
    out.write("# host x y dev bytes packets" + (" bytes/message" if m else "") +
              " (sent between the two counters; 'used': more than %d bytes)\n"
              % totals["min_bytes"])
    for link in links:
        ratio = f" {link['per_message']:.2f}" if m else ""
        mark = " used" if link["used"] else ""
        out.write(f"{link['host']} {link['x']} {link['y']} {link['dev']} {link['bytes']} "
                  f"{link['packets']}{ratio}{mark}\n")
    out.write(f"links used: {totals['links_used']} of {totals['links_total']}, "
              f"{totals['used_bytes']} bytes on them\n")
    if m:
        out.write(f"link visits: {totals['link_visits']} ({totals['used_bytes']} bytes / "
                  f"{m} a message)\n")
        c = totals["link_concentration"]
        out.write("link concentration: " + ("-" if c is None else f"{c:.3f}") +
                  " (link visits / links used)\n")
    else:
        out.write("link visits, link concentration: - (give --message-bytes)\n")


def read(path):
    if path == "-":
        return sys.stdin.read()
    with open(path) as f:
        return f.read()


def nonnegative(text):
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return v


def positive(text):
    v = int(text)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return v


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--min-bytes", type=nonnegative,
                   help="a link is used when it sent more than this (default: message bytes "
                   f"/ 4, or {DEFAULT_MIN_BYTES})")
    p.add_argument("--message-bytes", type=positive,
                   help="one message's bytes: gives link visits and link concentration")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = p.parse_args(argv)
    if args.before == "-" and args.after == "-":
        p.error("only one of BEFORE and AFTER can be standard input")
    try:
        links = deltas(parse_counters(read(args.before), args.before),
                       parse_counters(read(args.after), args.after))
    except (OSError, CountersError) as e:
        print(f"links.py: {e}", file=sys.stderr)
        return 2
    totals = summary(links, args.min_bytes, args.message_bytes)
    if args.json:
        json.dump(dict(totals, links=links), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        report(links, totals, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
