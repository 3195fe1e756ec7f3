"""numpy conversions for the storage formats numpy lacks: bf16 (uint16) and e4m3 FP8 (uint8)."""


def _np():
    import numpy as np
    return np


def float32_to_bf16(x):
    """float32 values -> bf16 bit patterns (uint16), rounded to nearest even; NaN stays NaN."""
    np = _np()
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded.astype(np.uint16))


def bf16_to_float32(bits):
    """bf16 bit patterns (uint16) -> float32 (exact)."""
    np = _np()
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def fp8_to_float32(codes, dtype="e4m3fn"):
    """e4m3 codes (uint8) -> float32 (exact). dtype 'e4m3fn' (OCP: bias 7, NaN S.1111.111) or
    'e4m3fnuz' (bias 8, NaN 0x80 only)."""
    np = _np()
    c = np.asarray(codes, dtype=np.uint8).astype(np.int32)
    fnuz = {"e4m3fn": False, "e4m3fnuz": True}[dtype]
    bias = 8 if fnuz else 7
    sign = np.where(c & 0x80, -1.0, 1.0)
    exp = (c >> 3) & 0xF
    man = c & 0x7
    normal = (1.0 + man / 8.0) * np.exp2(exp - bias)
    subnormal = (man / 8.0) * np.exp2(1 - bias)
    value = sign * np.where(exp == 0, subnormal, normal)
    nan = (c == 0x80) if fnuz else ((c & 0x7F) == 0x7F)
    return np.where(nan, np.nan, value).astype(np.float32)
