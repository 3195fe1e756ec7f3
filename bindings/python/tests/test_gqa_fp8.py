"""FP8 under GQA/MQA: quantize_fp8(q, heads_kv=...) gives the [batch, heads_kv] q scales that attention
takes; a [batch, heads_q] q_descale is taken only where it is equal within each group of query heads."""
import numpy as np
import pytest

import reference as ref
import zyfa

RNG = np.random.default_rng(2121)


def randn(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def decode(codes, descale, fp8="e4m3fn"):
    """codes [.., s, h, d] times a [b, h_scale] descale (h_scale divides h: adjacent heads share one)."""
    per_head = np.repeat(descale, codes.shape[-2] // descale.shape[1], axis=1)
    return zyfa.fp8_to_float32(codes, fp8) * per_head[:, None, :, None]


def group_amax(x, heads_kv):
    b, s, h, d = x.shape
    return np.abs(x).reshape(b, s, heads_kv, h // heads_kv, d).max(axis=(1, 3, 4))


@pytest.mark.parametrize("fp8,max_value", [("e4m3fn", 448.0), ("e4m3fnuz", 240.0)])
@pytest.mark.parametrize("heads_q,heads_kv", [(8, 2), (6, 1), (4, 4)])
def test_quantize_heads_kv_one_scale_per_group(cpu, fp8, max_value, heads_q, heads_kv):
    # Heads of very different magnitude, so that a per-head scale would differ within a group.
    x = randn(2, 33, heads_q, 64) * np.geomspace(0.01, 10, heads_q, dtype=np.float32)[None, None, :, None]
    codes, descale = zyfa.quantize_fp8(x, dtype=fp8, heads_kv=heads_kv, context=cpu)
    assert codes.shape == x.shape and codes.dtype == np.uint8
    assert descale.shape == (2, heads_kv) and descale.dtype == np.float32
    np.testing.assert_allclose(descale, group_amax(x, heads_kv) / max_value, rtol=1e-6)
    back = decode(codes, descale, fp8)
    bound = np.maximum(np.abs(x) / 16, 2.0 ** -10 * np.repeat(descale, heads_q // heads_kv, axis=1)[:, None, :, None])
    assert np.all(np.abs(back - x) <= bound * (1 + 1e-6))
    # Exactly the C recipe: the heads of a group quantised as one "head" of group * head_dim values.
    grouped, grouped_descale = zyfa.quantize_fp8(
        x.reshape(2, 33, heads_kv, heads_q // heads_kv * 64), dtype=fp8, context=cpu)
    np.testing.assert_array_equal(codes, grouped.reshape(x.shape))
    np.testing.assert_array_equal(descale, grouped_descale)


def test_gqa_fp8_example_numpy(cpu):
    """The documented example: q with 8 heads, k/v with 2, each quantised by zyfa.quantize_fp8."""
    b, s, hq, hkv, d = 2, 80, 8, 2, 64
    q = randn(b, s, hq, d) * np.linspace(0.2, 5, hq, dtype=np.float32)[None, None, :, None]
    k, v = randn(b, s, hkv, d), randn(b, s, hkv, d)
    q8, qd = zyfa.quantize_fp8(q, heads_kv=k.shape[-2], context=cpu)
    k8, kd = zyfa.quantize_fp8(k, context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    assert qd.shape == kd.shape == vd.shape == (b, hkv)
    o, lse = zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=(qd, kd, vd), causal="top_left",
                            return_lse=True, softmax="exact", context=cpu)
    o_ref, lse_ref = ref.attention(decode(q8, qd), decode(k8, kd), decode(v8, vd), ref.MASK_CAUSAL)
    assert ref.rel_rms(o, o_ref) <= ref.O_TOL["fp8-exact"]
    assert ref.lse_max_abs(lse, lse_ref) <= ref.LSE_TOL["exact"]


def test_quantize_heads_kv_varlen_out_and_strided_input(cpu):
    cu = np.array([0, 7, 7, 30], np.int32)
    qkv = randn(30, 3, 8, 64)  # q as a strided view into packed projections (head stride stays 64)
    x = qkv[:, 0]
    out = np.zeros((30, 8, 64), np.uint8)
    codes, descale = zyfa.quantize_fp8(x, cu_seqlens=cu, heads_kv=2, out=out, context=cpu)
    assert codes is out and descale.shape == (3, 2)
    for b in range(3):
        rows = x[cu[b]:cu[b + 1]].reshape(-1, 2, 4, 64)
        amax = np.abs(rows).max(axis=(0, 2, 3)) if rows.size else np.zeros(2, np.float32)
        np.testing.assert_allclose(descale[b], np.where(amax > 0, amax / 448.0, 1.0), rtol=1e-6)
    # A head stride other than head_dim is copied for the input; an output must be a view.
    wide = randn(1, 5, 8, 128)[..., :64]
    codes, descale = zyfa.quantize_fp8(wide, heads_kv=4, context=cpu)
    np.testing.assert_array_equal(codes, zyfa.quantize_fp8(np.ascontiguousarray(wide), heads_kv=4,
                                                           context=cpu)[0])
    with pytest.raises(ValueError, match="heads axis packed"):
        zyfa.quantize_fp8(wide, heads_kv=4, out=np.zeros((1, 5, 8, 128), np.uint8)[..., :64], context=cpu)


def test_quantize_heads_kv_argument_errors(cpu):
    x = randn(1, 16, 8, 64)
    for bad in (3, 0, -2, 16, 2.5, True):
        with pytest.raises(ValueError, match="heads_kv"):
            zyfa.quantize_fp8(x, heads_kv=bad, context=cpu)
    with pytest.raises(ValueError, match="hadamard=True with heads_kv=2"):
        zyfa.quantize_fp8(x, heads_kv=2, hadamard=True, context=cpu)
    codes, descale = zyfa.quantize_fp8(x, heads_kv=8, hadamard=True, context=cpu)  # one head per group
    np.testing.assert_array_equal(codes, zyfa.quantize_fp8(x, hadamard=True, context=cpu)[0])


def test_per_query_head_q_descale_equal_in_groups_is_accepted(cpu):
    b, s, hq, hkv, d = 2, 32, 8, 2, 64
    q8, qd = zyfa.quantize_fp8(randn(b, s, hq, d), heads_kv=hkv, context=cpu)
    k8, kd = zyfa.quantize_fp8(randn(b, s, hkv, d), context=cpu)
    v8, vd = zyfa.quantize_fp8(randn(b, s, hkv, d), context=cpu)
    per_query_head = np.repeat(qd, hq // hkv, axis=1)  # [b, hq], equal within each group
    o1 = zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=(qd, kd, vd), context=cpu)
    o2 = zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=(per_query_head, kd, vd), context=cpu)
    np.testing.assert_array_equal(o1, o2)


def test_per_query_head_q_descale_unequal_in_a_group_is_refused(cpu):
    b, s, hq, hkv, d = 2, 32, 8, 2, 64
    q8, qd = zyfa.quantize_fp8(randn(b, s, hq, d) * np.arange(1, 9, dtype=np.float32)[None, None, :, None],
                               context=cpu)  # per query head: the mistake of issue 21
    k8, kd = zyfa.quantize_fp8(randn(b, s, hkv, d), context=cpu)
    assert qd.shape == (b, hq)
    with pytest.raises(ValueError) as info:
        zyfa.attention(q8, k8, k8, dtype="e4m3fn", descale=(qd, kd, kd), context=cpu)
    message = str(info.value)
    assert "q_descale" in message and "heads_kv=2" in message and "query heads 0..3" in message


def test_descale_shape_errors_name_python_shapes(cpu):
    q8 = np.zeros((2, 16, 8, 64), np.uint8)
    k8 = np.zeros((2, 16, 2, 64), np.uint8)
    with pytest.raises(ValueError) as info:
        zyfa.attention(q8, k8, k8, dtype="e4m3fn", descale=(np.ones((2, 4), np.float32), None, None),
                       context=cpu)
    assert "(2, 2) = [batch, heads of k]" in str(info.value) and "heads_kv=2" in str(info.value)
    with pytest.raises(ValueError) as info:  # k/v descales are per kv head, never per query head
        zyfa.attention(q8, k8, k8, dtype="e4m3fn", descale=(None, np.ones((2, 8), np.float32), None),
                       context=cpu)
    assert "k_descale has shape (2, 8), expected (2, 2)" in str(info.value)
    assert "params." not in str(info.value)


# --- torch ---------------------------------------------------------------------------------------

def torch_or_skip():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    return torch


def test_gqa_fp8_example_torch():
    """Issue 21's report: q 8 heads, kv 2 heads, descale=(qd, kd, vd) straight from quantize_fp8."""
    torch = torch_or_skip()
    g = torch.Generator().manual_seed(21)
    q = torch.randn(2, 64, 8, 64, generator=g) * torch.linspace(0.1, 4, 8)[None, None, :, None]
    k, v = torch.randn(2, 64, 2, 64, generator=g), torch.randn(2, 64, 2, 64, generator=g)
    with pytest.raises(ValueError, match=r"quantize_fp8\(q, heads_kv=2\)"):
        q8, qd = zyfa.quantize_fp8(q)
        k8, kd = zyfa.quantize_fp8(k)
        zyfa.attention(q8, k8, k8, descale=(qd, kd, kd))
    q8, qd = zyfa.quantize_fp8(q, heads_kv=k.shape[2])
    k8, kd = zyfa.quantize_fp8(k)
    v8, vd = zyfa.quantize_fp8(v)
    assert q8.shape == q.shape and q8.dtype == torch.float8_e4m3fn and qd.shape == (2, 2)
    o = zyfa.attention(q8, k8, v8, descale=(qd, kd, vd), causal="bottom_right")
    o_fa = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qd, k_descale=kd, v_descale=vd)
    torch.testing.assert_close(o, o_fa, rtol=0, atol=0)
    o_ref, _ = ref.attention(decode(q8.view(torch.uint8).numpy(), qd.numpy()),
                             decode(k8.view(torch.uint8).numpy(), kd.numpy()),
                             decode(v8.view(torch.uint8).numpy(), vd.numpy()), ref.MASK_CAUSAL_BOTTOM_RIGHT)
    assert ref.rel_rms(o.float().numpy(), o_ref) <= ref.O_TOL["fp8-lean"] + ref.OUT_TOL["bf16"]
    # The torch op path and the direct (explicit context) path quantise identically.
    with zyfa.Context("cpu", num_threads=1) as ctx:
        q8_direct, qd_direct = zyfa.quantize_fp8(q, heads_kv=2, context=ctx)
    assert torch.equal(q8_direct.view(torch.uint8), q8.view(torch.uint8)) and torch.equal(qd_direct, qd)
    # A per-query-head q_descale that is equal within each group is taken as well.
    o2 = zyfa.attention(q8, k8, v8, descale=(qd.repeat_interleave(4, dim=1), kd, vd), causal="bottom_right")
    torch.testing.assert_close(o, o2, rtol=0, atol=0)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_gqa_fp8_compiles_fullgraph(backend):
    torch = torch_or_skip()
    g = torch.Generator().manual_seed(3)
    q, k, v = torch.randn(1, 48, 4, 64, generator=g), torch.randn(1, 48, 1, 64, generator=g), \
        torch.randn(1, 48, 1, 64, generator=g)

    def layer(q, k, v):
        q8, qd = zyfa.quantize_fp8(q, heads_kv=1)
        k8, kd = zyfa.quantize_fp8(k)
        v8, vd = zyfa.quantize_fp8(v)
        return zyfa.attention(q8, k8, v8, descale=(qd, kd, vd), causal="top_left")

    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True, backend=backend)
    torch.testing.assert_close(compiled(q, k, v), layer(q, k, v), rtol=0, atol=0)
