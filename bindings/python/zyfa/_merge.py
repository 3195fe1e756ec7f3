"""attention_merge(): zyfa_attn_merge, combining partial attention results by their lse.

Parts come from attention(..., return_lse=True) calls over disjoint key ranges for the same
queries (split-KV, a prefix cache and a new chunk, context parallelism). numpy arrays merge on the
CPU backend; torch tensors on their device's backend, enqueued on the current stream.
"""
import ctypes

from . import _lib
from ._api import _context_for, _empty, _int32_array, _max_seqlen, _output, _ptr, _stream_for
from ._errors import ZyfaError, check
from ._tensors import c_tensor, dtype_code, is_torch, require_dim_contiguous, view


def attention_merge(outs, lses, cu_seqlens_q=None, max_seqlen_q=None, return_lse=True, out=None,
                    out_dtype=None, context=None):
    """Merge partial attention results (O_i, lse_i) over disjoint key sets into (O, lse).

    outs: a sequence of n >= 1 arrays [batch, seqlen_q, heads, head_dim_v] (packed with
    cu_seqlens_q: [total_q, heads, head_dim_v]), fp32 / fp16 / bf16, any strides with a
    contiguous last axis. lses: n fp32 arrays [batch, heads, seqlen_q] (packed: [heads, total_q]),
    contiguous, as attention(..., return_lse=True) returns them. Per query row, in fp32:
    lse = log(sum_i exp(lse_i)), O = sum_i exp(lse_i - lse) O_i; a part with lse_i = -inf adds
    nothing (its O_i is not read), a row whose parts are all -inf gets O = 0 and lse = -inf, an lse
    that is NaN or +inf gives NaN. Returns (O, lse), or O with return_lse=False. out_dtype
    defaults to the first part's dtype. Not in place: out must not share memory with any part.
    GPU backends take at most 64 parts per call (merge in groups, then merge the groups).
    """
    outs, lses = list(outs), list(lses)
    if not outs or len(outs) != len(lses):
        raise ValueError("attention_merge needs n >= 1 outs and as many lses, got %d and %d" % (len(outs), len(lses)))
    if not _lib.has_function("zyfa_attn_merge"):
        raise ZyfaError(_lib.ERROR_NOT_SUPPORTED, "zyfa.attention_merge: the loaded libzyfa (%s) has no "
                        "zyfa_attn_merge" % _lib.library_path())
    try:
        return _merge(outs, lses, cu_seqlens_q, max_seqlen_q, return_lse, out, out_dtype, context)
    except ZyfaError as e:
        raise e.called_as("zyfa.attention_merge") from None


def _merge(outs, lses, cu_seqlens_q, max_seqlen_q, return_lse, out, out_dtype, context):
    varlen = cu_seqlens_q is not None
    rank = 3 if varlen else 4
    views = [view(o, "outs[%d]" % i) for i, o in enumerate(outs)]
    first = views[0]
    for i, v in enumerate(views):
        if len(v.shape) != rank:
            raise ValueError("outs[%d] must be %d-D, got shape %s" % (i, rank, v.shape))
        if v.shape != first.shape:
            raise ValueError("outs[%d] has shape %s, outs[0] %s" % (i, v.shape, first.shape))
        if v.device != first.device or v.device_index != first.device_index:
            raise ValueError("outs[%d] is on another device than outs[0]" % i)
        require_dim_contiguous(v, "outs[%d]" % i)
    ctx = _context_for(context, first)
    heads, dim = first.shape[-2], first.shape[-1]
    params = _lib.MergeParams()
    _lib.lib().zyfa_merge_params_init(ctypes.byref(params), ctypes.sizeof(params))
    params.num_parts = len(views)
    keep = list(views)
    if varlen:
        cu = _int32_array(cu_seqlens_q, first, "cu_seqlens_q")
        keep.append(cu)
        params.batch = cu.shape[0] - 1
        params.seqlen_q = _max_seqlen(max_seqlen_q, cu, first, "cu_seqlens_q", first.shape[0])
        params.cu_seqlens_q = _ptr(cu)
        lse_shape = (heads, first.shape[0])
    else:
        params.batch, params.seqlen_q = first.shape[0], first.shape[1]
        lse_shape = (params.batch, heads, params.seqlen_q)
    params.heads, params.head_dim_v = heads, dim

    lse_ptrs = (ctypes.c_void_p * len(lses))()
    for i, l in enumerate(lses):
        lv = view(l, "lses[%d]" % i)
        if lv.dtype != _lib.DTYPE_FP32 or lv.shape != lse_shape:
            raise ValueError("lses[%d] must be float32 of shape %s, got %s" % (i, lse_shape, lv.shape))
        expected, step = [], 1
        for n in reversed(lse_shape):
            expected.insert(0, step)
            step *= n
        if any(n > 1 and s != e for n, s, e in zip(lse_shape, lv.strides, expected)):
            raise ValueError("lses[%d] must be contiguous (attention's layout)" % i)
        if lv.device != first.device or lv.device_index != first.device_index:
            raise ValueError("lses[%d] is on another device than outs[0]" % i)
        keep.append(lv)
        lse_ptrs[i] = lv.ptr

    code = dtype_code(out_dtype) if out_dtype is not None else first.dtype
    o = _output(out, first.shape, code, first, "out")
    ov = view(o, "out", code if not is_torch(o) and o.dtype.name == "uint16" else None)
    require_dim_contiguous(ov, "out")
    lse = _empty(lse_shape, _lib.DTYPE_FP32, first) if return_lse else None
    if lse is not None:
        params.lse = _ptr(lse)
    keep += [ov, lse]
    part_tensors = (_lib.Tensor * len(views))(*[c_tensor(v, varlen) for v in views])
    check(_lib.lib().zyfa_attn_merge(ctx.handle, ctypes.byref(params), part_tensors, lse_ptrs,
                                     ctypes.byref(c_tensor(ov, varlen)), _stream_for(first)),
          _merge_names(varlen))
    del keep
    return (o, lse) if return_lse else o


def _merge_names(varlen):
    """C names -> Python names in zyfa_attn_merge's messages."""
    return {
        "params.batch": "len(cu_seqlens_q) - 1 (batch)" if varlen else "outs[0].shape[0] (batch)",
        "params.seqlen_q": "max_seqlen_q" if varlen else "outs[0].shape[1] (seqlen_q)",
        "params.heads": "outs[0].shape[-2] (heads)",
        "params.head_dim_v": "outs[0].shape[-1] (head_dim_v)",
        "params.num_parts": "len(outs)",
        "params.cu_seqlens_q": "cu_seqlens_q",
        "params.lse": "the returned lse",
        "o": "out",
    }
