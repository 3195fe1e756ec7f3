"""The INT8 Q/K mode from Python: quantize_int8 (per token for q, per 64 keys for k, with the
Hadamard rotation and K smoothing) and attention on INT8 q/k with e4m3 v (docs/api.md, the INT8
Q/K mode)."""
import numpy as np
import pytest

import reference as ref
import zyfa

RNG = np.random.default_rng(2020)


def activations(*shape, bias=False):
    """Activations with an outlier channel (and, for keys, a per-channel offset shared by all tokens)."""
    x = RNG.standard_normal(shape).astype(np.float32)
    x[..., 5] *= 8.0
    if bias:
        x += (2.0 * (1 + np.arange(shape[-1]) % 3)).astype(np.float32)
    return x


@pytest.mark.parametrize("per,rows", [("token", 1), ("block", 64)])
def test_quantize_int8_round_trip(cpu, per, rows):
    x = activations(2, 150, 3, 64)
    codes, descale = zyfa.quantize_int8(x, per=per, context=cpu)
    groups = -(-150 // rows)
    assert codes.dtype == np.int8 and codes.shape == x.shape
    assert descale.dtype == np.float32 and descale.shape == (2, 3, groups)
    assert np.abs(codes.astype(np.int32)).max() <= 127
    # descale of token s's group, broadcast to [b, s, h, 1]
    step = np.repeat(descale, rows, axis=2)[:, :, :150].transpose(0, 2, 1)[..., None]
    assert np.all(np.abs(codes * step - x) <= 0.5 * step * (1 + 1e-5))


def test_quantize_int8_rejects_a_bad_granularity(cpu):
    with pytest.raises(ValueError, match="per must be 'token'"):
        zyfa.quantize_int8(activations(1, 8, 1, 64), per="head", context=cpu)


def test_int8_attention_beats_fp8_end_to_end(cpu):
    q = activations(1, 256, 4, 64) * 0.5
    k = activations(1, 256, 2, 64, bias=True)
    v = activations(1, 256, 2, 64)
    want, _ = ref.attention(q, k, v, mask=zyfa.MASK_CAUSAL)

    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    q8, qd = zyfa.quantize_fp8(q, heads_kv=2, context=cpu)
    k8, kd = zyfa.quantize_fp8(k, context=cpu)
    fp8_error = ref.rel_rms(zyfa.attention(q8, k8, v8, causal=True, descale=(qd, kd, vd), dtype="e4m3fn",
                                           context=cpu), want)

    qi, qs = zyfa.quantize_int8(q, per="token", hadamard=True, context=cpu)
    ki, ks, mean = zyfa.quantize_int8(k, per="block", hadamard=True, smooth=True, context=cpu)
    assert qs.shape == (1, 4, 256) and ks.shape == (1, 2, 4) and mean.shape == (1, 2, 64)
    for softmax in ("exact", "lean"):
        o = zyfa.attention(qi, ki, v8, causal=True, descale=(qs, ks, vd), softmax=softmax, dtype="e4m3fn",
                           context=cpu)
        assert o.dtype == np.float32 and o.shape == (1, 256, 4, 64)
        int8_error = ref.rel_rms(o, want)
        print("%s: INT8 Q/K %.3e vs FP8 per head %.3e" % (softmax, int8_error, fp8_error))
        assert int8_error < 0.5 * fp8_error


def test_int8_descale_shapes_are_checked(cpu):
    q = activations(1, 70, 2, 64)
    qi, qs = zyfa.quantize_int8(q, per="token", context=cpu)
    ki, ks = zyfa.quantize_int8(q, per="block", context=cpu)
    v8, vd = zyfa.quantize_fp8(q, context=cpu)
    with pytest.raises(ValueError, match=r"q_descale of INT8 q must be a \[batch, heads, groups\] = \(1, 2, 70\)"):
        zyfa.attention(qi, ki, v8, descale=(ks, ks, vd), dtype="e4m3fn", context=cpu)
    with pytest.raises(ValueError, match=r"k_descale of INT8 k must be .* \(1, 2, 2\)"):
        zyfa.attention(qi, ki, v8, descale=(qs, qs, vd), dtype="e4m3fn", context=cpu)
    # INT8 q with FP16 k is the library's INVALID_ARGUMENT.
    with pytest.raises(zyfa.ZyfaError, match="differs from q.dtype = INT8"):
        zyfa.attention(qi, q.astype(np.float16), v8, descale=(qs, None, vd), dtype="e4m3fn", context=cpu)


def test_int8_with_paged_kv_and_sinks(cpu):
    """INT8 q/k + paged K/V + attention sinks together (the CPU backend runs every combination):
    the paged call gives the contiguous call's bits, and the sinks change the result."""
    q = activations(2, 40, 4, 64) * 0.5
    k = activations(2, 150, 2, 64, bias=True)
    v = activations(2, 150, 2, 64)
    qi, qs = zyfa.quantize_int8(q, per="token", context=cpu)
    ki, ks = zyfa.quantize_int8(k, per="block", context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    sinks = np.array([0.5, -1.0, 2.0, -np.inf], dtype=np.float32)
    page_size = 16
    pages = -(-150 // page_size)
    order = np.random.default_rng(3).permutation(2 * pages).astype(np.int32)
    table = order.reshape(2, pages)

    def to_pages(x):
        pool = np.zeros((2 * pages, page_size) + x.shape[2:], dtype=x.dtype)
        for b in range(2):
            for p in range(pages):
                rows = min(page_size, 150 - p * page_size)
                pool[table[b, p], :rows] = x[b, p * page_size:p * page_size + rows]
        return pool

    for softmax in ("exact", "lean"):
        args = dict(causal="bottom_right", descale=(qs, ks, vd), softmax=softmax, dtype="e4m3fn",
                    return_lse=True, context=cpu)
        o, lse = zyfa.attention(qi, ki, v8, sinks=sinks, **args)
        op, lsep = zyfa.attention(qi, to_pages(ki), to_pages(v8), sinks=sinks, block_table=table,
                                  seqused_k=np.array([150, 150], dtype=np.int32), **args)
        assert op.tobytes() == o.tobytes() and lsep.tobytes() == lse.tobytes()
        o0, _ = zyfa.attention(qi, ki, v8, **args)
        assert not np.array_equal(o0, o)
