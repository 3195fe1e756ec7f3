"""num_splits= (params.num_splits, split-KV) through the binding. The CPU backend never splits: any
valid request gives bitwise the unsplit result; a negative one is ZyfaError naming num_splits. The
GPU path (a torch-allocated workspace) is tested in test_torch_gpu.py."""
import numpy as np
import pytest

import zyfa


def problem():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 1, 8, 64)).astype(np.float32)
    k = rng.standard_normal((2, 700, 2, 64)).astype(np.float32)
    v = rng.standard_normal((2, 700, 2, 64)).astype(np.float32)
    return q, k, v


def test_cpu_ignores_num_splits(cpu):
    q, k, v = problem()
    o0, lse0 = zyfa.attention(q, k, v, causal="bottom_right", return_lse=True, context=cpu)
    for n in (1, 4, 64):
        o, lse = zyfa.attention(q, k, v, causal="bottom_right", return_lse=True, context=cpu, num_splits=n)
        assert o.tobytes() == o0.tobytes() and lse.tobytes() == lse0.tobytes()


def test_negative_num_splits_is_refused(cpu):
    q, k, v = problem()
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q, k, v, context=cpu, num_splits=-2)
    assert "num_splits" in str(info.value)
