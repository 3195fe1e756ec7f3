"""The one exception type of zyfa: a failed C call, with its status code and detail message."""
import re

from . import _lib


class ZyfaError(RuntimeError):
    """A zyfa call failed.

    status:  the zyfa_status code (zyfa.ERROR_INVALID_ARGUMENT, zyfa.ERROR_NOT_SUPPORTED, ...)
    name:    the library's short name of the status ("invalid argument")
    message: the library's detail naming the offending field and value (may be "")
    """

    def __init__(self, status, message, name=None):
        self.status = int(status)
        self.name = name if name is not None else status_string(status)
        self.message = message
        super().__init__("%s: %s" % (self.name, message) if message else self.name)

    def called_as(self, api, renames=()):
        """This error with the C function that the message starts with ("zyfa_attn_fwd: ...")
        replaced by the Python entry point the user called ("zyfa.flash_attn_func: ..."), and each
        (old, new) of renames applied (argument names that differ between entry points)."""
        head, sep, rest = self.message.partition(": ")
        if not sep or not head.startswith("zyfa_") or " " in head:
            return self
        for old, new in renames:
            rest = rest.replace(old, new)
        return ZyfaError(self.status, "%s: %s" % (api, rest), self.name)


def status_string(status):
    return _lib.lib().zyfa_status_string(int(status)).decode()


def check(status, names=None):
    """Raises ZyfaError for a non-zero status, with this thread's last error message; names (a dict
    from attention_names / quantize_names) rewrites the C field names in it as Python arguments."""
    if status != _lib.SUCCESS:
        lib = _lib.lib()
        message = lib.zyfa_last_error_message().decode(errors="replace")
        raise ZyfaError(status, python_names(message, names) if names else message)


# A C field (params.heads_kv) or a member of a zyfa_tensor argument (q.stride_head, o.data).
_FIELD = re.compile(r"\bparams\.\w+|\b(?:q|k|v|o|in|out)\.(?:stride_batch/stride_seq/stride_head|stride_batch|"
                    r"stride_seq|stride_head|data|dtype|reserved)\b")
_MEMBER = {"data": "%s's data", "dtype": "%s.dtype", "reserved": "%s (internal reserved field)",
           "stride_batch": "%s's batch stride", "stride_seq": "%s's sequence stride",
           "stride_head": "%s's head stride", "stride_batch/stride_seq/stride_head": "%s's strides"}


def python_names(message, names):
    """message with each C field name that names knows replaced by the Python argument it comes from."""
    def replace(match):
        token = match.group(0)
        if token in names:
            return names[token]
        tensor, _, member = token.partition(".")
        if tensor in names and member in _MEMBER:
            return _MEMBER[member] % names[tensor]
        return token
    return _FIELD.sub(replace, message)


def attention_names(varlen):
    """C names -> Python names for zyfa.attention / flash_attn_func arguments."""
    h = 1 if varlen else 2  # the heads axis of q, k, v
    return {
        "params.batch": "len(cu_seqlens_q) - 1 (batch)" if varlen else "q.shape[0] (batch)",
        "params.seqlen_q": "max_seqlen_q" if varlen else "q.shape[1] (seqlen of q)",
        "params.seqlen_k": "max_seqlen_k" if varlen else "k.shape[1] (seqlen of k)",
        "params.heads_q": "q.shape[%d] (heads of q)" % h,
        "params.heads_kv": "k.shape[%d] (heads of k)" % h,
        "params.head_dim_qk": "q.shape[%d] (head_dim of q and k)" % (h + 1),
        "params.head_dim_v": "v.shape[%d] (head_dim of v)" % (h + 1),
        "params.softmax_scale": "softmax_scale",
        "params.softmax": "softmax",
        "params.mask": "causal",
        "params.window_left": "window[0] (the left window)",
        "params.window_right": "window[1] (the right window)",
        "params.cu_seqlens_q": "cu_seqlens_q",
        "params.cu_seqlens_k": "cu_seqlens_k",
        "params.q_descale": "q_descale",
        "params.k_descale": "k_descale",
        "params.v_descale": "v_descale",
        "params.lse": "lse (return_lse)",
        "params.flags": "flags (internal)",
        "params.key_block": "key_block",
        "params.reserved": "reserved (internal)",
        "params.block_table": "block_table",
        "params.seqused_k": "seqused_k",
        "params.block_table_stride": "block_table.shape[1] (pages per sequence)",
        "params.num_pages": "k.shape[0] (pages in the pool)",
        "params.page_size": "k.shape[1] (page size)",
        "params.key_bias": "key_bias",
        "q": "q", "k": "k", "v": "v", "o": "out",
        "o.dtype": "out's dtype (out_dtype)",
    }


def quantize_names(varlen, heads_kv=None):
    """C names -> Python names for zyfa.quantize_fp8 arguments (heads_kv: the grouping it was given)."""
    names = {
        "params.batch": "len(cu_seqlens) - 1 (batch)" if varlen else "x.shape[0] (batch)",
        "params.seqlen": "max_seqlen" if varlen else "x.shape[1] (seqlen)",
        "params.heads": "x.shape[-2] (heads of x)",
        "params.head_dim": "x.shape[-1] (head_dim of x)",
        "params.flags": "hadamard/smooth/query_mean",
        "params.cu_seqlens": "cu_seqlens",
        "params.smooth_mean": "the mean smooth=True returns",
        "params.query_mean": "query_mean",
        "params.query_heads": "query_mean.shape[1] (heads_q)",
        "params.key_bias": "the key bias query_mean= returns",
        "params.key_bias_scale": "key_bias_scale",
        "in": "x", "out": "out",
        "in.dtype": "x.dtype", "out.dtype": "dtype",
    }
    if heads_kv is not None:
        names["params.heads"] = "heads_kv"
        names["params.head_dim"] = "x.shape[-1] * x.shape[-2] // heads_kv (one group of heads)"
    return names
