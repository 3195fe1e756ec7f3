"""Error paths: ZyfaError carries the status and the library's detail message; argument mistakes
that Python can see are TypeError/ValueError before any C call."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import zyfa


def arrays(b=1, s=16, hq=4, hkv=4, d=64, dtype=np.float32):
    rng = np.random.default_rng(1)
    return (rng.standard_normal((b, s, hq, d)).astype(dtype), rng.standard_normal((b, s, hkv, d)).astype(dtype),
            rng.standard_normal((b, s, hkv, d)).astype(dtype))


def test_heads_not_divisible_is_invalid_argument(cpu):
    q, k, v = arrays(hq=6, hkv=4)
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q, k, v, context=cpu)
    e = info.value
    assert e.status == zyfa.ERROR_INVALID_ARGUMENT and e.name == "invalid argument"
    assert "heads" in e.message and e.message in str(e)


def test_lean_softmax_needs_fp8_is_not_supported(cpu):
    q, k, v = arrays()
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q, k, v, softmax="lean", context=cpu)
    assert info.value.status == zyfa.ERROR_NOT_SUPPORTED and info.value.message


def test_descale_on_non_fp8_is_invalid(cpu):
    q, k, v = arrays()
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q, k, v, descale=(1.0, None, None), context=cpu)
    assert info.value.status == zyfa.ERROR_INVALID_ARGUMENT and "descale" in info.value.message


def test_kernel_name_and_its_error(cpu):
    q, k, v = arrays()
    assert zyfa.attention_kernel_name(q, k, v, context=cpu).startswith("cpu_")
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention_kernel_name(q, k, v, softmax="lean", context=cpu)
    assert info.value.status == zyfa.ERROR_NOT_SUPPORTED


def test_failed_call_writes_nothing(cpu):
    q, k, v = arrays(hq=6, hkv=4)
    out = np.full((1, 16, 6, 64), 7.0, dtype=np.float32)
    with pytest.raises(zyfa.ZyfaError):
        zyfa.attention(q, k, v, out=out, context=cpu)
    assert np.all(out == 7.0)


def test_error_messages_are_per_thread(cpu):
    q, k, v = arrays(hq=6, hkv=4)
    messages = {}

    def fail(name, fn):
        try:
            fn()
        except zyfa.ZyfaError as e:
            messages[name] = e.message

    a = threading.Thread(target=fail, args=("heads", lambda: zyfa.attention(q, k, v, context=cpu)))
    b = threading.Thread(target=fail, args=("window", lambda: zyfa.attention(
        *arrays(), window=(-5, -1), context=cpu)))
    for t in (a, b):
        t.start()
    for t in (a, b):
        t.join()
    assert "heads" in messages["heads"] and "window" in messages["window"]


def test_backend_not_present():
    with pytest.raises(ValueError):
        zyfa.Context("tpu")
    backends = zyfa.build_info().split("backends:")[1].split(";")[0]
    if "cuda" in backends:
        pytest.skip("this library has a CUDA backend that may find a device")
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.Context("cuda", device=0)
    assert info.value.status in (zyfa.ERROR_NOT_SUPPORTED, zyfa.ERROR_NO_DEVICE)


def test_closed_context():
    ctx = zyfa.Context("cpu")
    ctx.close()
    ctx.close()  # idempotent
    assert ctx.closed
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(*arrays(), context=ctx)
    assert info.value.status == zyfa.ERROR_INVALID_ARGUMENT and "closed" in info.value.message


def test_python_side_checks(cpu):
    q, k, v = arrays()
    with pytest.raises(TypeError, match="e4m3fn"):
        zyfa.attention(q.view(np.uint8), k.view(np.uint8), v.view(np.uint8), context=cpu)
    with pytest.raises(TypeError, match="bf16"):
        zyfa.attention(q.view(np.uint16), k.view(np.uint16), v.view(np.uint16), context=cpu)
    with pytest.raises(ValueError, match="4-D"):
        zyfa.attention(q[0], k[0], v[0], context=cpu)
    with pytest.raises(ValueError, match="head_dim"):
        zyfa.attention(q, k[..., :32], v, context=cpu)
    with pytest.raises(ValueError, match="contiguous"):
        zyfa.attention(q[..., ::2], k[..., ::2], v[..., ::2], context=cpu)
    with pytest.raises(ValueError, match="both or neither"):
        zyfa.attention(q[0], k[0], v[0], cu_seqlens_q=[0, 16], context=cpu)
    with pytest.raises(ValueError, match="exceeds"):
        zyfa.attention(q[0], k[0], v[0], cu_seqlens_q=[0, 17], cu_seqlens_k=[0, 16], context=cpu)
    with pytest.raises(ValueError, match="shape"):
        zyfa.attention(q, k, v, out=np.empty((1, 16, 4, 32), np.float32), context=cpu)
    with pytest.raises(ValueError, match="causal"):
        zyfa.attention(q, k, v, causal="sideways", context=cpu)
    with pytest.raises(ValueError, match="softmax"):
        zyfa.attention(q, k, v, softmax="fast", context=cpu)


@pytest.mark.parametrize("kwargs", [dict(dropout_p=0.1), dict(alibi_slopes=np.ones(4, np.float32)),
                                    dict(dropout_p=0.1, return_attn_probs=True), dict(softcap=30.0),
                                    dict(qv=1), dict(attention_chunk=128)])
def test_flash_attn_unsupported_arguments(kwargs):
    q, k, v = arrays()
    with pytest.raises(NotImplementedError, match=list(kwargs)[0]):
        zyfa.flash_attn_func(q, k, v, **kwargs)


def test_flash_attn_unknown_keyword_and_perf_hints():
    q, k, v = arrays()
    with pytest.raises(TypeError, match="bogus"):
        zyfa.flash_attn_func(q, k, v, bogus=1)
    zyfa.flash_attn_func(q, k, v, num_splits=4, pack_gqa=True, deterministic=True)  # ignored hints


def test_library_not_found_is_clear():
    env = dict(os.environ, ZYFA_LIBRARY_PATH="/nonexistent/libzyfa.so")
    code = ("import zyfa\n"
            "try:\n    zyfa.version()\n"
            "except zyfa.LibraryNotFoundError as e:\n    print('ERR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.startswith("ERR") and "ZYFA_LIBRARY_PATH" in out.stdout


def test_status_strings():
    assert zyfa.status_string(zyfa.ERROR_OUT_OF_MEMORY) != zyfa.status_string(zyfa.ERROR_INTERNAL)
    assert zyfa.status_string(999) == "unknown status"
