#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A small PMI-1 server that launches a job, for testing fastmsg's pmi1 back end without a
resource manager. It answers the way Slurm's pmi2 plugin does (rc= on every reply, puts visible
only after the barrier), which hydra does not, and checks the client on the way:

  fake_pmi1.py [--mode fd|port] [-n N] [--keylen-max K] [--vallen-max V] -- PROGRAM [ARGS...]

  --mode fd    each rank gets a socketpair end as PMI_FD, with PMI_RANK and PMI_SIZE
  --mode port  ranks connect to PMI_PORT=localhost:P and say "cmd=initack pmiid=PMI_ID"

Replies are sent in small pieces to exercise the client's line reassembly. Exits 0 when every
rank finalized and exited 0; otherwise 1, or the exit code a rank aborted with."""
import argparse
import os
import selectors
import socket
import subprocess
import sys

LINE_MAX = 1024  # Slurm's limit, including the '\n'
KVSNAME = "4242.0"


def fail(msg):
    print(f"fake_pmi1: {msg}", file=sys.stderr, flush=True)


class Server:
    def __init__(self, args):
        self.args = args
        self.size = args.n
        self.sel = selectors.DefaultSelector()
        self.conns = {}  # socket -> per-connection state
        self.kvs = {}  # visible to gets
        self.pending = {}  # put since the last barrier (Slurm's temp kvs)
        self.in_barrier = []
        self.finalized = set()
        self.errors = 0
        self.abort_code = None

    # ---- sending ----
    def send(self, sock, text):
        data = text.encode()
        try:
            # Pieces of 7 bytes: the client must reassemble lines across reads.
            for i in range(0, len(data), 7):
                sock.sendall(data[i : i + 7])
        except OSError as e:
            fail(f"sending to a rank: {e}")
            self.errors += 1

    def reply(self, sock, text):
        self.send(sock, text + "\n")

    # ---- protocol ----
    def violation(self, st, msg):
        fail(f"rank {st['rank']}: protocol error: {msg}")
        self.errors += 1

    def handle(self, sock, st, line):
        if len(line) + 1 > LINE_MAX:
            return self.violation(st, f"request of {len(line) + 1} bytes exceeds {LINE_MAX}")
        kv = {}
        for tok in line.split():
            if "=" not in tok:
                return self.violation(st, f"token without '=': {tok!r}")
            k, v = tok.split("=", 1)
            kv[k] = v
        cmd = kv.get("cmd")
        if st["rank"] is None and cmd != "initack":
            return self.violation(st, f"expected cmd=initack first, got {line!r}")
        handler = getattr(self, "cmd_" + str(cmd), None)
        if handler is None:
            return self.violation(st, f"unknown request {line!r}")
        handler(sock, st, kv)

    def cmd_initack(self, sock, st, kv):
        pmiid = int(kv.get("pmiid", "-1"))
        if not 0 <= pmiid < self.size:
            return self.violation(st, f"bad pmiid {kv.get('pmiid')}")
        st["rank"] = pmiid
        # One send, four lines, as hydra does.
        self.send(sock, f"cmd=initack\ncmd=set size={self.size}\ncmd=set rank={pmiid}\n"
                  "cmd=set debug=0\n")

    def cmd_init(self, sock, st, kv):
        if kv.get("pmi_version") != "1" or kv.get("pmi_subversion") != "1":
            self.violation(st, f"init asks for version {kv}")
            return self.reply(sock, "cmd=response_to_init rc=-1 pmi_version=1 pmi_subversion=1")
        st["init"] = True
        self.reply(sock, "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1")

    def cmd_get_maxes(self, sock, st, kv):
        self.reply(sock, f"cmd=maxes rc=0 kvsname_max=256 keylen_max={self.args.keylen_max} "
                   f"vallen_max={self.args.vallen_max}")

    def cmd_get_my_kvsname(self, sock, st, kv):
        self.reply(sock, f"cmd=my_kvsname rc=0 kvsname={KVSNAME}")

    def check_key(self, st, kv):
        if not st.get("init"):
            self.violation(st, "KVS use before cmd=init")
        if kv.get("kvsname") != KVSNAME:
            self.violation(st, f"wrong kvsname {kv.get('kvsname')!r}")
        key = kv.get("key", "")
        if not key or len(key) >= self.args.keylen_max:
            self.violation(st, f"key {key!r} empty or not below keylen_max")
        return key

    def cmd_put(self, sock, st, kv):
        key = self.check_key(st, kv)
        val = kv.get("value", "")
        if len(val) >= self.args.vallen_max:
            self.violation(st, f"value of {len(val)} chars not below vallen_max")
        if not key.startswith(f"r{st['rank']}."):
            self.violation(st, f"key {key!r} lacks this rank's prefix")
        self.pending[key] = val
        self.reply(sock, "cmd=put_result rc=0")

    def cmd_get(self, sock, st, kv):
        key = self.check_key(st, kv)
        if key in self.kvs:
            self.reply(sock, f"cmd=get_result rc=0 value={self.kvs[key]}")
        else:
            self.reply(sock, "cmd=get_result rc=1")

    def cmd_barrier_in(self, sock, st, kv):
        self.in_barrier.append(sock)
        if len(self.in_barrier) == self.size:
            self.kvs.update(self.pending)
            self.pending = {}
            for s in self.in_barrier:
                self.reply(s, "cmd=barrier_out rc=0")
            self.in_barrier = []

    def cmd_finalize(self, sock, st, kv):
        self.finalized.add(st["rank"])
        self.reply(sock, "cmd=finalize_ack rc=0")

    def cmd_abort(self, sock, st, kv):
        self.abort_code = int(kv.get("exitcode", "1"))
        fail(f"rank {st['rank']} aborted the job with exit code {self.abort_code}")

    # ---- I/O ----
    def add_conn(self, sock, rank):
        sock.setblocking(True)
        st = {"rank": rank, "buf": b""}
        self.conns[sock] = st
        self.sel.register(sock, selectors.EVENT_READ, ("conn", st))

    def on_readable(self, sock, st):
        data = sock.recv(4096)
        if not data:
            self.sel.unregister(sock)
            sock.close()
            del self.conns[sock]
            if st["rank"] not in self.finalized and self.abort_code is None:
                fail(f"rank {st['rank']} closed its PMI connection without cmd=finalize")
                self.errors += 1
            return
        st["buf"] += data
        while b"\n" in st["buf"]:
            raw, st["buf"] = st["buf"].split(b"\n", 1)
            self.handle(sock, st, raw.decode(errors="replace"))
        if len(st["buf"]) >= LINE_MAX:
            self.violation(st, f"partial request already {len(st['buf'])} bytes")
            st["buf"] = b""

    def run(self, cmd):
        base = {k: v for k, v in os.environ.items() if not k.startswith("PMI")}
        procs, listener = [], None
        if self.args.mode == "port":
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            listener.listen(self.size)
            self.sel.register(listener, selectors.EVENT_READ, ("listen", None))
            port = listener.getsockname()[1]
        for rank in range(self.size):
            env = dict(base)
            if self.args.mode == "port":
                env.update(PMI_PORT=f"localhost:{port}", PMI_ID=str(rank))
                procs.append(subprocess.Popen(cmd, env=env))
            else:
                ours, theirs = socket.socketpair()
                env.update(PMI_FD=str(theirs.fileno()), PMI_RANK=str(rank),
                           PMI_SIZE=str(self.size))
                procs.append(subprocess.Popen(cmd, env=env, pass_fds=[theirs.fileno()]))
                theirs.close()
                self.add_conn(ours, rank)
        while self.abort_code is None and any(p.poll() is None for p in procs):
            for key, _ in self.sel.select(timeout=0.2):
                kind, st = key.data
                if kind == "listen":
                    conn, _ = listener.accept()
                    # Without this, Nagle holds back every piece after the first.
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self.add_conn(conn, None)
                else:
                    self.on_readable(key.fileobj, st)
        if self.abort_code is not None:
            for p in procs:
                if p.poll() is None:
                    p.kill()
            for p in procs:
                p.wait()
            return self.abort_code or 1
        # Drain what the ranks sent before exiting.
        for key, _ in self.sel.select(timeout=0.1):
            if key.data[0] == "conn":
                self.on_readable(key.fileobj, key.data[1])
        codes = [p.wait() for p in procs]
        for rank, code in enumerate(codes):
            if code != 0:
                fail(f"rank {rank} exited with status {code}")
        missing = set(range(self.size)) - self.finalized
        if missing and not any(codes):
            fail(f"ranks {sorted(missing)} never sent cmd=finalize")
            self.errors += 1
        return 1 if self.errors or any(codes) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["fd", "port"], default="fd")
    ap.add_argument("-n", type=int, default=4)
    ap.add_argument("--keylen-max", type=int, default=64)
    ap.add_argument("--vallen-max", type=int, default=1024)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no program to run")
    sys.exit(Server(args).run(cmd))


if __name__ == "__main__":
    main()
