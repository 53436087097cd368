# SPDX-License-Identifier: BSD-3-Clause
"""compare.py sim: the simulated runs (bench/sim/run --csv) side by side.

Reads the CSV that bench/sim/run printed, one file per platform (fastmsg-bench-mcast's rows
and the SMPI MPI_Bcast program's, whose tree is "smpi-bcast" and resolved the algorithm),
and prints per platform and size a table of completion against ranks, one column per
fastmsg tree and SMPI algorithm; then issue 22's targets, each met or NOT met with its
figure; writes the rows to sim.csv and, with python3-matplotlib, completion against ranks
(log scale) per platform and size to sim-PLATFORM-SIZE.png.
"""
import csv
import os

SMPI = "smpi-bcast"
TOL = 0.10  # the targets' "within 10 %"


def read_rows(label, path):
    """Data rows of one file (run repeats the header before each program's rows), each with
    its platform label and numbers as numbers."""
    rows, header = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cells = next(csv.reader([line]))
            if cells[0] == "provider":
                header = cells
                continue
            if header is None or len(cells) != len(header):
                raise ValueError(f"{path}: a row without its header: {line.strip()}")
            r = dict(zip(header, cells))
            r["platform"] = label
            r["ranks"], r["size"] = int(r["ranks"]), int(r["size"])
            r["completion_us"] = float(r["completion_us"])
            r["model_us"] = float(r["model_us"]) if r["model_us"] not in ("", "-") else None
            rows.append(r)
    return rows


def column(r):
    """A row's column: the SMPI algorithm, or fastmsg's tree (and its mode if not FPFS)."""
    if r["tree"] == SMPI:
        return "SMPI " + r["resolved"]
    return r["tree"] if r["mode"] in ("fpfs", "") else f"{r['tree']} ({r['mode']})"


def cells(rows):
    """{(platform, size, ranks): {column: row}}."""
    out = {}
    for r in rows:
        out.setdefault((r["platform"], r["size"], r["ranks"]), {})[column(r)] = r
    return out


def fm_trees(cols):
    """fastmsg's FPFS trees among a cell's columns (what auto chooses among)."""
    return [c for c in cols if not c.startswith("SMPI ") and " (" not in c]


def targets(rows):
    """Issue 22's targets as (met, text) pairs, from the fat tree's rows where it ran, else
    every platform's."""
    fat = [r for r in rows if r["platform"] == "fattree"]
    where = "fat tree" if fat else "all platforms"
    fat = fat or rows
    out = []
    modeled = [r for r in fat if r["tree"] != SMPI and r["model_us"] and r["completion_us"] > 0]
    if modeled:
        good = sum(abs(r["model_us"] / r["completion_us"] - 1) <= TOL for r in modeled)
        share = good / len(modeled)
        out.append((share >= 0.9, f"{where}: model within 10 % of simulated in "
                    f"{good} of {len(modeled)} cells ({share:.0%}; target 90 %)"))
    autos = []
    for (plat, size, n), cols in sorted(cells(fat).items()):
        trees = [c for c in fm_trees(cols) if c != "auto"]
        if "auto" in cols and trees:
            best = min(cols[c]["completion_us"] for c in trees)
            autos.append(cols["auto"]["completion_us"] <= best * (1 + TOL))
    if autos:
        share = sum(autos) / len(autos)
        out.append((share >= 0.9, f"{where}: auto within 10 % of the best tree in "
                    f"{sum(autos)} of {len(autos)} cells ({share:.0%}; target 90 %)"))
    at1024 = {k: v for k, v in cells(fat).items() if k[2] == 1024}
    for (plat, size, n), cols in sorted(at1024.items()):
        mpi = [c for c in cols if c.startswith("SMPI ")]
        if "auto" not in cols or not mpi:
            continue
        best = min(mpi, key=lambda c: cols[c]["completion_us"])
        speedup = cols[best]["completion_us"] / cols["auto"]["completion_us"]
        want = 1.3 if size == 1 << 20 else 1.0
        out.append((speedup >= want, f"{plat}, 1024 ranks, {size} B: {best} / auto = "
                    f"{speedup:.2f} (target at least {want})"))
    return out


def report(rows, out_dir, plots=True):
    """Tables and targets on stdout; sim.csv (and plots) into out_dir. Returns the targets."""
    by = cells(rows)
    for plat in sorted({k[0] for k in by}):
        for size in sorted({k[1] for k in by if k[0] == plat}):
            keys = sorted(k for k in by if k[0] == plat and k[1] == size)
            cols = sorted({c for k in keys for c in by[k]}, key=lambda c: (c.startswith("SMPI"), c))
            print(f"\n# {plat}, {size} B: completion (us) against ranks")
            print("ranks," + ",".join(cols))
            for k in keys:
                print(f"{k[2]}," + ",".join(
                    f"{by[k][c]['completion_us']:.2f}" if c in by[k] else "-" for c in cols))
    got = targets(rows)
    print("\n# issue 22's targets")
    for ok, text in got:
        print(f"{'    met' if ok else 'NOT met'}  {text}")
    os.makedirs(out_dir, exist_ok=True)
    fields = ["platform", "ranks", "size", "tree", "resolved", "mode", "completion_us",
              "model_us"]
    with open(os.path.join(out_dir, "sim.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    if plots:
        draw(by, out_dir)
    return got


def draw(by, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("# no plots: python3-matplotlib is not installed")
        return
    for plat, size in sorted({(k[0], k[1]) for k in by}):
        keys = sorted(k for k in by if k[0] == plat and k[1] == size)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for c in sorted({c for k in keys for c in by[k]}):
            pts = [(k[2], by[k][c]["completion_us"]) for k in keys if c in by[k]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    linestyle="--" if c.startswith("SMPI") else "-", label=c)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("completion (us)")
        ax.set_title(f"{plat}, {size} B (simulated)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"sim-{plat}-{size}.png"))
        plt.close(fig)
