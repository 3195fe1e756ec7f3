"""zyfa: FlashAttention forward kernels for FP8 (e4m3) and BF16 prefill, through libzyfa's C ABI.

    import numpy as np, zyfa
    q = k = v = np.random.rand(1, 128, 8, 64).astype(np.float32)   # [batch, seq, heads, dim]
    o = zyfa.attention(q, k, v, causal=True)                        # CPU backend for numpy

torch tensors run on their device (CUDA/ROCm on the current stream, or the CPU); see attention().
"""
from ._lib import (BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA, BACKEND_HIP, DTYPE_BF16, DTYPE_FP8_E4M3FN,
                   DTYPE_FP8_E4M3FNUZ, DTYPE_FP16, DTYPE_FP32, DTYPE_INT8, ERROR_DEVICE, ERROR_INTERNAL,
                   ERROR_INVALID_ARGUMENT, ERROR_NO_DEVICE, ERROR_NOT_SUPPORTED, ERROR_OUT_OF_MEMORY,
                   MASK_CAUSAL, MASK_CAUSAL_BOTTOM_RIGHT, MASK_NONE, SOFTMAX_AUTO, SOFTMAX_EXACT,
                   SOFTMAX_LEAN, SUCCESS, LibraryNotFoundError, library_path)
from ._errors import ZyfaError, status_string
from ._context import Context, default_context
from ._api import attention, attention_kernel_name, quantize_fp8, quantize_int8, unsmooth_lse
from ._merge import attention_merge
from ._convert import bf16_to_float32, float32_to_bf16, fp8_to_float32
from .flash_attn_interface import flash_attn_func, flash_attn_varlen_func, flash_attn_with_kvcache

__version__ = "0.1.0"


def version():
    """The loaded library's version string, "MAJOR.MINOR.PATCH"."""
    from . import _lib
    return _lib.lib().zyfa_version_string().decode()


def build_info():
    """One line naming the backends and GPU targets compiled into the loaded library."""
    from . import _lib
    return _lib.lib().zyfa_build_info().decode()


__all__ = ["Context", "ZyfaError", "LibraryNotFoundError", "attention", "attention_kernel_name", "attention_merge",
           "quantize_fp8", "quantize_int8", "unsmooth_lse", "flash_attn_func", "flash_attn_varlen_func",
           "flash_attn_with_kvcache", "default_context", "version",
           "build_info", "library_path", "status_string", "bf16_to_float32", "float32_to_bf16",
           "fp8_to_float32"]
