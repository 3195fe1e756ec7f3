"""The flash_attn drop-in's contract (issue 21): forward-only refusal of grad inputs, return_attn_probs
as flash_attn returns it, seqused_q/k equal to the packed lengths, refusals that name the function the
user called and describe tensors by shape, and library errors in Python argument names."""
import numpy as np
import pytest

import reference as ref
import zyfa

torch = pytest.importorskip("torch")


def randn(*shape):
    g = torch.Generator().manual_seed(sum(shape))
    return torch.randn(*shape, generator=g)


def varlen_inputs():
    cu_q = torch.tensor([0, 3, 3, 20], dtype=torch.int32)
    cu_k = torch.tensor([0, 5, 9, 30], dtype=torch.int32)
    return randn(20, 4, 64), randn(30, 2, 64), randn(30, 2, 64), cu_q, cu_k


# --- forward only --------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["q", "k", "v"])
def test_requires_grad_is_refused_at_forward_time(which):
    q, k, v = randn(1, 16, 4, 64), randn(1, 16, 4, 64), randn(1, 16, 4, 64)
    inputs = dict(q=q, k=k, v=v)
    inputs[which] = inputs[which].requires_grad_()
    with pytest.raises(NotImplementedError) as info:
        zyfa.flash_attn_func(inputs["q"], inputs["k"], inputs["v"], causal=True)
    message = str(info.value)
    assert message.startswith("zyfa.flash_attn_func is forward-only")
    assert "%s requires grad" % which in message and "torch.no_grad()" in message
    with pytest.raises(NotImplementedError, match="zyfa.attention is forward-only"):
        zyfa.attention(inputs["q"], inputs["k"], inputs["v"])
    with torch.no_grad():  # inference code: the same inputs run
        o = zyfa.flash_attn_func(inputs["q"], inputs["k"], inputs["v"], causal=True)
    with torch.inference_mode():
        torch.testing.assert_close(zyfa.flash_attn_func(inputs["q"], inputs["k"], inputs["v"], causal=True), o,
                                   rtol=0, atol=0)
    assert not o.requires_grad


def test_requires_grad_refusal_names_the_varlen_function_and_quantize():
    q, k, v, cu_q, cu_k = varlen_inputs()
    with pytest.raises(NotImplementedError, match="zyfa.flash_attn_varlen_func is forward-only"):
        zyfa.flash_attn_varlen_func(q.requires_grad_(), k, v, cu_q, cu_k, 17, 21)
    if hasattr(torch, "float8_e4m3fn"):
        with pytest.raises(NotImplementedError, match="zyfa.quantize_fp8 is forward-only.*x requires grad"):
            zyfa.quantize_fp8(randn(1, 8, 2, 64).requires_grad_())
        with torch.no_grad():
            zyfa.quantize_fp8(randn(1, 8, 2, 64).requires_grad_())


# --- return_attn_probs ---------------------------------------------------------------------------

def test_return_attn_probs_with_dropout_zero_is_out_lse_none():
    q, k, v = randn(2, 24, 4, 64), randn(2, 40, 2, 64), randn(2, 40, 2, 64)
    result = zyfa.flash_attn_func(q, k, v, 0.0, None, True, return_attn_probs=True)
    assert isinstance(result, tuple) and len(result) == 3 and result[2] is None
    o, lse, _ = result
    assert o.shape == (2, 24, 4, 64) and lse.shape == (2, 4, 24) and lse.dtype == torch.float32
    o_ref, lse_ref = ref.attention(q.numpy(), k.numpy(), v.numpy(), ref.MASK_CAUSAL_BOTTOM_RIGHT)
    assert ref.rel_rms(o.numpy(), o_ref) <= ref.O_TOL["fp32"]
    assert ref.lse_max_abs(lse.numpy(), lse_ref) <= ref.LSE_TOL["exact"]
    o2, lse2 = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
    assert torch.equal(o, o2) and torch.equal(lse, lse2)
    with pytest.raises(NotImplementedError, match="dropout_p"):  # probabilities with dropout: refused
        zyfa.flash_attn_func(q, k, v, 0.1, return_attn_probs=True)


def test_return_attn_probs_varlen_and_numpy():
    q, k, v, cu_q, cu_k = varlen_inputs()
    o, lse, probs = zyfa.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 17, 21, return_attn_probs=True)
    assert probs is None and o.shape == (20, 4, 64) and lse.shape == (4, 20) and lse.dtype == torch.float32
    qn = np.asarray(q.numpy())
    o, lse, probs = zyfa.flash_attn_func(qn[None], qn[None], qn[None], return_attn_probs=True)
    assert probs is None and isinstance(o, np.ndarray) and lse.shape == (1, 4, 20)


# --- seqused_q / seqused_k -----------------------------------------------------------------------

def test_seqused_equal_to_packed_lengths_is_accepted():
    q, k, v, cu_q, cu_k = varlen_inputs()
    expected = zyfa.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 17, 21, causal=True)
    o = zyfa.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 17, 21, causal=True,
                                    seqused_q=cu_q[1:] - cu_q[:-1], seqused_k=torch.tensor([5, 4, 21]))
    torch.testing.assert_close(o, expected, rtol=0, atol=0)
    qd, kd = randn(2, 8, 2, 64), randn(2, 12, 2, 64)
    dense = zyfa.flash_attn_func(qd, kd, kd, seqused_q=torch.full((2,), 8, dtype=torch.int32),
                                 seqused_k=[12, 12])
    torch.testing.assert_close(dense, zyfa.flash_attn_func(qd, kd, kd), rtol=0, atol=0)


def test_seqused_shorter_than_packed_is_not_implemented():
    q, k, v, cu_q, cu_k = varlen_inputs()
    with pytest.raises(NotImplementedError) as info:
        zyfa.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 17, 21, seqused_k=torch.tensor([5, 4, 20],
                                                                                      dtype=torch.int32))
    message = str(info.value)
    assert message.startswith("zyfa.flash_attn_varlen_func: seqused_k=Tensor(shape=(3,), dtype=torch.int32")
    assert "[5, 4, 20]" in message and "cu_seqlens_k[1:] - cu_seqlens_k[:-1] = [5, 4, 21]" in message
    with pytest.raises(NotImplementedError, match=r"zyfa.flash_attn_func: seqused_q=.*q.shape\[1\]"):
        zyfa.flash_attn_func(randn(2, 8, 2, 64), randn(2, 8, 2, 64), randn(2, 8, 2, 64), seqused_q=[8, 7])


# --- messages ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,what", [(dict(dropout_p=0.1), "dropout_p"), (dict(softcap=30.0), "softcap"),
                                         (dict(qv=1), "qv"), (dict(attention_chunk=128), "attention_chunk")])
def test_varlen_refusals_name_flash_attn_varlen_func(kwargs, what):
    q, k, v, cu_q, cu_k = varlen_inputs()
    with pytest.raises(NotImplementedError) as info:
        zyfa.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 17, 21, **kwargs)
    assert str(info.value).startswith("zyfa.flash_attn_varlen_func: %s" % what)
    with pytest.raises(TypeError, match=r"^flash_attn_varlen_func\(\) got an unexpected keyword argument 'bogus'"):
        zyfa.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 17, 21, bogus=1)


def test_refused_tensors_are_described_not_printed():
    q, k, v = randn(1, 16, 4, 64), randn(1, 16, 4, 64), randn(1, 16, 4, 64)
    slopes = torch.arange(1000.0) + 0.5
    for kwargs in (dict(alibi_slopes=slopes), dict(page_table=torch.arange(1000, dtype=torch.int32)),
                   dict(dropout_p=torch.tensor(0.1)), dict(rotary_cos=slopes.numpy())):
        with pytest.raises(NotImplementedError) as info:
            zyfa.flash_attn_func(q, k, v, **kwargs)
        message = str(info.value)
        assert "shape=" in message and "999.5" not in message and "tensor(" not in message, message
        assert len(message) < 300
    with pytest.raises(ValueError, match="zyfa.flash_attn_func: causal must be"):
        zyfa.flash_attn_func(q, k, v, causal="diagonal")


def test_library_errors_use_python_argument_names(cpu):
    q, k = randn(1, 16, 6, 64), randn(1, 16, 4, 64)
    for api, call in (("zyfa.flash_attn_func", lambda: zyfa.flash_attn_func(q, k, k)),
                      ("zyfa.attention", lambda: zyfa.attention(q, k, k)),
                      ("zyfa.attention", lambda: zyfa.attention(q.numpy(), k.numpy(), k.numpy(), context=cpu))):
        with pytest.raises(zyfa.ZyfaError) as info:
            call()
        assert info.value.status == zyfa.ERROR_INVALID_ARGUMENT
        message = info.value.message
        assert message == api + ": k.shape[2] (heads of k) = 4 does not divide q.shape[2] (heads of q) = 6", message
    qv, kv = randn(20, 6, 64), randn(30, 4, 64)
    cu_q, cu_k = torch.tensor([0, 20], dtype=torch.int32), torch.tensor([0, 30], dtype=torch.int32)
    with pytest.raises(zyfa.ZyfaError, match=r"zyfa.flash_attn_varlen_func: k.shape\[1\] \(heads of k\) = 4 "
                                             r"does not divide q.shape\[1\]"):
        zyfa.flash_attn_varlen_func(qv, kv, kv, cu_q, cu_k, 20, 30)
    q, k, v = randn(1, 16, 4, 64), randn(1, 16, 4, 64), randn(1, 16, 4, 64)
    cases = [(dict(softmax_scale=float("inf")), "softmax_scale = inf is not finite"),
             (dict(window_size=(-5, -1)), "window_size[0] (the left window) = -5"),
             (dict(out=q), "out's data ["),  # an output that aliases an input (issue 18's rule)
             (dict(max_seqlen_q=10), "max_seqlen_q = 10")]
    for kwargs, text in cases:
        if "max_seqlen_q" in kwargs:
            call = lambda: zyfa.flash_attn_varlen_func(q[0], k[0], v[0], [0, 16], [0, 16],  # noqa: E731
                                                       max_seqlen_k=16, **kwargs)
        else:
            call = lambda: zyfa.flash_attn_func(q, k, v, **kwargs)  # noqa: E731
        with pytest.raises(zyfa.ZyfaError) as info:
            call()
        message = info.value.message
        assert text in message and "params." not in message, message
        if "out" in kwargs:
            assert "overlaps q's data" in message
    with pytest.raises(zyfa.ZyfaError, match=r"^invalid argument: zyfa.attention: window\[1\] \(the right window\)"):
        zyfa.attention(q, k, v, window=(-1, -7))
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.quantize_fp8(randn(1, 4, 2, 48), hadamard=True)
    assert info.value.message.startswith("zyfa.quantize_fp8: x.shape[-1] (head_dim of x) = 48")
    assert "params." not in info.value.message
