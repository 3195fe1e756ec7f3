#!/usr/bin/env python3
"""The per-CTA timeline of the sm_90a warp-specialised kernels (tools/gpu/cta-timeline.sh builds the
library it reads: tools/gpu/cta-timeline.patch writes %globaltimer stamps over lse, so that build's
lse is wrong by design and it is never a shipped library).
Usage: cta_timeline.py LIBZYFA_WITH_STAMPS BATCH SEQLEN [BATCH SEQLEN]...
For each shape and kernel (FP8 LEAN, FP8 EXACT, BF16; causal, 16 heads, head dim 128): the
CUDA-event time of one launch with its Python call, the span of the stamps and its TFLOP/s, the
mean of each phase per consumer warpgroup (kernel start -> its entry, -> Q landed, -> the first K
block landed, -> the end of the main loop, -> the end of its O stores; the epilogue split into the
rows' normalisation and lse, the issue of O's stores, and the wait for the warpgroup's slowest
warp), the least-squares fit
duration = fixed + per block, and per SM the gap from one CTA's last stamp to the next one's
first."""
import os, sys, statistics
import torch
lib = sys.argv[1]
os.environ["ZYFA_LIBRARY_PATH"] = lib
sys.path.insert(0, os.path.join(os.getcwd(), "bindings", "python"))
import zyfa
H, D = 16, 128
args = [int(x) for x in sys.argv[2:]]
for b, s in zip(args[0::2], args[1::2]):
    for mode in ("lean", "exact", "bf16"):
        torch.manual_seed(0)
        q = torch.randn(b, s, H, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn_like(q); v = torch.randn_like(q)
        if mode != "bf16":
            q, k, v = (x.to(torch.float8_e4m3fn) for x in (q, k, v))
        sm = "exact" if mode == "bf16" else mode
        out = torch.empty(b, s, H, D, device="cuda", dtype=torch.bfloat16)
        run = lambda lse=False: zyfa.attention(q, k, v, causal=True, softmax=sm, out=out, return_lse=lse)
        for _ in range(30): run()
        torch.cuda.synchronize()
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        ts = []
        for _ in range(10):
            ev[0].record(); run(); ev[1].record(); torch.cuda.synchronize(); ts.append(ev[0].elapsed_time(ev[1]) * 1e3)
        r = run(True)
        lse = r[1] if isinstance(r, tuple) else r
        torch.cuda.synchronize()
        raw = lse.contiguous().view(torch.int32).cpu().numpy().astype("int64") & 0xFFFFFFFF  # [b, h, s]
        recs = []
        for bi in range(b):
            for hi in range(H):
                for base in range(0, s, 64):
                    if base + 22 > s: continue
                    u = raw[bi, hi, base:base + 22]
                    g = lambda i: int(u[i]) | (int(u[i + 1]) << 32)
                    recs.append(dict(sm=int(u[0]), entry=g(1), q=g(3), k=g(5), loop=g(7), end=g(9), blocks=int(u[11]),
                                     cyc=g(14) - g(12), start=g(16), norm=g(18), stored=g(20), wg=(base // 64) % 2,
                                     cta=(bi, hi, base // 128)))
        t0 = min(r_["start"] for r_ in recs)
        span = max(r_["end"] for r_ in recs) - t0
        m = lambda f: statistics.mean(f(r_) for r_ in recs) / 1e3
        flops = 2 * 2 * D * (s * (s + 1) // 2) * b * H
        print("== %s b%d s%d: event median %.1f us (one launch with its Python call); stamped span %.1f us"
              " (%.0f TFLOP/s); %d CTAs"
              % (mode, b, s, statistics.median(ts), span / 1e3, flops / span / 1e3, len(recs) // 2))
        print("   kernel start->consumer entry %.2f us" % m(lambda r_: r_["entry"] - r_["start"]))
        print("   per warpgroup (us): entry->Q %.2f  Q->K0 %.2f  K0->loop end %.2f  epilogue %.2f  total %.2f  cycles/ns %.2f"
              % (m(lambda r_: r_["q"] - r_["entry"]), m(lambda r_: r_["k"] - r_["q"]), m(lambda r_: r_["loop"] - r_["k"]),
                 m(lambda r_: r_["end"] - r_["loop"]), m(lambda r_: r_["end"] - r_["entry"]),
                 statistics.mean(r_["cyc"] / max(1, r_["end"] - r_["entry"]) for r_ in recs)))
        print("   epilogue (us, the stamping thread's): normalise + lse %.2f  O stores issued %.2f  warpgroup barrier %.2f"
              % (m(lambda r_: r_["norm"] - r_["loop"]), m(lambda r_: r_["stored"] - r_["norm"]),
                 m(lambda r_: r_["end"] - r_["stored"])))
        # duration against blocks: fixed cost and cost per block (least squares)
        xs = [r_["blocks"] for r_ in recs]; ys = [(r_["end"] - r_["entry"]) / 1e3 for r_ in recs]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        if sxx > 0:
            slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
            print("   duration = %.2f us + %.3f us x blocks (mean blocks %.1f)" % (my - slope * mx, slope, mx))
        loopk = [(r_["loop"] - r_["k"]) / 1e3 / max(1, r_["blocks"]) for r_ in recs if r_["blocks"] >= 4]
        if loopk: print("   loop per block (>=4 blocks) %.3f us" % statistics.median(loopk))
        # per SM: gaps between one CTA's end and the next CTA's entry
        ctas = {}
        for r_ in recs:
            c = ctas.setdefault(r_["cta"], dict(sm=r_["sm"], entry=r_["start"], end=r_["end"]))
            c["entry"] = min(c["entry"], r_["start"]); c["end"] = max(c["end"], r_["end"])
        by_sm = {}
        for c in ctas.values(): by_sm.setdefault(c["sm"], []).append(c)
        gaps, overlaps, busy, lasts, firsts = [], 0, 0, [], []
        for lst in by_sm.values():
            lst.sort(key=lambda c: c["entry"])
            firsts.append(lst[0]["entry"] - t0); lasts.append(lst[-1]["end"] - t0)
            for a_, b_ in zip(lst, lst[1:]):
                g = b_["entry"] - a_["end"]
                if g < 0: overlaps += 1
                gaps.append(g / 1e3)
            busy += sum(c["end"] - c["entry"] for c in lst)
        print("   SMs %d, CTAs/SM %.1f; gap end->next entry median %.2f us mean %.2f (overlapping %d); first entry max %.2f us;"
              " last end min %.1f / max %.1f us; busy %.1f%% of SMs x span"
              % (len(by_sm), len(ctas) / len(by_sm), statistics.median(gaps) if gaps else 0, statistics.mean(gaps) if gaps else 0,
                 overlaps, max(firsts) / 1e3, min(lasts) / 1e3, max(lasts) / 1e3, 100 * busy / (len(by_sm) * span)))
