"""causal alignment (issue 21, item 9): zyfa.attention(causal=True) is top-left, flash_attn_func's
causal=True is bottom-right; they differ only where seqlen_q != seqlen_k, and there a bare True in
zyfa.attention warns while the explicit names 'top_left' / 'bottom_right' never do."""
import warnings

import numpy as np
import pytest

import reference as ref
import zyfa

RNG = np.random.default_rng(9)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("sq,sk", [(24, 40), (40, 24)])
def test_bare_causal_true_warns_where_alignments_differ(cpu, sq, sk):
    q, k, v = randn(1, sq, 2, 64), randn(1, sk, 2, 64), randn(1, sk, 2, 64)
    with pytest.warns(UserWarning, match="top-left aligned.*'top_left'.*'bottom_right'"):
        o_true = zyfa.attention(q, k, v, causal=True, context=cpu)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        o_top = zyfa.attention(q, k, v, causal="top_left", context=cpu)
        o_bottom = zyfa.attention(q, k, v, causal="bottom_right", context=cpu)
        o_fa = zyfa.flash_attn_func(q, k, v, causal=True)
        o_fa_bottom = zyfa.flash_attn_func(q, k, v, causal="bottom_right")
        o_fa_top = zyfa.flash_attn_func(q, k, v, causal="top_left")
        zyfa.attention(q, q, q, causal=True, context=cpu)  # seqlen_q == seqlen_k: no difference, no warning
    np.testing.assert_array_equal(o_true, o_top)
    np.testing.assert_array_equal(o_fa, o_bottom)
    np.testing.assert_array_equal(o_fa_bottom, o_bottom)
    np.testing.assert_array_equal(o_fa_top, o_top)
    assert not np.array_equal(o_top, o_bottom)
    o_ref, _ = ref.attention(q, k, v, ref.MASK_CAUSAL_BOTTOM_RIGHT)
    assert ref.rel_rms(o_bottom, o_ref) <= ref.O_TOL["fp32"]
    o_ref, _ = ref.attention(q, k, v, ref.MASK_CAUSAL)
    assert ref.rel_rms(o_top, o_ref) <= ref.O_TOL["fp32"]


def test_bare_causal_true_warns_for_varlen_with_different_lengths(cpu):
    q, k = randn(20, 4, 64), randn(30, 2, 64)
    with pytest.warns(UserWarning, match="causal=True"):  # the packed totals differ
        zyfa.attention(q, k, k, causal=True, cu_seqlens_q=[0, 3, 3, 20], cu_seqlens_k=[0, 5, 9, 30], context=cpu)
    with pytest.warns(UserWarning, match="causal=True"):  # equal totals, different lengths
        zyfa.attention(q, q, q, causal=True, cu_seqlens_q=[0, 10, 20], cu_seqlens_k=np.array([0, 12, 20]),
                       context=cpu)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zyfa.attention(q, q, q, causal=True, cu_seqlens_q=[0, 10, 20], cu_seqlens_k=[0, 10, 20], context=cpu)
        zyfa.flash_attn_varlen_func(q, k, k, [0, 3, 3, 20], [0, 5, 9, 30], 17, 21, causal=True)
    with pytest.raises(ValueError, match="causal must be"):
        zyfa.attention(q[None], q[None], q[None], causal="bottom_left", context=cpu)


def test_torch_cpu_cu_seqlens_and_compile():
    torch = pytest.importorskip("torch")
    q = torch.from_numpy(randn(20, 4, 64))
    same = torch.tensor([0, 10, 20], dtype=torch.int32)
    with pytest.warns(UserWarning, match="causal=True"):
        zyfa.attention(q, q, q, causal=True, cu_seqlens_q=same, cu_seqlens_k=torch.tensor([0, 12, 20]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zyfa.attention(q, q, q, causal=True, cu_seqlens_q=same, cu_seqlens_k=same.clone())
    q, k, v = (torch.from_numpy(randn(1, s, 4, 64)) for s in (24, 40, 40))

    def layer(q, k, v):
        return zyfa.attention(q, k, v, causal="bottom_right") + zyfa.flash_attn_func(q, k, v, causal=True)

    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(q, k, v), layer(q, k, v), rtol=0, atol=0)
