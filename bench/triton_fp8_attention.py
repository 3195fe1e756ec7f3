"""A plain Triton FP8 (e4m3) causal flash-attention forward kernel: the benchmark's FP8 anchor.

Numerics as zyfa's EXACT mode: S = Q K^T in fp32 (e4m3 operands), online softmax over key blocks
with exp2 on scores pre-multiplied by softmax_scale * log2(e), P = exp2(t) * 256 cast to e4m3 for
the P.V product (fp32 accumulation), the denominator from the unrounded p, O = acc / (256 l).

Layouts: q [batch, seqlen, heads_q, head_dim_qk] and k [batch, seqlen, heads_kv, head_dim_qk]
(head_dim contiguous), as zyfa takes them; v is passed transposed, vt [batch, heads_kv, head_dim_v,
seqlen] (seqlen contiguous), because Hopper's FP8 tensor-core instructions want the reduction
dimension contiguous in both operands. The transpose is made once by the caller, outside the
timed region. Query head h reads kv head h // (heads_q // heads_kv). A head_dim_qk that is not a
power of two is split into two power-of-two parts (192 = 128 + 64), so no work is padded.
Written for this project; requires a GPU with FP8 tensor cores (sm_89+).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _attend_block_range(acc, l_i, m_i, q1, q2, k_base, v_base, stride_ks, stride_vd, offs_m, seqlen,
                        lo, hi, scale_log2,
                        DQK1: tl.constexpr, DQK2: tl.constexpr, DV: tl.constexpr,
                        BLOCK_N: tl.constexpr, ON_DIAGONAL: tl.constexpr):
    offs_n = tl.arange(0, BLOCK_N)
    offs_d1 = tl.arange(0, DQK1)
    offs_dv = tl.arange(0, DV)
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        in_range = cols < seqlen
        kt1 = tl.load(k_base + cols[None, :] * stride_ks + offs_d1[:, None], mask=in_range[None, :], other=0.0)
        s = tl.dot(q1, kt1)
        if DQK2 > 0:
            offs_d2 = DQK1 + tl.arange(0, DQK2)
            kt2 = tl.load(k_base + cols[None, :] * stride_ks + offs_d2[:, None], mask=in_range[None, :], other=0.0)
            s = tl.dot(q2, kt2, s)
        s = s * scale_log2
        if ON_DIAGONAL:
            s = tl.where((offs_m[:, None] >= cols[None, :]) & in_range[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.math.exp2(m_i - m_new)
        p = tl.math.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + offs_dv[None, :] * stride_vd + cols[:, None], mask=in_range[:, None], other=0.0)
        acc = acc * alpha[:, None]
        acc = tl.dot((p * 256.0).to(tl.float8e4nv), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _fp8_causal_attention_fwd(Q, K, VT, O, scale_log2, seqlen, heads_q,
                              stride_qb, stride_qs, stride_qh,
                              stride_kb, stride_ks, stride_kh,
                              stride_vb, stride_vh, stride_vd,
                              stride_ob, stride_os, stride_oh,
                              GROUP: tl.constexpr, DQK1: tl.constexpr, DQK2: tl.constexpr, DV: tl.constexpr,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # The longest query tiles (most keys under the causal mask) are started first.
    pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // heads_q
    h = pid_bh % heads_q
    hk = h // GROUP
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = offs_m < seqlen
    q_base = Q + b * stride_qb + h * stride_qh
    q1 = tl.load(q_base + offs_m[:, None] * stride_qs + tl.arange(0, DQK1)[None, :], mask=row_ok[:, None], other=0.0)
    q2 = q1
    if DQK2 > 0:
        offs_d2 = DQK1 + tl.arange(0, DQK2)
        q2 = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d2[None, :], mask=row_ok[:, None], other=0.0)
    k_base = K + b * stride_kb + hk * stride_kh
    v_base = VT + b * stride_vb + hk * stride_vh
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, DV], tl.float32)
    # Key blocks wholly below the diagonal need no mask; the diagonal ones do.
    diagonal_lo = pid_m * BLOCK_M
    acc, l_i, m_i = _attend_block_range(acc, l_i, m_i, q1, q2, k_base, v_base, stride_ks, stride_vd, offs_m,
                                        seqlen, 0, diagonal_lo, scale_log2, DQK1, DQK2, DV, BLOCK_N, False)
    acc, l_i, m_i = _attend_block_range(acc, l_i, m_i, q1, q2, k_base, v_base, stride_ks, stride_vd, offs_m,
                                        seqlen, diagonal_lo, tl.minimum(diagonal_lo + BLOCK_M, seqlen), scale_log2,
                                        DQK1, DQK2, DV, BLOCK_N, True)
    out = acc / (l_i[:, None] * 256.0)
    o_base = O + b * stride_ob + h * stride_oh
    tl.store(o_base + offs_m[:, None] * stride_os + tl.arange(0, DV)[None, :], out.to(O.dtype.element_ty),
             mask=row_ok[:, None])


def _split_head_dim(d):
    """d as one power of two, or two (192 = 128 + 64)."""
    first = 1 << (d.bit_length() - 1)
    rest = d - first
    if rest and rest & (rest - 1):
        raise ValueError("head_dim_qk %d is not a power of two or a sum of two" % d)
    return first, rest


def transpose_v(v):
    """v [batch, seqlen, heads_kv, head_dim_v] -> vt [batch, heads_kv, head_dim_v, seqlen] (contiguous)."""
    return v.permute(0, 2, 3, 1).contiguous()


def fp8_causal_attention(q, k, vt, softmax_scale=None, out=None, block_m=128, block_n=128, num_warps=8,
                         num_stages=None):
    """Causal attention of e4m3 q [b, s, hq, dqk], k [b, s, hkv, dqk], vt [b, hkv, dv, s]; bf16 out."""
    batch, seqlen, heads_q, dqk = q.shape
    heads_kv = k.shape[2]
    dv = vt.shape[2]
    assert q.dtype == k.dtype == vt.dtype == torch.float8_e4m3fn
    assert q.stride(-1) == 1 and k.stride(-1) == 1 and vt.stride(-1) == 1
    assert heads_q % heads_kv == 0 and k.shape[1] == seqlen and vt.shape[3] == seqlen
    d1, d2 = _split_head_dim(dqk)
    if out is None:
        out = torch.empty((batch, seqlen, heads_q, dv), dtype=torch.bfloat16, device=q.device)
    if softmax_scale is None:
        softmax_scale = dqk ** -0.5
    if num_stages is None:
        num_stages = 3 if dqk <= 128 else 2
    grid = (triton.cdiv(seqlen, block_m), batch * heads_q)
    _fp8_causal_attention_fwd[grid](
        q, k, vt, out, softmax_scale * 1.4426950408889634, seqlen, heads_q,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        vt.stride(0), vt.stride(1), vt.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        GROUP=heads_q // heads_kv, DQK1=d1, DQK2=d2, DV=dv, BLOCK_M=block_m, BLOCK_N=block_n,
        num_warps=num_warps, num_stages=num_stages)
    return out
