"""K smoothing: quantize_fp8(k, smooth=True) returns the per-(sequence, kv head) channel mean it
subtracted; attention's o needs nothing back, its lse gets unsmooth_lse (docs/api.md, K smoothing)."""
import numpy as np
import pytest

import reference as ref
import zyfa

RNG = np.random.default_rng(2012)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def biased_keys(*shape):
    """Keys with a per-channel offset shared by every token, several sigma, as real keys have."""
    offset = 3.0 * (1 + np.arange(shape[-1]) % 5) * (-1.0) ** np.arange(shape[-1])
    return randn(*shape) + offset.astype(np.float32)


def dequantise(codes, descale):
    return zyfa.fp8_to_float32(codes) * descale[:, None, :, None]


def test_mean_and_round_trip(cpu):
    k = biased_keys(2, 50, 3, 64)
    codes, descale, mean = zyfa.quantize_fp8(k, smooth=True, context=cpu)
    assert mean.shape == (2, 3, 64) and mean.dtype == np.float32 and descale.shape == (2, 3)
    np.testing.assert_allclose(mean, k.astype(np.float64).mean(axis=1), rtol=1e-6, atol=1e-9)
    smoothed = k - mean[:, None, :, :]
    # Half an e4m3 quantum: 2^-4 of the value, or half the subnormal quantum 2^-9 times the descale.
    bound = np.maximum(np.abs(smoothed) / 16, 2.0 ** -10 * descale[:, None, :, None]) * (1 + 1e-5) + 1e-6
    assert np.all(np.abs(dequantise(codes, descale) - smoothed) <= bound)
    # Without smooth the call returns two values, as before.
    assert len(zyfa.quantize_fp8(k, context=cpu)) == 2


def test_varlen_means_per_sequence(cpu):
    k = biased_keys(40, 2, 64)
    cu = np.array([0, 15, 15, 40], np.int32)
    _, _, mean = zyfa.quantize_fp8(k, smooth=True, cu_seqlens=cu, context=cpu)
    assert mean.shape == (3, 2, 64)
    np.testing.assert_allclose(mean[0], k[0:15].astype(np.float64).mean(axis=0), rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(mean[1], 0.0)  # the empty sequence
    np.testing.assert_allclose(mean[2], k[15:40].astype(np.float64).mean(axis=0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("softmax", ["exact", "lean"])
def test_attention_o_unchanged_and_lse_corrected(cpu, softmax):
    b, s, hq, hkv, d = 1, 96, 4, 2, 64
    q, k, v = randn(b, s, hq, d), biased_keys(b, s, hkv, d), randn(b, s, hkv, d)
    o_ref, lse_ref = ref.attention(q, k, v, ref.MASK_CAUSAL)
    q8, qd = zyfa.quantize_fp8(q, heads_kv=hkv, context=cpu)  # GQA: one q scale per kv head
    k8, kd, mean = zyfa.quantize_fp8(k, smooth=True, context=cpu)
    k8_plain, kd_plain = zyfa.quantize_fp8(k, context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    fp8 = dict(causal=True, softmax=softmax, dtype="e4m3fn", out_dtype="fp32", context=cpu)
    o, lse = zyfa.attention(q8, k8, v8, descale=(qd, kd, vd), return_lse=True, **fp8)
    o_plain = zyfa.attention(q8, k8_plain, v8, descale=(qd, kd_plain, vd), **fp8)
    err, err_plain = ref.rel_rms(o, o_ref), ref.rel_rms(o_plain, o_ref)
    assert err < 0.08 and err < err_plain  # smoothing pays on biased keys
    corrected = zyfa.unsmooth_lse(lse, q, mean)
    assert corrected.shape == lse.shape and corrected.dtype == np.float32
    assert np.mean(np.abs(lse - lse_ref)) > 1.0  # uncorrected: the smoothed scores' lse
    # The FP8 score error is a few 1e-2 here; LEAN adds up to 0.082 (docs/api.md, lse).
    assert np.max(np.abs(corrected - lse_ref)) < (0.15 if softmax == "exact" else 0.25)


def test_mha_hadamard_and_smoothing(cpu):
    b, s, h, d = 1, 80, 2, 64
    q, k, v = randn(b, s, h, d), biased_keys(b, s, h, d), randn(b, s, h, d)
    o_ref, lse_ref = ref.attention(q, k, v, ref.MASK_CAUSAL)
    q8, qd = zyfa.quantize_fp8(q, hadamard=True, context=cpu)
    k8, kd, mean = zyfa.quantize_fp8(k, hadamard=True, smooth=True, context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    o, lse = zyfa.attention(q8, k8, v8, causal=True, descale=(qd, kd, vd), return_lse=True, dtype="e4m3fn",
                            out_dtype="fp32", context=cpu)
    assert ref.rel_rms(o, o_ref) < 0.08
    # The mean is in the unrotated basis: the same correction with the original q.
    assert np.max(np.abs(zyfa.unsmooth_lse(lse, q, mean) - lse_ref)) < 0.25


def test_unsmooth_lse_formula_varlen_and_scale():
    q = randn(10, 4, 8)
    mean = randn(2, 2, 8)
    lse = np.zeros((4, 10), np.float32)
    cu = [0, 6, 10]
    got = zyfa.unsmooth_lse(lse, q, mean, softmax_scale=0.5, cu_seqlens=cu)
    for h in range(4):
        for i in range(10):
            b = 0 if i < 6 else 1
            want = 0.5 * np.dot(q[i, h].astype(np.float64), mean[b, h // 2])
            assert abs(got[h, i] - want) < 1e-5
    with pytest.raises(ValueError, match="does not fit q"):
        zyfa.unsmooth_lse(lse, q, randn(2, 3, 8), cu_seqlens=cu)


def test_heads_kv_smoothing_means_per_query_head(cpu):
    # Q smoothing under GQA (exact with quantize_fp8(k, query_mean=)'s bias: test_key_bias.py): the
    # grouped heads share a scale, the mean stays one per query head.
    x = biased_keys(1, 8, 4, 64)
    _, descale, mean = zyfa.quantize_fp8(x, heads_kv=2, smooth=True, context=cpu)
    assert descale.shape == (1, 2) and mean.shape == (1, 4, 64)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=1), rtol=1e-6, atol=1e-9)
    assert len(zyfa.quantize_fp8(x, heads_kv=4, smooth=True, context=cpu)) == 3


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    k = torch.from_numpy(biased_keys(1, 40, 2, 64))
    q = torch.from_numpy(randn(1, 40, 2, 64))
    k8, kd, mean = zyfa.quantize_fp8(k, smooth=True)
    assert k8.dtype == torch.float8_e4m3fn and mean.shape == (1, 2, 64) and mean.dtype == torch.float32
    np.testing.assert_allclose(mean.numpy(), k.double().mean(dim=1).numpy(), rtol=1e-6, atol=1e-9)
    assert len(zyfa.quantize_fp8(k)) == 2
    lse = torch.zeros(1, 2, 40)
    corrected = zyfa.unsmooth_lse(lse, q, mean)
    assert isinstance(corrected, torch.Tensor)
    np.testing.assert_allclose(corrected.numpy(), zyfa.unsmooth_lse(lse.numpy(), q.numpy(), mean.numpy()),
                               rtol=1e-5, atol=1e-5)
