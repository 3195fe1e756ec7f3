"""zyfa.attention_merge on the CPU backend (numpy and torch) and, with a GPU, on CUDA/ROCm: keys split
into ranges, each attended with return_lse=True, merged, against the unsplit call."""
import numpy as np
import pytest

import zyfa

RNG = np.random.default_rng(22)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def split_and_merge(q, k, v, cuts, causal=False, **merge_kwargs):
    """The unsplit (o, lse) and the merge of one attention call per key range [cuts[i], cuts[i+1])."""
    full = zyfa.attention(q, k, v, causal=causal, return_lse=True)
    outs, lses = [], []
    for k0, k1 in zip(cuts[:-1], cuts[1:]):
        last = k1 == k.shape[1]
        o, lse = zyfa.attention(q, k[:, k0:k1], v[:, k0:k1], causal=causal if last else False, return_lse=True)
        outs.append(o)
        lses.append(lse)
    return full, zyfa.attention_merge(outs, lses, **merge_kwargs)


# fp32 inputs keep P unrounded: merged and unsplit are the same weighted sum up to fp32 rounding
# (sums of a few hundred terms, exp/log of the lse): 1e-5 of |v| <= ~4.
@pytest.mark.parametrize("causal", [False, "bottom_right"])
def test_numpy_split_keys_merge_to_the_unsplit_call(causal):
    q, k, v = randn(2, 16, 4, 64), randn(2, 200, 4, 64), randn(2, 200, 4, 64)
    # Bottom-right causal: every part but the last sees all its keys from every query (mask none).
    (o_full, lse_full), (o, lse) = split_and_merge(q, k, v, [0, 64, 150, 200], causal=causal)
    assert o.dtype == np.float32 and o.shape == o_full.shape and lse.shape == (2, 4, 16)
    assert np.max(np.abs(o - o_full)) <= 1e-5 * 4
    assert np.max(np.abs(lse - lse_full)) <= 1e-5


def test_numpy_rules_packed_and_errors():
    parts = [randn(7, 2, 8), randn(7, 2, 8)]
    lses = [randn(2, 7), randn(2, 7)]
    lses[0][0, 1] = -np.inf                       # head 0, packed row 1: part 1 alone
    parts[0][1, 0, :] = np.nan                   # ... and part 0's O there is not read
    lses[0][1, 3] = lses[1][1, 3] = -np.inf      # head 1, row 3: no keys at all
    o, lse = zyfa.attention_merge(parts, lses, cu_seqlens_q=np.array([0, 3, 7], dtype=np.int32))
    assert o.shape == (7, 2, 8) and lse.shape == (2, 7)
    np.testing.assert_array_equal(o[1, 0], parts[1][1, 0])
    assert lse[0, 1] == lses[1][0, 1]
    assert lse[1, 3] == -np.inf and np.all(o[3, 1] == 0)
    m = np.maximum(lses[0][0, 0], lses[1][0, 0])
    w = np.exp(np.array([lses[0][0, 0], lses[1][0, 0]], dtype=np.float64) - m)
    np.testing.assert_allclose(o[0, 0], (w[0] * parts[0][0, 0] + w[1] * parts[1][0, 0]) / w.sum(), atol=1e-6)

    with pytest.raises(ValueError):
        zyfa.attention_merge(parts, lses[:1])
    with pytest.raises(zyfa.ZyfaError) as e:                       # in place: refused by the library
        zyfa.attention_merge(parts, lses, cu_seqlens_q=np.array([0, 3, 7], dtype=np.int32), out=parts[0])
    assert e.value.status == zyfa.ERROR_INVALID_ARGUMENT and "zyfa.attention_merge" in str(e.value)
    bf16 = zyfa.attention_merge(parts, lses, cu_seqlens_q=np.array([0, 3, 7], dtype=np.int32), out_dtype="bf16",
                                return_lse=False)
    assert bf16.dtype == np.uint16
    np.testing.assert_allclose(zyfa.bf16_to_float32(bf16)[0], o[0], rtol=2 ** -8)


def test_torch_cpu_split_keys():
    torch = pytest.importorskip("torch")
    q, k, v = (torch.from_numpy(randn(1, 8, 2, 32)).bfloat16(), torch.from_numpy(randn(1, 96, 2, 32)).bfloat16(),
               torch.from_numpy(randn(1, 96, 2, 32)).bfloat16())
    (o_full, lse_full), (o, lse) = split_and_merge(q, k, v, [0, 40, 96])
    assert o.dtype == torch.bfloat16 and lse.dtype == torch.float32
    # BF16 P and outputs: each result within 2^-9 of its exact weights and 2^-9 of output rounding.
    assert (o.float() - o_full.float()).abs().max().item() <= 4 * 2 ** -9 * v.float().abs().max().item()
    assert (lse - lse_full).abs().max().item() <= 1e-4


def test_torch_gpu_split_keys():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA/ROCm device")
    dev = "cuda"
    q, k, v = (torch.from_numpy(randn(2, 32, 4, 128)).bfloat16().to(dev),
               torch.from_numpy(randn(2, 256, 4, 128)).bfloat16().to(dev),
               torch.from_numpy(randn(2, 256, 4, 128)).bfloat16().to(dev))
    (o_full, lse_full), (o, lse) = split_and_merge(q, k, v, [0, 128, 256], out_dtype=torch.float32)
    assert o.device.type == "cuda" and o.dtype == torch.float32
    assert (o - o_full.float()).abs().max().item() <= 4 * 2 ** -9 * v.float().abs().max().item()
    assert (lse - lse_full).abs().max().item() <= 1e-4
