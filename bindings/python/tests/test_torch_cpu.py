"""torch CPU tensors: the custom ops, their fake implementations, torch.compile, the flash_attn drop-in."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import reference as ref  # noqa: E402
import zyfa  # noqa: E402


def randn(*shape, dtype=torch.float32):
    g = torch.Generator().manual_seed(sum(shape))
    return torch.randn(*shape, generator=g).to(dtype)


def test_bf16_tensors_default_bf16_output():
    q, k, v = randn(2, 64, 8, 64, dtype=torch.bfloat16), randn(2, 80, 2, 64, dtype=torch.bfloat16), \
        randn(2, 80, 2, 64, dtype=torch.bfloat16)
    o, lse = zyfa.attention(q, k, v, causal="bottom_right", return_lse=True)
    assert o.dtype == torch.bfloat16 and o.shape == (2, 64, 8, 64) and lse.shape == (2, 8, 64)
    o_ref, lse_ref = ref.attention(q.float().numpy(), k.float().numpy(), v.float().numpy(),
                                   ref.MASK_CAUSAL_BOTTOM_RIGHT)
    assert ref.rel_rms(o.float().numpy(), o_ref) <= ref.O_TOL["bf16"] + ref.OUT_TOL["bf16"]
    assert ref.lse_max_abs(lse.numpy(), lse_ref) <= ref.LSE_TOL["exact"]


@pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="this torch has no float8_e4m3fn")
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e4m3fnuz"])
def test_fp8_tensors_from_quantize(name):
    if not hasattr(torch, name):
        pytest.skip("this torch has no %s" % name)
    fp8 = getattr(torch, name)
    q8, qd = zyfa.quantize_fp8(randn(1, 64, 4, 128), dtype=name)
    k8, kd = zyfa.quantize_fp8(randn(1, 64, 4, 128), dtype=name)
    v8, vd = zyfa.quantize_fp8(randn(1, 64, 4, 128), dtype=name)
    assert q8.dtype == fp8 and qd.dtype == torch.float32 and qd.shape == (1, 4)
    o = zyfa.attention(q8, k8, v8, causal=True, descale=(qd, kd, vd))
    assert o.dtype == torch.bfloat16

    def dec(x, d):
        return x.float() * d[:, None, :, None]

    o_ref, _ = ref.attention(dec(q8, qd).numpy(), dec(k8, kd).numpy(), dec(v8, vd).numpy(), ref.MASK_CAUSAL)
    assert ref.rel_rms(o.float().numpy(), o_ref) <= ref.O_TOL["fp8-lean"] + ref.OUT_TOL["bf16"]


def test_varlen_and_out():
    cu_q = torch.tensor([0, 3, 3, 20], dtype=torch.int32)
    cu_k = torch.tensor([0, 5, 9, 30], dtype=torch.int32)
    q, k, v = randn(20, 4, 64), randn(30, 4, 64), randn(30, 4, 64)
    out = torch.full((20, 4, 64), float("nan"))
    o, lse = zyfa.flash_attn_varlen_func(q, k, v, cu_q, cu_k, 17, 21, causal=True, out=out, return_lse=True)
    assert o is out and lse.shape == (4, 20)
    o_ref, lse_ref = ref.attention(q.numpy(), k.numpy(), v.numpy(), ref.MASK_CAUSAL_BOTTOM_RIGHT,
                                   cu_q=cu_q.numpy(), cu_k=cu_k.numpy())
    assert ref.rel_rms(out.numpy(), o_ref) <= ref.O_TOL["fp32"]
    assert ref.lse_max_abs(lse.numpy(), lse_ref) <= ref.LSE_TOL["exact"]


def test_explicit_context_and_errors():
    q = randn(1, 16, 6, 64)
    k = randn(1, 16, 4, 64)
    with zyfa.Context("cpu", num_threads=1) as ctx:
        with pytest.raises(zyfa.ZyfaError) as info:
            zyfa.attention(q, k, k, context=ctx)
        assert info.value.status == zyfa.ERROR_INVALID_ARGUMENT
    with pytest.raises(zyfa.ZyfaError):  # through the custom op: the same exception comes out
        zyfa.attention(q, k, k)


@pytest.mark.skipif(not hasattr(torch, "float8_e4m3fn"), reason="this torch has no float8_e4m3fn")
def test_key_block_through_the_custom_op():
    x = [randn(1, 300, 2, 64) * (3 if i == 0 else 1) for i in range(3)]
    q8, k8, v8 = (zyfa.quantize_fp8(t) for t in x)
    descale = (q8[1], k8[1], v8[1])
    own = zyfa.attention(q8[0], k8[0], v8[0], descale=descale, causal=True)
    step64 = zyfa.attention(q8[0], k8[0], v8[0], descale=descale, causal=True, key_block=64)
    step128 = zyfa.attention(q8[0], k8[0], v8[0], descale=descale, causal=True, key_block=128)
    assert torch.equal(own, step64) and not torch.equal(own, step128)
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q8[0], k8[0], v8[0], descale=descale, key_block=96)
    assert "key_block = 96" in info.value.message


def test_opcheck_schema_and_fake():
    if not hasattr(torch.library, "opcheck"):
        pytest.skip("torch.library.opcheck needs torch >= 2.4")
    import zyfa._torch_ops  # noqa: F401  registers the ops
    q, k, v = randn(1, 32, 4, 64), randn(1, 32, 2, 64), randn(1, 32, 2, 64)
    args = (q, k, v, None, None, None, None, None, -1, -1, 1, -1, -1, 0.0, 0, 0, -1, True)
    for extra in ((None, None), (randn(4), randn(1, 4, 32))):  # sinks, key_bias
        torch.library.opcheck(torch.ops.zyfa.attention.default, args + extra,
                              test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_static"))
        torch.library.opcheck(torch.ops.zyfa.attention_out.default, args + extra + (torch.empty(1, 32, 4, 64),),
                              test_utils=("test_schema", "test_faketensor"))
    mean = randn(1, 4, 64)
    for x, smooth, query_mean in ((q, False, None), (k, True, None), (k, True, mean), (k, False, mean)):
        torch.library.opcheck(torch.ops.zyfa.quantize_fp8.default,
                              (x, None, -1, zyfa.DTYPE_FP8_E4M3FN, True, smooth, query_mean, 0.0),
                              test_utils=("test_schema", "test_faketensor"))
    cu = torch.tensor([0, 12, 32], dtype=torch.int32)
    torch.library.opcheck(torch.ops.zyfa.quantize_fp8.default,
                          (k[0], cu, 20, zyfa.DTYPE_FP8_E4M3FN, False, True, randn(2, 4, 64), 0.1),
                          test_utils=("test_schema", "test_faketensor"))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_fullgraph(backend):
    q, k, v = randn(1, 48, 4, 64), randn(1, 48, 4, 64), randn(1, 48, 4, 64)

    def layer(q, k, v):
        o = zyfa.flash_attn_func(q * 2.0, k, v, causal=True)
        return torch.nn.functional.relu(o) + 1.0

    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True, backend=backend)
    torch.testing.assert_close(compiled(q, k, v), layer(q, k, v), rtol=0, atol=0)
