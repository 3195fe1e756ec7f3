"""Drop-ins for flash_attn.flash_attn_func / flash_attn_varlen_func (FlashAttention 2 argument names
and order, [batch, seqlen, heads, head_dim] layouts) with FlashAttention-3's FP8 descale arguments.

    from zyfa.flash_attn_interface import flash_attn_func   # instead of flash_attn's

causal and window_size follow flash_attn: aligned to the bottom-right corner when seqlen_q !=
seqlen_k. What zyfa does not do (dropout, ALiBi, softcap, attention probabilities, paged KV)
raises NotImplementedError naming the argument, never a silently different result.
"""
from ._api import attention

# FlashAttention-3 arguments that only tune performance: accepted and ignored.
_PERF_HINTS = ("num_splits", "pack_gqa", "sm_margin", "deterministic", "scheduler_metadata")
# FlashAttention-3 arguments with a neutral value; any other value is unsupported.
_NEUTRAL = {"qv": None, "attention_chunk": 0, "seqused_q": None, "seqused_k": None, "page_table": None,
            "block_table": None, "rotary_cos": None, "rotary_sin": None, "k_new": None, "v_new": None}


def _unsupported(what, why):
    raise NotImplementedError("zyfa.flash_attn_func: %s is not supported (%s)" % (what, why))


def _check(dropout_p, softcap, alibi_slopes, return_attn_probs, extra):
    if dropout_p:
        _unsupported("dropout_p=%r" % (dropout_p,), "zyfa is a forward-only inference kernel; use 0.0")
    if softcap:
        _unsupported("softcap=%r" % (softcap,), "no logit soft-capping; use 0.0")
    if alibi_slopes is not None:
        _unsupported("alibi_slopes", "no ALiBi bias")
    if return_attn_probs:
        _unsupported("return_attn_probs=True", "attention probabilities are never materialised; "
                     "pass return_lse=True for the log-sum-exp")
    for name, value in extra.items():
        if name in _PERF_HINTS:
            continue
        if name not in _NEUTRAL:
            raise TypeError("flash_attn_func() got an unexpected keyword argument %r" % name)
        if value is not _NEUTRAL[name] and value != _NEUTRAL[name]:
            _unsupported("%s=%r" % (name, value), "no kernel for it in zyfa")


def _descale(q_descale, k_descale, v_descale):
    if q_descale is None and k_descale is None and v_descale is None:
        return None
    return (q_descale, k_descale, v_descale)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                    softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False, *,
                    q_descale=None, k_descale=None, v_descale=None, return_lse=False, out=None,
                    **extra):
    """flash_attn_func(q [b, sq, hq, d], k [b, sk, hkv, d], v [b, sk, hkv, dv]) -> out [b, sq, hq, dv].

    FP8 (torch.float8_e4m3fn) inputs take q_descale/k_descale/v_descale fp32 [b, hkv] as in
    FlashAttention-3 and return bf16. return_lse=True returns (out, lse [b, hq, sq]).
    """
    extra["deterministic"] = deterministic
    _check(dropout_p, softcap, alibi_slopes, return_attn_probs, extra)
    return attention(q, k, v, causal="bottom_right" if causal else False, window=tuple(window_size),
                     softmax_scale=softmax_scale, descale=_descale(q_descale, k_descale, v_descale),
                     return_lse=return_lse, out=out)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False, return_attn_probs=False, block_table=None,
                           *, q_descale=None, k_descale=None, v_descale=None, return_lse=False, out=None,
                           **extra):
    """flash_attn_varlen_func(q [total_q, hq, d], k [total_k, hkv, d], v [total_k, hkv, dv],
    cu_seqlens_q/k int32 [b+1], max_seqlen_q/k) -> out [total_q, hq, dv].
    return_lse=True returns (out, lse [hq, total_q])."""
    extra["deterministic"] = deterministic
    extra["block_table"] = block_table
    _check(dropout_p, softcap, alibi_slopes, return_attn_probs, extra)
    return attention(q, k, v, causal="bottom_right" if causal else False, window=tuple(window_size),
                     softmax_scale=softmax_scale, descale=_descale(q_descale, k_descale, v_descale),
                     return_lse=return_lse, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                     max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, out=out)
