#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""TCP flows and IP multicast datagrams between the emulated cluster's hosts (cluster.sh).
Run each end inside a host: ip netns exec fmh1 bench/cluster/flow.py recv ...

  flow.py recv [--port P] [--flows K] [--timeout S]
      accept K connections on 0.0.0.0:P, read each to its end; one line per flow
      ("flow I from ADDR bytes B secs S mbit R", timed from its first byte to its end), then
      "total bytes B secs S mbit R" from the first flow's first byte to the last flow's end
  flow.py send HOST[,HOST...] [--port P] [--bytes B] [--at T] [--timeout S]
      to each HOST in turn: connect (retrying while nobody listens yet), wait until the
      wall-clock time T (seconds since 1970, fractions allowed: flows started by different
      commands start together) if given and not past, send B bytes
      (suffixes K, M, G: powers of 1024), close, wait for the receiver to close;
      "sent B bytes to HOST secs S mbit R"
  flow.py mcast-recv GROUP [--port P] [--timeout S]
      join GROUP (the route for 224.0.0.0/4 picks fm0), say "joined", then wait for one
      datagram: "got B bytes from ADDR"
  flow.py mcast-send GROUP [--port P] [--count N] [--interval S]
      send N datagrams (TTL 1) to GROUP, S seconds apart

Exits 0 when done, 1 on a timeout or an error (one line on stderr)."""
import argparse
import socket
import struct
import sys
import threading
import time

CHUNK = 256 * 1024


def size(text):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    unit = text[-1] if text and text[-1] in "KMG" else ""
    return int(text[: len(text) - len(unit)]) * units[unit]


def rate(nbytes, secs):
    return nbytes * 8 / secs / 1e6 if secs > 0 else 0.0


def recv(args):
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", args.port))
    lsock.listen(args.flows)
    lsock.settimeout(args.timeout)
    results = [None] * args.flows
    threads = []

    def drain(i, conn, peer):
        conn.settimeout(args.timeout)
        total, first = 0, None
        with conn:
            while True:
                data = conn.recv(CHUNK)
                if not data:
                    break
                if first is None:
                    first = time.monotonic()
                total += len(data)
        end = time.monotonic()
        results[i] = (peer, total, first if first is not None else end, end)

    for i in range(args.flows):
        conn, peer = lsock.accept()
        t = threading.Thread(target=drain, args=(i, conn, peer[0]), daemon=True)
        t.start()
        threads.append(t)
    lsock.close()
    for t in threads:
        t.join(args.timeout)
        if t.is_alive():
            raise TimeoutError("a flow did not end within the timeout")
    for i, (peer, total, first, end) in enumerate(results):
        print(f"flow {i} from {peer} bytes {total} secs {end - first:.4f} "
              f"mbit {rate(total, end - first):.1f}")
    first = min(r[2] for r in results)
    end = max(r[3] for r in results)
    total = sum(r[1] for r in results)
    print(f"total bytes {total} secs {end - first:.4f} mbit {rate(total, end - first):.1f}")


def send(args):
    for host in args.host.split(","):
        send_one(args, host)


def send_one(args, host):
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            sock = socket.create_connection((host, args.port), timeout=args.timeout)
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    buf = bytes(CHUNK)
    left = args.bytes
    if args.at is not None and args.at > time.time():
        time.sleep(args.at - time.time())
    start = time.monotonic()
    with sock:
        while left > 0:
            n = sock.send(memoryview(buf)[: min(left, CHUNK)])
            left -= n
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(CHUNK):
            pass
    secs = time.monotonic() - start
    print(f"sent {args.bytes} bytes to {host} secs {secs:.4f} "
          f"mbit {rate(args.bytes, secs):.1f}")


def mcast_recv(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("0.0.0.0", args.port))
    mreq = struct.pack("4s4s", socket.inet_aton(args.group), socket.inet_aton("0.0.0.0"))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    print("joined", flush=True)
    sock.settimeout(args.timeout)
    data, peer = sock.recvfrom(65536)
    print(f"got {len(data)} bytes from {peer[0]}")


def mcast_send(args):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    for i in range(args.count):
        if i:
            time.sleep(args.interval)
        sock.sendto(f"flow.py datagram {i}".encode(), (args.group, args.port))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--port", type=int, default=5001)
    r.add_argument("--flows", type=int, default=1)
    r.add_argument("--timeout", type=float, default=60)
    s = sub.add_parser("send")
    s.add_argument("host")
    s.add_argument("--port", type=int, default=5001)
    s.add_argument("--bytes", type=size, default=size("8M"))
    s.add_argument("--at", type=float)
    s.add_argument("--timeout", type=float, default=60)
    mr = sub.add_parser("mcast-recv")
    mr.add_argument("group")
    mr.add_argument("--port", type=int, default=5002)
    mr.add_argument("--timeout", type=float, default=10)
    ms = sub.add_parser("mcast-send")
    ms.add_argument("group")
    ms.add_argument("--port", type=int, default=5002)
    ms.add_argument("--count", type=int, default=3)
    ms.add_argument("--interval", type=float, default=0.1)
    args = p.parse_args()
    try:
        {"recv": recv, "send": send, "mcast-recv": mcast_recv,
         "mcast-send": mcast_send}[args.cmd](args)
    except (OSError, TimeoutError) as e:
        print(f"flow.py {args.cmd}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
