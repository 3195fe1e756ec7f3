"""torch custom ops zyfa::attention, zyfa::attention_out and zyfa::quantize_fp8.

Registered with torch.library (schema + CPU/CUDA kernels + a fake implementation that only computes
output shapes), so torch.compile(fullgraph=True) traces through them and CUDA graphs capture the
kernel launch on the current stream. The kernels allocate their outputs with torch (the caching
allocator is graph-aware) and never synchronise. Imported on first use with a torch tensor.
"""
import torch

from . import _lib
from ._api import attention_direct, quantize_fp8_direct
from ._tensors import FP8_DTYPES, dtype_code, torch_dtype

_ATTN_ARGS = ("Tensor q, Tensor k, Tensor v, Tensor? q_descale, Tensor? k_descale, Tensor? v_descale, "
              "Tensor? cu_seqlens_q, Tensor? cu_seqlens_k, int max_seqlen_q, int max_seqlen_k, int mask, "
              "int window_left, int window_right, float softmax_scale, int softmax, int key_block, "
              "int out_dtype, bool return_lse, Tensor? sinks, Tensor? key_bias")

_library = torch.library.Library("zyfa", "DEF")
_library.define("attention(%s) -> (Tensor, Tensor)" % _ATTN_ARGS)
_library.define("attention_out(%s, Tensor(a!) out) -> Tensor" % _ATTN_ARGS)
_library.define("quantize_fp8(Tensor x, Tensor? cu_seqlens, int max_seqlen, int out_dtype, bool hadamard, "
                "bool smooth, Tensor? query_mean, float key_bias_scale) -> (Tensor, Tensor, Tensor, Tensor)")


def _no_lse(q):
    return q.new_empty((0,), dtype=torch.float32)


def _out_code(q, out_dtype):
    if out_dtype >= 0:
        return out_dtype
    code = dtype_code(q.dtype)
    return _lib.DTYPE_BF16 if code in FP8_DTYPES or code == _lib.DTYPE_INT8 else code


def _run(q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
         mask, window_left, window_right, softmax_scale, softmax, key_block, out_dtype, return_lse, sinks, key_bias,
         out):
    varlen = cu_seqlens_q is not None
    o, lse = attention_direct(
        None, q, k, v, mask=mask, window_left=window_left, window_right=window_right,
        softmax_scale=softmax_scale, softmax=softmax, q_descale=q_descale, k_descale=k_descale,
        v_descale=v_descale, return_lse=return_lse, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
        max_seqlen_q=max_seqlen_q if varlen else None, max_seqlen_k=max_seqlen_k if varlen else None,
        out=out, out_dtype=_out_code(q, out_dtype), key_block=key_block, sinks=sinks, key_bias=key_bias)
    return o, (lse if lse is not None else _no_lse(q))


def _attention_kernel(q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                      max_seqlen_k, mask, window_left, window_right, softmax_scale, softmax, key_block, out_dtype,
                      return_lse, sinks, key_bias):
    return _run(q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                max_seqlen_k, mask, window_left, window_right, softmax_scale, softmax, key_block, out_dtype,
                return_lse, sinks, key_bias, None)


def _attention_out_kernel(q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                          max_seqlen_k, mask, window_left, window_right, softmax_scale, softmax, key_block,
                          out_dtype, return_lse, sinks, key_bias, out):
    return _run(q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                max_seqlen_k, mask, window_left, window_right, softmax_scale, softmax, key_block, out_dtype,
                return_lse, sinks, key_bias, out)[1]


def _lse_shape(q, cu_seqlens_q):
    if cu_seqlens_q is not None:
        return (q.shape[1], q.shape[0])          # [heads_q, total_q]
    return (q.shape[0], q.shape[2], q.shape[1])  # [batch, heads_q, seqlen_q]


def _attention_fake(q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                    max_seqlen_k, mask, window_left, window_right, softmax_scale, softmax, key_block, out_dtype,
                    return_lse, sinks, key_bias):
    o = q.new_empty(tuple(q.shape[:-1]) + (v.shape[-1],), dtype=torch_dtype(_out_code(q, out_dtype)))
    lse = q.new_empty(_lse_shape(q, cu_seqlens_q), dtype=torch.float32) if return_lse else _no_lse(q)
    return o, lse


def _attention_out_fake(q, k, v, q_descale, k_descale, v_descale, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                        max_seqlen_k, mask, window_left, window_right, softmax_scale, softmax, key_block,
                        out_dtype, return_lse, sinks, key_bias, out):
    return q.new_empty(_lse_shape(q, cu_seqlens_q), dtype=torch.float32) if return_lse else _no_lse(q)


def _quantize_kernel(x, cu_seqlens, max_seqlen, out_dtype, hadamard, smooth, query_mean, key_bias_scale):
    codes, descale, mean, bias = quantize_fp8_direct(
        None, x, out_dtype, hadamard, cu_seqlens, max_seqlen if cu_seqlens is not None else None, smooth=smooth,
        query_mean=query_mean, key_bias_scale=key_bias_scale)
    if mean is None:  # placeholders for the absent outputs, each its own (op outputs may not alias)
        mean = x.new_empty((0,), dtype=torch.float32)
    if bias is None:
        bias = x.new_empty((0,), dtype=torch.float32)
    return codes, descale, mean, bias


def _quantize_fake(x, cu_seqlens, max_seqlen, out_dtype, hadamard, smooth, query_mean, key_bias_scale):
    batch = cu_seqlens.shape[0] - 1 if cu_seqlens is not None else x.shape[0]
    if query_mean is None:
        bias_shape = (0,)
    elif cu_seqlens is not None:
        bias_shape = (query_mean.shape[1], x.shape[0])         # [heads_q, total]
    else:
        bias_shape = (batch, query_mean.shape[1], x.shape[1])  # [batch, heads_q, seqlen]
    return (x.new_empty(x.shape, dtype=torch_dtype(out_dtype)),
            x.new_empty((batch, x.shape[-2]), dtype=torch.float32),
            x.new_empty((batch, x.shape[-2], x.shape[-1]) if smooth else (0,), dtype=torch.float32),
            x.new_empty(bias_shape, dtype=torch.float32))


def _register_fake(name, fn):
    if hasattr(torch.library, "register_fake"):       # torch >= 2.4
        torch.library.register_fake("zyfa::" + name, fn, lib=_library)
    elif hasattr(torch.library, "impl_abstract"):     # torch 2.2, 2.3
        torch.library.impl_abstract("zyfa::" + name, fn, lib=_library)
    else:
        _library.impl(name, fn, "Meta")


for _name, _kernel, _fake in (("attention", _attention_kernel, _attention_fake),
                              ("attention_out", _attention_out_kernel, _attention_out_fake),
                              ("quantize_fp8", _quantize_kernel, _quantize_fake)):
    _library.impl(_name, _kernel, "CPU")
    _library.impl(_name, _kernel, "CUDA")  # ROCm builds of torch dispatch HIP tensors here too
    _register_fake(_name, _fake)


# --- the Python entry points used by zyfa.attention / zyfa.quantize_fp8 ----------------------------

def _as_tensor(x, like, dtype):
    if x is None or isinstance(x, torch.Tensor):
        return x
    return torch.tensor(x, dtype=dtype, device=like.device)


def _max_seqlen(given, cu):
    if given is not None or cu is None:
        return -1 if given is None else int(given)
    # Reading the lengths back synchronises: pass max_seqlen_q/k under torch.compile or CUDA graphs.
    return int((cu[1:] - cu[:-1]).max().item()) if cu.shape[0] > 1 else 0


def _descale_tensor(d, q):
    """A Python number becomes a one-element tensor on q's device (expanded to [batch, heads_kv] later)."""
    if d is None or isinstance(d, torch.Tensor):
        return d
    return torch.full((1, 1), float(d), dtype=torch.float32, device=q.device)


def attention(q, k, v, mask, window_left, window_right, softmax_scale, softmax, q_descale, k_descale,
              v_descale, return_lse, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, out, out_dtype,
              key_block=0, sinks=None, key_bias=None):
    cu_q = _as_tensor(cu_seqlens_q, q, torch.int32)
    cu_k = _as_tensor(cu_seqlens_k, q, torch.int32)
    args = (q, k, v, _descale_tensor(q_descale, q), _descale_tensor(k_descale, q),
            _descale_tensor(v_descale, q), cu_q, cu_k, _max_seqlen(max_seqlen_q, cu_q),
            _max_seqlen(max_seqlen_k, cu_k), mask, window_left, window_right, softmax_scale, softmax,
            key_block, -1 if out_dtype is None else dtype_code(out_dtype), bool(return_lse),
            _as_tensor(sinks, q, torch.float32), _as_tensor(key_bias, q, torch.float32))
    if out is not None:
        lse = torch.ops.zyfa.attention_out(*args, out)
        o = out
    else:
        o, lse = torch.ops.zyfa.attention(*args)
    return (o, lse) if return_lse else o


def quantize_fp8(x, out_code, hadamard, cu_seqlens, max_seqlen, smooth=False, query_mean=None, key_bias_scale=0.0):
    """(codes, descale, mean or None, key bias or None): the op's empty placeholders become None."""
    cu = _as_tensor(cu_seqlens, x, torch.int32)
    codes, descale, mean, bias = torch.ops.zyfa.quantize_fp8(
        x, cu, _max_seqlen(max_seqlen, cu), out_code, hadamard, smooth, _as_tensor(query_mean, x, torch.float32),
        float(key_bias_scale))
    return codes, descale, mean if smooth else None, bias if query_mean is not None else None
