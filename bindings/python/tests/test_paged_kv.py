"""Paged K/V through the binding: zyfa.attention(block_table=, seqused_k=) and the flash_attn
drop-ins (flash_attn_varlen_func's block_table, flash_attn_with_kvcache's block_table/page_table and
cache_seqlens) give the contiguous call's bits on the same keys; malformed tables are ZyfaError
naming the Python argument."""
import numpy as np
import pytest

import zyfa
from zyfa.flash_attn_interface import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache


def to_pages(k, lengths, page_size, rng, spare=2):
    """k [b, s, h, d] (sequence i using its first lengths[i] keys) -> a shuffled pool [pages,
    page_size, h, d] holding NaN wherever no key lies, and its block table [b, max_pages]."""
    b, s, h, d = k.shape
    max_pages = (s + page_size - 1) // page_size
    needed = sum((n + page_size - 1) // page_size for n in lengths)
    order = rng.permutation(needed + spare).astype(np.int32)
    pool = np.full((needed + spare, page_size, h, d), np.nan, dtype=k.dtype)
    table = np.full((b, max_pages), order[-1], dtype=np.int32)
    nxt = 0
    for i, n in enumerate(lengths):
        for p in range((n + page_size - 1) // page_size):
            table[i, p] = order[nxt]
            nxt += 1
            rows = min(page_size, n - p * page_size)
            pool[table[i, p], :rows] = k[i, p * page_size:p * page_size + rows]
    return pool, table


def problem(rng, b=2, sq=40, sk=150, hq=4, hkv=2, d=32):
    q = rng.standard_normal((b, sq, hq, d)).astype(np.float32)
    k = rng.standard_normal((b, sk, hkv, d)).astype(np.float32)
    v = rng.standard_normal((b, sk, hkv, d)).astype(np.float32)
    return q, k, v


@pytest.mark.parametrize("page_size", [1, 3, 16, 64, 256])
def test_paged_equals_contiguous_dense_queries(cpu, page_size):
    rng = np.random.default_rng(page_size)
    q, k, v = problem(rng)
    lengths = [150, 150]
    o, lse = zyfa.attention(q, k, v, causal="bottom_right", return_lse=True, context=cpu)
    kp, table = to_pages(k, lengths, page_size, np.random.default_rng(1))
    vp, _ = to_pages(v, lengths, page_size, np.random.default_rng(1))
    # Every sequence's keys: max_seqlen_k (without it the whole table, max_pages * page_size keys).
    op, lsep = zyfa.attention(q, kp, vp, causal="bottom_right", return_lse=True, context=cpu, block_table=table,
                              max_seqlen_k=150)
    assert op.tobytes() == o.tobytes() and lsep.tobytes() == lse.tobytes()
    op, lsep = zyfa.attention(q, kp, vp, causal="bottom_right", return_lse=True, context=cpu, block_table=table,
                              seqused_k=np.array(lengths, dtype=np.int32))
    assert op.tobytes() == o.tobytes() and lsep.tobytes() == lse.tobytes()
    assert zyfa.attention_kernel_name(q, kp, vp, context=cpu, block_table=table, max_seqlen_k=150) == \
        zyfa.attention_kernel_name(q, k, v, context=cpu)


def test_paged_seqused_and_packed_queries(cpu):
    rng = np.random.default_rng(5)
    q, k, v = problem(rng, b=3, sq=20, sk=90)
    lengths_q, lengths_k = [20, 1, 7], [90, 13, 0]
    cu_q = np.array([0, 20, 21, 28], dtype=np.int32)
    cu_k = np.array([0, 90, 103, 103], dtype=np.int32)
    qp = np.concatenate([q[i, :n] for i, n in enumerate(lengths_q)])
    kpk = np.concatenate([k[i, :n] for i, n in enumerate(lengths_k)])
    vpk = np.concatenate([v[i, :n] for i, n in enumerate(lengths_k)])
    o, lse = zyfa.attention(qp, kpk, vpk, causal="bottom_right", return_lse=True, context=cpu,
                            cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
    kp, table = to_pages(k, lengths_k, 16, np.random.default_rng(2))
    vp, _ = to_pages(v, lengths_k, 16, np.random.default_rng(2))
    used = np.array(lengths_k, dtype=np.int32)
    op, lsep = zyfa.attention(qp, kp, vp, causal="bottom_right", return_lse=True, context=cpu, cu_seqlens_q=cu_q,
                              block_table=table, seqused_k=used)
    assert op.tobytes() == o.tobytes() and lsep.tobytes() == lse.tobytes()
    # flash_attn_varlen_func with a block table takes the key counts from cu_seqlens_k.
    of = flash_attn_varlen_func(qp, kp, vp, cu_q, cu_k, 20, 90, causal=True, block_table=table)
    assert of.tobytes() == o.tobytes()


def test_flash_attn_with_kvcache(cpu):
    rng = np.random.default_rng(9)
    q, k, v = problem(rng, b=2, sq=8, sk=128)
    used = [100, 37]
    want = [flash_attn_func(q[i:i + 1], k[i:i + 1, :n], v[i:i + 1, :n], causal=True) for i, n in enumerate(used)]
    # A contiguous cache with cache_seqlens, and the same keys in a paged cache (page_table).
    got = flash_attn_with_kvcache(q, k, v, cache_seqlens=np.array(used, dtype=np.int32), causal=True)
    kp, table = to_pages(k, used, 16, np.random.default_rng(3))
    vp, _ = to_pages(v, used, 16, np.random.default_rng(3))
    got_paged = flash_attn_with_kvcache(q, kp, vp, cache_seqlens=np.array(used, dtype=np.int32), causal=True,
                                        page_table=table)
    for i in range(2):
        assert got[i:i + 1].tobytes() == want[i].tobytes()
        assert got_paged[i:i + 1].tobytes() == want[i].tobytes()
    with pytest.raises(NotImplementedError, match="k="):
        flash_attn_with_kvcache(q, k, v, k=k[:, :1], v=v[:, :1], cache_seqlens=used)


def test_paged_errors_name_the_argument(cpu):
    rng = np.random.default_rng(11)
    q, k, v = problem(rng)
    kp, table = to_pages(k, [150, 150], 16, np.random.default_rng(1))
    vp, _ = to_pages(v, [150, 150], 16, np.random.default_rng(1))
    bad = table.copy()
    bad[1, 0] = kp.shape[0]
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q, kp, vp, causal="bottom_right", context=cpu, block_table=bad)
    assert info.value.status == zyfa.ERROR_INVALID_ARGUMENT
    assert "block_table" in info.value.message
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.attention(q, kp, vp, context=cpu, block_table=table, seqused_k=np.array([151, 3], dtype=np.int32),
                       max_seqlen_k=150)
    assert "seqused_k" in info.value.message
    with pytest.raises(ValueError, match="seqused_k"):
        zyfa.attention(q, k, v, context=cpu, seqused_k=np.array([1, 1], dtype=np.int32))
    with pytest.raises(ValueError, match="cu_seqlens_k"):
        zyfa.attention(q[0], kp, vp, context=cpu, block_table=table, cu_seqlens_q=[0, 20, 40],
                       cu_seqlens_k=[0, 150, 300])
