"""The parts of zig-zag ring attention that do not depend on how K/V travel: which chunks a rank
owns, which (query chunk, key chunks, mask) pairs it computes when it holds a given rank's K/V,
the per-step attention and merge through zyfa, and the bounds the result is checked against.

Array-agnostic: the same functions take numpy arrays (CPU backend; ring_simulation.py runs every
rank in one process) and torch tensors (CPU or CUDA; cp_ring_attention.py runs one rank per
process and moves K/V with torch.distributed). Plain Python otherwise, so the CI machine, which has
numpy but not torch, tests exactly the plan the GPUs run.

Layout, per rank r of W (world size), sequence of S tokens cut into 2W chunks of c = S / (2W):
rank r owns chunks r and 2W-1-r (the zig-zag split), stored one after the other as its local
[batch, 2c, heads, dim] Q, K and V. Causal attention costs a query chunk work in proportion to its
position, so pairing an early chunk with a late one gives every rank the same work at every ring
step (a contiguous split would leave rank 0 idle while the last rank computes W chunk pairs).
"""
import math

import zyfa

# Local halves of a rank's rows: "lo" is chunk r (early), "hi" is chunk 2W-1-r (late).
LO, HI = 0, 1


def owned_chunks(rank, world):
    """The two global chunk indices rank owns, in local order (lo, hi)."""
    return rank, 2 * world - 1 - rank


def local_token_ranges(rank, world, seqlen):
    """[(start, stop), (start, stop)]: the global tokens of the rank's lo and hi halves. (The
    programs check chunk_len() first; any whole chunk works here, which the plan tests use.)"""
    if seqlen % (2 * world):
        raise ValueError("seqlen %d is not a multiple of 2 * world = %d" % (seqlen, 2 * world))
    c = seqlen // (2 * world)
    return [(i * c, (i + 1) * c) for i in owned_chunks(rank, world)]


def chunk_len(seqlen, world, key_block=128):
    """c = S / (2W). It must be a multiple of the kernels' key block (128 covers 64 too): each part
    then starts on a key-block boundary of the single call, so LEAN's per-block scales are formed
    over the same keys wherever the row maximum is shared (the tight bound below)."""
    if seqlen % (2 * world * key_block):
        raise ValueError("seqlen %d must be a multiple of 2 * world * %d = %d (zig-zag chunks of whole "
                         "key blocks)" % (seqlen, key_block, 2 * world * key_block))
    return seqlen // (2 * world)


def ring_source(rank, world, step):
    """Whose K/V rank holds at ring step `step` (0 = its own): K/V move from rank i to i+1."""
    return (rank - step) % world


def pairs(rank, src, world, c):
    """The attention calls rank makes on the K/V of rank src: (half, (k0, k1), mask), keys being local
    rows [k0, k1) of src's [lo; hi] K/V. Global chunk order decides visibility:

    - src == rank: lo (chunk r) against its own chunk r: causal (equal lengths, so top-left and
      bottom-right agree); hi (chunk 2W-1-r) against [chunk r; chunk 2W-1-r], 2c keys for c queries:
      ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, which aligns the last query with the last key, so hi sees all of
      chunk r and its own chunk causally. (Top-left would be wrong here: hi's query i would see only
      keys <= i of chunk r.)
    - src < rank: src's lo chunk is before both of ours, fully visible to lo and hi; src's hi chunk
      (2W-1-src > 2W-1-r) is after both: skipped.
    - src > rank: src's lo chunk (src > r) is after our lo and before our hi; src's hi chunk
      (2W-1-src < 2W-1-r) too: our hi sees both (2c keys, no mask), our lo neither.

    At every step every rank attends as many (query, key) pairs as every other (2c^2 + c at the
    diagonal step, 2c^2 after): the load balance.
    """
    causal = "bottom_right"
    if src == rank:
        return [(LO, (0, c), causal), (HI, (0, 2 * c), causal)]
    if src < rank:
        return [(LO, (0, c), False), (HI, (0, c), False)]
    return [(HI, (0, 2 * c), False)]


class Accumulator:
    """The running (O, lse) of each local half, merged part by part with zyfa.attention_merge.

    Partial O is kept in fp32 (the merge weights each part by exp(lse_p - lse); a bf16 partial would
    add a rounding per step). The merge is not in place (zyfa refuses an output that overlaps a
    part), so each merge returns a fresh buffer and the old one is dropped."""

    def __init__(self, context=None):
        self.context = context
        self.o = [None, None]
        self.lse = [None, None]
        self.parts = [0, 0]

    def add(self, half, o, lse):
        self.parts[half] += 1
        if self.o[half] is None:
            self.o[half], self.lse[half] = o, lse
            return
        self.o[half], self.lse[half] = zyfa.attention_merge(
            [self.o[half], o], [self.lse[half], lse], out_dtype="fp32", context=self.context)


def attend(acc, q_local, k_src, v_src, rank, src, world, c, attn_kwargs, plan=None):
    """One ring step's work: every pair of (rank, src), attended and merged into acc.

    q_local: the rank's [batch, 2c, heads_q, dim] queries; k_src, v_src: src's [batch, 2c, ...] K/V
    (views, only read). attn_kwargs: what zyfa.attention takes besides the tensors and the mask
    (softmax, descale, context, dtype for numpy storage). plan replaces pairs() (the tests give a
    wrong one to show that the checks catch it)."""
    for half, (k0, k1), causal in (plan or pairs)(rank, src, world, c):
        q = q_local[:, half * c:(half + 1) * c]
        o, lse = zyfa.attention(q, k_src[:, k0:k1], v_src[:, k0:k1], causal=causal, return_lse=True,
                                out_dtype="fp32", **attn_kwargs)
        acc.add(half, o, lse)


# ---- the bounds -------------------------------------------------------------------------------
# docs/api.md, "What a merge of LEAN parts equals" and "Split keys merged against one call: the
# tested bounds". The ring's result is a merge of one zyfa call per (query half, K/V chunk) pair;
# the single call is zyfa on the whole sequence.

U = 2.0 ** -24  # fp32 unit roundoff


def tight_bounds(n_parts, n_keys, key_block, max_abs_v, max_abs_lse):
    """Shared row maximum in every part's first key block, cuts on key blocks (the 'sink' inputs):
    the parts round every probability exactly as the single call does, so only fp32 rounding of
    each part's O and lse, the weights and another association of the same sums differ.
    docs/api.md's bound is for one merge of n parts; the ring merges as the parts arrive, n - 1
    merges of two, each within that bound of its exact result, so the bound is taken n - 1 times
    (once for 2 ranks). Returns (O bound, lse bound)."""
    blocks = math.ceil(n_keys / key_block)
    merges = max(1, n_parts - 1)
    o = merges * (16 * (max_abs_lse + 2) + 4 * n_parts + 4 * blocks) * U * max_abs_v
    lse = merges * (8 * (max_abs_lse + 2) + 4 * n_parts + 4 * blocks) * U
    return o, lse


def general_bounds(softmax, dtype, n_keys, max_abs_v):
    """Any split: ring and single call are each within the mode's bound of exact (fp64) attention,
    so within twice it of each other. Returns (O bound, (lse low, lse high)) for ring - single.

    FP8 EXACT: P * 2^8 rounded to e4m3 (half an ulp, 2^-4 relative; subnormal codes 2^-18
    absolute per key) over an unrounded denominator; lse within 1e-4 of exact.
    FP8 LEAN: weights within 0.9195x-1.0635x of exact: O within 0.0783 max|v|, lse - exact in
    [-0.0840, +0.0616], so ring - single lse in [-0.0840 - 0.0616, 0.0616 + 0.0840].
    BF16 EXACT: P rounded to bf16 (8 significant bits, 2^-8 relative) over an unrounded
    denominator, so O within 2^-8 max|v| of exact (plus fp32 sums, far below); lse as FP8 EXACT.
    """
    if softmax == "lean":
        per_call, lse_lo, lse_hi = 0.0783 * max_abs_v, -0.0840, 0.0616
        return 2 * per_call, (lse_lo - lse_hi, lse_hi - lse_lo)
    if dtype == "bf16":
        per_call = 2.0 ** -8 * max_abs_v
    else:
        per_call = (2.0 ** -4 + n_keys * 2.0 ** -18) * max_abs_v
    return 2 * per_call, (-2e-4, 2e-4)


def make_sinks(q, k, chunk):
    """Turn Gaussian q, k (float, [batch, seq, heads, dim], modified in place) into inputs whose row
    maximum is a 'sink' key at the start of every chunk: every query's dim 0 is set to 8, each
    chunk's first key is 16 e_0. Its score, 128 softmax_scale (11.3 at head dim 128), is the same
    for every row and far above any Gaussian key's (standard deviation 1.2, about 5.5 at the most
    over 128K keys), and every part of the ring starts at a chunk start, so every part's first key
    block holds the row maximum: the tight bound applies."""
    q[..., 0] = 8.0
    k[:, ::chunk] = 0.0
    k[:, ::chunk, :, 0] = 16.0


def differences(acc, single_o, single_lse, token_ranges):
    """Largest |O_ring - O_single| and the extremes of lse_ring - lse_single over a rank's two
    halves; single_o [batch, S, heads, dim] and single_lse [batch, heads, S] are the whole-sequence
    call's. Works on numpy arrays and torch tensors alike (abs, max and min are common to both)."""
    o_max, lse_min, lse_max = 0.0, math.inf, -math.inf
    for half, (t0, t1) in enumerate(token_ranges):
        o = float(abs(acc.o[half] - single_o[:, t0:t1]).max())
        d = acc.lse[half] - single_lse[:, :, t0:t1]
        lo, hi = float(d.min()), float(d.max())
        # Python's max() drops a NaN that comes second; a NaN must reach the verdict.
        o_max = o if math.isnan(o) or o > o_max else o_max
        lse_min = lo if math.isnan(lo) or lo < lse_min else lse_min
        lse_max = hi if math.isnan(hi) or hi > lse_max else lse_max
    return o_max, lse_min, lse_max


def verdict(diff, bound_o, bound_lse):
    """True when (o_max, lse_min, lse_max) lies within the bounds (bound_lse: a number for a
    symmetric bound, or (low, high)); NaN fails."""
    o_max, lse_min, lse_max = diff
    if any(math.isnan(x) for x in diff):
        return False
    lo, hi = (-bound_lse, bound_lse) if isinstance(bound_lse, (int, float)) else bound_lse
    return o_max <= bound_o and lo <= lse_min and lse_max <= hi
