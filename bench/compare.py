#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""compare.py: fastmsg against raw libfabric and two MPIs, in one run, same sizes, same hosts.

  ping-pong  one host: fastmsg-bench-pingpong (FM_PROVIDER=sm, its own shared memory, or shm
             with --pp-provider shm), fi_pingpong -p shm (libfabric's shared memory; through
             compare-pingpong.sh, which interleaves the two),
             fastmsg-bench-mpi-pingpong-openmpi (btl vader) and -mpich (UCX sm).
  multicast  N emulated hosts (bench/cluster: network namespaces on one bridge, every link
             shaped to --rate): fastmsg-bench-mcast with every tree plus auto, pipelined and
             store-and-forward, calibrated on the live job; fastmsg-bench-mpi-bcast-openmpi
             and -mpich over TCP on the same hosts.

Prints tables with ratios, writes CSV and (with python3-matplotlib) PNG plots to --out, and
checks the multicast targets of bench/README.md. Beside every multicast figure: the model's
prediction and the link-rate bound, size / rate + depth x packet time, with the depth of the
tree that ran (MPI's trees are unknown: depth 1, the bound of any tree). Needs root for the
cluster; see bench/README.md.

  sim        no run: the CSV of bench/sim/run --csv, one file per platform (--sim-csv
             LABEL=FILE, repeated), as tables of completion against ranks, issue 22's targets
             and plots (bench/sim_report.py).

  local      (bench/run.sh, the main job) fastmsg alone on this host under fastmsg-run:
             fastmsg-bench-pingpong on 2 ranks, 8 B to 1 MiB, and fastmsg-bench-mcast on
             --ranks (4) with every tree and auto at 64 KiB and 1 MiB; the same tables, CSV
             and plots, written to bench/results/local/ unless --out says otherwise.
"""
import argparse
import contextlib
import csv
import io
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
TREES = ["flat", "chain", "binomial", "kbinomial", "postal", "auto"]
# Between emulated hosts the two-stage multicast too (one host has no IP multicast: lo).
CLUSTER_TREES = TREES[:-1] + ["ipmc", "auto"]
DGRAM = 1472  # the two-stage multicast's datagram (runtime/mcast/ipmc)
MPIS = ["openmpi", "mpich"]


def fail(msg):
    sys.exit(f"compare: {msg}")


def size_bytes(text):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:].lower(), 1)
    digits = text[:-1] if mult > 1 else text
    if not digits.isdigit():
        fail(f"bad size '{text}'")
    return int(digits) * mult


def size_name(n):
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def rate_bytes_per_s(text):
    """tc's rate units: 1gbit, 100mbit, 500kbit, 1000000bit."""
    t = text.lower()
    for unit, mult in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1.0)):
        if t.endswith(unit) and t[: -len(unit)].replace(".", "", 1).isdigit():
            return float(t[: -len(unit)]) * mult / 8
    fail(f"bad rate '{text}' (e.g. 1gbit, 100mbit)")


def run(cmd, env=None, timeout=3600, die=True):
    """Run cmd; its stdout. On failure show its output and exit (or raise RuntimeError)."""
    full_env = dict(os.environ, **(env or {}))
    print("compare: $ " + " ".join(cmd), file=sys.stderr)
    try:
        p = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired as e:
        p, code = e, "a timeout"
    if code != 0:
        sys.stderr.write(str(p.stdout or "")[-2000:] + str(p.stderr or "")[-4000:])
        if not die:
            out = p.stdout if isinstance(p.stdout, str) else (p.stdout or b"").decode()
            raise RuntimeError(f"{cmd[0]} exited {code}", out)
        fail(f"{cmd[0]} exited {code}")
    return p.stdout


def csv_rows(text):
    lines = [l for l in text.splitlines() if l and not l.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def median(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


class Tools:
    def __init__(self, build):
        self.build = build
        self.fm_run = os.path.join(build, "runtime/launcher/fastmsg-run")
        self.fm_pp = os.path.join(build, "bench/fastmsg-bench-pingpong")
        self.fm_mcast = os.path.join(build, "bench/fastmsg-bench-mcast")
        self.fm_tree = os.path.join(build, "runtime/tools/fastmsg-tree")
        self.fm_info = os.path.join(build, "runtime/tools/fastmsg-info")
        self.mpi_pp = {m: os.path.join(build, f"bench/mpi/fastmsg-bench-mpi-pingpong-{m}")
                       for m in MPIS}
        self.mpi_bcast = {m: os.path.join(build, f"bench/mpi/fastmsg-bench-mpi-bcast-{m}")
                          for m in MPIS}
        self.mpi_cc = {m: os.path.join(build, f"bench/mpi/fastmsg-bench-mpi-concurrent-{m}")
                       for m in MPIS}
        self.mpi_dag = {m: os.path.join(build, f"bench/mpi/fastmsg-bench-mpi-dag-{m}")
                        for m in MPIS}
        self.dag = os.path.join(build, "examples/dag")
        self.cluster = os.path.join(HERE, "cluster/cluster.sh")
        self.agent = os.path.join(HERE, "cluster/netns-agent")
        for f in (self.fm_run, self.fm_pp, self.fm_mcast, self.fm_tree, self.fm_info):
            if not os.access(f, os.X_OK):
                fail(f"{f} not built (meson compile -C {build})")
        self.mpis = [m for m in MPIS if os.access(self.mpi_pp[m], os.X_OK)]
        missing = set(MPIS) - set(self.mpis)
        if missing:
            print(f"compare: no MPI benchmarks for {', '.join(sorted(missing))} "
                  "(libopenmpi-dev / libmpich-dev missing at build time)", file=sys.stderr)

    def setting(self, env, name):
        """A setting's value as fastmsg-info prints it for env (FM_PACKET_SIZE: bytes)."""
        out = run([self.fm_info], env=env)
        for line in out.splitlines():
            if line.strip().startswith(name + " "):
                return int(line.split("=")[1].split()[0])
        fail(f"fastmsg-info printed no {name}")

    def packet_size(self, env):
        return self.setting(env, "FM_PACKET_SIZE")


OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


# ---------------------------------------------------------------------------------------------
# Ping-pong on one host


def pingpong(tools, args):
    sizes_arg = ["--min", "1", "--max", args.pp_max]
    out = run(["bash", os.path.join(HERE, "compare-pingpong.sh"), args.pp_provider, "-r",
               str(args.repeats),
               "--max", args.pp_max, "--csv", "--build", tools.build], timeout=7200)
    rows = {int(r["size"]): {"fm_lat": num(r["fm_lat_us"]), "fi_lat": num(r["fi_lat_us"]),
                              "fm_bw": num(r["fm_stream_bw_MBps"]), "fi_bw": num(r["fi_bw_MBps"])}
            for r in csv_rows(out)}
    launch = {
        "openmpi": ["mpirun.openmpi", "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl",
                    "self,vader", "--mca", "oob_tcp_if_include", "lo", "-n", "2"],
        "mpich": ["mpiexec.mpich", "-iface", "lo", "-n", "2"],
    }
    env = dict(OMPI_ROOT, UCX_TLS="self,sm")
    for m in tools.mpis:
        samples = {}
        for _ in range(args.repeats):  # one launch per repeat: launches differ, as fm's do
            out = run(launch[m] + [tools.mpi_pp[m], "-r", "1", "--csv"] + sizes_arg, env=env)
            for r in csv_rows(out):
                s = samples.setdefault(int(r["size"]), ([], []))
                s[0].append(num(r["latency_us"]))
                s[1].append(num(r["bandwidth_MBps"]))
        for size, (lat, bw) in samples.items():
            row = rows.setdefault(size, {})
            row[m + "_lat"], row[m + "_bw"] = median(lat), median(bw)
    return rows


def pingpong_report(rows, others, out_dir, provider="sm"):
    """Table and pingpong.csv: fastmsg's figures, then each series in others beside them ("fi"
    and the MPIs in a comparison; none in a local run), with fastmsg / other ratios."""
    keys = ["fm"] + others
    cols = [k + "_lat" for k in keys] + [k + "_bw" for k in keys]
    with open(os.path.join(out_dir, "pingpong.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["size"] + cols)
        for size in sorted(rows):
            w.writerow([size] + [fmt(rows[size].get(c), 3) for c in cols])
    print(f"\n# ping-pong, one host, {provider}: one-way latency (us) and bandwidth (MB/s); "
          "medians")
    if others:
        print("# ratios: fastmsg / other (latency: below 1 is faster; bandwidth: above 1 is "
              "faster)")
        print("# bw: fm and MPI stream a window of messages; fi_pingpong's is size / latency")
    else:
        print("# bw: a window of messages streamed, then one reply")
    ratio_heads = ["fm/" + k[:4] for k in others]
    head = f"{'size':>8}" + "".join(f" {k:>8}" for k in keys) + \
        "".join(f" {h:>{len(h) + 1}}" for h in ratio_heads) + \
        "".join(f" {k[:5] + '-bw':>9}" for k in keys)
    print(head)
    for size in sorted(rows):
        r = rows[size]
        line = f"{size_name(size):>8}" + "".join(f" {fmt(r.get(k + '_lat'), 3):>8}" for k in keys)
        line += "".join(f" {fmt(ratio(r.get('fm_lat'), r.get(k + '_lat'))):>{len(h) + 1}}"
                        for k, h in zip(others, ratio_heads))
        line += "".join(f" {fmt(r.get(k + '_bw'), 1):>9}" for k in keys)
        print(line)


# ---------------------------------------------------------------------------------------------
# Multicast on the emulated cluster


def rack_hosts(prefix, n, racks):
    """n hosts in racks racks, listed round-robin over the racks (rack k holds hosts k*S ..
    k*S+S-1, S = ceil(n / racks), as cluster.sh splits them): rank r lands in rack r % racks
    under fastmsg-run and under one slot a host in MPI, so a member list says nothing of racks.
    16 in 4: P0,P4,P8,P12,P1,..."""
    per = -(-n // racks)
    return ",".join(f"{prefix}{k * per + p}" for p in range(per) for k in range(racks)
                    if k * per + p < n)


def uplink_dirs(text):
    """Each uplink direction's bytes in `cluster.sh counters` output: {(rack, "up"): bytes,
    (rack, "down"): bytes, ...}."""
    dirs = {}
    for line in text.splitlines():
        f = line.split()
        if f and not line.startswith("#") and len(f) >= 3:
            dirs[(f[0], "up")], dirs[(f[0], "down")] = int(f[1]), int(f[2])
    return dirs


def uplink_bytes(text):
    """The sum of every uplink's bytes up and down in `cluster.sh counters` output."""
    return sum(uplink_dirs(text).values())


def uplink_rate(rate, n, racks):
    """The uplinks' rate (bytes a second) as `cluster.sh up N --racks R --rate RATE` shapes
    them: RATE x hosts a rack (ceil(N / R)) / 4; None without racks or a rate."""
    return rate_bytes_per_s(rate) * -(-n // racks) / 4 if rate and racks else None


def busiest(before, after):
    """The most bytes any one uplink direction carried between two uplink_dirs readings."""
    return max((after[k] - before.get(k, 0) for k in after), default=0)


class Cluster:
    """cluster.sh up on entry, down on exit (also after an error or ^C). With racks: the
    two-level layout, hosts listed round-robin over the racks, its topology file."""

    def __init__(self, tools, n, rate, prefix, racks=None, burst=None):
        self.tools, self.n, self.rate, self.prefix = tools, n, rate, prefix
        self.racks, self.burst = racks, burst
        self.topo = f"/run/fastmsg-cluster-{prefix}.topo" if racks else None

    def __enter__(self):
        cmd = ["bash", self.tools.cluster, "up", str(self.n), "--prefix", self.prefix]
        if self.rate:
            cmd += ["--rate", self.rate]
        if self.racks:
            cmd += ["--racks", str(self.racks)]
        if self.burst:
            cmd += ["--burst", str(self.burst)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 77:
            fail("no emulated cluster here: " + p.stderr.strip())
        if p.returncode != 0:
            subprocess.run(["bash", self.tools.cluster, "down", "--prefix", self.prefix])
            fail("cluster.sh up failed: " + p.stderr.strip())
        self.hosts = run(["bash", self.tools.cluster, "hosts", str(self.n), "--prefix",
                          self.prefix]).strip()
        if self.racks:
            self.hosts = rack_hosts(self.prefix, self.n, self.racks)
        self.addr0 = run(["bash", self.tools.cluster, "addr", "0"]).strip()
        return self

    def __exit__(self, *exc):
        subprocess.run(["bash", self.tools.cluster, "down", "--prefix", self.prefix])

    def in_host0(self, cmd):
        return [self.tools.agent, self.prefix + "0"] + cmd

    def uplink_dirs(self):
        """Bytes so far over each uplink direction (racks only): uplink_dirs."""
        return uplink_dirs(run(["bash", self.tools.cluster, "counters", "--prefix",
                                self.prefix]))

    def fastmsg(self, prog_args):
        """A fastmsg program on every host through fastmsg-run's agent; its env."""
        env = {"FM_PROVIDER": "tcp", "FM_IFACE": "fm0"}
        if self.topo:
            env["FM_TOPOLOGY"] = "file:" + self.topo
        return self.in_host0([self.tools.fm_run, "-n", str(self.n), "--agent", self.tools.agent,
                              "--hosts", self.hosts, "--addr", self.addr0] + prog_args), env

    def mpi(self, m, prog_args):
        """An MPI program on every host, one rank a host in --hosts order (Open MPI yields its
        core when idle: 16 busy-polling ranks on this machine's cores measure its scheduler)."""
        agent = self.tools.agent
        if m == "openmpi":
            launch = ["mpirun.openmpi", "--mca", "plm_rsh_agent", agent, "--host", self.hosts,
                      "-n", str(self.n), "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1",
                      "--mca", "pml", "ob1", "--mca", "btl", "tcp,self", "--mca",
                      "btl_tcp_if_include", "fm0", "--mca", "oob_tcp_if_include", "fm0"]
        else:
            launch = ["mpiexec.mpich", "-launcher", "ssh", "-launcher-exec", agent, "-hosts",
                      self.hosts, "-iface", "fm0", "-n", str(self.n), "-genv", "UCX_TLS",
                      "tcp,self", "-genv", "UCX_NET_DEVICES", "fm0"]
        return self.in_host0(launch + prog_args)


def mcast_fastmsg(tools, cl, args):
    env = {"FM_PROVIDER": "tcp", "FM_IFACE": "fm0"}
    cmd = cl.in_host0([tools.fm_run, "-n", str(cl.n), "--agent", tools.agent, "--hosts",
                       cl.hosts, "--addr", cl.addr0, tools.fm_mcast, "--sizes", args.sizes,
                       "--trees", ",".join(CLUSTER_TREES), "--sf-too", "--calibrate",
                       "--common-clock", "-r",
                       str(args.repeats), "--timeout", "600", "--csv"])
    return csv_rows(run(cmd, env=env, timeout=7200))


def mcast_mpi(tools, cl, args, m):
    cmd = cl.mpi(m, [tools.mpi_bcast[m], "--sizes", args.sizes, "--common-clock",
                     "-r", str(args.repeats), "--timeout", "60", "--csv"])
    want = len(args.sizes.split(","))
    for attempt in (1, 2):
        try:
            return csv_rows(run(cmd, env=OMPI_ROOT, timeout=7200, die=False))
        except RuntimeError as e:
            # MPICH over UCX's tcp between emulated hosts often stalls after its last row
            # (in MPI_Finalize); the rows it printed are whole measurements.
            rows = csv_rows(e.args[1] or "")
            if len(rows) == want:
                print(f"compare: {m} failed after printing every row ({e.args[0]}); "
                      "its rows are used", file=sys.stderr)
                return rows
            print(f"compare: {m} failed ({e.args[0]})" +
                  ("; once more" if attempt == 1 else ""), file=sys.stderr)
    fail(f"{m} failed twice")


def tree_depth(tools, resolved, n, size, packet):
    """Hops from the root to the deepest member of the tree fastmsg-bench-mcast resolved
    (name[:k][@P])."""
    name, _, at = resolved.partition("@")
    if name == "ipmc":  # one datagram from the root to every member: the bound of any tree
        return 1, DGRAM
    if at:
        packet = int(at)
    m = max(1, math.ceil(size / packet))
    out = run([tools.fm_tree, name, "-n", str(n), "-m", str(m), "--lambda", "2"])
    kids = {}
    for line in out.splitlines():
        if ":" in line and not line.startswith("steps"):
            node, _, rest = line.partition(":")
            kids[int(node)] = [int(c) for c in rest.split()]
    depth, frontier = 0, [0]
    while True:
        frontier = [c for p in frontier for c in kids.get(p, [])]
        if not frontier:
            return depth, packet
        depth += 1


def mcast(tools, args, n, packet):
    rows = []
    with Cluster(tools, n, args.rate, args.prefix) as cl:
        for r in mcast_fastmsg(tools, cl, args):
            rows.append(dict(r, who="fastmsg"))
        for m in tools.mpis:
            for r in mcast_mpi(tools, cl, args, m):
                rows.append(dict(r, who=m))
    rate = rate_bytes_per_s(args.rate)
    depths = {}
    for r in rows:
        size = int(r["size"])
        if r["who"] == "fastmsg":
            key = (r["resolved"], size)
            if key not in depths:
                depths[key] = tree_depth(tools, r["resolved"], n, size, packet)
            depth, p = depths[key]
        else:
            depth, p = 1, packet
        r["hosts"] = n
        r["depth"] = depth
        r["bound_us"] = (size / rate + depth * min(size, p) / rate) * 1e6
    return rows


def mcast_key(r):
    return (r["who"], r["tree"], r["mode"])


def mcast_report(rows, out_dir, where):
    """Tables and mcast.csv; where(n) names n members in the titles. The link-rate bound's
    columns only where the rows have one (the emulated cluster)."""
    fields = ["hosts", "who", "tree", "resolved", "mode", "size", "completion_us",
              "min_member_us", "max_member_us", "skew_us", "root_cpu_us", "model_us", "depth",
              "bound_us"]
    with open(os.path.join(out_dir, "mcast.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    bounded = any(r["bound_us"] is not None for r in rows)
    for n in sorted({r["hosts"] for r in rows}):
        print(f"\n# multicast to {where(n)}: completion (us, the slowest member, medians), the "
              "model's prediction" + (", the link-rate bound" if bounded else ""))
        print(f"{'size':>6} {'who':>8} {'tree':>12} {'resolved':>16} {'mode':>5} {'time':>11} "
              f"{'model':>11}" + (f" {'bound':>11} {'t/bound':>7}" if bounded else "") +
              f" {'t/model':>7} {'skew':>9}")
        for r in sorted((r for r in rows if r["hosts"] == n),
                        key=lambda r: (int(r["size"]), mcast_key(r))):
            t, model, bound = num(r["completion_us"]), num(r["model_us"]), r["bound_us"]
            print(f"{size_name(int(r['size'])):>6} {r['who']:>8} {r['tree']:>12} "
                  f"{r['resolved']:>16} {r['mode']:>5} {fmt(t, 1):>11} {fmt(model, 1):>11}" +
                  (f" {fmt(bound, 1):>11} {fmt(ratio(t, bound)):>7}" if bounded else "") +
                  f" {fmt(ratio(t, model)):>7} {fmt(num(r['skew_us']), 1):>9}")


def pick(rows, n, size, who, tree=None, mode=None):
    for r in rows:
        if (r["hosts"] == n and int(r["size"]) == size and r["who"] == who and
                (tree is None or r["tree"] == tree) and (mode is None or r["mode"] == mode)):
            return r
    return None


def targets(rows, mpis):
    """bench/README.md's multicast targets on the largest cluster measured."""
    n = max(r["hosts"] for r in rows)
    print(f"\n# targets, {n} hosts")
    checks = []
    for size, limit in ((16 << 20, 1.25), (1 << 20, 1.5)):
        a = pick(rows, n, size, "fastmsg", "auto", "fpfs")
        if a:
            q = ratio(num(a["completion_us"]), a["bound_us"])
            checks.append((f"{size_name(size)} auto / link-rate bound <= {limit}", q,
                           q is not None and q <= limit))
    for size in (1 << 20, 16 << 20):
        a = pick(rows, n, size, "fastmsg", "auto", "fpfs")
        sf = pick(rows, n, size, "fastmsg", "binomial", "sf")
        if a and sf:
            q = ratio(num(sf["completion_us"]), num(a["completion_us"]))
            checks.append((f"{size_name(size)} store-and-forward binomial / auto >= 2", q,
                           q is not None and q >= 2))
        if a:
            q = ratio(num(a["completion_us"]), num(a["model_us"]))
            checks.append((f"{size_name(size)} auto / model within 0.75..1.25", q,
                           q is not None and 0.75 <= q <= 1.25))
        for m in mpis:
            b = pick(rows, n, size, m)
            if a and b:
                q = ratio(num(b["completion_us"]), num(a["completion_us"]))
                checks.append((f"{size_name(size)} {m} MPI_Bcast / auto >= 1.5", q,
                               q is not None and q >= 1.5))
    for what, q, ok in checks:
        print(f"{'met' if ok else 'NOT met':>8}  {what}: {fmt(q)}")


# ---------------------------------------------------------------------------------------------
# Issue 18 on racks: multicasts from random roots to random sets, and the DAG scheduler

CC_TREES = ["prefix", "prefix:4", "flat", "binomial"]
DAG_TREES = ["prefix", "prefix:4", "binomial", "flat"]
CC_CREATED = re.compile(r"^# bcast: (\d+) communicators created in ([0-9.]+) ms")


def cc_rows(text, who, roots):
    """fastmsg-bench-mcast --concurrent's or fastmsg-bench-mpi-concurrent's CSV output as rows
    (method: the tree or MPI method; roots: "all" or the --roots given), each bcast row with
    the count and time of its job's communicator creation (the comment line after the rows)."""
    rows = []
    for r in csv_rows(text):
        rows.append({"who": who, "method": r["tree"], "roots": roots, "dests": int(r["dests"]),
                     "size": int(r["size"]), "each_us": num(r["each_us"]),
                     "each_max_us": num(r["each_max_us"]), "round_us": num(r["round_us"]),
                     "agg_MBps": num(r["aggregate_MBps"]), "rounds": int(r["rounds"]),
                     "comms": None, "create_ms": None})
    for line in text.splitlines():
        m = CC_CREATED.match(line)
        if m:
            for r in rows:
                if r["method"] == "bcast":
                    r["comms"], r["create_ms"] = int(m.group(1)), float(m.group(2))
    return rows


def dag_row(text, who, tree, uplink=None, busiest_dir=None, rate=None):
    """The DAG programs' CSV row (examples/dag and fastmsg-bench-mpi-dag print the same) with
    the job's uplink bytes; runs = warm-up + timed runs, for the bytes per run. With the bytes
    of the job's busiest uplink direction and the uplinks' rate (bytes a second): that
    direction's bytes a run, the time they take at the rate (floor_us: no run of this traffic
    can be shorter) and the floor's share of the makespan (link_use)."""
    rows = csv_rows(text)
    if len(rows) != 1:
        raise ValueError(f"{who} {tree}: expected one DAG row, got {len(rows)}")
    r = rows[0]
    runs = int(r["repeats"]) + 1  # the programs' one warm-up (their default)
    most = busiest_dir / runs if busiest_dir is not None else None
    floor = most / rate * 1e6 if most is not None and rate else None
    makespan = num(r["makespan_us"])
    return {"who": who, "tree": tree, "tasks": int(r["tasks"]), "repeats": int(r["repeats"]),
            "makespan_us": makespan, "min_us": num(r["min_us"]),
            "max_us": num(r["max_us"]), "checksum": r["checksum"], "uplink_bytes": uplink,
            "uplink_per_run": uplink / runs if uplink is not None else None,
            "busiest_per_run": most, "floor_us": floor,
            "link_use": floor / makespan if floor is not None and makespan else None}


def descendants(pid):
    """pid and every process below it (from /proc), children after their parents."""
    kids = {}
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError, IndexError):
            continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def end_tree(proc):
    """SIGTERM to proc and everything it started, SIGKILL to what is left after 5 s."""
    pids = descendants(proc.pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in pids:
            with contextlib.suppress(OSError):
                os.kill(p, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def run_rows(cmd, done, env=None, timeout=7200, grace=30):
    """Run cmd like run(die=False), but once done(its stdout so far) holds (every row is
    printed), give it grace seconds to exit, then end it: MPICH over UCX's tcp between emulated
    hosts often stalls in MPI_Finalize after its last row, and a stalled rank spins on a core
    the next job needs. Its stdout; RuntimeError(why, stdout) when it exited nonzero or ran
    out of time before done."""
    full_env = dict(os.environ, **(env or {}))
    print("compare: $ " + " ".join(cmd), file=sys.stderr)
    proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines, err = [], []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    deadline = time.monotonic() + timeout
    timer = threading.Timer(timeout, end_tree, [proc])
    timer.start()
    try:
        for line in proc.stdout:
            lines.append(line)
            if done("".join(lines)):
                break
        try:
            proc.wait(timeout=max(1, min(grace, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            if not done("".join(lines)):  # (ended by the timer)
                raise RuntimeError(f"{cmd[0]} ran out of time ({timeout} s)", "".join(lines))
            print(f"compare: {cmd[0]}: every row printed, still running {grace} s later; "
                  "ended", file=sys.stderr)
            end_tree(proc)
            return "".join(lines)
    finally:
        timer.cancel()
    out = "".join(lines)
    if proc.returncode != 0:
        sys.stderr.write(out[-2000:] + "".join(err)[-4000:])
        raise RuntimeError(f"{cmd[0]} exited {proc.returncode}", out)
    return out


def mpi_try(cmd, m, done, env=None):
    """An MPI job's stdout (run_rows); a failed one once more; after a failure whose output
    holds every row, that output. None when it does not run."""
    for attempt in (1, 2):
        try:
            return run_rows(cmd, done, env=dict(OMPI_ROOT, **(env or {})))
        except RuntimeError as e:
            out = e.args[1] or ""
            if done(out):
                print(f"compare: {m} failed after printing every row ({e.args[0]}); its rows "
                      "are used", file=sys.stderr)
                return out
            print(f"compare: {m} failed ({e.args[0]})" +
                  ("; once more" if attempt == 1 else "; left out"), file=sys.stderr)
    return None


def cc_done(want):
    """Whether fastmsg-bench-mpi-concurrent's output is whole: every row (p2p's and bcast's)
    and the bcast line after them."""
    return lambda text: (len(csv_rows(text)) >= want and
                         any(CC_CREATED.match(line) for line in text.splitlines()))


def concurrent(tools, args, cl):
    """fastmsg-bench-mcast --concurrent K with every tree of CC_TREES, every rank a root and
    one root (--roots 1), then each MPI's p2p and bcast the same two ways."""
    k = min(args.dests, cl.n - 1)
    if k != args.dests:
        print(f"compare: --dests {args.dests} on {cl.n} hosts: K = {k}", file=sys.stderr)
    common = ["--concurrent", str(k), "--common-clock", "--sizes", args.sizes, "-r",
              str(args.repeats), "-i", str(args.iters), "--csv"]
    rows = []
    for roots in ("all", "1"):
        extra = [] if roots == "all" else ["--roots", roots]
        cmd, env = cl.fastmsg([tools.fm_mcast, "--trees", ",".join(CC_TREES), "--timeout", "600"]
                              + common + extra)
        env["FM_MCAST_CORES"] = "2"  # (the hosts share this machine's 2 cores)
        rows += cc_rows(run(cmd, env=env, timeout=7200), "fastmsg", roots)
        for m in tools.mpis:
            if not os.access(tools.mpi_cc[m], os.X_OK):
                continue
            out = mpi_try(cl.mpi(m, [tools.mpi_cc[m], "--timeout", "600"] + common + extra), m,
                          cc_done(2 * len(args.sizes.split(","))))
            if out is not None:
                rows += cc_rows(out, m, roots)
    for r in rows:
        r.update(hosts=cl.n, racks=cl.racks, rate=cl.rate)
    return rows


def dag(tools, args, cl):
    """examples/dag with every tree of DAG_TREES, then each MPI's fastmsg-bench-mpi-dag, the
    same DAG; each job's uplink bytes from the rack switches' counters."""
    if not os.access(tools.dag, os.X_OK):
        fail(f"{tools.dag} not built (meson compile -C {tools.build})")
    common = ["-r", str(args.repeats), "--csv"] + args.dag.split()
    rows = []
    rate = uplink_rate(cl.rate, cl.n, cl.racks)

    def row(out, who, tree, before):
        after = cl.uplink_dirs()
        total = sum(after.values()) - sum(before.values())
        return dag_row(out, who, tree, total, busiest(before, after), rate)

    for tree in DAG_TREES:
        cmd, env = cl.fastmsg([tools.dag, "--tree", tree] + common)
        before = cl.uplink_dirs()
        out = run(cmd, env=env, timeout=7200)
        rows.append(row(out, "fastmsg", tree, before))
    for m in tools.mpis:
        if not os.access(tools.mpi_dag[m], os.X_OK):
            continue
        before = cl.uplink_dirs()
        out = mpi_try(cl.mpi(m, [tools.mpi_dag[m]] + common), m,
                      lambda text: len(csv_rows(text)) >= 1)
        if out is not None:
            rows.append(row(out, m, "p2p", before))
    for r in rows:
        r.update(hosts=cl.n, racks=cl.racks, rate=cl.rate)
    return rows


def cc_pick(rows, who, method, roots, size):
    for r in rows:
        if (r["who"], r["method"], r["roots"], r["size"]) == (who, method, roots, size):
            return r
    return None


def ref_mpi(rows):
    """The MPI the ratios are taken against: Open MPI when it ran, else MPICH, else None."""
    ran = {r["who"] for r in rows}
    return next((m for m in MPIS if m in ran), None)


def bcast_with_creation(bc):
    """MPI_Bcast's time per multicast with one communicator's creation added (a new set each
    time needs one)."""
    if not bc or bc["each_us"] is None or not bc["comms"]:
        return None
    return bc["each_us"] + bc["create_ms"] * 1000 / bc["comms"]


CC_FIELDS = ["hosts", "racks", "rate", "who", "method", "roots", "dests", "size", "each_us",
             "each_max_us", "round_us", "agg_MBps", "rounds", "comms", "create_ms", "each_vs_p2p",
             "each_vs_bcast", "agg_vs_p2p", "agg_vs_bcast"]


def cc_ratios(rows):
    """Each row's ratios against the reference MPI's p2p and bcast rows of the same roots and
    size: each_us (below 1: faster) and agg_MBps (above 1: more)."""
    m = ref_mpi([r for r in rows if r["who"] != "fastmsg"])
    for r in rows:
        p2p = cc_pick(rows, m, "p2p", r["roots"], r["size"]) if m else None
        bc = cc_pick(rows, m, "bcast", r["roots"], r["size"]) if m else None
        r["each_vs_p2p"] = ratio(r["each_us"], p2p and p2p["each_us"])
        r["each_vs_bcast"] = ratio(r["each_us"], bc and bc["each_us"])
        r["agg_vs_p2p"] = ratio(r["agg_MBps"], p2p and p2p["agg_MBps"])
        r["agg_vs_bcast"] = ratio(r["agg_MBps"], bc and bc["agg_MBps"])
    return m


def concurrent_report(rows, out_dir, where):
    m = cc_ratios(rows)
    with open(os.path.join(out_dir, "concurrent.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CC_FIELDS)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r[c] for c in CC_FIELDS])
    k = rows[0]["dests"] if rows else 0
    for roots, title in (("1", f"one multicast from a random root to {k} random others"),
                         ("all", f"every rank a root at once, each to {k} random others")):
        sel = [r for r in rows if r["roots"] == roots]
        if not sel:
            continue
        print(f"\n# {title}, {where}: medians (us); aggregate = roots x K x size / round")
        print(f"# ratios against {m or 'no MPI'} p2p (flat) and bcast (communicators made "
              "beforehand, not counted): each below 1 is faster, agg above 1 is more")
        print(f"{'size':>6} {'who':>8} {'method':>9} {'each_us':>11} {'round_us':>11} "
              f"{'agg_MBps':>9} {'each/p2p':>8} {'each/bc':>8} {'agg/p2p':>8} {'agg/bc':>8}")
        for r in sorted(sel, key=lambda r: (r["size"], r["who"] != "fastmsg",
                                            MPIS.index(r["who"]) if r["who"] in MPIS else 0)):
            print(f"{size_name(r['size']):>6} {r['who']:>8} {r['method']:>9} "
                  f"{fmt(r['each_us'], 1):>11} {fmt(r['round_us'], 1):>11} "
                  f"{fmt(r['agg_MBps'], 2):>9} {fmt(r['each_vs_p2p']):>8} "
                  f"{fmt(r['each_vs_bcast']):>8} {fmt(r['agg_vs_p2p']):>8} "
                  f"{fmt(r['agg_vs_bcast']):>8}")
        first = min(x["size"] for x in sel)  # (one line a job: its rows share the creation)
        for r in sel:
            if r["method"] == "bcast" and r["comms"] and r["size"] == first:
                print(f"# {r['who']} bcast: {r['comms']} communicators created in "
                      f"{r['create_ms']:.1f} ms ({r['create_ms'] * 1000 / r['comms']:.0f} us "
                      "each), not in the figures above")
        for r in sel:  # (a new set each time needs a new communicator: what that costs)
            added = bcast_with_creation(r) if r["method"] == "bcast" else None
            if added is not None:
                print(f"# {r['who']} bcast, {size_name(r['size'])}, one creation added to each "
                      f"multicast: {added:.1f} us")


DAG_FIELDS = ["hosts", "racks", "rate", "who", "tree", "tasks", "repeats", "makespan_us",
              "min_us", "max_us", "checksum", "uplink_bytes", "uplink_per_run", "vs_mpi",
              "busiest_per_run", "floor_us", "link_use"]


def dag_report(rows, out_dir, where):
    ref = next((r for m in MPIS for r in rows if r["who"] == m), None)
    for r in rows:
        r["vs_mpi"] = ratio(r["makespan_us"], ref and ref["makespan_us"])
    with open(os.path.join(out_dir, "dag.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(DAG_FIELDS)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r[c] for c in DAG_FIELDS])
    print(f"\n# DAG scheduler, {where}: makespan (us, median of each job's runs), uplink bytes "
          "(up and down over every uplink) per run (a job's over its warm-up and timed runs)")
    print(f"# ratio: makespan / {ref['who'] if ref else 'no MPI'} point-to-point's; floor: the "
          "busiest uplink direction's bytes a run at the uplinks' rate (no run of that traffic "
          "is shorter), use: floor / makespan")
    print(f"{'who':>8} {'tree':>9} {'makespan_us':>12} {'min_us':>11} {'max_us':>11} "
          f"{'uplink/run':>11} {'ratio':>6} {'floor_us':>11} {'use':>5} {'checksum':>8}")
    for r in rows:
        print(f"{r['who']:>8} {r['tree']:>9} {fmt(r['makespan_us'], 1):>12} "
              f"{fmt(r['min_us'], 1):>11} {fmt(r['max_us'], 1):>11} "
              f"{fmt(r['uplink_per_run'], 0):>11} {fmt(r['vs_mpi']):>6} "
              f"{fmt(r.get('floor_us'), 1):>11} {fmt(r.get('link_use')):>5} {r['checksum']:>8}")
    for r in rows:  # (what a target of 0.7x the reference asks of the links)
        if r["who"] == "fastmsg" and r.get("floor_us") and ref and ref["makespan_us"]:
            print(f"# {r['tree']} at 0.7x {ref['who']}'s makespan: its busiest uplink direction "
                  f"busy {r['floor_us'] / (0.7 * ref['makespan_us']):.2f} of it")


def issue18_targets(cc, dg, sizes=(64 << 10, 1 << 20)):
    """Issue 18's targets: [(what, figure, met)]; a target without its rows is not met (its
    figure None). Ratios against Open MPI (MPICH when only it ran)."""
    checks = []
    m = ref_mpi([r for r in cc if r["who"] != "fastmsg"])
    # (the target's sizes that ran; others ran alone: theirs)
    sizes = [s for s in sizes if any(r["size"] == s for r in cc)] or \
        sorted({r["size"] for r in cc})
    for tree in ("prefix", "prefix:4"):
        for size in sizes:
            a = cc_pick(cc, "fastmsg", tree, "1", size)
            bc = cc_pick(cc, m, "bcast", "1", size) if m else None
            p2p = cc_pick(cc, m, "p2p", "1", size) if m else None
            q = ratio(a and a["each_us"], bc and bc["each_us"])
            checks.append((f"one multicast, {size_name(size)}: {tree} / {m or 'MPI'} bcast "
                           "<= 1.0", q, q is not None and q <= 1.0))
            q = ratio(p2p and p2p["each_us"], a and a["each_us"])
            checks.append((f"one multicast, {size_name(size)}: {m or 'MPI'} p2p / {tree} >= 2",
                           q, q is not None and q >= 2))
        for size in sizes:
            a = cc_pick(cc, "fastmsg", tree, "all", size)
            p2p = cc_pick(cc, m, "p2p", "all", size) if m else None
            q = ratio(a and a["agg_MBps"], p2p and p2p["agg_MBps"])
            checks.append((f"every rank a root, {size_name(size)}: {tree} aggregate / "
                           f"{m or 'MPI'} p2p >= 2", q, q is not None and q >= 2))
    ref = next((r for mpi in MPIS for r in dg if r["who"] == mpi), None)
    fm = {r["tree"]: r for r in dg if r["who"] == "fastmsg"}
    for tree in ("prefix", "prefix:4") if dg else ():
        a = fm.get(tree)
        q = ratio(a and a["makespan_us"], ref and ref["makespan_us"])
        checks.append((f"DAG makespan: {tree} / {ref['who'] if ref else 'MPI'} p2p <= 0.7", q,
                       q is not None and q <= 0.7))
        b = fm.get("binomial")
        q = ratio(a and a["uplink_per_run"], b and b["uplink_per_run"])
        checks.append((f"DAG uplink bytes: {tree} / binomial < 1", q, q is not None and q < 1))
    return checks


def print_targets(checks, title):
    print(f"\n# {title}")
    for what, q, ok in checks:
        print(f"{'met' if ok else 'NOT met':>8}  {what}: {fmt(q)}")


# ---------------------------------------------------------------------------------------------
# fastmsg alone on this host (bench/run.sh)

LOCAL_SIZES = "64K,1M"


def local(tools, args):
    """fastmsg-bench-pingpong on 2 ranks (it takes exactly 2) and fastmsg-bench-mcast on
    --ranks under fastmsg-run, with FM_PROVIDER's provider (shm unless set): each table as soon
    as its benchmark is done, then the plots. --quick: tiny counts, one repeat (a smoke run)."""
    provider = os.environ.get("FM_PROVIDER") or "sm"
    env = {"FM_PROVIDER": provider}
    reps = ["-r", "1" if args.quick else str(args.repeats)]
    start = time.monotonic()
    pp_counts = ["-i", "100", "-n", "5", "-w", "8", "--warmup", "1"] if args.quick else []
    out = run([tools.fm_run, "-n", "2", tools.fm_pp, "--min", "8", "--max", args.pp_max, "--csv"]
              + reps + pp_counts, env=env, timeout=600)
    pp = {int(r["size"]): {"fm_lat": num(r["latency_us"]), "fm_bw": num(r["bandwidth_MBps"])}
          for r in csv_rows(out)}
    pingpong_report(pp, [], args.out, provider)
    # The model's costs measured on this job; one kernel, so every member is timed from the
    # root's send, not from its own barrier exit (small sizes would show the barrier's skew).
    out = run([tools.fm_run, "-n", str(args.ranks), tools.fm_mcast, "--sizes", args.sizes,
               "--trees", ",".join(TREES), "--calibrate", "--common-clock", "--csv",
               "-i", "2" if args.quick else "100"] + reps, env=env, timeout=600)
    mc = [dict(r, who="fastmsg", hosts=args.ranks, bound_us=None) for r in csv_rows(out)]
    mcast_report(mc, args.out, lambda n: f"{n} ranks, one host, {provider}")
    if not args.no_plots:
        plots(pp, mc, [], None, args.out, provider)
    print(f"compare: the benchmarks took {time.monotonic() - start:.0f} s; CSV and plots are in "
          f"{args.out}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# Plots


def pyplot():
    """matplotlib's pyplot drawing to files, or None (said on stderr) when it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"compare: no plots: {sys.executable} has no matplotlib "
              "(apt-get install python3-matplotlib)", file=sys.stderr)
        return None
    return plt


def plots(pp, mc, mpis, rate, out_dir, provider="shm"):
    """PNGs of what ran; rate: the emulated links' rate, None for members on this host."""
    members = "hosts" if rate else "ranks"

    def place(n):
        return f"{n} hosts, {rate} links" if rate else f"{n} ranks, one host, {provider}"

    plt = pyplot()
    if not plt:
        return
    made = []

    def save(fig, name):
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        made.append(path)

    def new_axes(size):
        fig, ax = plt.subplots(figsize=size)
        ax.set_prop_cycle(color=plt.cm.tab20.colors)  # more series than tab10 has colours
        return fig, ax

    def loglog(ax, xlabel, ylabel, title):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)

    if pp:
        sizes = [s for s in sorted(pp) if s > 0]
        for what, unit, title, keys in (
                ("lat", "one-way latency (us)", f"ping-pong latency, one host, {provider}",
                 ["fm", "fi"] + mpis),
                ("bw", "bandwidth (MB/s)", f"ping-pong bandwidth, one host, {provider}",
                 ["fm", "fi"] + mpis)):
            fig, ax = new_axes((7, 4.5))
            for k in keys:
                ys = [pp[s].get(f"{k}_{what}") for s in sizes]
                pts = [(s, y) for s, y in zip(sizes, ys) if y]
                if pts:
                    label = {"fm": "fastmsg", "fi": "fi_pingpong"}.get(k, k)
                    ax.plot(*zip(*pts), marker="o", ms=3, label=label)
            loglog(ax, "message size (bytes)", unit, title)
            save(fig, f"pingpong_{what}.png")
    if mc:
        for n in sorted({r["hosts"] for r in mc}):
            fig, ax = new_axes((8, 5.5))
            series = sorted({mcast_key(r) for r in mc if r["hosts"] == n})
            for who, tree, mode in series:
                pts = sorted((int(r["size"]), num(r["completion_us"])) for r in mc
                             if r["hosts"] == n and mcast_key(r) == (who, tree, mode))
                label = tree if who == "fastmsg" else who + " MPI_Bcast"
                style = "--" if mode == "sf" else "-"
                ax.plot(*zip(*pts), style, marker=".", label=label + (" (s&f)" if mode == "sf"
                                                                        else ""))
            auto = sorted((int(r["size"]), num(r["model_us"]), r["bound_us"]) for r in mc
                          if r["hosts"] == n and mcast_key(r) == ("fastmsg", "auto", "fpfs"))
            if auto:
                ax.plot([a[0] for a in auto], [a[1] for a in auto], ":", color="black",
                        label="model (auto)")
                if rate:
                    ax.plot([a[0] for a in auto], [a[2] for a in auto], "-", color="grey",
                            linewidth=3, alpha=0.5, label="link-rate bound (auto)")
            loglog(ax, "message size (bytes)", "completion (us)", f"multicast to {place(n)}")
            ax.legend(fontsize=7, ncol=2)
            save(fig, f"mcast_{n}{members}.png")
        hosts = sorted({r["hosts"] for r in mc})
        big = max(int(r["size"]) for r in mc)
        # (against the member count: only when more than one count ran)
        for size in sorted({1 << 20, big}) if len(hosts) > 1 else []:
            fig, ax = new_axes((7, 4.5))
            for key in sorted({mcast_key(r) for r in mc}):
                if key[0] == "fastmsg" and key[1] not in ("auto", "binomial"):
                    continue
                pts = [(n, num(r["completion_us"])) for n in hosts
                       for r in [pick(mc, n, size, *key)] if r]
                if pts:
                    label = (key[1] if key[0] == "fastmsg" else key[0] + " MPI_Bcast") + \
                        (" (s&f)" if key[2] == "sf" else "")
                    ax.plot(*zip(*pts), marker="o", label=label)
            ax.set_xlabel("hosts")
            ax.set_ylabel("completion (us)")
            ax.set_title(f"multicast of {size_name(size)} vs hosts, {rate} links")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
            save(fig, f"mcast_vs_hosts_{size_name(size)}.png")
        n = max(hosts)
        rows = [r for r in mc if r["hosts"] == n and int(r["size"]) == big]
        if rows:
            fig, ax = plt.subplots(figsize=(9, 4.5))
            labels = [(r["tree"] if r["who"] == "fastmsg" else r["who"]) +
                      (" s&f" if r["mode"] == "sf" else "") for r in rows]
            lo = [num(r["min_member_us"]) or 0 for r in rows]
            hi = [num(r["max_member_us"]) or 0 for r in rows]
            ax.bar(range(len(rows)), [h - l for l, h in zip(lo, hi)], bottom=lo, alpha=0.6)
            # (markers too: members that finish within a few ms of each other make no bar)
            ax.plot(range(len(rows)), lo, "v", color="black", ms=4, label="first member")
            ax.plot(range(len(rows)), hi, "^", color="black", ms=4, label="last member")
            ax.legend(fontsize=8)
            ax.set_xticks(range(len(rows)))
            ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
            ax.set_ylabel("member completion (us): first to last")
            ax.set_title(f"per-member completion (skew), {size_name(big)} to {n} {members}")
            ax.grid(True, axis="y", alpha=0.3)
            save(fig, f"mcast_skew_{n}{members}.png")
    for p in made:
        print(f"compare: wrote {p}", file=sys.stderr)


def rack_place(r):
    """Where a row of concurrent or dag ran, for titles."""
    return f"{int(r['hosts'])} hosts in {int(r['racks'])} racks, links {r['rate']}"


def cc_dag_plots(cc, dg, out_dir, where):
    """concurrent_single.png (one multicast's completion), concurrent_all.png (every rank a
    root: aggregate rate), dag.png (makespan and uplink bytes per run)."""
    plt = pyplot()
    if not plt:
        return
    made = []

    def bars(ax, rows, key, ylabel, title):
        sizes = sorted({r["size"] for r in rows})
        series = sorted({(r["who"], r["method"]) for r in rows},
                        key=lambda x: (x[0] != "fastmsg", x))
        width = 0.8 / max(1, len(series))
        for i, (who, method) in enumerate(series):
            ys = [next((r[key] for r in rows if (r["who"], r["method"], r["size"]) ==
                        (who, method, s)), None) or 0 for s in sizes]
            ax.bar([j + i * width for j in range(len(sizes))], ys, width,
                   label=method if who == "fastmsg" else f"{who} {method}")
        ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(sizes))])
        ax.set_xticklabels([size_name(s) for s in sizes])
        ax.set_xlabel("message size")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)

    for roots, name, key, ylabel, title in (
            ("1", "concurrent_single.png", "each_us", "completion (us, slowest member)",
             "one multicast, random root and set"),
            ("all", "concurrent_all.png", "agg_MBps", "aggregate (MB/s)",
             "every rank a root at once")):
        sel = [r for r in cc if r["roots"] == roots]
        if sel:
            fig, ax = plt.subplots(figsize=(8, 4.5))
            bars(ax, sel, key, ylabel, f"{title}, K = {sel[0]['dests']}, {where}")
            path = os.path.join(out_dir, name)
            fig.savefig(path, dpi=110, bbox_inches="tight")
            plt.close(fig)
            made.append(path)
    if dg:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
        labels = [r["tree"] if r["who"] == "fastmsg" else f"{r['who']} p2p" for r in dg]
        a1.bar(range(len(dg)), [(r["makespan_us"] or 0) / 1000 for r in dg])
        a1.set_ylabel("makespan (ms, median)")
        a2.bar(range(len(dg)), [(r["uplink_per_run"] or 0) / 1e6 for r in dg],
               color="tab:orange")
        a2.set_ylabel("uplink MB per run")
        for ax in (a1, a2):
            ax.set_xticks(range(len(dg)))
            ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
            ax.grid(True, axis="y", alpha=0.3)
        fig.suptitle(f"DAG scheduler, {where}")
        path = os.path.join(out_dir, "dag.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        made.append(path)
    for p in made:
        print(f"compare: wrote {p}", file=sys.stderr)


def read_cc_dag(out_dir):
    """concurrent.csv and dag.csv of an earlier run as rows (empty when absent)."""
    cc, dg = [], []
    path = os.path.join(out_dir, "concurrent.csv")
    if os.path.exists(path):
        with open(path, newline="") as f:
            text = f.read()
        for r in csv.DictReader(io.StringIO(text)):
            cc.append({k: (v if k in ("who", "method", "roots", "rate") else
                           int(v) if k in ("hosts", "racks", "dests", "size", "rounds", "comms")
                           and v else num(v)) for k, v in r.items()})
    path = os.path.join(out_dir, "dag.csv")
    if os.path.exists(path):
        with open(path, newline="") as f:
            text = f.read()
        for r in csv.DictReader(io.StringIO(text)):
            dg.append({k: (v if k in ("who", "tree", "checksum", "rate") else num(v))
                       for k, v in r.items()})
    return cc, dg


def replot(args):
    """The plots again from the CSV files of an earlier run."""
    pp, mc, mpis = {}, [], []
    path = os.path.join(args.replot, "pingpong.csv")
    if os.path.exists(path):
        for r in csv.DictReader(open(path)):
            pp[int(r["size"])] = {k: num(v) for k, v in r.items() if k != "size"}
        mpis = [m for m in MPIS if any(f"{m}_lat" in row for row in pp.values())]
    path = os.path.join(args.replot, "mcast.csv")
    if os.path.exists(path):
        for r in csv.DictReader(open(path)):
            r["hosts"] = int(r["hosts"])
            r["bound_us"] = num(r["bound_us"])
            mc.append(r)
    # A local run's rows have no link-rate bound: their members were ranks on this host.
    rate = args.rate if any(r["bound_us"] is not None for r in mc) else None
    if pp or mc:
        plots(pp, mc, mpis, rate, args.replot)
    cc, dg = read_cc_dag(args.replot)
    if cc or dg:
        cc_dag_plots(cc, dg, args.replot, rack_place((cc or dg)[0]))


def sim(args, what):
    """compare.py sim: bench/sim/run's CSV files read back and reported (sim_report.py)."""
    sys.path.insert(0, HERE)
    import sim_report
    if len(what) > 1 or not args.sim_csv:
        fail("sim runs alone and needs --sim-csv LABEL=FILE (bench/sim/run --csv's output)")
    rows = []
    for spec in args.sim_csv:
        label, eq, path = spec.partition("=")
        if not eq or not label or not os.path.isfile(path):
            fail(f"--sim-csv {spec}: want LABEL=FILE of an existing file")
        try:
            rows += sim_report.read_rows(label, path)
        except (ValueError, KeyError) as e:
            fail(str(e))
    if not rows:
        fail("no rows in " + ", ".join(args.sim_csv))
    sim_report.report(rows, args.out or "compare-out", not args.no_plots)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="*",
                    help="pingpong, mcast, concurrent, dag (default pingpong and mcast), or "
                    "local or sim alone")
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR", os.path.join(TOP, "build")))
    ap.add_argument("--out", help="CSV and PNG go here (default compare-out; local: "
                    "bench/results/local)")
    ap.add_argument("-r", "--repeats", type=int,
                    help="medians of this many (default 3; local: 5)")
    ap.add_argument("--pp-max", help="largest ping-pong size (default 4M; local: 1M)")
    ap.add_argument("--pp-provider", default="sm", choices=["sm", "shm"],
                    help="fastmsg's provider for the ping-pong (default sm, fastmsg's own shared "
                         "memory; fi_pingpong always runs over libfabric's shm)")
    ap.add_argument("--hosts", default="4,8,16", help="emulated cluster sizes")
    ap.add_argument("--rate", help="link rate of every emulated host (default 1gbit; "
                    "concurrent and dag alone: 100mbit)")
    ap.add_argument("--burst", help="the host links' shaper bucket, bytes (cluster.sh's "
                    "default: 2 ms of the rate)")
    ap.add_argument("--racks", type=int, default=4,
                    help="concurrent, dag: racks of the cluster (default 4), on the largest "
                    "of --hosts")
    ap.add_argument("--dests", type=int, default=8,
                    help="concurrent: K, the destinations of each multicast (default 8)")
    ap.add_argument("-i", "--iters", type=int,
                    help="concurrent: -i of the benchmarks (default 3; --quick: 1)")
    ap.add_argument("--dag", default="", metavar="ARGS",
                    help="dag: the DAG's options for both programs, e.g. '--tasks 500 "
                    "--bytes 64K' (default: the programs' default DAG)")
    ap.add_argument("--sizes", help="multicast sizes (comma-separated, K/M suffixes; default "
                    "8,64,512,4K,32K,256K,1M,4M,16M; local: " + LOCAL_SIZES + ")")
    ap.add_argument("--ranks", type=int, default=4, help="local: ranks of the multicast")
    ap.add_argument("--quick", action="store_true",
                    help="local, concurrent, dag: tiny counts and one repeat, to see that it "
                    "all runs")
    ap.add_argument("--prefix", default="fmcmp", help="namespace names of the cluster")
    ap.add_argument("--sim-csv", action="append", default=[], metavar="LABEL=FILE",
                    help="sim: a platform's CSV from bench/sim/run --csv (label fattree for "
                    "the fat tree's targets)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--replot", metavar="DIR",
                    help="only draw the plots again from DIR's pingpong.csv, mcast.csv, "
                    "concurrent.csv and dag.csv")
    args = ap.parse_args()
    if args.replot:
        replot(args)
        return
    what = set(args.what) or {"pingpong", "mcast"}
    if "sim" in what:
        sim(args, what)
        return
    racked = what & {"concurrent", "dag"}
    if what - {"pingpong", "mcast", "concurrent", "dag", "local"} or \
            "local" in what and len(what) > 1:
        fail(f"unknown comparison {' '.join(args.what)} (pingpong, mcast, concurrent, dag, or "
             "local alone)")
    is_local = "local" in what
    args.out = args.out or (os.path.join(HERE, "results", "local") if is_local else "compare-out")
    if args.repeats is None:
        args.repeats = 1 if args.quick and racked else 5 if is_local else 3
    args.pp_max = args.pp_max or ("1M" if is_local else "4M")
    # (issue 18's targets are at 64 KiB and 1 MiB)
    args.sizes = args.sizes or (LOCAL_SIZES if is_local or what <= racked else
                                "8,64,512,4K,32K,256K,1M,4M,16M")
    args.rate = args.rate or ("100mbit" if what <= racked else "1gbit")
    args.iters = args.iters or (1 if args.quick else 3)
    if args.repeats < 1 or args.iters < 1:
        fail("-r and -i take a positive number")
    if racked and (args.racks < 1 or args.dests < 1):
        fail("--racks and --dests take a positive number")
    for s in args.sizes.split(","):
        size_bytes(s)
    rate_bytes_per_s(args.rate)
    hosts = [int(h) for h in args.hosts.split(",") if h.strip()]
    if any(h < 2 for h in hosts):
        fail("--hosts: every cluster needs at least 2 hosts")
    tools = Tools(os.path.abspath(args.build))
    os.makedirs(args.out, exist_ok=True)
    if is_local:
        if args.ranks < 2:
            fail("--ranks: a multicast needs at least 2 ranks")
        local(tools, args)
        return
    pp, mc = {}, []
    if "pingpong" in what:
        pp = pingpong(tools, args)
        pingpong_report(pp, ["fi"] + tools.mpis, args.out, args.pp_provider)
    if "mcast" in what:
        packet = tools.packet_size({"FM_PROVIDER": "tcp"})
        for n in hosts:
            mc += mcast(tools, args, n, packet)
        mcast_report(mc, args.out, lambda n: f"{n} emulated hosts, links {args.rate}")
        targets(mc, tools.mpis)
    cc, dg = [], []
    if racked:
        n = max(hosts)
        if "dag" in what and args.quick and not args.dag:
            args.dag = "--tasks 200"  # (a smoke run: a small DAG)
        with Cluster(tools, n, args.rate, args.prefix, args.racks, args.burst) as cl:
            place = rack_place({"hosts": n, "racks": args.racks, "rate": args.rate})
            if "concurrent" in what:
                cc = concurrent(tools, args, cl)
                concurrent_report(cc, args.out, place)
            if "dag" in what:
                dg = dag(tools, args, cl)
                dag_report(dg, args.out, place)
        print_targets(issue18_targets(cc, dg), f"issue 18's targets, {place}, shaper burst "
                      f"{args.burst or '2 ms of the rate'}")
    if not args.no_plots:
        if pp or mc:
            plots(pp, mc, tools.mpis, args.rate, args.out)
        if cc or dg:
            cc_dag_plots(cc, dg, args.out, place)


if __name__ == "__main__":
    main()
