"""key_block=: params.key_block through the binding (keys per online-softmax step). On the CPU
backend 0 is its own 64 bit for bit and 128 gives other LEAN bits once a row spans several key
blocks; values the library does not take come back as ZyfaError naming key_block."""
import numpy as np
import pytest

import reference as ref
import zyfa


def fp8_problem(cpu, s=300):
    rng = np.random.default_rng(7)
    b, h, d = 1, 2, 64
    q8, qd = zyfa.quantize_fp8(rng.standard_normal((b, s, h, d)).astype(np.float32) * 3, context=cpu)
    k8, kd = zyfa.quantize_fp8(rng.standard_normal((b, s, h, d)).astype(np.float32), context=cpu)
    v8, vd = zyfa.quantize_fp8(rng.standard_normal((b, s, h, d)).astype(np.float32), context=cpu)
    return q8, k8, v8, (qd, kd, vd)


def run(cpu, problem, **kwargs):
    q8, k8, v8, descale = problem
    return zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=descale, causal=True, softmax="lean",
                          return_lse=True, context=cpu, **kwargs)


def test_zero_is_64_and_128_differs_within_bounds(cpu):
    problem = fp8_problem(cpu)
    o0, lse0 = run(cpu, problem)
    o64, lse64 = run(cpu, problem, key_block=64)
    o128, lse128 = run(cpu, problem, key_block=128)
    assert o0.tobytes() == o64.tobytes() and lse0.tobytes() == lse64.tobytes()
    assert o0.tobytes() != o128.tobytes()
    q8, k8, v8, (qd, kd, vd) = problem

    def decoded(codes, scale):
        return zyfa.fp8_to_float32(codes, "e4m3fn") * scale[:, None, :, None]

    o_ref, lse_ref = ref.attention(decoded(q8, qd), decoded(k8, kd), decoded(v8, vd), ref.MASK_CAUSAL)
    assert ref.rel_rms(o128, o_ref) <= ref.O_TOL["fp8-lean"]
    assert ref.lse_max_abs(lse128, lse_ref) <= ref.LSE_TOL["lean"]


def test_kernel_name_follows_key_block(cpu):
    q8, k8, v8, descale = fp8_problem(cpu, s=64)
    name = zyfa.attention_kernel_name(q8, k8, v8, dtype="e4m3fn", descale=descale, context=cpu)
    assert name == zyfa.attention_kernel_name(q8, k8, v8, dtype="e4m3fn", descale=descale, context=cpu,
                                              key_block=64)
    assert name.endswith("_bk64")
    assert zyfa.attention_kernel_name(q8, k8, v8, dtype="e4m3fn", descale=descale, context=cpu,
                                      key_block=128).endswith("_bk128")


@pytest.mark.parametrize("value", [32, 63, -1, 256])
def test_other_values_are_invalid_and_write_nothing(cpu, value):
    q8, k8, v8, descale = fp8_problem(cpu, s=64)
    out = np.full((1, 64, 2, 64), 7.0, dtype=np.float32)
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=descale, out=out, context=cpu, key_block=value)
    assert info.value.status == zyfa.ERROR_INVALID_ARGUMENT
    assert "key_block = %d" % value in info.value.message
    assert np.all(out == 7.0)


@pytest.mark.parametrize("value", [1.5, "64", True, 2**32 + 64])
def test_non_int32_is_a_value_error(cpu, value):
    q8, k8, v8, descale = fp8_problem(cpu, s=64)
    with pytest.raises(ValueError):
        zyfa.attention(q8, k8, v8, dtype="e4m3fn", descale=descale, context=cpu, key_block=value)


def test_flash_attn_func_takes_key_block(cpu):
    q = np.random.default_rng(3).standard_normal((1, 40, 2, 32)).astype(np.float32)
    assert np.array_equal(zyfa.flash_attn_func(q, q, q, causal=True, key_block=64),
                          zyfa.flash_attn_func(q, q, q, causal=True))
