"""Per-key score bias (attention(key_bias=)) and Q smoothing (quantize_fp8(q, smooth=True), then
quantize_fp8(k, query_mean=) for the bias that makes it exact): against the numpy fp64 reference, the
bias's bit-level definition (kernels/common/key_bias.h), FP8's error on a shared Q offset, and the
argument checks. CPU backend (the only one that takes the bias)."""
import numpy as np
import pytest

import reference as ref
import zyfa

RNG = np.random.default_rng(1606)


def randn(*shape, sd=1.0, rng=RNG):
    return (sd * rng.standard_normal(shape)).astype(np.float32)


def bias_definition(k, mean, query_mean, scale, cu=None):
    """The key bias bit for bit: float32(float64(scale) * sum_d float64(m[d]) * float64(r[d])), scale
    the fp32 key_bias_scale, the sum in increasing d, r = the fp32 smoothed key k - mean (mean None:
    k); query head h reads k head h // (heads_q // heads_kv). k [b, s, hk, d] -> [b, hq, s]; packed
    [total, hk, d] -> [hq, total]."""
    if cu is not None:
        parts = [bias_definition(k[None, cu[b]:cu[b + 1]], None if mean is None else mean[b:b + 1],
                                 query_mean[b:b + 1], scale)[0] for b in range(len(cu) - 1)]
        return np.concatenate(parts, axis=1)
    r = k if mean is None else k - mean[:, None]  # fp32 arithmetic, as the quantiser subtracts
    assert r.dtype == np.float32
    heads_q = query_mean.shape[1]
    r = np.repeat(r, heads_q // k.shape[2], axis=2).astype(np.float64)  # [b, s, hq, d]
    m = query_mean.astype(np.float64)[:, None]                            # [b, 1, hq, d]
    dot = np.zeros(r.shape[:3])
    for d in range(r.shape[3]):
        dot += m[..., d] * r[..., d]
    return (np.float64(np.float32(scale)) * dot).astype(np.float32).transpose(0, 2, 1)


# --- attention(key_bias=) ------------------------------------------------------------------------

@pytest.mark.parametrize("fp8", [False, True])
def test_zero_bias_is_bitwise_no_bias(cpu, fp8):
    q, k, v = randn(2, 40, 4, 64), randn(2, 70, 2, 64), randn(2, 70, 2, 64)
    args = dict(causal="bottom_right", return_lse=True, context=cpu)
    if fp8:
        (q, qd), (k, kd), (v, vd) = (zyfa.quantize_fp8(x, heads_kv=2, context=cpu) for x in (q, k, v))
        args.update(descale=(qd, kd, vd), dtype="e4m3fn", out_dtype="fp32", softmax="lean")
    o0, lse0 = zyfa.attention(q, k, v, **args)
    o1, lse1 = zyfa.attention(q, k, v, key_bias=np.zeros((2, 4, 70), np.float32), **args)
    assert o0.tobytes() == o1.tobytes() and lse0.tobytes() == lse1.tobytes()


def test_random_bias_against_reference(cpu):
    q, k, v = randn(2, 48, 4, 64), randn(2, 48, 2, 64), randn(2, 48, 2, 64)
    bias = randn(2, 4, 48, sd=2.0)
    o, lse = zyfa.attention(q, k, v, causal=True, key_bias=bias, return_lse=True, context=cpu)
    o_ref, lse_ref = ref.attention(q, k, v, ref.MASK_CAUSAL, key_bias=bias)
    assert ref.rel_rms(o, o_ref) <= 1e-5 and ref.rel_rms(lse, lse_ref) <= 1e-5
    # The bias is not ignored, and a float64 one is taken as fp32.
    assert ref.rel_rms(o, ref.attention(q, k, v, ref.MASK_CAUSAL)[0]) > 1e-2
    o64 = zyfa.attention(q, k, v, causal=True, key_bias=bias.astype(np.float64), context=cpu)
    assert o64.tobytes() == o.tobytes()


def test_varlen_layout_against_reference(cpu):
    cu_q, cu_k = np.array([0, 20, 20, 50], np.int32), np.array([0, 35, 40, 90], np.int32)
    q, k, v = randn(50, 4, 64), randn(90, 2, 64), randn(90, 2, 64)
    bias = randn(4, 90, sd=2.0)  # [heads_q, total_k]
    o, lse = zyfa.attention(q, k, v, causal="bottom_right", cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, key_bias=bias,
                            return_lse=True, context=cpu)
    o_ref, lse_ref = ref.attention(q, k, v, ref.MASK_CAUSAL_BOTTOM_RIGHT, cu_q=cu_q, cu_k=cu_k, key_bias=bias)
    assert ref.rel_rms(o, o_ref) <= 1e-5 and ref.rel_rms(lse, lse_ref) <= 1e-5


def test_paged_bias_is_the_contiguous_calls(cpu):
    q, k, v = randn(2, 8, 4, 64), randn(2, 40, 2, 64), randn(2, 40, 2, 64)
    bias = randn(2, 4, 40, sd=2.0)
    o = zyfa.attention(q, k, v, causal="bottom_right", key_bias=bias, context=cpu)
    table = np.array([[3, 0, 4], [1, 5, 2]], np.int32)  # 16-key pages, 3 per sequence
    k_pool, v_pool = (np.zeros((6, 16, 2, 64), np.float32) for _ in range(2))
    for b in range(2):
        for p in range(3):
            n = min(16, 40 - 16 * p)
            k_pool[table[b, p], :n], v_pool[table[b, p], :n] = k[b, 16 * p:16 * p + n], v[b, 16 * p:16 * p + n]
    o_paged = zyfa.attention(q, k_pool, v_pool, causal="bottom_right", block_table=table, seqused_k=[40, 40],
                             key_bias=bias, context=cpu)
    assert o_paged.tobytes() == o.tobytes()


# --- quantize_fp8(query_mean=): the bias -------------------------------------------------------

@pytest.mark.parametrize("smooth,hadamard", [(True, False), (True, True), (False, False)])
def test_quantized_bias_is_the_definition(cpu, smooth, hadamard):
    k = randn(2, 40, 2, 64) + randn(64, sd=3.0)
    query_mean = randn(2, 4, 64, sd=4.0)  # GQA: heads_q 4 over 2 kv heads
    result = zyfa.quantize_fp8(k, hadamard=hadamard, smooth=smooth, query_mean=query_mean, key_bias_scale=0.09,
                               context=cpu)
    assert len(result) == (4 if smooth else 3)
    bias, mean = result[-1], (result[2] if smooth else None)
    assert bias.shape == (2, 4, 40) and bias.dtype == np.float32
    np.testing.assert_array_equal(bias, bias_definition(k, mean, query_mean, 0.09))
    # The codes and descale are those of the call without query_mean.
    plain = zyfa.quantize_fp8(k, hadamard=hadamard, smooth=smooth, context=cpu)
    for got, want in zip(result, plain):
        np.testing.assert_array_equal(got, want)


def test_quantized_bias_varlen_and_default_scale(cpu):
    cu = np.array([0, 15, 15, 40], np.int32)
    k, query_mean = randn(40, 2, 64) + 2.0, randn(3, 2, 64, sd=4.0)
    _, _, mean, bias = zyfa.quantize_fp8(k, smooth=True, cu_seqlens=cu, query_mean=query_mean, context=cpu)
    assert bias.shape == (2, 40)  # [heads_q, total]
    np.testing.assert_array_equal(bias, bias_definition(k, mean, query_mean, 1 / 8, cu))  # 1/sqrt(64)


def test_q_smoothing_under_gqa(cpu):
    b, s, hq, hkv, d = 1, 96, 4, 2, 64
    q = randn(b, s, hq, d) + randn(hq, d, sd=6.0)
    k, v = randn(b, s, hkv, d) + randn(hkv, d, sd=3.0), randn(b, s, hkv, d)
    q8, qd, qmean = zyfa.quantize_fp8(q, heads_kv=hkv, smooth=True, context=cpu)
    assert qd.shape == (b, hkv) and qmean.shape == (b, hq, d)  # one mean per query head
    np.testing.assert_allclose(qmean, q.astype(np.float64).mean(axis=1), rtol=1e-6, atol=1e-6)
    k8, kd, kmean, kbias = zyfa.quantize_fp8(k, smooth=True, query_mean=qmean, key_bias_scale=0.05, context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    o, lse = zyfa.attention(q8, k8, v8, causal=True, softmax_scale=0.05, descale=(qd, kd, vd), key_bias=kbias,
                            dtype="e4m3fn", out_dtype="fp32", softmax="exact", return_lse=True, context=cpu)
    o_ref, lse_ref = ref.attention(q, k, v, ref.MASK_CAUSAL, scale=0.05)
    assert ref.rel_rms(o, o_ref) < 0.08
    # The bias restores Q's mean: the lse needs only K smoothing's correction.
    assert np.max(np.abs(zyfa.unsmooth_lse(lse, q, kmean, softmax_scale=0.05) - lse_ref)) < 0.15


@pytest.mark.parametrize("softmax", ["exact", "lean"])
def test_q_smoothing_lowers_fp8_error_on_a_shared_offset(cpu, softmax):
    s, h, d, scale = 256, 2, 64, 1 / 32
    rng = np.random.default_rng(21)  # its own data, whichever tests run before it
    q = randn(1, s, h, d, rng=rng) + randn(h, d, sd=6.0, rng=rng)
    k, v = randn(1, s, h, d, rng=rng) + randn(h, d, sd=3.0, rng=rng), randn(1, s, h, d, rng=rng)
    o_ref, _ = ref.attention(q, k, v, ref.MASK_CAUSAL, scale=scale)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    fp8 = dict(causal=True, softmax_scale=scale, dtype="e4m3fn", out_dtype="fp32", softmax=softmax, context=cpu)
    # Hadamard + K smoothing alone.
    q8, qd = zyfa.quantize_fp8(q, hadamard=True, context=cpu)
    k8, kd, _ = zyfa.quantize_fp8(k, hadamard=True, smooth=True, context=cpu)
    err_k = ref.rel_rms(zyfa.attention(q8, k8, v8, descale=(qd, kd, vd), **fp8), o_ref)
    # + Q smoothing and its bias (the recipe of quantize_fp8's docstring).
    q8, qd, qmean = zyfa.quantize_fp8(q, hadamard=True, smooth=True, context=cpu)
    k8, kd, _, kbias = zyfa.quantize_fp8(k, hadamard=True, smooth=True, query_mean=qmean, key_bias_scale=scale,
                                         context=cpu)
    err_qk = ref.rel_rms(zyfa.attention(q8, k8, v8, descale=(qd, kd, vd), key_bias=kbias, **fp8), o_ref)
    assert err_qk < 0.8 * err_k, (err_qk, err_k)  # 0.56x in the C test


# --- argument checks ---------------------------------------------------------------------------

def test_argument_errors(cpu):
    q, k, v = randn(2, 40, 4, 64), randn(2, 70, 2, 64), randn(2, 70, 2, 64)
    with pytest.raises(ValueError, match=r"key_bias has shape \(2, 2, 70\), expected \(2, 4, 70\)"):
        zyfa.attention(q, k, v, key_bias=np.zeros((2, 2, 70), np.float32), context=cpu)
    cu = np.array([0, 40, 80], np.int32)
    with pytest.raises(ValueError, match=r"key_bias has shape \(2, 4, 40\), expected \(4, 80\) = \[heads_q, total_k\]"):
        zyfa.attention(q.reshape(80, 4, 64), k[:, :40].reshape(80, 2, 64), v[:, :40].reshape(80, 2, 64),
                       cu_seqlens_q=cu, cu_seqlens_k=cu, key_bias=np.zeros((2, 4, 40), np.float32), context=cpu)
    with pytest.raises(ValueError, match=r"cu_seqlens_k\[-1\] = 60"):  # its layout's total is cu_seqlens_k[-1]
        zyfa.attention(q.reshape(80, 4, 64), k[:, :40].reshape(80, 2, 64), v[:, :40].reshape(80, 2, 64),
                       cu_seqlens_q=cu, cu_seqlens_k=np.array([0, 30, 60], np.int32),
                       key_bias=np.zeros((4, 80), np.float32), context=cpu)

    # query_mean: heads_q a multiple of k's heads (the library's check), batch and head_dim k's.
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.quantize_fp8(k, query_mean=randn(2, 3, 64), context=cpu)
    assert info.value.status == zyfa.ERROR_INVALID_ARGUMENT
    assert "zyfa.quantize_fp8" in info.value.message and "query_mean.shape[1] (heads_q) = 3" in info.value.message
    for shape in ((2, 4, 32), (1, 4, 64), (4, 64)):
        with pytest.raises(ValueError, match=r"query_mean has shape"):
            zyfa.quantize_fp8(k, query_mean=randn(*shape), context=cpu)
    with pytest.raises(ValueError, match="needs query_mean"):
        zyfa.quantize_fp8(k, key_bias_scale=0.1, context=cpu)
    with pytest.raises(ValueError, match="query_mean with heads_kv=2"):
        zyfa.quantize_fp8(q, heads_kv=2, query_mean=randn(2, 4, 64), context=cpu)


def test_int8_qk_refuses_the_bias(cpu):
    q, k, v = randn(1, 64, 2, 64), randn(1, 64, 2, 64), randn(1, 64, 2, 64)
    q8, qd = zyfa.quantize_int8(q, per="token", context=cpu)
    k8, kd = zyfa.quantize_int8(k, per="block", context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q8, k8, v8, descale=(qd, kd, vd), dtype="e4m3fn", key_bias=np.zeros((1, 2, 64), np.float32),
                       context=cpu)
    assert info.value.status == zyfa.ERROR_NOT_SUPPORTED and "key_bias" in info.value.message


# --- torch CPU tensors (the custom ops) -------------------------------------------------------

def test_torch_tensors_match_numpy():
    torch = pytest.importorskip("torch")
    q, k, v = randn(1, 48, 4, 64), randn(1, 48, 2, 64) + 2.0, randn(1, 48, 2, 64)
    bias = randn(1, 4, 48, sd=2.0)
    o_np, lse_np = zyfa.attention(q, k, v, causal=True, key_bias=bias, return_lse=True)
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    with torch.no_grad():
        o, lse = zyfa.attention(tq, tk, tv, causal=True, key_bias=torch.from_numpy(bias), return_lse=True)
        assert o.numpy().tobytes() == o_np.tobytes() and lse.numpy().tobytes() == lse_np.tobytes()
        # A bf16 bias is converted to fp32 on the way in.
        o16 = zyfa.attention(tq, tk, tv, causal=True, key_bias=torch.from_numpy(bias).bfloat16())
        want = zyfa.attention(q, k, v, causal=True, key_bias=torch.from_numpy(bias).bfloat16().float().numpy())
        assert o16.numpy().tobytes() == want.tobytes()
        with pytest.raises(ValueError, match=r"key_bias has shape \(4, 48\)"):
            zyfa.attention(tq, tk, tv, key_bias=torch.zeros(4, 48))
    if not hasattr(torch, "float8_e4m3fn"):
        return
    query_mean = randn(1, 4, 64, sd=4.0)
    _, _, mean_np, bias_np = zyfa.quantize_fp8(k, smooth=True, query_mean=query_mean, key_bias_scale=0.1)
    codes, descale, mean, kbias = zyfa.quantize_fp8(tk, smooth=True, query_mean=torch.from_numpy(query_mean),
                                                    key_bias_scale=0.1)
    assert codes.dtype == torch.float8_e4m3fn and isinstance(kbias, torch.Tensor) and kbias.shape == (1, 4, 48)
    assert mean.numpy().tobytes() == mean_np.tobytes() and kbias.numpy().tobytes() == bias_np.tobytes()
    assert len(zyfa.quantize_fp8(tk, query_mean=torch.from_numpy(query_mean))) == 3
