"""Array adapters: numpy arrays and torch tensors as (pointer, zyfa dtype, shape, element strides,
device), so the C call sees one description whatever the caller passed."""
import sys

from . import _lib

# Names accepted for `dtype=` / `out_dtype=` (numpy has no bf16 or fp8 of its own: pass uint16 /
# uint8 views and name the dtype).
_DTYPE_NAMES = {
    "fp32": _lib.DTYPE_FP32, "float32": _lib.DTYPE_FP32,
    "fp16": _lib.DTYPE_FP16, "float16": _lib.DTYPE_FP16,
    "bf16": _lib.DTYPE_BF16, "bfloat16": _lib.DTYPE_BF16,
    "e4m3fn": _lib.DTYPE_FP8_E4M3FN, "float8_e4m3fn": _lib.DTYPE_FP8_E4M3FN,
    "e4m3fnuz": _lib.DTYPE_FP8_E4M3FNUZ, "float8_e4m3fnuz": _lib.DTYPE_FP8_E4M3FNUZ,
    "int8": _lib.DTYPE_INT8,
}
ITEMSIZE = {_lib.DTYPE_FP32: 4, _lib.DTYPE_FP16: 2, _lib.DTYPE_BF16: 2,
            _lib.DTYPE_FP8_E4M3FN: 1, _lib.DTYPE_FP8_E4M3FNUZ: 1, _lib.DTYPE_INT8: 1}
FP8_DTYPES = (_lib.DTYPE_FP8_E4M3FN, _lib.DTYPE_FP8_E4M3FNUZ)


def torch_module():
    """torch if the caller has imported it (we never import it ourselves: it is slow and optional)."""
    return sys.modules.get("torch")


def is_torch(x):
    torch = torch_module()
    return torch is not None and isinstance(x, torch.Tensor)


def dtype_code(name):
    """A zyfa dtype code from a name ('bf16', 'e4m3fn', ...), a code, a numpy or a torch dtype."""
    if name is None:
        return None
    if isinstance(name, int):
        return name
    torch = torch_module()
    if torch is not None and isinstance(name, torch.dtype):
        code = _torch_dtype_codes(torch).get(name)
        if code is None:
            raise TypeError("zyfa has no dtype for %s" % name)
        return code
    key = str(getattr(name, "name", name)).lower()
    if key not in _DTYPE_NAMES:
        raise TypeError("unknown dtype %r; use one of %s" % (name, sorted(_DTYPE_NAMES)))
    return _DTYPE_NAMES[key]


def _torch_dtype_codes(torch):
    codes = {torch.float32: _lib.DTYPE_FP32, torch.float16: _lib.DTYPE_FP16,
             torch.bfloat16: _lib.DTYPE_BF16, torch.int8: _lib.DTYPE_INT8}
    for attr, code in (("float8_e4m3fn", _lib.DTYPE_FP8_E4M3FN),
                       ("float8_e4m3fnuz", _lib.DTYPE_FP8_E4M3FNUZ)):
        if hasattr(torch, attr):
            codes[getattr(torch, attr)] = code
    return codes


def torch_dtype(code):
    torch = torch_module()
    for dtype, c in _torch_dtype_codes(torch).items():
        if c == code:
            return dtype
    raise TypeError("this torch has no dtype for zyfa dtype %d" % code)


def numpy_dtype(code):
    """The numpy storage dtype of a zyfa dtype (bf16 as uint16, fp8 as uint8)."""
    import numpy as np
    return {_lib.DTYPE_FP32: np.float32, _lib.DTYPE_FP16: np.float16, _lib.DTYPE_BF16: np.uint16,
            _lib.DTYPE_FP8_E4M3FN: np.uint8, _lib.DTYPE_FP8_E4M3FNUZ: np.uint8, _lib.DTYPE_INT8: np.int8}[code]


class View:
    """What the C call needs of one array. `obj` keeps the memory alive for the call."""

    __slots__ = ("obj", "ptr", "dtype", "shape", "strides", "device", "device_index")

    def __init__(self, obj, ptr, dtype, shape, strides, device, device_index):
        self.obj = obj
        self.ptr = ptr
        self.dtype = dtype
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.device = device  # 'cpu' or 'cuda' (torch's name for CUDA and ROCm devices alike)
        self.device_index = device_index


def view(x, name, dtype=None):
    """A View of a numpy array or torch tensor; dtype overrides the element type of uint8/uint16
    storage ('e4m3fn', 'e4m3fnuz', 'bf16')."""
    if is_torch(x):
        return _torch_view(x, name, dtype)
    return _numpy_view(x, name, dtype)


def _torch_view(x, name, dtype):
    torch = torch_module()
    code = _torch_dtype_codes(torch).get(x.dtype)
    if dtype is not None:
        wanted = dtype_code(dtype)
        if code is not None and code != wanted:
            raise TypeError("%s is %s but dtype=%r was given" % (name, x.dtype, dtype))
        if code is None and x.element_size() != ITEMSIZE[wanted]:
            raise TypeError("%s has %d-byte elements; dtype=%r needs %d" % (
                name, x.element_size(), dtype, ITEMSIZE[wanted]))
        code = wanted
    if code is None:
        raise TypeError("%s has dtype %s; zyfa takes float32, float16, bfloat16, float8_e4m3fn or "
                        "float8_e4m3fnuz (or uint8/uint16 storage with dtype=...)" % (name, x.dtype))
    device = "cuda" if x.device.type == "cuda" else x.device.type
    if device not in ("cpu", "cuda"):
        raise TypeError("%s is on device %s; zyfa takes CPU, CUDA and ROCm tensors" % (name, x.device))
    return View(x, x.data_ptr(), code, x.shape, x.stride(), device,
                x.device.index if device == "cuda" else None)


def _numpy_view(x, name, dtype):
    import numpy as np
    if not isinstance(x, np.ndarray):
        raise TypeError("%s must be a numpy array or a torch tensor, not %s" % (name, type(x).__name__))
    native = {"float32": _lib.DTYPE_FP32, "float16": _lib.DTYPE_FP16, "bfloat16": _lib.DTYPE_BF16,
              "float8_e4m3fn": _lib.DTYPE_FP8_E4M3FN, "float8_e4m3fnuz": _lib.DTYPE_FP8_E4M3FNUZ,
              "int8": _lib.DTYPE_INT8}
    code = native.get(x.dtype.name)
    if dtype is not None:
        wanted = dtype_code(dtype)
        if code is not None and code != wanted:
            raise TypeError("%s is %s but dtype=%r was given" % (name, x.dtype, dtype))
        if code is None and (x.dtype.kind not in "ui" or x.dtype.itemsize != ITEMSIZE[wanted]):
            raise TypeError("%s is %s; dtype=%r needs a %d-byte unsigned integer view" % (
                name, x.dtype, dtype, ITEMSIZE[wanted]))
        code = wanted
    if code is None:
        hint = {1: " (FP8: pass dtype='e4m3fn' or 'e4m3fnuz')", 2: " (BF16: pass dtype='bf16')"}
        raise TypeError("%s is %s; zyfa takes float32 or float16 arrays, or uint16/uint8 views "
                        "with dtype=...%s" % (name, x.dtype, hint.get(x.dtype.itemsize, "")))
    itemsize = x.dtype.itemsize
    strides = []
    if x.size == 0:  # numpy may give empty arrays zero strides; no element is read: use C order
        step = 1
        for extent in reversed(x.shape):
            strides.insert(0, step)
            step *= max(int(extent), 1)
        return View(x, x.__array_interface__["data"][0], code, x.shape, strides, "cpu", None)
    for axis, s in enumerate(x.strides):
        if s % itemsize:
            raise ValueError("%s: stride %d bytes of axis %d is not a whole number of elements" % (
                name, s, axis))
        strides.append(s // itemsize)
    ptr = x.__array_interface__["data"][0]
    return View(x, ptr, code, x.shape, strides, "cpu", None)


def require_dim_contiguous(v, name):
    if v.shape and v.shape[-1] > 1 and v.strides[-1] != 1:
        raise ValueError("%s: the last (head_dim) axis must be contiguous, its stride is %d elements" % (
            name, v.strides[-1]))


def c_tensor(v, varlen):
    """A zyfa_tensor for a [batch, seq, head, dim] view, or [total, head, dim] when varlen."""
    t = _lib.Tensor()
    t.data = v.ptr
    t.dtype = v.dtype
    t.reserved = 0
    if varlen:
        t.stride_batch = 0
        t.stride_seq, t.stride_head = v.strides[0], v.strides[1]
    else:
        t.stride_batch, t.stride_seq, t.stride_head = v.strides[0], v.strides[1], v.strides[2]
    return t
