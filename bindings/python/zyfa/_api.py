"""attention(), quantize_fp8() and quantize_int8(): the Pythonic layer over zyfa_attn_fwd and the quantisers.

numpy arrays run on the CPU backend. torch tensors run on their device's backend (CUDA or ROCm,
enqueued on the current stream, or the CPU) and, without an explicit context, go through the torch
custom ops zyfa::attention / zyfa::quantize_fp8 so that torch.compile and CUDA graphs see them.
"""
import ctypes
import warnings

from . import _lib
from ._context import Context, default_context
from ._errors import ZyfaError, attention_names, check, quantize_names
from ._tensors import (FP8_DTYPES, c_tensor, dtype_code, is_torch, numpy_dtype, require_dim_contiguous,
                       torch_dtype, torch_module, view)

# flash_attn_func spells zyfa.attention's window=(left, right) window_size.
_FLASH_ATTN_RENAMES = (("window[0]", "window_size[0]"), ("window[1]", "window_size[1]"))
_SOFTMAX = {"auto": _lib.SOFTMAX_AUTO, "exact": _lib.SOFTMAX_EXACT, "lean": _lib.SOFTMAX_LEAN}


def mask_code(causal):
    """causal: False, 'top_left' (or True, as ZYFA_MASK_CAUSAL) or 'bottom_right'."""
    if causal is False or causal is None or causal == "none":
        return _lib.MASK_NONE
    if causal is True or causal == "top_left":
        return _lib.MASK_CAUSAL
    if causal == "bottom_right":
        return _lib.MASK_CAUSAL_BOTTOM_RIGHT
    raise ValueError("causal must be False, 'top_left', 'bottom_right' or True (= 'top_left'), not %r" % (causal,))


def key_block_code(key_block):
    """params.key_block as an int32; the library checks the value (0, 64 or 128) and names it."""
    try:
        value = int(key_block)
    except (TypeError, ValueError):
        value = None
    if isinstance(key_block, bool) or value is None or value != key_block or not -2**31 <= value < 2**31:
        raise ValueError("key_block must be an integer (0, 64 or 128), not %r" % (key_block,))
    return value


def softmax_code(softmax):
    if isinstance(softmax, int):
        return softmax
    if softmax not in _SOFTMAX:
        raise ValueError("softmax must be 'auto', 'exact' or 'lean', not %r" % (softmax,))
    return _SOFTMAX[softmax]


def attention(q, k, v, causal=False, window=(-1, -1), softmax_scale=None, descale=None,
              return_lse=False, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
              max_seqlen_k=None, out=None, softmax="auto", context=None, dtype=None, out_dtype=None,
              key_block=0, sinks=None, block_table=None, seqused_k=None, num_splits=0, key_bias=None,
              v_transposed=False):
    """Attention forward: softmax(softmax_scale * Q K^T + mask) V. Forward only: torch inputs that
    require grad (with grad mode on) raise NotImplementedError; run it under torch.no_grad().

    q [batch, seqlen_q, heads_q, head_dim], k [batch, seqlen_k, heads_kv, head_dim],
    v [batch, seqlen_k, heads_kv, head_dim_v]; with cu_seqlens_q/k (int32 [batch+1] prefix sums)
    the sequences are packed: q [total_q, heads_q, head_dim], k/v [total_k, heads_kv, ...].
    Query head h reads kv head h // (heads_q // heads_kv).

    causal: False, 'top_left' or 'bottom_right'; they differ only where seqlen_q != seqlen_k:
            'top_left'      query i sees keys j <= i (ZYFA_MASK_CAUSAL);
            'bottom_right'  query i sees keys j <= i + seqlen_k - seqlen_q (flash_attn's causal=True:
                            the last query sees every key; with seqlen_q > seqlen_k the first
                            seqlen_q - seqlen_k rows see no key and get O = 0, lse = -inf).
            True means 'top_left' here but 'bottom_right' in zyfa.flash_attn_func; when
            seqlen_q != seqlen_k is visible (the shapes, or host cu_seqlens) True warns: name one.
    window: (left, right) sliding window, -1 = unbounded, around the causal diagonal of the mask
            (top-left for False/'top_left', bottom-right for 'bottom_right'; see docs/api.md).
    softmax_scale: None = 1/sqrt(head_dim).
    descale: None or (q_descale, k_descale, v_descale) for FP8 inputs, each None, a float or an
             fp32 [batch, heads_kv] array/tensor (on the inputs' device): one scale per (batch, kv
             head), shared by the heads_q // heads_kv query heads that read it. Under GQA quantise q
             with quantize_fp8(q, heads_kv=k.shape[-2]); a q_descale of [batch, heads_q] is taken
             only where it is equal within each group of query heads (else ValueError).
             The INT8 Q/K mode (q and k int8, v FP8): (q_descale, k_descale, v_descale) as
             quantize_int8 and quantize_fp8 return them, q per token [batch, heads_q, seqlen_q], k
             per 64 keys [batch, heads_kv, ceil(seqlen_k / 64)], v per head (the CPU backend, and
             CUDA on sm_90a at head dims 64 and 128).
    dtype:   element type of uint8/uint16 numpy storage: 'e4m3fn', 'e4m3fnuz' or 'bf16'; with int8 q
             and k (the INT8 Q/K mode) it names v's FP8 format only.
    out_dtype: 'bf16', 'fp16' or 'fp32' (or a torch dtype); default: the input dtype for 16/32-bit
             torch inputs and bf16 for FP8 ones; float32 for numpy (bf16 comes back as uint16).
    out:     an output to write into instead of allocating one (it may not overlap any input).
    softmax: 'auto' (lean for FP8, exact otherwise), 'exact' or 'lean'.
    key_block: keys per online-softmax step (params.key_block): 0 = the backend's own (CPU and AMD
             64), 64 or 128. LEAN's block scales depend on it; the CPU backend models either GPU
             instance bit for bit. A backend without kernels for it raises ZyfaError (not supported).
    sinks:   None or fp32 [heads_q] attention sinks (gpt-oss; FlashAttention-3's s_aux), on the
             inputs' device: one logit per query head, in the units of the scaled scores, that joins
             every row's softmax denominator and multiplies no value. lse then includes it (a row
             without keys gets out = 0, lse = sink): when merging parts, pass sinks to one part only.
    key_bias: None or an fp32 per-key score bias on the inputs' device, added to every scaled score
             of key j in query head h (natural-log units, as sinks; lse includes it): [batch, heads_q,
             seqlen_k] (paged: seqlen_k the max_seqlen_k the call resolves), or [heads_q, total_k] with
             cu_seqlens_k. It is what quantize_fp8(k, query_mean=...) returns for Q smoothing (see
             quantize_fp8), or any additive per-key bias. CPU and HIP backends, and CUDA for FP8 at head dims 64 and 128 (not with INT8 q/k).
    context: a zyfa.Context; None picks a shared one for the inputs' device.
    block_table: paged K/V (a KV cache of pages, as vLLM and SGLang keep it): k and v are page pools
             [num_pages, page_size, heads_kv, head_dim] (page_size 1 to 256) and block_table int32
             [batch, max_pages] holds each sequence's page indices: key j of sequence b is row
             j % page_size of page block_table[b, j // page_size]. q is dense [batch, seqlen_q, ...]
             or packed with cu_seqlens_q (cu_seqlens_k stays None). seqused_k int32 [batch]: each
             sequence's key count (None: max_seqlen_k each); max_seqlen_k defaults to max(seqused_k)
             when that is on the host, else block_table.shape[1] * page_size. The result is bitwise
             the contiguous call's on the same keys. Use causal='bottom_right' for a chunk of
             queries after cached keys. Paged torch calls run eagerly (not through the torch op).
    num_splits: split-KV for short query chunks and decode steps (params.num_splits): 0 = the
             library's heuristic, 1 = never split, n > 1 = at most n (flash_attn's num_splits). For
             torch tensors on a GPU the workspace that zyfa_attn_fwd_workspace_size asks for is
             allocated with torch on the inputs' device; numpy and CPU calls never split.
    v_transposed: v is FP8 in the transposed layout, [batch, heads_kv, groups, head_dim_v, 16] as
             quantize_fp8(v, v_transposed=True) returns it (groups = ceil(seqlen_k / 128) * 8; docs/api.md,
             "FP8 V in the transposed layout"): the NVIDIA kernels then copy V without transposing it.
             Fixed-length keys only (no cu_seqlens, no block_table); the result is bitwise the
             row-major call's on the same codes. Runs eagerly (not through the torch op).
    Returns out, or (out, lse) with return_lse: lse fp32 [batch, heads_q, seqlen_q], or
    [heads_q, total_q] when packed.
    """
    return run_attention("zyfa.attention", q, k, v, causal, window, softmax_scale, descale, return_lse,
                         cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, out, softmax, context,
                         dtype, out_dtype, key_block, sinks, block_table, seqused_k, num_splits, key_bias,
                         v_transposed)


def run_attention(api, q, k, v, causal, window, softmax_scale, descale, return_lse, cu_seqlens_q,
                  cu_seqlens_k, max_seqlen_q, max_seqlen_k, out, softmax, context, dtype, out_dtype,
                  key_block=0, sinks=None, block_table=None, seqused_k=None, num_splits=0, key_bias=None,
                  v_transposed=False):
    """attention() for the entry point named api (zyfa.attention, zyfa.flash_attn_func, ...)."""
    q_d, k_d, v_d = descale if descale is not None else (None, None, None)
    require_no_grad(api, (("q", q), ("k", k), ("v", v), ("q_descale", q_d), ("k_descale", k_d),
                          ("v_descale", v_d), ("sinks", sinks), ("key_bias", key_bias)))
    if causal is True and block_table is None and _lengths_differ(q, k, cu_seqlens_q, cu_seqlens_k):
        warnings.warn(
            "%s(causal=True) is top-left aligned (query i sees keys j <= i) and seqlen_q != seqlen_k "
            "here, where flash_attn_func(causal=True) is bottom-right aligned (j <= i + seqlen_k - "
            "seqlen_q): pass causal='top_left' (this result) or causal='bottom_right' to say which"
            % api, UserWarning, stacklevel=3)
    mask = mask_code(causal)
    window_left, window_right = (int(w) for w in window)
    scale = 0.0 if softmax_scale is None else float(softmax_scale)
    sm = softmax_code(softmax)
    step = key_block_code(key_block)
    try:
        # The torch op takes the default split (num_splits 0); another request runs eagerly.
        if is_torch(q) and context is None and dtype is None and block_table is None and not num_splits and \
                not v_transposed:
            from . import _torch_ops
            return _torch_ops.attention(q, k, v, mask, window_left, window_right, scale, sm, q_d, k_d, v_d,
                                        return_lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                        out, out_dtype, step, sinks, key_bias)
        o, lse = attention_direct(context, q, k, v, mask=mask, window_left=window_left,
                                  window_right=window_right, softmax_scale=scale, softmax=sm,
                                  q_descale=q_d, k_descale=k_d, v_descale=v_d, return_lse=return_lse,
                                  cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                                  max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k, out=out,
                                  out_dtype=out_dtype, dtype=dtype, key_block=step, sinks=sinks,
                                  block_table=block_table, seqused_k=seqused_k, num_splits=num_splits,
                                  key_bias=key_bias, v_transposed=v_transposed)
    except ZyfaError as e:  # name the function the user called, not the C one
        raise e.called_as(api, _FLASH_ATTN_RENAMES if api.startswith("zyfa.flash_attn") else ()) from None
    return (o, lse) if return_lse else o


def require_no_grad(api, named):
    """zyfa has no backward: a torch input that requires grad under grad mode would give a result
    whose backward() leaves its .grad None (autograd only warns), so refuse it here."""
    torch = torch_module()
    if torch is None or not torch.is_grad_enabled():
        return
    for name, x in named:
        if isinstance(x, torch.Tensor) and x.requires_grad:
            raise NotImplementedError(
                "%s is forward-only (zyfa has no backward kernel): %s requires grad and grad mode is "
                "on, so backward() would leave its .grad None. Call it under torch.no_grad() or "
                "torch.inference_mode(), or pass %s.detach()" % (api, name, name))


def _lengths_differ(q, k, cu_seqlens_q, cu_seqlens_k):
    """True where seqlen_q != seqlen_k for some sequence, as far as shapes and host data show (device
    cu_seqlens are not read back; nor are any under torch.compile)."""
    if cu_seqlens_q is None or cu_seqlens_k is None:
        return len(q.shape) == 4 and len(k.shape) == 4 and q.shape[1] != k.shape[1]
    if q.shape[0] != k.shape[0]:  # the packed totals differ, so some sequence does
        return True
    torch = torch_module()
    host = []
    for cu in (cu_seqlens_q, cu_seqlens_k):
        if is_torch(cu):
            if cu.device.type != "cpu" or torch.compiler.is_compiling():
                return False
            cu = cu.tolist()
        host.append([int(x) for x in (cu.tolist() if hasattr(cu, "tolist") else cu)])
    return host[0] != host[1]


def attention_kernel_name(q, k, v, causal=False, window=(-1, -1), softmax_scale=None, descale=None,
                          cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None,
                          softmax="auto", context=None, dtype=None, out_dtype=None, key_block=0, sinks=None,
                          block_table=None, seqused_k=None, key_bias=None, v_transposed=False):
    """The kernel attention() would run for these arguments; raises ZyfaError if unsupported."""
    q_d, k_d, v_d = descale if descale is not None else (None, None, None)
    call = _prepare(context, q, k, v, mask_code(causal), int(window[0]), int(window[1]),
                    0.0 if softmax_scale is None else float(softmax_scale), softmax_code(softmax),
                    q_d, k_d, v_d, False, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                    None, out_dtype, dtype, key_block_code(key_block), sinks, block_table, seqused_k,
                    key_bias=key_bias, v_transposed=v_transposed)
    lib = _lib.lib()
    name = lib.zyfa_attn_kernel_name(call.ctx.handle, ctypes.byref(call.params), *call.tensor_refs())
    if name is None:
        check(lib.zyfa_attn_supported(call.ctx.handle, ctypes.byref(call.params), *call.tensor_refs()),
              call.names)
    return name.decode()


def attention_direct(context, q, k, v, mask=_lib.MASK_NONE, window_left=-1, window_right=-1,
                     softmax_scale=0.0, softmax=_lib.SOFTMAX_AUTO, q_descale=None, k_descale=None,
                     v_descale=None, return_lse=False, cu_seqlens_q=None, cu_seqlens_k=None,
                     max_seqlen_q=None, max_seqlen_k=None, out=None, out_dtype=None, dtype=None,
                     key_block=0, sinks=None, block_table=None, seqused_k=None, num_splits=0, key_bias=None,
                     v_transposed=False):
    """attention() without the torch op layer: runs now, returns (out, lse or None)."""
    call = _prepare(context, q, k, v, mask, window_left, window_right, softmax_scale, softmax,
                    q_descale, k_descale, v_descale, return_lse, cu_seqlens_q, cu_seqlens_k,
                    max_seqlen_q, max_seqlen_k, out, out_dtype, dtype, key_block, sinks, block_table,
                    seqused_k, num_splits, key_bias, v_transposed)
    lib = _lib.lib()
    check(lib.zyfa_attn_fwd(call.ctx.handle, ctypes.byref(call.params), *call.tensor_refs(),
                            call.stream), call.names)
    return call.out, call.lse


class _Call:
    """Everything one C call needs, and the Python objects that own the memory it points to."""

    def __init__(self):
        self.keep = []

    def tensor_refs(self):
        return [ctypes.byref(t) for t in self.tensors]


def _prepare(context, q, k, v, mask, window_left, window_right, softmax_scale, softmax, q_descale,
             k_descale, v_descale, return_lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
             out, out_dtype, dtype, key_block=0, sinks=None, block_table=None, seqused_k=None,
             num_splits=0, key_bias=None, v_transposed=False):
    call = _Call()
    if _is_int8(q):  # the INT8 Q/K mode: q and k int8 natively, dtype names v's FP8 format
        qv, kv, vv = view(q, "q"), view(k, "k"), view(v, "v", dtype)
    else:
        qv, kv, vv = view(q, "q", dtype), view(k, "k", dtype), view(v, "v", dtype)
    torch_inputs = is_torch(q)
    for name, x in (("k", kv), ("v", vv)):
        if is_torch(x.obj) != torch_inputs or (x.device, x.device_index) != (qv.device, qv.device_index):
            raise ValueError("q and %s must be of one kind (numpy or torch) on one device" % name)
    paged = block_table is not None
    if paged and cu_seqlens_k is not None:
        raise ValueError("with block_table the keys are not packed: give each sequence's key count in "
                         "seqused_k, not cu_seqlens_k")
    if not paged and seqused_k is not None:
        raise ValueError("seqused_k counts the keys of a paged cache: it needs block_table")
    if not paged and (cu_seqlens_q is None) != (cu_seqlens_k is None):
        raise ValueError("pass cu_seqlens_q and cu_seqlens_k together (both or neither)")
    varlen = cu_seqlens_q is not None
    call.names = attention_names(varlen)
    rank = 3 if varlen else 4
    layout = "[total, heads, head_dim]" if varlen else "[batch, seqlen, heads, head_dim]"
    if v_transposed and (paged or varlen):
        raise ValueError("v_transposed=True takes fixed-length keys: not with block_table or cu_seqlens")
    for name, x in (("q", qv), ("k", kv), ("v", vv)):
        want, shape_text = (4, "[num_pages, page_size, heads, head_dim]") if paged and name != "q" else (rank, layout)
        if name == "v" and v_transposed:
            want, shape_text = 5, "[batch, heads_kv, groups, head_dim_v, 16] (quantize_fp8(v, v_transposed=True))"
        if len(x.shape) != want:
            raise ValueError("%s must be %d-D %s, got shape %s" % (name, want, shape_text, x.shape))
        require_dim_contiguous(x, name)
    s = 1 if not varlen else 0  # first axis after batch
    ks = 1 if paged else s  # k and v: pools [pages, page_size, heads, dim] when paged
    heads_q, head_dim_qk = qv.shape[s + 1], qv.shape[s + 2]
    heads_kv = kv.shape[ks + 1]
    head_dim_v = vv.shape[3] if v_transposed else vv.shape[ks + 2]
    if kv.shape[ks + 2] != head_dim_qk:
        raise ValueError("k head_dim %d != q head_dim %d" % (kv.shape[ks + 2], head_dim_qk))
    if v_transposed:
        _require_transposed_v(vv, kv.shape[0], kv.shape[1], heads_kv)
    elif vv.shape[:ks + 2] != kv.shape[:ks + 2]:
        raise ValueError("v shape %s does not match k shape %s in its leading axes" % (vv.shape, kv.shape))

    call.ctx = _context_for(context, qv)
    call.stream = _stream_for(qv)

    if paged:
        table = _int32_array(block_table, qv, "block_table")
        if len(table.shape) != 2:
            raise ValueError("block_table must be 2-D int32 [batch, max_pages], got shape %s" % (tuple(table.shape),))
        batch = table.shape[0]
        page_size, num_pages = kv.shape[1], kv.shape[0]
        used = None if seqused_k is None else _int32_array(seqused_k, qv, "seqused_k")
        if used is not None and tuple(used.shape) != (batch,):
            raise ValueError("seqused_k must be 1-D int32 [batch] = [%d], got shape %s" % (batch, tuple(used.shape)))
        if varlen:
            cu_q = _int32_array(cu_seqlens_q, qv, "cu_seqlens_q")
            if len(cu_q.shape) != 1 or cu_q.shape[0] != batch + 1:
                raise ValueError("cu_seqlens_q must be 1-D of length batch + 1 = %d (block_table.shape[0] + 1)"
                                 % (batch + 1))
            seqlen_q = _max_seqlen(max_seqlen_q, cu_q, qv, "cu_seqlens_q", qv.shape[0])
            call.keep.append(cu_q)
        else:
            seqlen_q = qv.shape[1]
            if qv.shape[0] != batch:
                raise ValueError("block_table.shape[0] = %d != q batch %d" % (batch, qv.shape[0]))
        if max_seqlen_k is not None:
            seqlen_k = int(max_seqlen_k)
        elif used is not None and qv.device == "cpu":
            seqlen_k = int(used.max()) if batch > 0 else 0
        else:
            seqlen_k = table.shape[1] * page_size
        call.keep += [table] + ([used] if used is not None else [])
    elif varlen:
        cu_q = _int32_array(cu_seqlens_q, qv, "cu_seqlens_q")
        cu_k = _int32_array(cu_seqlens_k, qv, "cu_seqlens_k")
        if cu_q.shape != cu_k.shape or len(cu_q.shape) != 1 or cu_q.shape[0] < 1:
            raise ValueError("cu_seqlens_q and cu_seqlens_k must be 1-D of equal length batch+1")
        batch = cu_q.shape[0] - 1
        seqlen_q = _max_seqlen(max_seqlen_q, cu_q, qv, "cu_seqlens_q", qv.shape[0])
        seqlen_k = _max_seqlen(max_seqlen_k, cu_k, qv, "cu_seqlens_k", kv.shape[0])
        call.keep += [cu_q, cu_k]
    else:
        batch, seqlen_q, seqlen_k = qv.shape[0], qv.shape[1], kv.shape[1]
        if kv.shape[0] != batch:
            raise ValueError("k batch %d != q batch %d" % (kv.shape[0], batch))

    out_shape = qv.shape[:s + 2] + (head_dim_v,)
    call.out = _output(out, out_shape, dtype_code(out_dtype), qv, "out")
    ov = view(call.out, "out", _out_storage_dtype(call.out, out_dtype))
    require_dim_contiguous(ov, "out")
    call.lse = None
    if return_lse:
        lse_shape = (heads_q, qv.shape[0]) if varlen else (batch, heads_q, seqlen_q)
        call.lse = _empty(lse_shape, _lib.DTYPE_FP32, qv)

    params = _lib.AttnParams()
    _lib.lib().zyfa_attn_params_init(ctypes.byref(params), ctypes.sizeof(params))
    params.mask = mask
    params.batch, params.seqlen_q, params.seqlen_k = batch, seqlen_q, seqlen_k
    params.heads_q, params.heads_kv = heads_q, heads_kv
    params.head_dim_qk, params.head_dim_v = head_dim_qk, head_dim_v
    params.softmax_scale = softmax_scale
    params.softmax = softmax
    params.window_left, params.window_right = window_left, window_right
    params.key_block = key_block
    if paged:
        params.block_table, params.block_table_stride = _ptr(table), table.shape[1]
        params.seqused_k = _ptr(used) if used is not None else None
        params.num_pages, params.page_size = num_pages, page_size
        if varlen:
            params.cu_seqlens_q = _ptr(cu_q)
    elif varlen:
        params.cu_seqlens_q, params.cu_seqlens_k = _ptr(cu_q), _ptr(cu_k)
    int8 = qv.dtype == _lib.DTYPE_INT8
    int8_shapes = {"q_descale": ("q_descale_per_token", (batch, heads_q, seqlen_q)),
                   "k_descale": ("k_descale_per_block", (batch, heads_kv, -(-seqlen_k // _lib.INT8_KEY_BLOCK)))}
    for field, d in (("q_descale", q_descale), ("k_descale", k_descale), ("v_descale", v_descale)):
        if d is None:
            continue
        if int8 and field in int8_shapes:  # the INT8 Q/K mode: per token / per 64 keys
            c_field, shape = int8_shapes[field]
            arr = _int8_descale_array(d, shape, qv, field)
        else:
            c_field, arr = field, _descale_array(d, batch, heads_kv, heads_q, qv, field)
        call.keep.append(arr)
        setattr(params, c_field, _ptr(arr))
    if sinks is not None:
        arr = _fp32_array(sinks, qv, "sinks", (heads_q,), "[heads_q] (one logit per query head)")
        call.keep.append(arr)
        params.sinks = _ptr(arr)
    if key_bias is not None:
        if varlen and not paged:
            _require_all_rows_packed(cu_k, kv.shape[0], qv, "cu_seqlens_k", "key_bias")
            expected, layout = (heads_q, kv.shape[0]), "[heads_q, total_k] (keys packed by cu_seqlens_k)"
        else:
            expected, layout = (batch, heads_q, seqlen_k), "[batch, heads_q, seqlen_k]"
        arr = _fp32_array(key_bias, qv, "key_bias", expected, layout)
        call.keep.append(arr)
        params.key_bias = _ptr(arr)
    if call.lse is not None:
        params.lse = _ptr(call.lse)
    params.num_splits = int(num_splits)
    if v_transposed:
        params.flags = _lib.ATTN_V_TRANSPOSED
    if torch_inputs and qv.device != "cpu" and _lib.has_function("zyfa_attn_fwd_workspace_size"):
        # Split-KV: the workspace the library asks for, from torch's caching allocator on the
        # current stream (the one zyfa launches on), so freeing it after the call is stream-ordered.
        size = ctypes.c_size_t(0)
        check(_lib.lib().zyfa_attn_fwd_workspace_size(call.ctx.handle, ctypes.byref(params), ctypes.byref(size)),
              call.names)
        if size.value:
            torch = torch_module()
            workspace = torch.empty(size.value, dtype=torch.uint8, device=q.device)
            call.keep.append(workspace)
            params.workspace, params.workspace_bytes = workspace.data_ptr(), size.value
    call.params = params
    # Paged pools are [pages, page_size, heads, dim]: their batch stride is the page stride.
    call.tensors = [c_tensor(qv, varlen), c_tensor(kv, varlen and not paged),
                    _c_tensor_transposed_v(vv) if v_transposed else c_tensor(vv, varlen and not paged),
                    c_tensor(ov, varlen)]
    call.keep += [qv, kv, vv, ov]
    return call


def quantize_fp8(x, dtype="e4m3fn", hadamard=False, cu_seqlens=None, max_seqlen=None, context=None,
                 out=None, in_dtype=None, heads_kv=None, smooth=False, query_mean=None, key_bias_scale=None,
                 v_transposed=False):
    """Quantises x [batch, seqlen, heads, head_dim] (or packed [total, heads, head_dim] with
    cu_seqlens) to FP8 with one scale per (batch, head). Returns (x_fp8, descale fp32 [batch, heads]):
    x ~= x_fp8 * descale. hadamard=True rotates the head dimension first (use it on Q and K alike).
    smooth=True first subtracts each (sequence, head, channel)'s mean over the sequence and returns
    (x_fp8, descale, mean fp32 [batch, heads, head_dim]): x ~= x_fp8 * descale + mean (rotated back
    first with hadamard). On k (K smoothing) attention() gives the same o; its lse is the smoothed
    one: unsmooth_lse(lse, q, mean) gives the unsmoothed lse. On q (Q smoothing) the scores lose
    q's mean . k, which attention() puts back exactly from the key bias below.
    query_mean: Q's mean, fp32 [batch, heads_q, head_dim] as quantize_fp8(q, smooth=True) returned it,
        when quantising k for a smoothed q: also returns, as the last element, the key bias fp32
        [batch, heads_q, seqlen] ([heads_q, total] with cu_seqlens) = key_bias_scale * query_mean .
        (k_j - k's mean, 0 without smooth), for attention(key_bias=...). heads_q must be a multiple
        of x's heads (query head h reads k head h // (heads_q // heads)). key_bias_scale: the
        attention's softmax_scale (None = 1/sqrt(head_dim)). CPU, HIP and CUDA backends (CUDA's
        attention adds the bias for FP8 at head dims 64 and 128). O is then the
        unsmoothed attention's; its lse needs only K smoothing's unsmooth_lse(lse, q, kmean):

        q8, qd, qmean = zyfa.quantize_fp8(q, hadamard=True, smooth=True)
        k8, kd, kmean, kbias = zyfa.quantize_fp8(k, hadamard=True, smooth=True, query_mean=qmean,
                                                 key_bias_scale=scale)
        v8, vd = zyfa.quantize_fp8(v)
        o = zyfa.attention(q8, k8, v8, causal=True, softmax_scale=scale, descale=(qd, kd, vd),
                           key_bias=kbias)
    numpy results are uint8 arrays holding e4m3 codes; torch results are float8 tensors.
    in_dtype: 'bf16' for a numpy uint16 input.
    heads_kv: for Q under GQA/MQA, the number of kv heads (k.shape[-2]): one scale per (batch, kv
        head), shared by the heads // heads_kv query heads that read that kv head (their amax), so
        descale is [batch, heads_kv], what attention() takes as q_descale. x_fp8 keeps x's shape,
        and smooth=True's mean is per query head, [batch, heads, head_dim] (Q smoothing under GQA).
        Not with hadamard=True (the rotation would have to span the group's query heads).
    v_transposed: for v, the transposed layout that attention(..., v_transposed=True) reads, x_fp8
        [batch, heads, groups, head_dim, 16] (groups of 16 keys, the sequence padded with zero keys
        to a multiple of 128; docs/api.md): the same codes and descales, in the byte order the
        NVIDIA kernels' P.V reads, so they copy V without transposing it. Fixed length only.

        q8, qd = zyfa.quantize_fp8(q, heads_kv=k.shape[-2])     # q [b, s, 8, d], k [b, s, 2, d]
        k8, kd = zyfa.quantize_fp8(k)
        v8, vd = zyfa.quantize_fp8(v)
        o = zyfa.attention(q8, k8, v8, descale=(qd, kd, vd))    # qd, kd, vd: [b, 2]
    """
    if is_torch(x):
        require_no_grad("zyfa.quantize_fp8", (("x", x), ("query_mean", query_mean)))
    group = _group_size(x, heads_kv, hadamard)
    if v_transposed and (cu_seqlens is not None or group > 1):
        raise ValueError("v_transposed=True is a layout of v: fixed length (no cu_seqlens), no heads_kv")
    if query_mean is not None and group > 1:
        raise ValueError("query_mean with heads_kv=%d: query_mean is for k (the key bias of a smoothed q), "
                         "heads_kv for q" % heads_kv)
    if key_bias_scale is not None and query_mean is None:
        raise ValueError("key_bias_scale scales the key bias, which needs query_mean")
    bias_scale = 0.0 if key_bias_scale is None else float(key_bias_scale)
    try:
        if is_torch(x) and context is None and in_dtype is None and out is None and not v_transposed:
            from . import _torch_ops
            codes, descale, mean, bias = _torch_ops.quantize_fp8(
                _group_heads(x, group), dtype_code(dtype), bool(hadamard), cu_seqlens, max_seqlen, bool(smooth),
                query_mean, bias_scale)
            codes = codes if group == 1 else codes.view(x.shape)
        else:
            codes, descale, mean, bias = quantize_fp8_direct(context, x, dtype_code(dtype), hadamard, cu_seqlens,
                                                             max_seqlen, out, in_dtype, group, smooth, query_mean,
                                                             bias_scale, v_transposed)
    except ZyfaError as e:
        raise e.called_as("zyfa.quantize_fp8") from None
    if smooth and group > 1:  # the grouped heads' [batch, heads_kv, group * head_dim] is per query head
        mean = mean.reshape(tuple(mean.shape[:1]) + tuple(x.shape[-2:]))
    return (codes, descale) + ((mean,) if smooth else ()) + ((bias,) if query_mean is not None else ())


def quantize_int8(x, per="token", hadamard=False, smooth=False, cu_seqlens=None, max_seqlen=None, context=None):
    """Quantise x ([batch, seq, heads, head_dim], or [total, heads, head_dim] packed with cu_seqlens)
    to symmetric INT8 for the INT8 Q/K mode: per="token" (for q) writes one scale per token and head,
    per="block" (for k) one per 64 rows of each sequence and head. Returns (x_int8, descale fp32
    [batch, heads, groups]), groups = seqlen or ceil(seqlen / 64) (seqlen the longest sequence when
    packed; pass attention the same max_seqlen_q / max_seqlen_k, the descales' layout depends on it):
    x ~= x_int8 * descale of its token / block. hadamard=True rotates the head dimension
    first (use it on q and k alike); smooth=True (for k) subtracts each channel's mean over the
    sequence and returns (x_int8, descale, mean fp32 [batch, heads, head_dim]) as quantize_fp8 does.
    CPU backend only so far (numpy arrays and CPU tensors). Pass the results as
    attention(q8, k8, v8, descale=(q_descale, k_descale, v_descale)) with v e4m3 from quantize_fp8:

        q8, qd = zyfa.quantize_int8(q, per="token", hadamard=True)
        k8, kd, mean = zyfa.quantize_int8(k, per="block", hadamard=True, smooth=True)
        v8, vd = zyfa.quantize_fp8(v)
        o = zyfa.attention(q8, k8, v8, descale=(qd, kd, vd), causal=True)
    """
    if per not in ("token", "block"):
        raise ValueError("per must be 'token' (one scale per token, for q) or 'block' (per 64 keys, for k), "
                         "not %r" % (per,))
    try:
        require_no_grad("zyfa.quantize_int8", (("x", x),))
        if not _lib.has_function("zyfa_quantize_int8"):
            raise ValueError("the loaded libzyfa (%s) predates zyfa_quantize_int8 (0.1.4)" %
                             _lib.lib().zyfa_version_string().decode())
        xv = view(x, "x")
        varlen = cu_seqlens is not None
        rank = 3 if varlen else 4
        if len(xv.shape) != rank:
            raise ValueError("x must be %d-D, got shape %s" % (rank, xv.shape))
        require_dim_contiguous(xv, "x")
        ctx = _context_for(context, xv)
        keep = [xv]
        params = _lib.QuantParams()
        _lib.lib().zyfa_quant_params_init(ctypes.byref(params), ctypes.sizeof(params))
        params.flags = (_lib.QUANT_HADAMARD if hadamard else 0) | (_lib.QUANT_SMOOTH if smooth else 0)
        params.scale_rows = 1 if per == "token" else _lib.INT8_KEY_BLOCK
        if varlen:
            cu = _int32_array(cu_seqlens, xv, "cu_seqlens")
            keep.append(cu)
            params.batch = cu.shape[0] - 1
            params.seqlen = _max_seqlen(max_seqlen, cu, xv, "cu_seqlens", xv.shape[0])
            params.cu_seqlens = _ptr(cu)
        else:
            params.batch, params.seqlen = xv.shape[0], xv.shape[1]
        params.heads, params.head_dim = xv.shape[-2], xv.shape[-1]
        codes = _empty(xv.shape, _lib.DTYPE_INT8, xv)
        cv = view(codes, "out")
        groups = -(-params.seqlen // params.scale_rows)
        descale = _empty((params.batch, params.heads, groups), _lib.DTYPE_FP32, xv)
        keep += [cv, descale]
        mean = None
        if smooth:
            mean = _empty((params.batch, params.heads, params.head_dim), _lib.DTYPE_FP32, xv)
            keep.append(mean)
            params.smooth_mean = _ptr(mean)
        check(_lib.lib().zyfa_quantize_int8(ctx.handle, ctypes.byref(params), ctypes.byref(c_tensor(xv, varlen)),
                                            ctypes.byref(c_tensor(cv, varlen)), _ptr(descale), _stream_for(xv)),
              quantize_names(varlen, None))
        return (codes, descale, mean) if smooth else (codes, descale)
    except ZyfaError as e:
        raise e.called_as("zyfa.quantize_int8") from None


def unsmooth_lse(lse, q, mean, softmax_scale=None, cu_seqlens=None):
    """The lse of the unsmoothed problem from the lse attention() returned on a k quantised with
    smooth=True: lse + softmax_scale * q . mean, per query row (softmax_scale None: 1/sqrt(head_dim)).

    lse [batch, heads_q, seqlen_q] (packed: [heads_q, total_q] with cu_seqlens, the query
    sequences'), q [batch, seqlen_q, heads_q, head_dim] (packed [total_q, heads_q, head_dim]): the
    original q, not its FP8 codes (whose rounding would multiply the mean: docs/api.md, K
    smoothing), mean [batch, heads_kv, head_dim] as quantize_fp8(k, smooth=True) returned it; query
    head h reads kv head h // (heads_q // heads_kv). Returns a new fp32 array or tensor; numpy in
    float64, torch in float32 on q's device.
    """
    torch_in = is_torch(lse)
    if torch_in:
        import torch
        qf, mf, out = q.to(torch.float32), mean.to(torch.float32), lse.to(torch.float32).clone()
        einsum, repeat = torch.einsum, (lambda a, n: a.repeat_interleave(n, dim=1))
    else:
        import numpy as np
        qf, mf, out = np.asarray(q, np.float64), np.asarray(mean, np.float64), np.array(lse, np.float64)
        einsum, repeat = np.einsum, (lambda a, n: np.repeat(a, n, axis=1))
    heads_q, head_dim = int(qf.shape[-2]), int(qf.shape[-1])
    heads_kv = int(mf.shape[-2])
    if heads_kv < 1 or heads_q % heads_kv or int(mf.shape[-1]) != head_dim:
        raise ValueError("mean %s does not fit q %s: [batch, heads_kv, head_dim] with heads_kv dividing "
                         "heads_q" % (tuple(mf.shape), tuple(qf.shape)))
    scale = 1.0 / head_dim ** 0.5 if softmax_scale in (None, 0) else float(softmax_scale)
    per_query_head = repeat(mf, heads_q // heads_kv)  # [batch, heads_q, head_dim]
    if cu_seqlens is None:
        out += scale * einsum("bshd,bhd->bhs", qf, per_query_head)
    else:
        cu = [int(c) for c in cu_seqlens]
        for b in range(len(cu) - 1):
            rows = slice(cu[b], cu[b + 1])
            out[:, rows] += scale * einsum("shd,hd->hs", qf[rows], per_query_head[b])
    return out if torch_in else out.astype(np.float32)


def _group_size(x, heads_kv, hadamard):
    """heads // heads_kv, checked: how many adjacent heads of x share one scale."""
    if heads_kv is None:
        return 1
    if len(x.shape) < 2:
        raise ValueError("x must be 3-D or 4-D, got shape %s" % (tuple(x.shape),))
    heads = int(x.shape[-2])
    if isinstance(heads_kv, bool) or int(heads_kv) != heads_kv or heads_kv < 1 or heads % int(heads_kv):
        raise ValueError("heads_kv=%r must be a positive divisor of x.shape[-2] = %d (heads of x)"
                         % (heads_kv, heads))
    group = heads // int(heads_kv)
    if group > 1 and hadamard:
        raise ValueError(
            "hadamard=True with heads_kv=%d is not supported: one scale per kv head spans %d query "
            "heads, and the Hadamard rotation would then mix them; quantise q with heads_kv and "
            "hadamard=False (attention takes one q scale per (batch, kv head))" % (heads_kv, group))
    return group


def _group_heads(x, group, name=None):
    """x [..., heads, head_dim] as [..., heads // group, group * head_dim] (adjacent query heads
    share a kv head). An input may be copied to get there; an output (name given) must be a view."""
    if group == 1:
        return x
    heads, dim = int(x.shape[-2]), int(x.shape[-1])
    shape = tuple(x.shape[:-2]) + (heads // group, group * dim)
    if name is not None:
        strides = x.stride() if is_torch(x) else tuple(s // x.itemsize for s in x.strides)
        if (dim > 1 and strides[-1] != 1) or strides[-2] != dim:
            raise ValueError("%s: heads_kv grouping needs its heads axis packed (head stride == "
                             "head_dim, head_dim axis contiguous), its strides are %s" % (name, strides))
        return x.view(shape) if is_torch(x) else x.reshape(shape)
    return x.reshape(shape)


def quantize_fp8_direct(context, x, out_code, hadamard=False, cu_seqlens=None, max_seqlen=None, out=None,
                        in_dtype=None, group=1, smooth=False, query_mean=None, key_bias_scale=0.0,
                        v_transposed=False):
    """(codes, descale, mean or None, key bias or None)."""
    if out_code not in FP8_DTYPES:
        raise ValueError("dtype must be 'e4m3fn' or 'e4m3fnuz'")
    xv = view(x, "x", in_dtype)
    varlen = cu_seqlens is not None
    rank = 3 if varlen else 4
    if len(xv.shape) != rank:
        raise ValueError("x must be %d-D, got shape %s" % (rank, xv.shape))
    given_out = out
    if group > 1:
        result_shape = xv.shape
        x = _group_heads(x, group)
        xv = view(x, "x", in_dtype)
        if out is not None:
            out = _group_heads(_output(out, result_shape, out_code, xv, "out"), group, "out")
    require_dim_contiguous(xv, "x")
    ctx = _context_for(context, xv)
    keep = [xv]
    params = _lib.QuantParams()
    _lib.lib().zyfa_quant_params_init(ctypes.byref(params), ctypes.sizeof(params))
    params.flags = (_lib.QUANT_HADAMARD if hadamard else 0) | (_lib.QUANT_SMOOTH if smooth else 0) | \
        (_lib.QUANT_V_TRANSPOSED if v_transposed else 0)
    if varlen:
        cu = _int32_array(cu_seqlens, xv, "cu_seqlens")
        keep.append(cu)
        params.batch = cu.shape[0] - 1
        params.seqlen = _max_seqlen(max_seqlen, cu, xv, "cu_seqlens", xv.shape[0])
        params.cu_seqlens = _ptr(cu)
    else:
        params.batch, params.seqlen = xv.shape[0], xv.shape[1]
    params.heads, params.head_dim = xv.shape[-2], xv.shape[-1]
    out_shape = ((params.batch, params.heads, _transposed_v_groups(params.seqlen), params.head_dim, 16)
                 if v_transposed else xv.shape)
    q = _output(out, out_shape, out_code, xv, "out")
    qv = view(q, "out", out_code)
    require_dim_contiguous(qv, "out")
    if v_transposed and params.head_dim > 1 and qv.strides[3] != 16:
        raise ValueError("out (v_transposed=True): a group's head_dim x 16 bytes must be contiguous")
    descale = _empty((params.batch, params.heads), _lib.DTYPE_FP32, xv)
    keep += [qv, descale]
    mean = None
    if smooth:
        mean = _empty((params.batch, params.heads, params.head_dim), _lib.DTYPE_FP32, xv)
        keep.append(mean)
        params.smooth_mean = _ptr(mean)
    out_tensor = _c_tensor_transposed_v(qv) if v_transposed else c_tensor(qv, varlen)
    bias = None
    if query_mean is not None:
        qm = _fp32_array(query_mean, xv, "query_mean", None, None, "x")
        if len(qm.shape) != 3 or (qm.shape[0], qm.shape[2]) != (params.batch, params.head_dim):
            raise ValueError("query_mean has shape %s, expected [batch, heads_q, head_dim] = (%d, heads_q, %d) "
                             "(q's mean, as quantize_fp8(q, smooth=True) returns it)"
                             % (tuple(qm.shape), params.batch, params.head_dim))
        heads_q = qm.shape[1]
        if varlen:
            _require_all_rows_packed(cu, xv.shape[0], xv, "cu_seqlens", "the key bias")
        bias_shape = (heads_q, xv.shape[0]) if varlen else (params.batch, heads_q, params.seqlen)
        bias = _empty(bias_shape, _lib.DTYPE_FP32, xv)
        keep += [qm, bias]
        params.flags |= _lib.QUANT_KEY_BIAS
        params.query_mean, params.key_bias = _ptr(qm), _ptr(bias)
        params.query_heads, params.key_bias_scale = heads_q, key_bias_scale
    check(_lib.lib().zyfa_quantize_fp8(ctx.handle, ctypes.byref(params), ctypes.byref(c_tensor(xv, varlen)),
                                       ctypes.byref(out_tensor), _ptr(descale), _stream_for(xv)),
          quantize_names(varlen, None if group == 1 else params.heads))
    if group > 1:
        q = given_out if given_out is not None else q.reshape(result_shape)
    return q, descale, mean, bias


# --- helpers -------------------------------------------------------------------------------------

def _transposed_v_groups(seqlen):
    """16-key groups of the transposed V layout for seqlen keys (padded to 128 keys)."""
    return -(-seqlen // 128) * 8


def _require_transposed_v(vv, batch, seqlen_k, heads_kv):
    """v in the transposed layout [batch, heads_kv, groups, head_dim_v, 16]: groups of 16 keys whose
    head_dim_v x 16 bytes are contiguous (the kernels' order within a group is quantize_fp8's)."""
    want = (batch, heads_kv, _transposed_v_groups(seqlen_k))
    if tuple(vv.shape[:3]) != want or vv.shape[4] != 16:
        raise ValueError("v (v_transposed=True) has shape %s, expected [%d, %d, %d, head_dim_v, 16] for k's batch, "
                         "kv heads and %d keys" % (vv.shape, want[0], want[1], want[2], seqlen_k))
    if vv.shape[3] > 1 and vv.strides[3] != 16:
        raise ValueError("v (v_transposed=True): a group's head_dim_v x 16 bytes must be contiguous "
                         "(strides %s)" % (vv.strides,))


def _c_tensor_transposed_v(v):
    """The zyfa_tensor of a transposed-V view [batch, heads, groups, head_dim, 16]: stride_seq is the
    distance between groups (docs/api.md)."""
    t = _lib.Tensor()
    t.data = v.ptr
    t.dtype = v.dtype
    t.reserved = 0
    t.stride_batch, t.stride_seq, t.stride_head = v.strides[0], v.strides[2], v.strides[1]
    return t


def _context_for(context, v):
    """The given context (checked against the data's device) or the shared one for that device."""
    if v.device == "cpu":
        if context is None:
            return default_context("cpu")
        if context.backend != "cpu":
            raise ValueError("host memory (numpy or a CPU tensor) needs a CPU context, not %r" % context)
        return context
    gpu_backend = "hip" if getattr(torch_module().version, "hip", None) else "cuda"
    if context is None:
        return default_context(gpu_backend, v.device_index)
    if not isinstance(context, Context) or context.backend not in ("cuda", "hip") or \
            context.device != v.device_index:
        raise ValueError("tensors on cuda:%d need a %s context on device %d, not %r" % (
            v.device_index, gpu_backend, v.device_index, context))
    return context


def _stream_for(v):
    """The caller's current stream for device tensors (cudaStream_t / hipStream_t), else NULL."""
    if v.device != "cuda":
        return None
    torch = torch_module()
    return ctypes.c_void_p(torch.cuda.current_stream(v.device_index).cuda_stream)


def _ptr(x):
    if is_torch(x):
        return x.data_ptr()
    return x.__array_interface__["data"][0]


def _empty(shape, code, like):
    if is_torch(like.obj):
        torch = torch_module()
        return torch.empty(shape, dtype=torch_dtype(code), device=like.obj.device)
    import numpy as np
    return np.empty(shape, dtype=numpy_dtype(code))


def _default_out_code(like):
    if is_torch(like.obj):
        return _lib.DTYPE_BF16 if like.dtype in FP8_DTYPES or like.dtype == _lib.DTYPE_INT8 else like.dtype
    return _lib.DTYPE_FP32


def _out_storage_dtype(out, out_dtype):
    """The dtype= override that views an output: a numpy uint16 output holds bf16."""
    if not is_torch(out) and out.dtype.name == "uint16":
        return "bf16"
    return None


def _output(out, shape, code, like, name):
    """out as given (checked), or a new output of dtype code (None = the default for the inputs)."""
    if out is None:
        return _empty(shape, code or _default_out_code(like), like)
    if is_torch(out) != is_torch(like.obj):
        raise ValueError("%s must be of the inputs' kind (numpy or torch)" % name)
    if tuple(out.shape) != tuple(shape):
        raise ValueError("%s has shape %s, expected %s" % (name, tuple(out.shape), tuple(shape)))
    if is_torch(out) and out.device != like.obj.device:
        raise ValueError("%s is on %s, the inputs on %s" % (name, out.device, like.obj.device))
    return out


def _int32_array(x, like, name):
    if is_torch(like.obj):
        torch = torch_module()
        if not isinstance(x, torch.Tensor):
            x = torch.tensor(x, dtype=torch.int32, device=like.obj.device)
        if x.device != like.obj.device:
            raise ValueError("%s must be on %s like q, not %s" % (name, like.obj.device, x.device))
        return x.to(torch.int32).contiguous()
    import numpy as np
    return np.ascontiguousarray(x, dtype=np.int32)


def _max_seqlen(given, cu, like, name, rows):
    """max_seqlen as given, or computed (on the host; for device tensors this synchronises)."""
    if like.device == "cpu":
        total = int(cu[-1])
        if total > rows:
            raise ValueError("%s[-1] = %d exceeds the %d packed rows" % (name, total, rows))
    if given is not None:
        return int(given)
    if cu.shape[0] < 2:
        return 0
    return int((cu[1:] - cu[:-1]).max())


def _descale_array(d, batch, heads_kv, heads_q, like, name):
    """A contiguous fp32 [batch, heads_kv] descale from a number, a one-element array, a [batch,
    heads_kv] one or, for q_descale under GQA, a [batch, heads_q] one equal within each group."""
    expected = (batch, heads_kv)
    if is_torch(like.obj):
        torch = torch_module()
        if not isinstance(d, torch.Tensor):
            return torch.full(expected, float(d), dtype=torch.float32, device=like.obj.device)
        if d.device != like.obj.device:
            raise ValueError("%s must be on %s like q, not %s" % (name, like.obj.device, d.device))
        if d.numel() == 1:
            return d.to(torch.float32).reshape(1, 1).expand(batch, heads_kv).contiguous()
        d = d.to(torch.float32)
        if tuple(d.shape) == expected:
            return d.contiguous()
        _check_per_query_head(d, batch, heads_kv, heads_q, name)
        if d.device.type != "cpu" and torch.cuda.is_current_stream_capturing():
            raise ValueError("%s has one scale per query head %s: checking that each group's scales are "
                             "equal reads them back, which CUDA graph capture cannot; pass [batch, heads_kv]"
                             " = %s (zyfa.quantize_fp8(q, heads_kv=%d))" % (name, tuple(d.shape), expected,
                                                                          heads_kv))
        grouped = d.reshape(batch, heads_kv, heads_q // heads_kv)
        first = grouped[:, :, :1]
        same = (grouped == first) | (torch.isnan(grouped) & torch.isnan(first))
        if not bool(same.all()):  # for device tensors this synchronises
            _unequal_groups(grouped.cpu().tolist(), name, heads_kv)
        return grouped[:, :, 0].contiguous()
    import numpy as np
    arr = np.asarray(d, dtype=np.float32)
    if arr.size == 1:
        return np.full(expected, float(arr.reshape(())), dtype=np.float32)
    if arr.shape == expected:
        return np.ascontiguousarray(arr)
    _check_per_query_head(arr, batch, heads_kv, heads_q, name)
    grouped = arr.reshape(batch, heads_kv, heads_q // heads_kv)
    first = grouped[:, :, :1]
    if not np.all((grouped == first) | (np.isnan(grouped) & np.isnan(first))):
        _unequal_groups(grouped.tolist(), name, heads_kv)
    return np.ascontiguousarray(grouped[:, :, 0])


def _fp32_array(x, like, name, expected, layout, like_name="q"):
    """x (an array, tensor or sequence of any float type) as a contiguous fp32 array or tensor on
    like's device, of shape expected (None: the caller checks it); layout names it in the error."""
    if is_torch(like.obj):
        torch = torch_module()
        if not isinstance(x, torch.Tensor):
            x = torch.tensor(x, dtype=torch.float32, device=like.obj.device)
        if x.device != like.obj.device:
            raise ValueError("%s must be on %s like %s, not %s" % (name, like.obj.device, like_name, x.device))
        arr = x.to(torch.float32).contiguous()
    else:
        import numpy as np
        arr = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    if expected is not None and tuple(arr.shape) != tuple(expected):
        raise ValueError("%s has shape %s, expected %s = %s" % (name, tuple(arr.shape), tuple(expected), layout))
    return arr


def _require_all_rows_packed(cu, rows, like, cu_name, name):
    """A [heads, total] layout's rows are cu[-1] apart in the library: on the host, check that they are
    the packed rows (a device cu_seqlens is not read back; its GPU backends refuse the bias anyway)."""
    if like.device == "cpu" and cu.shape[0] > 0 and int(cu[-1]) != rows:
        raise ValueError("%s is [heads, total] with total = %s[-1] = %d, which must equal the %d packed rows"
                         % (name, cu_name, int(cu[-1]), rows))


def _is_int8(x):
    if is_torch(x):
        return x.dtype == torch_module().int8
    return getattr(getattr(x, "dtype", None), "name", None) == "int8"


def _int8_descale_array(d, expected, like, name):
    """A contiguous fp32 descale of the INT8 Q/K mode, exactly `expected` ([batch, heads_q, seqlen_q]
    for q, [batch, heads_kv, ceil(seqlen_k / 64)] for k), as zyfa.quantize_int8 returns it."""
    hint = "zyfa.quantize_int8(%s, per=%r)" % (name[0], "token" if name == "q_descale" else "block")
    if is_torch(like.obj):
        torch = torch_module()
        if not isinstance(d, torch.Tensor) or tuple(d.shape) != expected:
            raise ValueError("%s of INT8 %s must be a [batch, heads, groups] = %s tensor (%s), got %s" % (
                name, name[0], expected, hint, tuple(getattr(d, "shape", ()))))
        if d.device != like.obj.device:
            raise ValueError("%s must be on %s like q, not %s" % (name, like.obj.device, d.device))
        return d.to(torch.float32).contiguous()
    import numpy as np
    arr = np.asarray(d, dtype=np.float32)
    if arr.shape != expected:
        raise ValueError("%s of INT8 %s must be a [batch, heads, groups] = %s array (%s), got %s" % (
            name, name[0], expected, hint, arr.shape))
    return np.ascontiguousarray(arr)


def _check_per_query_head(d, batch, heads_kv, heads_q, name):
    """A descale that is not [batch, heads_kv]: fine only as q_descale [batch, heads_q] under GQA."""
    shape = tuple(d.shape)
    expected = (batch, heads_kv)
    if name == "q_descale" and heads_q != heads_kv and shape == (batch, heads_q):
        return
    hint = ""
    if name == "q_descale" and heads_q != heads_kv:
        hint = ("; under GQA one q scale serves the %d query heads that read each kv head: quantise q "
                "with zyfa.quantize_fp8(q, heads_kv=%d), or pass [batch, heads_q] = %s with equal "
                "scales in each group" % (heads_q // heads_kv, heads_kv, (batch, heads_q)))
    raise ValueError("%s has shape %s, expected %s = [batch, heads of k] (one scale per batch and kv "
                     "head)%s" % (name, shape, expected, hint))


def _unequal_groups(rows, name, heads_kv):
    for b, row in enumerate(rows):
        for g, scales in enumerate(row):
            if any(s != scales[0] and not (s != s and scales[0] != scales[0]) for s in scales):
                raise ValueError(
                    "%s has one scale per query head, but attention applies one per (batch, kv head) and "
                    "the %d query heads %d..%d of batch %d (reading kv head %d) have different scales "
                    "%s: quantise q with zyfa.quantize_fp8(q, heads_kv=%d) so that each group shares "
                    "one scale" % (name, len(scales), g * len(scales), (g + 1) * len(scales) - 1, b, g,
                                   [float(s) for s in scales[:8]], heads_kv))
