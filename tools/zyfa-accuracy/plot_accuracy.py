#!/usr/bin/env python3
"""Plot zyfa-accuracy's CSV: relative RMS error against fp64 versus seqlen, one line per scheme.

usage: plot_accuracy.py accuracy.csv out.png   (or out.svg)
One panel per (distribution, head dims): kernel-only errors of BF16, NAIVE, EXACT, LEAN and LEAN's
ablations, and the end-to-end errors of EXACT and LEAN with and without the Hadamard rotation.
Needs matplotlib: pip install matplotlib (or, on Debian/Ubuntu, apt-get install python3-matplotlib).
"""
import csv
import sys
from collections import defaultdict

try:
    import matplotlib
except ImportError:
    sys.exit("plot_accuracy.py needs matplotlib: pip install matplotlib "
             "(or, on Debian/Ubuntu, apt-get install python3-matplotlib)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

KERNEL = ["BF16", "NAIVE", "EXACT", "LEAN", "LEAN-P", "LEAN-P+blockscale", "LEAN-P+rowsum"]
E2E = [("e2e", "EXACT"), ("e2e", "LEAN"), ("e2e-hadamard", "EXACT"), ("e2e-hadamard", "LEAN")]


def main(csv_path, out_path):
    series = defaultdict(dict)  # (dist, dims) -> {(inputs, scheme): {seqlen: err}}
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            panel = (row["dist"], f'{row["head_dim_qk"]}/{row["head_dim_v"]}')
            series[panel].setdefault((row["inputs"], row["scheme"]), {})[int(row["seqlen"])] = float(row["rel_rms"])
    panels = sorted(series)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        lines = series[panel]
        for scheme in KERNEL:
            pts = lines.get(("kernel", scheme))
            if pts:
                xs = sorted(pts)
                style = "-" if scheme in ("NAIVE", "EXACT", "LEAN", "BF16") else ":"
                ax.plot(xs, [pts[x] for x in xs], style, marker="o", ms=3, label=f"kernel {scheme}")
        for inputs, scheme in E2E:
            pts = lines.get((inputs, scheme))
            if pts:
                xs = sorted(pts)
                ax.plot(xs, [pts[x] for x in xs], "--", marker="s", ms=3, label=f"{inputs} {scheme}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("seqlen (causal)")
        ax.set_ylabel("relative RMS error of O vs fp64")
        ax.set_title(f"{panel[0]}, head dims {panel[1]}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(out_path, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
