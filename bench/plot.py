#!/usr/bin/env python3
"""Summarise elastodyn Bench JSON files (DESIGN.md format) as Markdown tables, and plot them.

usage: python3 bench/plot.py FILE.json [FILE.json ...] [--out-dir DIR]

Prints one Markdown table per file to stdout (standard library only). With matplotlib
installed it also writes DIR/<backend>_assembly.png (stage times per case, stacked, with the
peer's time) and DIR/<backend>_spmv.png (SpMV time and achieved bandwidth against the peers);
without matplotlib it says so on stderr and still exits 0.
"""
import json
import os
import sys

STAGES = ["count", "bin_offsets", "alloc", "columns", "maps", "element", "summation"]


def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def baseline_total(case):
    b = case.get("baseline", {})
    m = b.get("median_ms")
    if isinstance(m, dict):
        return m.get("total")
    return m


def assembly_table(doc):
    rows = ["| mesh | tets | p | method | " + " | ".join(STAGES) +
            " | total | summation only | peer | peer total | peak/(matrix+maps+mesh) |",
            "|" + "---|" * (len(STAGES) + 9)]
    for c in doc["cases"]:
        if "skipped" in c:
            rows.append(f"| {c['mesh']} | {c['tets']} | {c['order']} | {c.get('method', '')} | "
                        f"skipped: {c['skipped']} |")
            continue
        m = c["median_ms"]
        b = c.get("bytes", {})
        rows.append("| " + " | ".join([
            c["mesh"], str(c["tets"]), str(c["order"]), c["method"],
            *[fmt(m.get(s)) for s in STAGES], fmt(m.get("total")), fmt(m.get("summation_only")),
            c.get("baseline", {}).get("name", "-"), fmt(baseline_total(c)),
            fmt(b.get("peak_over_matrix_maps_mesh"))]) + " |")
    return "\n".join(rows)


def spmv_table(doc):
    rows = ["| mesh | tets | p | nnz blocks | ours ms | GB/s | peer | peer ms | speedup | "
            "CSR ms | frac. of copy BW |", "|" + "---|" * 11]
    for c in doc["cases"]:
        if "skipped" in c:
            rows.append(f"| {c['mesh']} | {c['tets']} | {c['order']} | skipped: {c['skipped']} |")
            continue
        b = c.get("baseline", {})
        sp = c.get("speedup", {})
        speed = sp.get("over_bsr", sp.get("over_eigen"))
        rows.append("| " + " | ".join([
            c["mesh"], str(c["tets"]), str(c["order"]), str(c["nnz_blocks"]),
            fmt(c["median_ms"]["spmv"]), fmt(c.get("bandwidth_gbps")), b.get("name", "-"),
            fmt(b.get("median_ms")), fmt(speed),
            fmt(c.get("baseline_csr", {}).get("median_ms")),
            fmt(c.get("fraction_of_copy_bandwidth"))]) + " |")
    return "\n".join(rows)


def plot_assembly(plt, doc, path):
    cases = [c for c in doc["cases"] if "skipped" not in c and c["method"] == "per_entry"]
    if not cases:
        return
    labels = [f"{c['tets'] // 1000}K p{c['order']}" for c in cases]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    bottom = [0.0] * len(cases)
    for s in STAGES:
        vals = [c["median_ms"].get(s) or 0.0 for c in cases]
        ax.bar(labels, vals, bottom=bottom, label=s)
        bottom = [a + b for a, b in zip(bottom, vals)]
    peer = [baseline_total(c) for c in cases]
    ax.plot(labels, [p if p is not None else float("nan") for p in peer], "k*", markersize=10,
            label=cases[0]["baseline"]["name"])
    ax.set_yscale("log")
    ax.set_ylabel("median ms")
    ax.set_title(f"first assembly, per-entry ({doc['device']})")
    ax.tick_params(axis="x", rotation=60)
    ax.legend(fontsize=7)
    width = 0.27
    xs = range(len(cases))
    for i, key in enumerate(["bin_bcsr", "bsr", "csr"]):
        ax2.bar([x + (i - 1) * width for x in xs], [c["bytes"].get(key, 0) / 2**20 for c in cases],
                width, label=key)
    peaks = [c["bytes"].get("peak_device") for c in cases]
    if any(p is not None for p in peaks):
        ax2.plot(list(xs), [p / 2**20 if p else float("nan") for p in peaks], "k_", markersize=14,
                 label="peak device (ours)")
    ax2.set_xticks(list(xs))
    ax2.set_xticklabels(labels, rotation=60)
    ax2.set_yscale("log")
    ax2.set_ylabel("MiB")
    ax2.set_title("matrix memory")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_spmv(plt, doc, path):
    cases = [c for c in doc["cases"] if "skipped" not in c]
    if not cases:
        return
    labels = [f"{c['tets'] // 1000}K p{c['order']}" for c in cases]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    xs = list(range(len(cases)))
    ax.plot(xs, [c["median_ms"]["spmv"] for c in cases], "o-", label="Bin-BCSR*")
    ax.plot(xs, [c["baseline"]["median_ms"] for c in cases], "s--", label=cases[0]["baseline"]["name"])
    if "baseline_csr" in cases[0]:
        ax.plot(xs, [c["baseline_csr"]["median_ms"] for c in cases], "^:", label="cusparse_csr_spmv")
    ax.set_yscale("log")
    ax.set_ylabel("median ms per SpMV")
    ax.set_xticks(xs)
    ax.set_xticklabels(labels, rotation=60)
    ax.set_title(f"SpMV ({doc['device']})")
    ax.legend(fontsize=8)
    ax2.plot(xs, [c.get("bandwidth_gbps") for c in cases], "o-", label="Bin-BCSR* (byte floor / time)")
    ax2.plot(xs, [c["baseline"].get("bandwidth_gbps") for c in cases], "s--", label=cases[0]["baseline"]["name"])
    if "copy_bandwidth_gbps" in doc:
        ax2.axhline(doc["copy_bandwidth_gbps"], color="k", linestyle=":", label="D2D copy")
    ax2.set_ylabel("GB/s")
    ax2.set_xticks(xs)
    ax2.set_xticklabels(labels, rotation=60)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    out_dir = "."
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--out-dir" and i + 1 < len(argv):
            out_dir = argv[i + 1]
            i += 2
        else:
            files.append(argv[i])
            i += 1
    if not files:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    docs = []
    for f in files:
        try:
            with open(f) as fh:
                docs.append(json.load(fh))
        except (OSError, ValueError) as e:
            print(f"plot.py: {f}: {e}", file=sys.stderr)
            return 3
    for f, d in zip(files, docs):
        print(f"### {d['benchmark']} / {d['backend']} / {d['device']} (commit {d['commit']}"
              f"{'' if d.get('complete', True) else ', INCOMPLETE'})\n")
        print(assembly_table(d) if d["benchmark"] == "assembly" else spmv_table(d))
        print()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib not available; tables only", file=sys.stderr)
        return 0
    os.makedirs(out_dir, exist_ok=True)
    for d in docs:
        name = os.path.join(out_dir, f"{d['backend']}_{d['benchmark']}.png")
        (plot_assembly if d["benchmark"] == "assembly" else plot_spmv)(plt, d, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
