"""A minimal ctypes caller of libzyfa's C ABI for the benchmark, used when bindings/python's `zyfa`
package is absent or cannot run torch CUDA tensors. Only what the benchmark needs: a CUDA context
and zyfa_attn_fwd on [batch, seqlen, heads, head_dim] torch tensors, on the current stream.
The struct layouts mirror include/zyfa.h (docs/api.md)."""
import ctypes

DTYPE = {"float32": 1, "float16": 2, "bfloat16": 3, "float8_e4m3fn": 4}
BACKEND_CUDA = 3
MASK_CAUSAL = 1
SOFTMAX = {"auto": 0, "exact": 1, "lean": 2}
ATTN_V_TRANSPOSED = 1  # zyfa_attn_params.flags (0.1.6)
# The byte of each key of a 16-key group in the transposed V layout (kernels/common/v_transposed.h).
VT_KEY_ORDER = [0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15]


def transposed_v(torch, v8):
    """FP8 v [b, s, h, d] in the transposed layout: [b, h, groups, d, 16], the keys of each 16-key
    group in VT_KEY_ORDER, the sequence padded with zero keys to a multiple of 128 (what
    zyfa_quantize_fp8 with ZYFA_QUANT_V_TRANSPOSED writes, built here from the same codes)."""
    b, s, h, d = v8.shape
    padded = -(-s // 128) * 128
    raw = torch.zeros(b, padded, h, d, dtype=torch.uint8, device=v8.device)
    raw[:, :s] = v8.contiguous().view(torch.uint8)
    order = torch.tensor(VT_KEY_ORDER, device=v8.device)
    grouped = raw.view(b, padded // 16, 16, h, d).index_select(2, order)
    return grouped.permute(0, 3, 1, 4, 2).contiguous().view(v8.dtype)


class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("backend", ctypes.c_int32), ("device", ctypes.c_int32),
                ("num_threads", ctypes.c_int32)]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("stride_batch", ctypes.c_int64), ("stride_seq", ctypes.c_int64), ("stride_head", ctypes.c_int64)]


class AttnParams(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("mask", ctypes.c_int32), ("batch", ctypes.c_int64),
                ("seqlen_q", ctypes.c_int64), ("seqlen_k", ctypes.c_int64), ("heads_q", ctypes.c_int64),
                ("heads_kv", ctypes.c_int64), ("head_dim_qk", ctypes.c_int64), ("head_dim_v", ctypes.c_int64),
                ("softmax_scale", ctypes.c_float), ("softmax", ctypes.c_int32), ("window_left", ctypes.c_int32),
                ("window_right", ctypes.c_int32), ("cu_seqlens_q", ctypes.c_void_p),
                ("cu_seqlens_k", ctypes.c_void_p), ("q_descale", ctypes.c_void_p), ("k_descale", ctypes.c_void_p),
                ("v_descale", ctypes.c_void_p), ("lse", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("key_block", ctypes.c_int32), ("reserved", ctypes.c_int32)]


class ZyfaError(RuntimeError):
    pass


class Zyfa:
    def __init__(self, library_path, device=0):
        self.lib = ctypes.CDLL(library_path)
        lib = self.lib
        lib.zyfa_status_string.restype = ctypes.c_char_p
        lib.zyfa_last_error_message.restype = ctypes.c_char_p
        lib.zyfa_version_string.restype = ctypes.c_char_p
        lib.zyfa_build_info.restype = ctypes.c_char_p
        lib.zyfa_context_device_name.restype = ctypes.c_char_p
        lib.zyfa_context_device_name.argtypes = [ctypes.c_void_p]
        lib.zyfa_attn_kernel_name.restype = ctypes.c_char_p
        lib.zyfa_attn_kernel_name.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 5
        lib.zyfa_context_options_init.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.zyfa_attn_params_init.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        lib.zyfa_context_create.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.zyfa_context_destroy.argtypes = [ctypes.c_void_p]
        lib.zyfa_attn_fwd.argtypes = [ctypes.c_void_p] * 7
        opts = ContextOptions()
        lib.zyfa_context_options_init(ctypes.byref(opts), ctypes.sizeof(opts))
        opts.backend = BACKEND_CUDA
        opts.device = device
        ctx = ctypes.c_void_p()
        self._check(lib.zyfa_context_create(ctypes.byref(opts), ctypes.byref(ctx)), "zyfa_context_create")
        self.ctx = ctx

    def _check(self, status, what):
        if status != 0:
            raise ZyfaError("%s: %s: %s" % (what, self.lib.zyfa_status_string(status).decode(),
                                            self.lib.zyfa_last_error_message().decode()))

    def describe(self):
        return "zyfa %s (%s) on %s" % (self.lib.zyfa_version_string().decode(), self.lib.zyfa_build_info().decode(),
                                       self.lib.zyfa_context_device_name(self.ctx).decode())

    def prepare(self, q, k, v, out, causal=True, softmax="auto", softmax_scale=None, descales=None,
                v_transposed=False):
        """Builds the C structs once; returns (launch, kernel_name). launch() enqueues one
        zyfa_attn_fwd on torch's current stream. The tensors must stay alive while it is used.
        v_transposed: v is FP8 [batch, heads_kv, groups, head_dim, 16] in the transposed layout
        (docs/api.md, ZYFA_ATTN_V_TRANSPOSED), e.g. from transposed_v()."""
        import torch

        batch, seqlen_q, heads_q, dqk = q.shape
        if v_transposed:
            _, heads_kv, _, dv, _ = v.shape
            seqlen_k = k.shape[1]
        else:
            _, seqlen_k, heads_kv, dv = v.shape
        p = AttnParams()
        self.lib.zyfa_attn_params_init(ctypes.byref(p), ctypes.sizeof(p))
        p.mask = MASK_CAUSAL if causal else 0
        p.batch, p.seqlen_q, p.seqlen_k = batch, seqlen_q, seqlen_k
        p.heads_q, p.heads_kv, p.head_dim_qk, p.head_dim_v = heads_q, heads_kv, dqk, dv
        p.softmax = SOFTMAX[softmax]
        p.softmax_scale = 0.0 if softmax_scale is None else softmax_scale
        if descales is not None:
            p.q_descale, p.k_descale, p.v_descale = (d.data_ptr() for d in descales)
        p.flags = ATTN_V_TRANSPOSED if v_transposed else 0

        def view(t):
            if t is v and v_transposed:  # batch, group (stride_seq), head
                return Tensor(t.data_ptr(), DTYPE[str(t.dtype).replace("torch.", "")], 0, t.stride(0), t.stride(2),
                              t.stride(1))
            return Tensor(t.data_ptr(), DTYPE[str(t.dtype).replace("torch.", "")], 0, t.stride(0), t.stride(1),
                          t.stride(2))

        tensors = [view(t) for t in (q, k, v, out)]
        refs = (p, tensors, q, k, v, out, descales)
        args = [self.ctx, ctypes.byref(p)] + [ctypes.byref(t) for t in tensors]
        name = self.lib.zyfa_attn_kernel_name(*args)
        fwd = self.lib.zyfa_attn_fwd

        def launch():
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            self._check(fwd(*args, stream), "zyfa_attn_fwd")
            return refs

        return launch, (name.decode() if name else "?")

    def close(self):
        if self.ctx:
            self.lib.zyfa_context_destroy(self.ctx)
            self.ctx = None
