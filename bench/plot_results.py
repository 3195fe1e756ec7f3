#!/usr/bin/env python3
"""Renders bench/run_benchmark.py's CSV as a PNG: TFLOP/s versus seqlen for the causal head-dim-128
sweep, one line per implementation; the MLA, head-dim-64, GQA and head-dim-256 shapes as labelled points at
their seqlen.

    python3 bench/plot_results.py bench.csv bench.png [--title TEXT]
"""
import argparse
import csv
import sys

STYLE = {  # implementation -> (label, colour, line style)
    "zyfa_fp8_lean": ("zyfa FP8 LEAN", "tab:red", "-"),
    "zyfa_fp8_exact": ("zyfa FP8 EXACT", "tab:orange", "-"),
    "zyfa_bf16": ("zyfa BF16", "tab:blue", "-"),
    "triton_fp8": ("Triton FP8 (anchor)", "tab:brown", "--"),
    "sdpa_cudnn_bf16": ("SDPA cuDNN BF16", "tab:green", "--"),
    "sdpa_flash_bf16": ("SDPA flash BF16", "tab:purple", "--"),
}
SWEEP = "causal hd128"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["tflops"] and r["status"] == "ok"]
    seen = set()
    unique = []
    for r in rows:  # the CSV repeats a row once per extra anchor
        key = (r["shape"], r["seqlen"], r["impl"])
        if key not in seen:
            seen.add(key)
            unique.append(r)

    fig, ax = plt.subplots(figsize=(9, 5.5))
    for impl, (label, colour, line) in STYLE.items():
        pts = sorted((int(r["seqlen"]), float(r["tflops"])) for r in unique if r["impl"] == impl and r["shape"] == SWEEP)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], line, color=colour, marker="o", label=label)
        for r in unique:
            if r["impl"] == impl and r["shape"] != SWEEP:
                marker = ("^" if "MLA" in r["shape"] else "D" if "hd64" in r["shape"] else
                          "v" if "hd256" in r["shape"] else "s")
                ax.scatter([int(r["seqlen"])], [float(r["tflops"])], color=colour, marker=marker, s=40, zorder=3)
    ax.scatter([], [], color="grey", marker="^", label="head dim 192/128 (MLA)")
    ax.scatter([], [], color="grey", marker="D", label="head dim 64, 32 heads")
    ax.scatter([], [], color="grey", marker="s", label="GQA 32/8, hd128")
    ax.scatter([], [], color="grey", marker="v", label="head dim 256")
    ax.set_xscale("log", base=2)
    seqlens = sorted({int(r["seqlen"]) for r in unique})
    ax.set_xticks(seqlens)
    ax.set_xticklabels(["%dK" % (s // 1024) if s >= 1024 else str(s) for s in seqlens])
    ax.set_xlabel("sequence length (causal; batch x seqlen = const tokens)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title(args.title or "zyfa vs anchors, causal attention forward (%s)" % (rows[0]["zyfa_api"] if rows else ""))
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print("wrote %s (%d points)" % (args.png, len(unique)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
