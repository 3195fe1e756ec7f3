"""numpy fp64 reference of zyfa's attention (docs/api.md semantics) and the tolerances the C tests use
(tests/cpu/reference_check.hpp gives their derivation)."""
import math

import numpy as np

MASK_NONE, MASK_CAUSAL, MASK_CAUSAL_BOTTOM_RIGHT = 0, 1, 2


def visible(sq, sk, mask, window_left, window_right):
    """[sq, sk] boolean: key j visible to query i."""
    i = np.arange(sq)[:, None]
    j = np.arange(sk)[None, :]
    d = 0 if mask == MASK_CAUSAL else sk - sq
    ok = np.ones((sq, sk), dtype=bool)
    if mask != MASK_NONE:
        ok &= j <= i + d
    if window_left >= 0:
        ok &= j >= i + d - window_left
    if window_right >= 0:
        ok &= j <= i + d + window_right
    return ok


def attention_one(q, k, v, mask=MASK_NONE, window=(-1, -1), scale=None, sinks=None, key_bias=None):
    """One sequence: q [sq, hq, d], k [sk, hkv, d], v [sk, hkv, dv] (fp64) -> (o [sq, hq, dv], lse [hq, sq]).
    sinks [hq]: a logit per head in each row's denominator only (softmax over [scores, sink]).
    key_bias [hq, sk]: added to every scaled score of key j in head h."""
    sq, hq, d = q.shape
    sk, hkv, dv = v.shape
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    group = hq // hkv
    o = np.zeros((sq, hq, dv))
    lse = np.full((hq, sq), -np.inf)
    seen = visible(sq, sk, mask, *window)
    for h in range(hq):
        s = scale * q[:, h, :] @ k[:, h // group, :].T
        if key_bias is not None:
            s = s + np.asarray(key_bias[h], dtype=np.float64)[None, :]
        s = np.where(seen, s, -np.inf)
        if sinks is not None:  # the sink as a key whose value is zero
            s = np.concatenate([s, np.full((sq, 1), float(sinks[h]))], axis=1)
        row_max = np.max(s, axis=1, initial=-np.inf)
        has_key = np.isfinite(row_max)
        p = np.exp(s - np.where(has_key, row_max, 0)[:, None])
        l = p.sum(axis=1)
        p = p[:, :sk]
        o[:, h, :] = np.where(has_key[:, None], (p @ v[:, h // group, :]) / np.where(has_key, l, 1)[:, None], 0)
        lse[h] = np.where(has_key, row_max + np.log(np.where(has_key, l, 1)), -np.inf)
    return o, lse


def attention(q, k, v, mask=MASK_NONE, window=(-1, -1), scale=None, cu_q=None, cu_k=None, sinks=None,
              key_bias=None):
    """Batched [b, s, h, d] -> (o [b, sq, hq, dv], lse [b, hq, sq]); packed with cu_q/cu_k ->
    (o [total_q, hq, dv], lse [hq, total_q]). key_bias: [b, hq, sk], packed [hq, total_k]."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    if cu_q is None:
        outs = [attention_one(q[b], k[b], v[b], mask, window, scale, sinks,
                              None if key_bias is None else key_bias[b]) for b in range(q.shape[0])]
        return np.stack([o for o, _ in outs]), np.stack([l for _, l in outs])
    o = np.zeros(q.shape[:2] + (v.shape[2],))
    lse = np.full((q.shape[1], q.shape[0]), -np.inf)
    for b in range(len(cu_q) - 1):
        qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        o[qs], lse[:, qs] = attention_one(q[qs], k[ks], v[ks], mask, window, scale, sinks,
                                          None if key_bias is None else key_bias[:, ks])
    return o, lse


def rel_rms(x, ref):
    x, ref = np.asarray(x, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    ref2 = float(np.sum(ref * ref))
    err2 = float(np.sum((x - ref) ** 2))
    return math.sqrt(err2 / ref2) if ref2 > 0 else math.sqrt(err2)


# Relative RMS bounds of O, as tests/cpu/reference_check.hpp: the largest rounding of one element of P
# (fp32 ~1e-6, fp16 2^-11, bf16 2^-9, FP8 exact 2^-4, FP8 lean 8.5%), plus the output dtype's half ulp.
O_TOL = {"fp32": 1e-5, "fp16": 1.0 / 2048, "bf16": 1.0 / 512, "fp8-exact": 1.0 / 16, "fp8-lean": 0.085}
OUT_TOL = {"fp32": 0.0, "fp16": 1.0 / 2048, "bf16": 1.0 / 512}
# lse: EXACT sums fp32 probabilities (~1e-5 absolute after log); LEAN sums rounded ones (<= 8.5%).
LSE_TOL = {"exact": 1e-4, "lean": 0.085}


def lse_max_abs(lse, ref):
    lse, ref = np.asarray(lse, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    both_inf = np.isneginf(lse) & np.isneginf(ref)
    assert np.array_equal(np.isneginf(lse), np.isneginf(ref)), "rows without keys differ"
    diff = np.abs(np.where(both_inf, 0.0, lse) - np.where(both_inf, 0.0, ref))
    return float(diff.max()) if diff.size else 0.0
