"""Loading libzyfa and the ctypes mirror of include/zyfa.h (struct layouts, prototypes, constants).

The library is searched in this order:
  1. $ZYFA_LIBRARY_PATH (a file, or a folder holding libzyfa.so or libzyfa.so.0): an override,
     and when set the only place tried;
  2. the package folder: `pip install ./bindings/python` builds libzyfa and ships it there as
     zyfa/libzyfa.so.0 (a libzyfa.so copied there by hand is found too);
  3. the system loader (LD_LIBRARY_PATH, ldconfig) through the SONAME, then
     ctypes.util.find_library.
It is loaded on first use, so `import zyfa` works without it.
"""
import ctypes
import ctypes.util
import os
import threading

# The header this binding mirrors. Structs only ever grow at the end, so an older binding keeps
# working with a newer library of the same major version.
VERSION_MAJOR = 0
VERSION_MINOR = 1

SUCCESS = 0
ERROR_INVALID_ARGUMENT = 1
ERROR_NOT_SUPPORTED = 2
ERROR_NO_DEVICE = 3
ERROR_DEVICE = 4
ERROR_OUT_OF_MEMORY = 5
ERROR_INTERNAL = 6

DTYPE_FP32 = 1
DTYPE_FP16 = 2
DTYPE_BF16 = 3
DTYPE_FP8_E4M3FN = 4
DTYPE_FP8_E4M3FNUZ = 5
DTYPE_INT8 = 6  # q and k of the INT8 Q/K mode (0.1.4)
INT8_KEY_BLOCK = 64  # keys per k descale of the INT8 Q/K mode

BACKEND_AUTO = 0
BACKEND_CPU = 1
BACKEND_HIP = 2
BACKEND_CUDA = 3

MASK_NONE = 0
MASK_CAUSAL = 1
MASK_CAUSAL_BOTTOM_RIGHT = 2

SOFTMAX_AUTO = 0
SOFTMAX_EXACT = 1
SOFTMAX_LEAN = 2

QUANT_HADAMARD = 1
QUANT_SMOOTH = 2
QUANT_V_TRANSPOSED = 4  # 0.1.7: out in the transposed V layout (docs/api.md)
ATTN_V_TRANSPOSED = 1   # 0.1.7, zyfa_attn_params.flags: v in that layout
QUANT_KEY_BIAS = 8


class ContextOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("backend", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("num_threads", ctypes.c_int32),
    ]


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("stride_batch", ctypes.c_int64),
        ("stride_seq", ctypes.c_int64),
        ("stride_head", ctypes.c_int64),
    ]


class AttnParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("mask", ctypes.c_int32),
        ("batch", ctypes.c_int64),
        ("seqlen_q", ctypes.c_int64),
        ("seqlen_k", ctypes.c_int64),
        ("heads_q", ctypes.c_int64),
        ("heads_kv", ctypes.c_int64),
        ("head_dim_qk", ctypes.c_int64),
        ("head_dim_v", ctypes.c_int64),
        ("softmax_scale", ctypes.c_float),
        ("softmax", ctypes.c_int32),
        ("window_left", ctypes.c_int32),
        ("window_right", ctypes.c_int32),
        ("cu_seqlens_q", ctypes.c_void_p),
        ("cu_seqlens_k", ctypes.c_void_p),
        ("q_descale", ctypes.c_void_p),
        ("k_descale", ctypes.c_void_p),
        ("v_descale", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("key_block", ctypes.c_int32),  # appended after 0.1
        ("reserved", ctypes.c_int32),
        ("sinks", ctypes.c_void_p),  # appended in 0.1.4: attention sinks, then paged K/V
        ("block_table", ctypes.c_void_p),
        ("seqused_k", ctypes.c_void_p),
        ("block_table_stride", ctypes.c_int64),
        ("num_pages", ctypes.c_int64),
        ("page_size", ctypes.c_int32),
        ("reserved2", ctypes.c_int32),
        ("q_descale_per_token", ctypes.c_void_p),  # appended in 0.1.4 (the INT8 Q/K mode)
        ("k_descale_per_block", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),  # appended in 0.1.5 (split-KV)
        ("workspace_bytes", ctypes.c_uint64),
        ("num_splits", ctypes.c_int32),
        ("reserved3", ctypes.c_int32),
        ("key_bias", ctypes.c_void_p),  # appended in 0.1.6 (per-key score bias)
    ]


class QuantParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("batch", ctypes.c_int64),
        ("seqlen", ctypes.c_int64),
        ("heads", ctypes.c_int64),
        ("head_dim", ctypes.c_int64),
        ("cu_seqlens", ctypes.c_void_p),
        ("smooth_mean", ctypes.c_void_p),  # appended after 0.1
        ("scale_rows", ctypes.c_int32),  # appended in 0.1.4 (zyfa_quantize_int8)
        ("reserved", ctypes.c_int32),
        ("query_mean", ctypes.c_void_p),  # appended in 0.1.6 (ZYFA_QUANT_KEY_BIAS)
        ("key_bias", ctypes.c_void_p),
        ("query_heads", ctypes.c_int64),
        ("key_bias_scale", ctypes.c_float),
        ("reserved2", ctypes.c_int32),
    ]


class MergeParams(ctypes.Structure):  # zyfa_attn_merge's, added after 0.1.2 (node ZYFA_0.1.3)
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("num_parts", ctypes.c_int32),
        ("batch", ctypes.c_int64),
        ("seqlen_q", ctypes.c_int64),
        ("heads", ctypes.c_int64),
        ("head_dim_v", ctypes.c_int64),
        ("cu_seqlens_q", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
    ]


class LibraryNotFoundError(OSError):
    """libzyfa could not be loaded, or its major version is not the one this binding mirrors."""


_P = ctypes.POINTER
_PROTOTYPES = {
    "zyfa_version": (ctypes.c_uint32, []),
    "zyfa_version_string": (ctypes.c_char_p, []),
    "zyfa_build_info": (ctypes.c_char_p, []),
    "zyfa_status_string": (ctypes.c_char_p, [ctypes.c_int32]),
    "zyfa_last_error_message": (ctypes.c_char_p, []),
    "zyfa_context_options_init": (None, [_P(ContextOptions), ctypes.c_size_t]),
    "zyfa_context_create": (ctypes.c_int32, [_P(ContextOptions), _P(ctypes.c_void_p)]),
    "zyfa_context_destroy": (None, [ctypes.c_void_p]),
    "zyfa_context_backend": (ctypes.c_int32, [ctypes.c_void_p]),
    "zyfa_context_device_name": (ctypes.c_char_p, [ctypes.c_void_p]),
    "zyfa_attn_params_init": (None, [_P(AttnParams), ctypes.c_size_t]),
    "zyfa_attn_supported": (ctypes.c_int32, [ctypes.c_void_p, _P(AttnParams)] + [_P(Tensor)] * 4),
    "zyfa_attn_kernel_name": (ctypes.c_char_p, [ctypes.c_void_p, _P(AttnParams)] + [_P(Tensor)] * 4),
    "zyfa_attn_fwd": (ctypes.c_int32,
                      [ctypes.c_void_p, _P(AttnParams)] + [_P(Tensor)] * 4 + [ctypes.c_void_p]),
    "zyfa_attn_fwd_workspace_size": (ctypes.c_int32, [ctypes.c_void_p, _P(AttnParams), _P(ctypes.c_size_t)]),
    "zyfa_quant_params_init": (None, [_P(QuantParams), ctypes.c_size_t]),
    "zyfa_quantize_fp8": (ctypes.c_int32, [ctypes.c_void_p, _P(QuantParams), _P(Tensor), _P(Tensor),
                                           ctypes.c_void_p, ctypes.c_void_p]),
    "zyfa_quantize_int8": (ctypes.c_int32, [ctypes.c_void_p, _P(QuantParams), _P(Tensor), _P(Tensor),
                                            ctypes.c_void_p, ctypes.c_void_p]),
    "zyfa_merge_params_init": (None, [_P(MergeParams), ctypes.c_size_t]),
    "zyfa_attn_merge": (ctypes.c_int32, [ctypes.c_void_p, _P(MergeParams), _P(Tensor), _P(ctypes.c_void_p),
                                         _P(Tensor), ctypes.c_void_p]),
}
# Functions newer than 0.1.0: a library of the same minor without them still loads, and the calls
# that need them say so (has_function).
_ADDED_AFTER_0_1_0 = ("zyfa_merge_params_init", "zyfa_attn_merge", "zyfa_quantize_int8",
                      "zyfa_attn_fwd_workspace_size")

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates(errors):
    """Paths or names to try, in the documented order; places skipped are noted in errors."""
    soname = "libzyfa.so.%d" % VERSION_MAJOR
    env = os.environ.get("ZYFA_LIBRARY_PATH")
    if env:
        if os.path.isdir(env):
            yield os.path.join(env, "libzyfa.so")
            yield os.path.join(env, soname)
        else:
            yield env
        return  # an explicit path is the only one tried: silently loading another would mislead
    here = os.path.dirname(os.path.abspath(__file__))
    shipped = False
    for name in (soname, "libzyfa.so"):
        path = os.path.join(here, name)
        if os.path.exists(path):
            shipped = True
            yield path
    if not shipped:
        errors.append("%s: no libzyfa shipped in the package" % os.path.join(here, soname))
    yield soname  # the SONAME, through LD_LIBRARY_PATH and ldconfig
    found = ctypes.util.find_library("zyfa")
    if found and found != soname:
        yield found


def _load():
    errors = []
    for candidate in _candidates(errors):
        try:
            lib = ctypes.CDLL(candidate)
        except OSError as e:
            errors.append("%s: %s" % (candidate, e))
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name, None)
            if fn is None and name in _ADDED_AFTER_0_1_0:
                continue
            if fn is None:
                raise LibraryNotFoundError("%s lacks %s" % (candidate, name))
            fn.restype = restype
            fn.argtypes = argtypes
        number = lib.zyfa_version()
        major, minor = number // 10000, number // 100 % 100
        # Before 1.0 a minor release may change the ABI (cmake/ZyfaInstall.cmake), so 0.x must
        # match the minor as well; from 1.0 on, any library of the same major will do.
        if major != VERSION_MAJOR or (major == 0 and minor != VERSION_MINOR):
            raise LibraryNotFoundError(
                "%s is libzyfa %s; this binding needs %d.%s" % (
                    candidate, lib.zyfa_version_string().decode(), VERSION_MAJOR,
                    str(VERSION_MINOR) if VERSION_MAJOR == 0 else "x"))
        return lib, candidate
    if os.environ.get("ZYFA_LIBRARY_PATH"):
        hint = ("ZYFA_LIBRARY_PATH is set, so only it was tried: point it at libzyfa.so or its "
                "folder, or unset it to use the library shipped in the package")
    else:
        hint = ("reinstall the package from a zyfa checkout (python3 -m venv .venv && "
                ". .venv/bin/activate && pip install ./bindings/python builds and ships libzyfa), "
                "set ZYFA_LIBRARY_PATH to libzyfa.so or its folder, or install libzyfa where the "
                "system loader finds it")
    raise LibraryNotFoundError("libzyfa not found; %s. Tried: %s" % (hint, "; ".join(errors)))


def lib():
    """The loaded library (loaded on first call)."""
    global _lib, _lib_path
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib, _lib_path = _load()
    return _lib


def library_path():
    """The path or name libzyfa was loaded from."""
    lib()
    return _lib_path


def has_function(name):
    """Whether the loaded library exports `name` (functions added after 0.1.0 may be absent)."""
    return hasattr(lib(), name)
