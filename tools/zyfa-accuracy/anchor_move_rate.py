#!/usr/bin/env python3
"""How often a warp of the sm_90a LEAN kernel would rescale O under LEAN's P-scale rules.

The 128-key kernels skip O's rescale when none of a warp's 16 rows moved its scale
(kernels/common/lean_anchor.h). This counts, per 128-key step of each warp (16 consecutive rows of a
128-row causal tile), whether some row moves, for the anchor with window W (moves when a block's
maximum b > a or b < a - W), and for the 64-key instance's per-block exponent run at 128 keys (moves
when the running maximum or k = 8 + floor(m - b) changes). Scores are fp32 q.k * scale * log2(e)
without FP8 rounding: a rate, not the kernel's bits. Inputs: Gaussian q, k (head dim 128, the
benchmark's kind) or a tests/data/real-activations layer (q, k .npy, GQA).

Usage: anchor_move_rate.py [--seqlens 1024,4096,16384] [--npy-dir DIR ...] [--windows 1,3]
"""
import argparse
import numpy as np


def rates(s, windows, block=128, warp=16, tile=128):
    L = s.shape[0]
    steps = 0
    moves = {w: 0 for w in windows}
    moves["per-block"] = 0
    for t0 in range(0, L, tile):
        rows = np.arange(t0, min(t0 + tile, L))
        R = len(rows)
        anchors = {w: np.full(R, -np.inf) for w in windows}
        m = np.full(R, -np.inf)
        k = np.full(R, np.nan)
        for j in range(rows[-1] // block + 1):
            blk = s[rows[0]:rows[-1] + 1, j * block:(j + 1) * block]
            keys = np.arange(j * block, j * block + blk.shape[1])
            blk = np.where(keys[None, :] > rows[:, None], -np.inf, blk)
            b = blk.max(1)
            seen = np.isfinite(b)
            pad = (-R) % warp
            def any_per_warp(x):
                return np.concatenate([x, np.zeros(pad, bool)]).reshape(-1, warp).any(1)
            active = any_per_warp(seen)
            steps += active.sum()
            for w in windows:
                a = anchors[w]
                mv = seen & np.isfinite(a) & ((b > a) | (b < a - w))
                anchors[w] = np.where(seen & (~np.isfinite(a) | mv), b, a)
                moves[w] += any_per_warp(mv).sum()
            m_new = np.maximum(m, b)
            k_new = np.where(seen, 8 + np.floor(m_new - b), k)
            mv = seen & np.isfinite(m) & ((m_new != m) | (k_new != k))
            moves["per-block"] += any_per_warp(mv).sum()
            m, k = np.where(seen, m_new, m), k_new
    return {key: moves[key] / steps for key in moves}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seqlens", default="1024,4096,16384")
    ap.add_argument("--npy-dir", nargs="*", default=[])
    ap.add_argument("--windows", default="1,3")
    ap.add_argument("--scale", type=float, default=None, help="softmax scale (default 1/sqrt(head dim))")
    o = ap.parse_args()
    windows = [float(w) for w in o.windows.split(",")]
    log2e = np.log2(np.e)
    rng = np.random.default_rng(0)
    for L in ([int(x) for x in o.seqlens.split(",")] if not o.npy_dir else []):
        q = rng.standard_normal((L, 128)).astype(np.float32)
        kk = rng.standard_normal((L, 128)).astype(np.float32)
        r = rates((q @ kk.T) * np.float32((o.scale or 128 ** -0.5) * log2e), windows)
        print("gaussian hd128 %6d: " % L + ", ".join("%s %.3f" % (key, v) for key, v in r.items()))
    for d in o.npy_dir:
        q = np.load(d + "/q.npy").astype(np.float32)
        kk = np.load(d + "/k.npy").astype(np.float32)
        group = q.shape[1] // kk.shape[1]
        scale = o.scale or q.shape[2] ** -0.5
        per_head = [rates((q[:, h] @ kk[:, h // group].T) * np.float32(scale * log2e), windows)
                    for h in range(q.shape[1])]
        r = {key: float(np.mean([p[key] for p in per_head])) for key in per_head[0]}
        print("%s (mean over %d heads): " % (d, q.shape[1]) + ", ".join("%s %.3f" % (key, v) for key, v in r.items()))


if __name__ == "__main__":
    main()
