#!/usr/bin/env python3
"""Renders bench/run_benchmark.py's CSV as a PNG with two panels: left, TFLOP/s versus seqlen for the
causal head-dim-128 sweep, one line per implementation; right, the other shapes (MLA, head dim 64, GQA,
head dim 256), which all share one seqlen, as grouped bars next to the sweep's point at that seqlen.

    python3 bench/plot_results.py bench.csv bench.png [--title TEXT]

Needs matplotlib: pip install matplotlib (or, on Debian/Ubuntu, apt-get install python3-matplotlib).
"""
import argparse
import csv
import sys

STYLE = {  # implementation -> (label, colour, line style)
    "zyfa_fp8_lean": ("zyfa FP8 LEAN", "tab:red", "-"),
    "zyfa_fp8_exact": ("zyfa FP8 EXACT", "tab:orange", "-"),
    "zyfa_int8_lean": ("zyfa INT8 Q/K LEAN", "tab:pink", "-"),
    "zyfa_bf16": ("zyfa BF16", "tab:blue", "-"),
    "triton_fp8": ("Triton FP8 (anchor)", "tab:brown", "--"),
    "cudnn_fp8": ("cuDNN FP8 (e4m3 out)", "tab:olive", "--"),
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

    try:
        import matplotlib
    except ImportError:
        sys.exit("plot_results.py needs matplotlib: pip install matplotlib "
                 "(or, on Debian/Ubuntu, apt-get install python3-matplotlib)")
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

    impls = [impl for impl in STYLE if any(r["impl"] == impl for r in unique)]
    # The extra shapes sit at one or a few seqlens; on a seqlen axis they would crowd onto one x
    # position, so they get a panel of grouped bars, with the sweep's point at the same seqlen first.
    extra_keys = []
    for r in unique:
        if r["shape"] != SWEEP and (r["shape"], r["seqlen"]) not in extra_keys:
            extra_keys.append((r["shape"], r["seqlen"]))
    extra_seqlens = sorted({seqlen for _, seqlen in extra_keys}, key=int)
    groups = [(SWEEP, s) for s in extra_seqlens if any(r["shape"] == SWEEP and r["seqlen"] == s for r in unique)]
    groups += extra_keys

    fig, axes = plt.subplots(1, 2 if groups else 1, figsize=(14 if groups else 9, 5.5), squeeze=False,
                             gridspec_kw={"width_ratios": [1, 1.15]} if groups else None)
    ax = axes[0][0]
    for impl in impls:
        label, colour, line = STYLE[impl]
        pts = sorted((int(r["seqlen"]), float(r["tflops"])) for r in unique if r["impl"] == impl and r["shape"] == SWEEP)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], line, color=colour, marker="o", label=label)
    ax.set_xscale("log", base=2)
    seqlens = sorted({int(r["seqlen"]) for r in unique if r["shape"] == SWEEP})
    ax.set_xticks(seqlens)
    ax.set_xticklabels(["%dK" % (s // 1024) if s >= 1024 else str(s) for s in seqlens])
    ax.minorticks_off()
    ax.set_xlabel("sequence length (causal; batch x seqlen = const tokens)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_title("%s: batch x seqlen sweep" % SWEEP, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")

    if groups:
        bx = axes[0][1]
        width = 0.8 / max(len(impls), 1)
        for j, impl in enumerate(impls):
            label, colour, line = STYLE[impl]
            xs, ys = [], []
            for i, (shape, seqlen) in enumerate(groups):
                hit = [r for r in unique if r["impl"] == impl and r["shape"] == shape and r["seqlen"] == seqlen]
                if hit:
                    xs.append(i - 0.4 + width * (j + 0.5))
                    ys.append(float(hit[0]["tflops"]))
            bx.bar(xs, ys, width, color=colour, label=label, hatch="//" if line == "--" else None,
                   edgecolor="white", linewidth=0.5)
        names = []
        for shape, seqlen in groups:
            r = next(r for r in unique if r["shape"] == shape and r["seqlen"] == seqlen)
            s = int(seqlen)
            name = shape.replace("causal ", "") + (" (sweep)" if shape == SWEEP else "")
            names.append("%s\nb%s h%s/%s s%s" % (name, r["batch"], r["heads_q"], r["heads_kv"],
                                                "%dK" % (s // 1024) if s >= 1024 else s))
        bx.set_xticks(range(len(groups)))
        bx.set_xticklabels(names, fontsize=8)
        bx.set_ylabel("TFLOP/s")
        top = max(float(r["tflops"]) for r in unique if (r["shape"], r["seqlen"]) in groups)
        bx.set_ylim(0, top * 1.25)  # headroom above the tallest bar for the legend
        bx.grid(True, axis="y", alpha=0.3)
        bx.set_title("other shapes (causal), each at its seqlen", fontsize=10)
        bx.legend(fontsize=7, loc="upper center", ncol=3)
    fig.suptitle(args.title or "zyfa vs anchors, causal attention forward (%s)" % (rows[0]["zyfa_api"] if rows else ""))
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print("wrote %s (%d points)" % (args.png, len(unique)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
