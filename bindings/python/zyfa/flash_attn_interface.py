"""Drop-ins for flash_attn.flash_attn_func / flash_attn_varlen_func (FlashAttention 2 argument names
and order, [batch, seqlen, heads, head_dim] layouts) with FlashAttention-3's FP8 descale arguments.

    from zyfa.flash_attn_interface import flash_attn_func   # instead of flash_attn's

causal and window_size follow flash_attn: aligned to the bottom-right corner when seqlen_q !=
seqlen_k (zyfa.attention's causal=True is top-left: there, name the alignment). Forward only: inputs
that require grad under grad mode raise NotImplementedError. What zyfa does not do (dropout, ALiBi,
softcap, attention probabilities, appending new keys to the cache, rotary embedding) raises
NotImplementedError naming the argument, never a silently different result. Attention sinks are
taken as s_aux (vLLM, FlashAttention-3) or sinks. A paged KV cache is read through block_table
(flash_attn_varlen_func, flash_attn_with_kvcache; FlashAttention-3's page_table is the same), with
each sequence's key count from seqused_k or cache_seqlens.
"""
from ._api import run_attention
from ._tensors import is_torch, torch_module

# FlashAttention-3 arguments that only tune performance: accepted and ignored.
_PERF_HINTS = ("num_splits", "pack_gqa", "sm_margin", "deterministic", "scheduler_metadata")
# FlashAttention-3 arguments with a neutral value; any other value is unsupported. (seqused_q/k are
# checked separately: they are accepted when they equal the lengths already given.)
_NEUTRAL = {"qv": None, "attention_chunk": 0, "page_table": None, "block_table": None, "rotary_cos": None,
            "rotary_sin": None, "k_new": None, "v_new": None}
_SEQUSED = ("seqused_q", "seqused_k")


def _describe(value):
    """A value for an error message: arrays and tensors by shape, dtype and device, never their data."""
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        device = getattr(value, "device", "cpu")
        return "%s(shape=%s, dtype=%s, device=%s)" % (type(value).__name__, tuple(shape), value.dtype, device)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unsupported(api, what, why):
    raise NotImplementedError("zyfa.%s: %s is not supported (%s)" % (api, what, why))


def _check(api, dropout_p, softcap, alibi_slopes, extra):
    if dropout_p:
        _unsupported(api, "dropout_p=%s" % _describe(dropout_p), "zyfa is a forward-only inference kernel; use 0.0")
    if softcap:
        _unsupported(api, "softcap=%s" % _describe(softcap), "no logit soft-capping; use 0.0")
    if alibi_slopes is not None:
        _unsupported(api, "alibi_slopes=%s" % _describe(alibi_slopes), "no ALiBi bias")
    for name, value in extra.items():
        if name in _PERF_HINTS or name in _SEQUSED:
            continue
        if name not in _NEUTRAL:
            raise TypeError("%s() got an unexpected keyword argument %r" % (api, name))
        neutral = _NEUTRAL[name]
        if neutral is None:
            refused = value is not None
        else:  # a number: an array or tensor of more than one element is never neutral
            refused = len(getattr(value, "shape", ())) > 0 or value != neutral
        if refused:
            _unsupported(api, "%s=%s" % (name, _describe(value)), "no kernel for it in zyfa")


def _host_ints(x):
    """A 1-D sequence of ints on the host (a device tensor is copied back: this synchronises)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu()
    if hasattr(x, "tolist"):
        x = x.tolist()
    return [int(v) for v in x]


def _check_seqused(api, extra, lengths):
    """FlashAttention-3's seqused_q/k (int32 [batch], the tokens used of each sequence) are accepted
    when they equal the lengths that zyfa uses anyway; lengths(name) gives those and their source."""
    for name in _SEQUSED:
        used = extra.get(name)
        if used is None:
            continue
        expected, source = lengths(name)
        got = _host_ints(used)
        if got != expected:
            shown = got if len(got) <= 8 else got[:8] + ["..."]
            want = expected if len(expected) <= 8 else expected[:8] + ["..."]
            _unsupported(api, "%s=%s with values %s" % (name, _describe(used), shown),
                         "zyfa attends to every packed token; %s is accepted only when it equals %s = %s"
                         % (name, source, want))


def _causal(api, causal):
    """flash_attn's causal=True is bottom-right; the explicit names are accepted too."""
    if causal is True:
        return "bottom_right"
    if causal is False or causal is None:
        return False
    if causal in ("bottom_right", "top_left"):
        return causal
    raise ValueError("zyfa.%s: causal must be True (= 'bottom_right', as flash_attn), False, 'bottom_right' "
                     "or 'top_left', not %s" % (api, _describe(causal)))


def _descale(q_descale, k_descale, v_descale):
    if q_descale is None and k_descale is None and v_descale is None:
        return None
    return (q_descale, k_descale, v_descale)


def _sinks(api, s_aux, sinks):
    """vLLM's and FlashAttention-3's s_aux and the name sinks (gpt-oss) are one argument: fp32 [hq]."""
    if s_aux is not None and sinks is not None:
        raise TypeError("zyfa.%s: pass s_aux or sinks, not both (they are the same per-head sink logits)" % api)
    return s_aux if s_aux is not None else sinks


def _result(result, return_lse, return_attn_probs):
    if return_attn_probs:  # flash_attn (2) with dropout_p = 0: (out, softmax_lse, None)
        o, lse = result
        return o, lse, None
    return result


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                    softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False, *,
                    q_descale=None, k_descale=None, v_descale=None, return_lse=False, out=None,
                    key_block=0, s_aux=None, sinks=None, **extra):
    """flash_attn_func(q [b, sq, hq, d], k [b, sk, hkv, d], v [b, sk, hkv, dv]) -> out [b, sq, hq, dv].

    causal=True is bottom-right aligned, as in flash_attn: query i sees keys j <= i + sk - sq (the
    last query sees every key; with sq > sk the first sq - sk rows see none and get out = 0). This
    differs from zyfa.attention(causal=True), which is top-left (j <= i); 'bottom_right' and
    'top_left' are accepted here too. window_size is around that same bottom-right diagonal.
    FP8 (torch.float8_e4m3fn) inputs take q_descale/k_descale/v_descale fp32 [b, hkv] as in
    FlashAttention-3 and return bf16 (under GQA, quantise q with zyfa.quantize_fp8(q, heads_kv=hkv)).
    return_attn_probs=True returns (out, softmax_lse [b, hq, sq] fp32, None), as flash_attn does with
    dropout_p=0 (the probabilities are never materialised); return_lse=True returns (out, lse).
    seqused_q/seqused_k are accepted when every entry equals sq/sk (read back on the host).
    key_block (zyfa's, not flash_attn's): keys per online-softmax step, as in zyfa.attention.
    s_aux (vLLM's and FlashAttention-3's name) or sinks: fp32 [hq] attention sinks (gpt-oss), one
    logit per query head that joins each row's softmax denominator and multiplies no value; the
    returned lse includes it (zyfa.attention's sinks).
    Forward only: q, k or v requiring grad under grad mode raises NotImplementedError.
    """
    api = "flash_attn_func"
    extra["deterministic"] = deterministic
    _check(api, dropout_p, softcap, alibi_slopes, extra)
    batch = q.shape[0]
    _check_seqused(api, extra, lambda name: (
        [int(q.shape[1] if name == "seqused_q" else k.shape[1])] * int(batch),
        "q.shape[1]" if name == "seqused_q" else "k.shape[1]"))
    return _result(run_attention(
        "zyfa." + api, q, k, v, _causal(api, causal), tuple(window_size), softmax_scale,
        _descale(q_descale, k_descale, v_descale), return_lse or return_attn_probs, None, None, None, None,
        out, "auto", None, None, None, key_block, _sinks(api, s_aux, sinks)), return_lse, return_attn_probs)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False, return_attn_probs=False, block_table=None,
                           *, q_descale=None, k_descale=None, v_descale=None, return_lse=False, out=None,
                           key_block=0, s_aux=None, sinks=None, **extra):
    """flash_attn_varlen_func(q [total_q, hq, d], k [total_k, hkv, d], v [total_k, hkv, dv],
    cu_seqlens_q/k int32 [b+1], max_seqlen_q/k) -> out [total_q, hq, dv].

    causal=True is bottom-right aligned per sequence, as flash_attn_func (zyfa.attention's True is
    top-left). return_attn_probs=True returns (out, softmax_lse [hq, total_q] fp32, None);
    return_lse=True returns (out, lse [hq, total_q]). FlashAttention-3's seqused_q/seqused_k
    (int32 [b]) are accepted when they equal cu_seqlens_q/k[1:] - [:-1]; checking reads both back on
    the host (a synchronisation for GPU tensors, and not traceable by torch.compile): omit them when
    they are the packed lengths anyway. key_block and s_aux/sinks as in flash_attn_func. Forward
    only, as flash_attn_func.
    """
    api = "flash_attn_varlen_func"
    extra["deterministic"] = deterministic
    if block_table is None:
        block_table = extra.pop("page_table", None)  # FlashAttention-3's name
    if block_table is not None:
        # Paged: k and v are the page pools [num_pages, page_size, hkv, d]; each sequence's keys are
        # seqused_k, else cu_seqlens_k's lengths (flash_attn 2's convention with a block table).
        _check(api, dropout_p, softcap, alibi_slopes, {n: v for n, v in extra.items() if n != "seqused_k"})
        used = extra.get("seqused_k")
        if used is None and cu_seqlens_k is not None:
            cu = cu_seqlens_k if hasattr(cu_seqlens_k, "shape") else [int(x) for x in cu_seqlens_k]
            used = cu[1:] - cu[:-1] if hasattr(cu, "shape") else [b - a for a, b in zip(cu[:-1], cu[1:])]
        return _result(run_attention(
            "zyfa." + api, q, k, v, _causal(api, causal), tuple(window_size), softmax_scale,
            _descale(q_descale, k_descale, v_descale), return_lse or return_attn_probs, cu_seqlens_q, None,
            max_seqlen_q, max_seqlen_k, out, "auto", None, None, None, key_block, _sinks(api, s_aux, sinks),
            block_table, used), return_lse,
            return_attn_probs)
    _check(api, dropout_p, softcap, alibi_slopes, extra)

    def lengths(name):
        cu_name = "cu_seqlens_q" if name == "seqused_q" else "cu_seqlens_k"
        cu = _host_ints(cu_seqlens_q if name == "seqused_q" else cu_seqlens_k)
        return [b - a for a, b in zip(cu[:-1], cu[1:])], "%s[1:] - %s[:-1]" % (cu_name, cu_name)

    _check_seqused(api, extra, lengths)
    return _result(run_attention(
        "zyfa." + api, q, k, v, _causal(api, causal), tuple(window_size), softmax_scale,
        _descale(q_descale, k_descale, v_descale), return_lse or return_attn_probs, cu_seqlens_q,
        cu_seqlens_k, max_seqlen_q, max_seqlen_k, out, "auto", None, None, None, key_block,
        _sinks(api, s_aux, sinks)), return_lse, return_attn_probs)


def _pow2_divisor(n, limit=256):
    """The largest power of two <= limit that divides n (1 for odd n)."""
    size = 1
    while size * 2 <= limit and n % (size * 2) == 0:
        size *= 2
    return size


def _as_pages(cache, name):
    """A contiguous cache [b, s, h, d] viewed as a page pool [b * s / p, p, h, d] (p: a power of two
    dividing s, at most 256) with the block table that walks it in order: no copy."""
    batch, seqlen = int(cache.shape[0]), int(cache.shape[1])
    page = _pow2_divisor(seqlen)
    strides = cache.stride() if is_torch(cache) else tuple(x // cache.itemsize for x in cache.strides)
    if len(cache.shape) != 4 or strides[0] != seqlen * strides[1]:
        _unsupported("flash_attn_with_kvcache", "%s=%s with cache_seqlens" % (name, _describe(cache)),
                     "a cache whose batch and sequence axes do not fold into pages without a copy")
    pool = cache.reshape(batch * seqlen // page, page, cache.shape[2], cache.shape[3])
    pages = seqlen // page
    if is_torch(cache):
        torch = torch_module()
        table = torch.arange(batch * pages, dtype=torch.int32, device=cache.device).reshape(batch, pages)
    else:
        import numpy as np
        table = np.arange(batch * pages, dtype=np.int32).reshape(batch, pages)
    return pool, table


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None, cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None, num_splits=0, return_softmax_lse=False,
                            *, page_table=None, cu_seqlens_q=None, max_seqlen_q=None, q_descale=None,
                            k_descale=None, v_descale=None, out=None, key_block=0, **extra):
    """flash_attn_with_kvcache (flash_attn 2 argument order; FlashAttention-3's page_table,
    cu_seqlens_q, max_seqlen_q and descales as keywords): q [b, sq, hq, d] (or packed [total_q, hq,
    d] with cu_seqlens_q) against a KV cache.

    With block_table (or page_table) int32 [b, max_pages], k_cache and v_cache are page pools
    [num_pages, page_size, hkv, d] (page_size 1 to 256); without, they are [b, s_cache, hkv, d].
    cache_seqlens (an int or int32 [b]): each sequence's key count (seqused_k; None: the whole
    cache, max_pages * page_size or s_cache). causal=True is bottom-right aligned, as flash_attn:
    the queries are the last sq positions of each sequence. return_softmax_lse=True returns (out,
    lse). Appending new keys (k, v), rotary embedding, cache_batch_idx and cache_leftpad are not
    supported (NotImplementedError): write the new keys into the cache first.
    """
    api = "flash_attn_with_kvcache"
    for name, value in (("k", k), ("v", v), ("rotary_cos", rotary_cos), ("rotary_sin", rotary_sin),
                        ("cache_batch_idx", cache_batch_idx), ("cache_leftpad", cache_leftpad)):
        if value is not None:
            _unsupported(api, "%s=%s" % (name, _describe(value)),
                         "zyfa reads the cache as it is: write new keys and apply rotary embedding first")
    extra["num_splits"] = num_splits
    _check(api, 0.0, softcap, alibi_slopes, extra)
    if block_table is None:
        block_table = page_table
    batch = block_table.shape[0] if block_table is not None else k_cache.shape[0]
    used = cache_seqlens
    if isinstance(used, int):
        used = [used] * int(batch)
    if block_table is None and used is None:  # the whole contiguous cache: plain attention
        return run_attention(
            "zyfa." + api, q, k_cache, v_cache, _causal(api, causal), tuple(window_size), softmax_scale,
            _descale(q_descale, k_descale, v_descale), return_softmax_lse,
            None, None, None, None, out, "auto", None, None, None, key_block, None, None, None, num_splits)
    if block_table is None:
        k_pool, block_table = _as_pages(k_cache, "k_cache")
        v_pool, _ = _as_pages(v_cache, "v_cache")
    else:
        k_pool, v_pool = k_cache, v_cache
    max_seqlen_k = None
    if used is None:
        max_seqlen_k = int(block_table.shape[1]) * int(k_pool.shape[1])
    elif is_torch(q) and not isinstance(used, list):
        max_seqlen_k = int(block_table.shape[1]) * int(k_pool.shape[1])  # a bound; no read-back
    return run_attention(
        "zyfa." + api, q, k_pool, v_pool, _causal(api, causal), tuple(window_size), softmax_scale,
        _descale(q_descale, k_descale, v_descale), return_softmax_lse, cu_seqlens_q, None, max_seqlen_q,
        max_seqlen_k, out, "auto", None, None, None, key_block, None, block_table, used, num_splits)
