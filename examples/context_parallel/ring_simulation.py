"""Zig-zag ring attention simulated in one process with numpy and zyfa's CPU backend: the same
chunks, pairs, masks and merges as cp_ring_attention.py (both use cp_ring.py), with the ring's
K/V transfers replaced by indexing the source rank's arrays. It needs no torch, so CI tests the
algorithm on every run; the torch.distributed program adds only the transport.

    python3 examples/context_parallel/ring_simulation.py --world 2 --seqlen 2048 --softmax lean

Exit status 0 when every check is within its bound, 1 otherwise.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cp_ring  # noqa: E402
import zyfa  # noqa: E402


def make_inputs(seqlen, heads, heads_kv, dim, dtype, inputs, world, seed):
    """(q, k, v, attn_kwargs, max|v|) in zyfa's storage for numpy: FP8 codes (uint8) with their
    per-(batch, kv head) descales, quantised once over the whole sequence so the ring and the
    single call read the same codes; or bf16 bit patterns (uint16)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((1, seqlen, heads, dim), dtype=np.float32)
    k = rng.standard_normal((1, seqlen, heads_kv, dim), dtype=np.float32)
    v = rng.standard_normal((1, seqlen, heads_kv, dim), dtype=np.float32)
    if inputs == "sink":
        cp_ring.make_sinks(q, k, cp_ring.chunk_len(seqlen, world))
    if dtype == "bf16":
        q, k, v = (zyfa.float32_to_bf16(x) for x in (q, k, v))
        return q, k, v, {"dtype": "bf16"}, float(np.abs(zyfa.bf16_to_float32(v)).max())
    q8, qd = zyfa.quantize_fp8(q, heads_kv=heads_kv)
    k8, kd = zyfa.quantize_fp8(k)
    v8, vd = zyfa.quantize_fp8(v)
    max_v = float(np.abs(zyfa.fp8_to_float32(v8) * vd[:, None, :, None]).max())
    return q8, k8, v8, {"dtype": "e4m3fn", "descale": (qd, kd, vd)}, max_v


def local(x, rank, world):
    """The rank's zig-zag rows of a [batch, S, ...] array: [chunk r; chunk 2W-1-r], contiguous."""
    return np.ascontiguousarray(np.concatenate(
        [x[:, t0:t1] for t0, t1 in cp_ring.local_token_ranges(rank, world, x.shape[1])], axis=1))


def simulate(q, k, v, world, attn_kwargs, context, pairs=cp_ring.pairs):
    """Every rank's Accumulator after the W ring steps. `pairs` can be replaced to check that a
    wrong plan is caught (the tests do)."""
    seqlen = q.shape[1]
    c = cp_ring.chunk_len(seqlen, world)
    qs = [local(q, r, world) for r in range(world)]
    ks = [local(k, r, world) for r in range(world)]
    vs = [local(v, r, world) for r in range(world)]
    accs = [cp_ring.Accumulator(context) for _ in range(world)]
    for step in range(world):
        for rank in range(world):
            src = cp_ring.ring_source(rank, world, step)
            cp_ring.attend(accs[rank], qs[rank], ks[src], vs[src], rank, src, world, c, attn_kwargs, pairs)
    return accs


def run(seqlen=2048, world=2, heads=4, heads_kv=2, dim=128, dtype="fp8", softmax="exact",
        inputs="gaussian", seed=1, threads=2, pairs=cp_ring.pairs, log=print):
    """Simulate, compare with the single call; returns (ok, diff, bounds)."""
    with zyfa.Context("cpu", num_threads=threads) as ctx:
        q, k, v, kwargs, max_v = make_inputs(seqlen, heads, heads_kv, dim, dtype, inputs, world, seed)
        kwargs = dict(kwargs, softmax=softmax, context=ctx)
        single_o, single_lse = zyfa.attention(q, k, v, causal="bottom_right", return_lse=True,
                                              out_dtype="fp32", **kwargs)
        accs = simulate(q, k, v, world, kwargs, ctx, pairs)
    diff = [0.0, np.inf, -np.inf]
    for rank, acc in enumerate(accs):
        d = cp_ring.differences(acc, single_o, single_lse, cp_ring.local_token_ranges(rank, world, seqlen))
        diff = [max(diff[0], d[0]), min(diff[1], d[1]), max(diff[2], d[2])]
        if any(np.isnan(d)):
            diff = [float("nan")] * 3
    n_parts = max(max(acc.parts) for acc in accs)
    if inputs == "sink":
        bounds = cp_ring.tight_bounds(n_parts, seqlen, 64, max_v, float(np.abs(single_lse).max()))
    else:
        bounds = cp_ring.general_bounds(softmax, dtype, seqlen, max_v)
    ok = cp_ring.verdict(diff, *bounds)
    log("ring simulation W=%d S=%d %s %s %s inputs: |O_ring - O_single| max %.3g (bound %.3g), "
        "lse_ring - lse_single in [%.3g, %.3g] (bound %s): %s" % (
            world, seqlen, dtype, softmax.upper(), inputs, diff[0], bounds[0], diff[1], diff[2],
            _fmt(bounds[1]), "OK" if ok else "FAIL"))
    return ok, diff, bounds


def _fmt(b):
    return "+-%.3g" % b if isinstance(b, float) else "[%.3g, %.3g]" % b


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--seqlen", type=int, default=2048)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--heads-kv", type=int, default=2)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--dtype", choices=["fp8", "bf16"], default="fp8")
    p.add_argument("--softmax", choices=["exact", "lean", "both"], default="both")
    p.add_argument("--inputs", choices=["gaussian", "sink", "both"], default="both")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    ok = True
    for softmax in (["exact", "lean"] if a.softmax == "both" else [a.softmax]):
        if a.dtype == "bf16" and softmax == "lean":
            continue  # LEAN is FP8 only
        for inputs in (["gaussian", "sink"] if a.inputs == "both" else [a.inputs]):
            ok &= run(a.seqlen, a.world, a.heads, a.heads_kv, a.head_dim, a.dtype, softmax, inputs,
                      threads=a.threads)[0]
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
