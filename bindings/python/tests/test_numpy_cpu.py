"""numpy arrays on the CPU backend against the numpy fp64 reference."""
import threading

import numpy as np
import pytest

import reference as ref
import zyfa

RNG = np.random.default_rng(20240601)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def check(o, lse, q, k, v, tol, lse_tol=1e-4, mask=0, window=(-1, -1), scale=None, cu_q=None, cu_k=None,
          decode=lambda x: x):
    o_ref, lse_ref = ref.attention(decode(q), decode(k), decode(v), mask, window, scale, cu_q, cu_k)
    err = ref.rel_rms(o, o_ref)
    assert err <= tol, "rel_rms %.3e > %.3e" % (err, tol)
    if lse is not None:
        assert ref.lse_max_abs(lse, lse_ref) <= lse_tol


@pytest.mark.parametrize("causal,mask", [(False, ref.MASK_NONE), ("top_left", ref.MASK_CAUSAL),
                                         ("bottom_right", ref.MASK_CAUSAL_BOTTOM_RIGHT)])
@pytest.mark.parametrize("sq,sk", [(64, 64), (37, 150), (150, 37)])
def test_fp32_masks_rectangular(cpu, causal, mask, sq, sk):
    q, k, v = randn(2, sq, 4, 64), randn(2, sk, 4, 64), randn(2, sk, 4, 64)
    o, lse = zyfa.attention(q, k, v, causal=causal, return_lse=True, context=cpu)
    assert o.shape == (2, sq, 4, 64) and o.dtype == np.float32 and lse.shape == (2, 4, sq)
    check(o, lse, q, k, v, ref.O_TOL["fp32"], mask=mask)


@pytest.mark.parametrize("window", [(16, 0), (8, 8), (0, -1), (-1, 5)])
def test_sliding_window(cpu, window):
    q, k, v = randn(1, 90, 2, 64), randn(1, 120, 2, 64), randn(1, 120, 2, 64)
    o, lse = zyfa.attention(q, k, v, window=window, return_lse=True, context=cpu)
    check(o, lse, q, k, v, ref.O_TOL["fp32"], window=window)


@pytest.mark.parametrize("heads_q,heads_kv", [(8, 2), (6, 1)])
def test_gqa_mqa_and_scale(cpu, heads_q, heads_kv):
    q, k, v = randn(2, 48, heads_q, 128), randn(2, 70, heads_kv, 128), randn(2, 70, heads_kv, 128)
    o = zyfa.attention(q, k, v, causal="top_left", softmax_scale=0.05, context=cpu)
    check(o, None, q, k, v, ref.O_TOL["fp32"], mask=ref.MASK_CAUSAL, scale=0.05)


def test_head_dim_v_differs(cpu):
    q, k, v = randn(1, 40, 2, 192), randn(1, 40, 2, 192), randn(1, 40, 2, 128)
    o = zyfa.attention(q, k, v, causal=True, context=cpu)
    assert o.shape == (1, 40, 2, 128)
    check(o, None, q, k, v, ref.O_TOL["fp32"], mask=ref.MASK_CAUSAL)


def test_fp16_inputs_and_outputs(cpu):
    q, k, v = (randn(1, 80, 4, 64).astype(np.float16) for _ in range(3))
    o = zyfa.attention(q, k, v, causal=True, out_dtype="fp16", context=cpu)
    assert o.dtype == np.float16
    check(o, None, q, k, v, ref.O_TOL["fp16"] + ref.OUT_TOL["fp16"], mask=ref.MASK_CAUSAL)


def test_bf16_as_uint16(cpu):
    q, k, v = (zyfa.float32_to_bf16(randn(2, 64, 4, 64)) for _ in range(3))
    o = zyfa.attention(q, k, v, dtype="bf16", out_dtype="bf16", context=cpu)
    assert o.dtype == np.uint16
    check(zyfa.bf16_to_float32(o), None, q, k, v, ref.O_TOL["bf16"] + ref.OUT_TOL["bf16"],
          decode=zyfa.bf16_to_float32)


def decode_scaled(codes, descale, fp8):
    """e4m3 codes [b, s, h, d] times a [b, h_scale] descale (h_scale divides h: GQA shares it)."""
    per_head = np.repeat(descale, codes.shape[2] // descale.shape[1], axis=1)
    return zyfa.fp8_to_float32(codes, fp8) * per_head[:, None, :, None]


@pytest.mark.parametrize("fp8", ["e4m3fn", "e4m3fnuz"])
@pytest.mark.parametrize("softmax", ["exact", "lean"])
def test_fp8_via_quantize_with_descales(cpu, fp8, softmax):
    b, s, h, d = 2, 96, 4, 128
    q8, qd = zyfa.quantize_fp8(randn(b, s, h, d) * 3, dtype=fp8, context=cpu)
    k8, kd = zyfa.quantize_fp8(randn(b, s, h, d), dtype=fp8, context=cpu)
    v8, vd = zyfa.quantize_fp8(randn(b, s, h, d) * 0.5, dtype=fp8, context=cpu)
    assert q8.dtype == np.uint8 and qd.shape == (b, h) and qd.dtype == np.float32
    o, lse = zyfa.attention(q8, k8, v8, dtype=fp8, descale=(qd, kd, vd), causal=True, softmax=softmax,
                            return_lse=True, context=cpu)
    assert o.dtype == np.float32
    o_ref, lse_ref = ref.attention(decode_scaled(q8, qd, fp8), decode_scaled(k8, kd, fp8),
                                   decode_scaled(v8, vd, fp8), ref.MASK_CAUSAL)
    assert ref.rel_rms(o, o_ref) <= ref.O_TOL["fp8-" + softmax]
    assert ref.lse_max_abs(lse, lse_ref) <= ref.LSE_TOL[softmax]


def test_fp8_gqa_scalar_descales_bf16_out(cpu):
    b, s, hq, hkv, d = 1, 64, 8, 2, 64

    def codes(h):  # finite e4m3fn codes of magnitude <= 2 (exponent field <= 8)
        return (RNG.integers(0, 0x47, size=(b, s, h, d)) | (RNG.integers(0, 2, size=(b, s, h, d)) << 7)
                ).astype(np.uint8)

    q8, k8, v8 = codes(hq), codes(hkv), codes(hkv)
    o = zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=(0.5, 0.25, 2.0), softmax="exact",
                       out_dtype="bf16", context=cpu)
    assert o.dtype == np.uint16 and o.shape == (b, s, hq, d)
    o_ref, _ = ref.attention(zyfa.fp8_to_float32(q8) * 0.5, zyfa.fp8_to_float32(k8) * 0.25,
                             zyfa.fp8_to_float32(v8) * 2.0)
    assert ref.rel_rms(zyfa.bf16_to_float32(o), o_ref) <= ref.O_TOL["fp8-exact"] + ref.OUT_TOL["bf16"]


@pytest.mark.parametrize("fp8,max_value", [("e4m3fn", 448.0), ("e4m3fnuz", 240.0)])
@pytest.mark.parametrize("hadamard", [False, True])
def test_quantize_fp8_round_trip(cpu, fp8, max_value, hadamard):
    x = randn(2, 33, 3, 64) * np.array([1.0, 10.0, 0.01], dtype=np.float32)[None, None, :, None]
    codes, descale = zyfa.quantize_fp8(x, dtype=fp8, hadamard=hadamard, context=cpu)
    rotated = x
    if hadamard:  # the normalised Hadamard matrix H/sqrt(64), Sylvester order
        hm = np.array([[1.0]])
        while hm.shape[0] < 64:
            hm = np.block([[hm, hm], [hm, -hm]])
        rotated = x @ (hm / 8.0)
    amax = np.abs(rotated).max(axis=(1, 3))
    np.testing.assert_allclose(descale, amax / max_value, rtol=1e-6)
    back = decode_scaled(codes, descale, fp8)
    # e4m3 keeps 3 mantissa bits: rounding is within 2^-4 relative for normals; subnormals (below
    # 2^-6 or 2^-7 of the scale) within half their spacing, 2^-10 (fn) or 2^-11 (fnuz) times descale.
    bound = np.maximum(np.abs(rotated) / 16, 2.0 ** -10 * descale[:, None, :, None]) * (1 + 1e-6)
    assert np.all(np.abs(back - rotated) <= bound)


def test_varlen_with_empty_and_single_sequences(cpu):
    lengths_q, lengths_k = [5, 0, 1, 40], [9, 3, 1, 33]
    cu_q = np.concatenate([[0], np.cumsum(lengths_q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(lengths_k)]).astype(np.int32)
    q, k, v = randn(cu_q[-1], 4, 64), randn(cu_k[-1], 2, 64), randn(cu_k[-1], 2, 64)
    o, lse = zyfa.attention(q, k, v, causal="bottom_right", cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                            return_lse=True, context=cpu)
    assert o.shape == (46, 4, 64) and lse.shape == (4, 46)
    check(o, lse, q, k, v, ref.O_TOL["fp32"], mask=ref.MASK_CAUSAL_BOTTOM_RIGHT, cu_q=cu_q, cu_k=cu_k)
    o2 = zyfa.attention(q, k, v, causal="bottom_right", cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                        max_seqlen_q=64, max_seqlen_k=64, context=cpu)
    np.testing.assert_array_equal(o, o2)


def test_rows_without_keys_are_zero_with_minus_inf_lse(cpu):
    q, k, v = randn(1, 8, 1, 64), randn(1, 4, 1, 64), randn(1, 4, 1, 64)
    o, lse = zyfa.attention(q, k, v, causal="bottom_right", return_lse=True, context=cpu)
    assert np.all(o[0, :4] == 0) and np.all(np.isneginf(lse[0, 0, :4]))
    check(o, lse, q, k, v, ref.O_TOL["fp32"], mask=ref.MASK_CAUSAL_BOTTOM_RIGHT)


def test_strided_views_and_out(cpu):
    qkv = randn(2, 50, 3, 4, 64)  # packed projections: q, k, v are strided views into one buffer
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    assert not q.flags["C_CONTIGUOUS"]
    out = np.full((2, 50, 4, 64), np.nan, dtype=np.float32)
    result = zyfa.attention(q, k, v, causal=True, out=out, context=cpu)
    assert result is out
    check(out, None, q, k, v, ref.O_TOL["fp32"], mask=ref.MASK_CAUSAL)


def test_default_context_and_empty_problem():
    q = randn(1, 0, 2, 64)
    o = zyfa.attention(q, q, q)
    assert o.shape == (1, 0, 2, 64)
    assert zyfa.default_context("cpu").backend == "cpu"


def test_flash_attn_func_on_numpy(cpu):
    q, k, v = randn(1, 20, 4, 64), randn(1, 30, 2, 64), randn(1, 30, 2, 64)
    o = zyfa.flash_attn_func(q, k, v, 0.0, None, True)  # flash_attn aligns causal bottom-right
    check(o, None, q, k, v, ref.O_TOL["fp32"], mask=ref.MASK_CAUSAL_BOTTOM_RIGHT)
    o, lse = zyfa.flash_attn_func(q, k, v, window_size=(4, 2), return_lse=True)
    check(o, lse, q, k, v, ref.O_TOL["fp32"], window=(4, 2))


def test_concurrent_calls_from_threads(cpu):
    q, k, v = randn(1, 64, 4, 64), randn(1, 64, 4, 64), randn(1, 64, 4, 64)
    expected = zyfa.attention(q, k, v, causal=True, context=cpu)
    results, errors = [None] * 4, []

    def work(i):
        try:
            results[i] = zyfa.attention(q, k, v, causal=True, context=cpu)
        except Exception as e:  # reported below: an exception in a thread would be lost
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        np.testing.assert_array_equal(r, expected)  # the CPU backend is deterministic


def test_codecs():
    assert zyfa.fp8_to_float32(np.array([0x7E, 0x01, 0x38, 0xB8], np.uint8)).tolist() == [448.0, 2.0 ** -9, 1.0, -1.0]
    assert np.isnan(zyfa.fp8_to_float32(np.array([0x7F, 0xFF], np.uint8))).all()
    assert zyfa.fp8_to_float32(np.array([0x7F, 0x40, 0x00], np.uint8), "e4m3fnuz").tolist() == [240.0, 1.0, 0.0]
    assert np.isnan(zyfa.fp8_to_float32(np.array([0x80], np.uint8), "e4m3fnuz")).all()
    x = np.array([1.0, -2.5, 3.140625, 1.00390625, 1.01171875], np.float32)
    # 1 + 2^-8 is a tie between bf16 1.0 and 1 + 2^-7: rounds to the even 1.0; 1 + 3*2^-8 rounds up.
    assert zyfa.bf16_to_float32(zyfa.float32_to_bf16(x)).tolist() == [1.0, -2.5, 3.140625, 1.0, 1.015625]
