#!/usr/bin/env python3
"""Per-layer Markdown table from a zyfa-accuracy --npy-dir ... --csv FILE run: BF16 and FP8 error
against fp64 end to end (the inputs as captured -> BF16 / FP8), FP8 with the Hadamard rotation of Q
and K, and the kernel-only error of EXACT and LEAN; then the median, min and max of each ratio.

  python3 tools/capture-activations/summarize.py run.csv
"""
import csv
import statistics
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = {}
    with open(sys.argv[1], newline="") as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["dist"], {})[(r["inputs"], r["scheme"])] = float(r["rel_rms"])
    cols = [("e2e", "BF16"), ("e2e", "EXACT"), ("e2e", "LEAN"), ("e2e-hadamard", "LEAN"),
            ("kernel", "BF16"), ("kernel", "EXACT"), ("kernel", "LEAN")]
    print("| layer | BF16 e2e | FP8 EXACT e2e | FP8 LEAN e2e | FP8 LEAN e2e/BF16 | LEAN e2e, Hadamard | "
          "BF16 kernel | FP8 EXACT kernel | FP8 LEAN kernel | LEAN/EXACT kernel |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = {"FP8 LEAN e2e / BF16 e2e": [], "FP8 EXACT e2e / BF16 e2e": [], "Hadamard LEAN e2e / LEAN e2e": [],
              "LEAN / EXACT kernel": []}
    for name, m in rows.items():
        try:
            v = [m[c] for c in cols]
        except KeyError as e:  # a run stopped part-way through this layer
            print(f"summarize: {name} skipped: no row {e}", file=sys.stderr)
            continue
        label = name.rstrip("/").rsplit("/", 1)[-1]
        print(f"| {label} | {v[0]:.2e} | {v[1]:.2e} | {v[2]:.2e} | {v[2] / v[0]:.1f}x | {v[3]:.2e} | {v[4]:.2e} | "
              f"{v[5]:.2e} | {v[6]:.2e} | {v[6] / v[5]:.2f}x |")
        ratios["FP8 LEAN e2e / BF16 e2e"].append(v[2] / v[0])
        ratios["FP8 EXACT e2e / BF16 e2e"].append(v[1] / v[0])
        ratios["Hadamard LEAN e2e / LEAN e2e"].append(v[3] / v[2])
        ratios["LEAN / EXACT kernel"].append(v[6] / v[5])
    print()
    for k, x in ratios.items():
        print(f"- {k}: median {statistics.median(x):.2f}, min {min(x):.2f}, max {max(x):.2f} ({len(x)} layers)")


if __name__ == "__main__":
    main()
