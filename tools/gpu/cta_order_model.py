#!/usr/bin/env python3
"""How well the order in which CTAs start balances a causal grid over the SMs: a list-scheduling model,
no GPU.

The hardware starts a grid's CTAs in the order of their linear index (x fastest), each on the next SM
that frees. A causal query tile t (0 the heaviest) of T tiles visits T - t key blocks. The model gives
each CTA the key blocks of its tiles (and optionally a fixed cost per CTA, in key blocks), schedules
them in start order on the SMs, and prints the makespan over the average SM's work (1.000 = perfect
balance) for:
  head:  the grid (tile, head, batch): each head's tiles from the heaviest to the lightest, head after head;
  tile:  the grid (head, batch, tile): tile by tile over every head, the heaviest tiles first.
  group: groups of G = 2^g adjacent heads, tile by tile over the group's heads (G the largest power of
         two dividing --heads-per-batch with G x tiles <= SMs: src/cuda/attention_launch_plan.cpp's
         ws_head_group_log2).
`--tiles-per-cta N` gives each CTA N consecutive tiles of one head (tools/gpu/pending/tiles-per-cta.patch).

  tools/gpu/cta_order_model.py --seqlen 16384 --heads 32 [--heads-per-batch 16] [--tiles-per-cta 2]
                               [--sms 132] [--fixed 0]
(heads = heads x batch; 128-row tiles of 128-key blocks, the sm_90a kernels' shape.)

It models balance only, not L2. Measured on an H100 (docs/performance.md, 2026-12-06T00:43Z), the
tile order it prefers lost every row (-5% to -30%): in the head order the CTAs running at once share
a few heads' K and V in L2, in the tile order they do not. Read its figures as an upper bound on what
an order that keeps a head's tiles together could gain.
"""
import argparse
import heapq


def makespan(works, sms, fixed):
    free = [0.0] * sms
    for w in works:
        heapq.heappush(free, heapq.heappop(free) + w + fixed)
    return max(free) / (sum(w + fixed for w in works) / sms)


def head_group(tiles, heads_per_batch, sms):
    g = 1
    while heads_per_batch % (2 * g) == 0 and tiles * 2 * g <= sms:
        g *= 2
    return g


def cta_works(tiles, heads, per_cta, order, group=1):
    groups = [sum(tiles - t for t in range(g, min(tiles, g + per_cta))) for g in range(0, tiles, per_cta)]
    if order == "head":
        return [w for _ in range(heads) for w in groups]
    if order == "group":
        return [w for _ in range(0, heads, group) for w in groups for _ in range(group)]
    return [w for w in groups for _ in range(heads)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seqlen", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True, help="heads x batch")
    ap.add_argument("--heads-per-batch", type=int, default=16, help="heads_q (the group order's G divides it)")
    ap.add_argument("--tiles-per-cta", type=int, default=1)
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--fixed", type=float, default=0.0, help="fixed cost per CTA, in key blocks")
    ap.add_argument("--rows", type=int, default=128)
    args = ap.parse_args()
    tiles = (args.seqlen + args.rows - 1) // args.rows
    group = head_group(tiles, args.heads_per_batch, args.sms)
    for order in ("head", "tile", "group"):
        works = cta_works(tiles, args.heads, args.tiles_per_cta, order, group)
        label = f"group of {group} heads" if order == "group" else f"{order} order"
        print(f"{label:18s}: makespan / average {makespan(works, args.sms, args.fixed):.3f} ({len(works)} CTAs)")


if __name__ == "__main__":
    main()
