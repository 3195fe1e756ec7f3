"""FP8 V in the transposed layout (docs/api.md, "FP8 V in the transposed layout"):
quantize_fp8(v, v_transposed=True) writes the row-major call's codes and descales in the layout,
[batch, heads, groups, head_dim, 16] with zero padding keys, and attention(..., v_transposed=True)
on it gives the row-major call's output bit for bit."""
import numpy as np
import pytest

import zyfa

RNG = np.random.default_rng(619)
ORDER = [0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15]  # the key of each byte of a group's chunk


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def transpose_like_the_layout(codes):
    """Row-major codes [b, s, h, d] -> [b, h, groups, d, 16], written here from the documented order."""
    b, s, h, d = codes.shape
    padded = -(-s // 128) * 128
    out = np.zeros((b, padded, h, d), np.uint8)
    out[:, :s] = codes
    return np.ascontiguousarray(out.reshape(b, padded // 16, 16, h, d)[:, :, ORDER].transpose(0, 3, 1, 4, 2))


@pytest.mark.parametrize("seqlen", [1, 100, 128, 300])
def test_quantize_writes_the_layout(cpu, seqlen):
    v = randn(2, seqlen, 3, 64)
    codes, descale = zyfa.quantize_fp8(v, context=cpu)
    vt, descale_t = zyfa.quantize_fp8(v, v_transposed=True, context=cpu)
    assert vt.shape == (2, 3, -(-seqlen // 128) * 8, 64, 16)
    np.testing.assert_array_equal(descale_t, descale)
    np.testing.assert_array_equal(vt, transpose_like_the_layout(codes))


@pytest.mark.parametrize("softmax", ["exact", "lean"])
def test_attention_equals_row_major(cpu, softmax):
    b, sq, sk, hq, hkv, d = 2, 40, 333, 4, 2, 64
    q, k, v = randn(b, sq, hq, d), randn(b, sk, hkv, d), randn(b, sk, hkv, d)
    q8, qd = zyfa.quantize_fp8(q, heads_kv=hkv, context=cpu)
    k8, kd = zyfa.quantize_fp8(k, context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    vt, _ = zyfa.quantize_fp8(v, v_transposed=True, context=cpu)
    common = dict(causal="bottom_right", softmax=softmax, dtype="e4m3fn", out_dtype="fp32", return_lse=True,
                  descale=(qd, kd, vd), context=cpu)
    o, lse = zyfa.attention(q8, k8, v8, **common)
    o_t, lse_t = zyfa.attention(q8, k8, vt, v_transposed=True, **common)
    np.testing.assert_array_equal(o_t, o)
    np.testing.assert_array_equal(lse_t, lse)


def test_refusals(cpu):
    v = randn(1, 20, 2, 64)
    with pytest.raises(ValueError, match="fixed length"):
        zyfa.quantize_fp8(v[0], v_transposed=True, cu_seqlens=np.array([0, 20], np.int32), context=cpu)
    q8, qd = zyfa.quantize_fp8(randn(1, 20, 2, 64), context=cpu)
    k8, kd = zyfa.quantize_fp8(randn(1, 20, 2, 64), context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    with pytest.raises(ValueError, match="5-D"):  # a row-major v passed as transposed
        zyfa.attention(q8, k8, v8, v_transposed=True, dtype="e4m3fn", context=cpu)
    vt, _ = zyfa.quantize_fp8(randn(1, 200, 2, 64), v_transposed=True, context=cpu)
    with pytest.raises(ValueError, match="expected"):  # groups for 200 keys, k has 20
        zyfa.attention(q8, k8, vt, v_transposed=True, dtype="e4m3fn", context=cpu)
