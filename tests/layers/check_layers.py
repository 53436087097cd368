#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Which layer may use which: every include (the compiler's own dependency output, as ninja
recorded it, so a relative #include "../mcast/x.h" counts too) and every symbol a layer's
objects leave undefined (nm) is checked against LAYERS below. Then the structure graph (a
module is a .c with its same-named .h; an edge is an include or a call) must have no cycle
outside the core: the core's credit-and-progress engine is the one cycle allowed.

usage: check_layers.py BUILD_DIR SOURCE_DIR [--inject FROM_FILE:TO_FILE ...]
--inject adds a fake include edge (paths relative to SOURCE_DIR), to show that the check fails.
Exit 0 when every edge is allowed and no cycle leaves the core, 1 otherwise."""
import os
import subprocess
import sys

# layer -> the layers it may use (besides itself). api is fastmsg.h, config the generated
# fm_build_config.h; a layer that may use api may call fastmsg.h's calls wherever they are.
BASE = {"api", "config"}
LAYERS = {
    "util": BASE,
    "providers": BASE | {"util"},
    "boot": BASE | {"util"},
    "topo": BASE | {"util"},
    "core": BASE | {"util", "providers", "boot", "topo"},
    "services": BASE | {"util", "providers", "boot", "topo", "core"},
    "trees": BASE | {"util", "prefix"},
    "prefix": BASE | {"util"},
    "mcast": BASE | {"util", "providers", "boot", "topo", "core", "services", "trees", "prefix"},
    "init": BASE | {"util", "providers", "boot", "topo", "core", "services", "trees", "prefix",
                    "mcast"},
    "ev": BASE,
    "launcher": BASE | {"util", "boot"},
    "tools": BASE | {"util", "providers", "boot", "topo", "core", "services", "trees", "prefix",
                     "mcast"},
}
# First match wins: longer prefixes first.
PREFIXES = [
    ("runtime/mcast/trees/", "trees"),
    ("runtime/mcast/prefix/", "prefix"),
    ("runtime/util/", "util"),
    ("runtime/boot/", "boot"),
    ("runtime/topo/", "topo"),
    ("runtime/core/", "core"),
    ("runtime/mcast/", "mcast"),
    ("runtime/services/", "services"),
    ("runtime/ev/", "ev"),
    ("runtime/launcher/", "launcher"),
    ("runtime/tools/", "tools"),
    ("runtime/init.c", "init"),
    ("providers/", "providers"),
    ("api/", "api"),
]
CYCLE_ROOM = "runtime/core/"  # where a cycle may remain


def layer_of(rel):
    for prefix, name in PREFIXES:
        if rel.startswith(prefix):
            return name
    return None


def read_deps(build, src):
    """{object path: (source rel path, [project files it includes, rel to src or 'config'])}"""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], check=True, capture_output=True,
                         text=True).stdout
    objs, cur = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            cur = line.split(":")[0]
            objs[cur] = []
        elif line.strip() and cur:
            objs[cur].append(line.strip())
    result = {}
    for obj, deps in objs.items():
        if not deps:
            continue
        rels = []
        for d in deps:
            path = os.path.realpath(os.path.join(build, d))
            if path.startswith(os.path.realpath(src) + os.sep):
                rels.append(os.path.relpath(path, os.path.realpath(src)))
            elif path.startswith(os.path.realpath(build) + os.sep):
                rels.append("config")
        if rels and layer_of(rels[0]) and not rels[0].endswith(".h"):
            result[os.path.join(build, obj)] = (rels[0], rels[1:])
    return result


def symbols(obj):
    """(defined, undefined, public): the object's global symbols; public are the defined ones
    with default visibility, i.e. fastmsg.h's calls (the library builds hidden otherwise)."""
    out = subprocess.run(["nm", "-g", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in "Uvw":
            defined.add(parts[2])
    out = subprocess.run(["readelf", "-sW", obj], check=True, capture_output=True,
                         text=True).stdout
    public = set()
    for line in out.splitlines():
        parts = line.split()  # Num Value Size Type Bind Vis Ndx Name
        if len(parts) == 8 and parts[5] == "DEFAULT" and parts[6] != "UND" and parts[7] in defined:
            public.add(parts[7])
    return defined, undefined, public


def module(rel):
    return "config" if rel == "config" else os.path.splitext(rel)[0]


def sccs(graph):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph.get(w, ()))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    build, src = argv[1], argv[2]
    injected = [a.split(":", 1) for a in argv[4::2]] if "--inject" in argv else []
    objs = read_deps(build, src)
    for frm, to in injected:
        for obj, (source, incs) in objs.items():
            if source == frm:
                incs.append(to)
    bad = []
    graph = {}
    defs, undefs, public = {}, {}, set()
    for obj, (source, incs) in objs.items():
        a = layer_of(source)
        for inc in incs:
            b = "config" if inc == "config" else layer_of(inc)
            if b and b != a and b not in LAYERS[a]:
                bad.append(f"include: {source} ({a}) includes {inc} ({b})")
            if b and inc != "config":
                graph.setdefault(module(source), set()).add(module(inc))
        d, u, p = symbols(obj)
        defs[obj], undefs[obj] = d, u
        public |= p
    where = {}  # symbol -> defining source
    for obj, d in defs.items():
        for sym in d:
            where.setdefault(sym, objs[obj][0])
    for obj, u in undefs.items():
        source = objs[obj][0]
        a = layer_of(source)
        for sym in sorted(u):
            if sym not in where:
                continue  # libc, libfabric, ...
            b = layer_of(where[sym])
            if b != a and b not in LAYERS[a] and not (sym in public and "api" in LAYERS[a]):
                bad.append(f"symbol: {source} ({a}) uses {sym} of {where[sym]} ({b})")
            graph.setdefault(module(source), set()).add(module(where[sym]))
    for m in graph:
        graph[m].discard(m)
    cycles = [c for c in sccs(graph) if len(c) > 1]
    for c in cycles:
        inside = all(m.startswith(CYCLE_ROOM) for m in c)
        kind = "allowed: the core engine" if inside else "NOT ALLOWED"
        print(f"cycle ({kind}, {len(c)} modules): {' '.join(c)}")
        if not inside:
            bad.append(f"cycle outside {CYCLE_ROOM}: {' '.join(c)}")
    layers = sorted({layer_of(s) for s, _ in objs.values()})
    print(f"checked {len(objs)} objects in {len(layers)} layers ({', '.join(layers)}), "
          f"{sum(len(i) for _, i in objs.values())} includes, "
          f"{sum(len(u) for u in undefs.values())} undefined symbols")
    for b in bad:
        print("NOT ALLOWED " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
