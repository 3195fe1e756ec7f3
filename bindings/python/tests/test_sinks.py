"""Attention sinks (sinks=, the flash_attn drop-in's s_aux=): one logit per query head in every row's
softmax denominator, multiplying no value. Against the numpy fp64 reference (the sink as a key with a
zero value), -inf as no sink bit for bit, rows without keys getting the sink as lse, the merge recipe
(sinks on one part only), and the argument checks."""
import numpy as np
import pytest

import reference as ref
import zyfa


def inputs(b=2, sq=40, sk=70, hq=4, hkv=2, d=64, seed=3):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, sq, hq, d)).astype(np.float32)
    k = rng.standard_normal((b, sk, hkv, d)).astype(np.float32)
    v = rng.standard_normal((b, sk, hkv, d)).astype(np.float32)
    return q, k, v


SINKS = np.array([0.5, -2.0, 3.0, 1.25], dtype=np.float32)


def test_fp32_against_reference(cpu):
    q, k, v = inputs()
    o, lse = zyfa.attention(q, k, v, causal="bottom_right", sinks=SINKS, return_lse=True, context=cpu)
    o_ref, lse_ref = ref.attention(q, k, v, ref.MASK_CAUSAL_BOTTOM_RIGHT, sinks=SINKS)
    assert ref.rel_rms(o, o_ref) <= ref.O_TOL["fp32"]
    assert ref.lse_max_abs(lse, lse_ref) <= ref.LSE_TOL["exact"]
    # The sinks change the result (they are not ignored).
    o0 = zyfa.attention(q, k, v, causal="bottom_right", context=cpu)
    assert ref.rel_rms(o0, o_ref) > 1e-3


def test_fp8_lean_against_reference(cpu):
    q, k, v = inputs(hkv=4)
    q8, qd = zyfa.quantize_fp8(q, context=cpu)
    k8, kd = zyfa.quantize_fp8(k, context=cpu)
    v8, vd = zyfa.quantize_fp8(v, context=cpu)
    o, lse = zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=(qd, kd, vd), causal="bottom_right",
                            softmax="lean", sinks=SINKS, return_lse=True, context=cpu)

    def decoded(codes, scale):
        return zyfa.fp8_to_float32(codes, "e4m3fn") * scale[:, None, :, None]

    o_ref, lse_ref = ref.attention(decoded(q8, qd), decoded(k8, kd), decoded(v8, vd), ref.MASK_CAUSAL_BOTTOM_RIGHT,
                                   sinks=SINKS)
    assert ref.rel_rms(o, o_ref) <= ref.O_TOL["fp8-lean"]
    assert ref.lse_max_abs(lse, lse_ref) <= ref.LSE_TOL["lean"]


def test_minus_inf_is_no_sink_bitwise(cpu):
    q, k, v = inputs()
    o0, lse0 = zyfa.attention(q, k, v, causal="top_left", return_lse=True, context=cpu)
    o1, lse1 = zyfa.attention(q, k, v, causal="top_left", return_lse=True, context=cpu,
                              sinks=np.full(4, -np.inf, dtype=np.float32))
    assert o0.tobytes() == o1.tobytes() and lse0.tobytes() == lse1.tobytes()


def test_rows_without_keys_get_the_sink(cpu):
    q, k, v = inputs(sq=30, sk=10)  # bottom-right: the first 20 rows see no key
    o, lse = zyfa.attention(q, k, v, causal="bottom_right", sinks=SINKS, return_lse=True, context=cpu)
    assert np.all(o[:, :20] == 0)
    np.testing.assert_allclose(lse[:, :, :20], np.broadcast_to(SINKS[None, :, None], (2, 4, 20)), rtol=1e-6)
    assert np.all(np.isfinite(lse))


def test_merge_with_sinks_on_one_part(cpu):
    q, k, v = inputs(b=1, sq=16, sk=96)
    o, lse = zyfa.attention(q, k, v, sinks=SINKS, return_lse=True, context=cpu)
    oa, la = zyfa.attention(q, k[:, :64], v[:, :64], sinks=SINKS, return_lse=True, context=cpu)
    ob, lb = zyfa.attention(q, k[:, 64:], v[:, 64:], return_lse=True, context=cpu)
    om, lm = zyfa.attention_merge([oa, ob], [la, lb], context=cpu)
    np.testing.assert_allclose(om, o, atol=1e-5)
    np.testing.assert_allclose(lm, lse, atol=1e-5)


def test_argument_checks(cpu):
    q, k, v = inputs()
    with pytest.raises(ValueError, match=r"sinks has shape \(2,\), expected \(4,\)"):
        zyfa.attention(q, k, v, sinks=np.zeros(2, dtype=np.float32), context=cpu)
    # A list works and is converted to fp32.
    o = zyfa.attention(q, k, v, sinks=[0.0, 1.0, 2.0, 3.0], context=cpu)
    assert o.shape == (2, 40, 4, 64)


def test_flash_attn_s_aux(cpu):
    torch = pytest.importorskip("torch")
    q, k, v = (torch.from_numpy(x) for x in inputs())
    sinks = torch.from_numpy(SINKS)
    with torch.no_grad():
        o1, l1 = zyfa.flash_attn_func(q, k, v, causal=True, s_aux=sinks, return_lse=True)
        o2, l2 = zyfa.flash_attn_func(q, k, v, causal=True, sinks=sinks, return_lse=True)
        o3, l3 = zyfa.attention(q, k, v, causal="bottom_right", sinks=sinks, return_lse=True)
    assert torch.equal(o1, o2) and torch.equal(o1, o3) and torch.equal(l1, l3)
    o_ref, _ = ref.attention(*(x.numpy() for x in (q, k, v)), ref.MASK_CAUSAL_BOTTOM_RIGHT, sinks=SINKS)
    assert ref.rel_rms(o1.numpy(), o_ref) <= ref.O_TOL["fp32"]
    with pytest.raises(TypeError, match="s_aux or sinks, not both"):
        zyfa.flash_attn_func(q, k, v, s_aux=sinks, sinks=sinks)
