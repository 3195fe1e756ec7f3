//! Element types: f32 and the storage formats Rust lacks (bf16, fp16, e4m3 FP8) as transparent
//! newtypes over their bits, with exact conversions to f32 and round-to-nearest-even from f32.

/// zyfa's element types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    F32,
    F16,
    Bf16,
    E4m3fn,
    E4m3fnuz,
}

impl DType {
    pub fn code(self) -> i32 {
        match self {
            DType::F32 => zyfa_sys::ZYFA_DTYPE_FP32,
            DType::F16 => zyfa_sys::ZYFA_DTYPE_FP16,
            DType::Bf16 => zyfa_sys::ZYFA_DTYPE_BF16,
            DType::E4m3fn => zyfa_sys::ZYFA_DTYPE_FP8_E4M3FN,
            DType::E4m3fnuz => zyfa_sys::ZYFA_DTYPE_FP8_E4M3FNUZ,
        }
    }
}

/// A type whose slices zyfa reads or writes as elements of `DTYPE`.
///
/// # Safety
/// The type must have the size and bit layout of `DTYPE` (a `repr(transparent)` wrapper of its bits).
pub unsafe trait Element: Copy {
    const DTYPE: DType;
}

unsafe impl Element for f32 {
    const DTYPE: DType = DType::F32;
}

/// bfloat16 bits.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Bf16(pub u16);
/// IEEE half-precision bits.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct F16(pub u16);
/// OCP e4m3 FP8 code (bias 7, max 448, NaN S.1111.111).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct E4m3fn(pub u8);
/// e4m3fnuz FP8 code (bias 8, max 240, NaN 0x80).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct E4m3fnuz(pub u8);

unsafe impl Element for Bf16 {
    const DTYPE: DType = DType::Bf16;
}
unsafe impl Element for F16 {
    const DTYPE: DType = DType::F16;
}
unsafe impl Element for E4m3fn {
    const DTYPE: DType = DType::E4m3fn;
}
unsafe impl Element for E4m3fnuz {
    const DTYPE: DType = DType::E4m3fnuz;
}

impl Bf16 {
    /// Rounds to nearest even; NaN stays NaN.
    pub fn from_f32(x: f32) -> Bf16 {
        if x.is_nan() {
            return Bf16(0x7FC0);
        }
        let bits = x.to_bits();
        Bf16(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) as u16)
    }
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

impl F16 {
    /// Exact conversion to f32.
    pub fn to_f32(self) -> f32 {
        let sign = if self.0 & 0x8000 != 0 { -1.0 } else { 1.0 };
        let exp = ((self.0 >> 10) & 0x1F) as i32;
        let man = (self.0 & 0x3FF) as f32;
        match exp {
            0 => sign * man * 2f32.powi(-24),
            31 if man == 0.0 => sign * f32::INFINITY,
            31 => f32::NAN,
            _ => sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15),
        }
    }
}

fn e4m3_to_f32(code: u8, bias: i32, fnuz: bool) -> f32 {
    if (fnuz && code == 0x80) || (!fnuz && code & 0x7F == 0x7F) {
        return f32::NAN;
    }
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((code >> 3) & 0xF) as i32;
    let man = (code & 7) as f32;
    if exp == 0 {
        sign * man / 8.0 * 2f32.powi(1 - bias)
    } else {
        sign * (1.0 + man / 8.0) * 2f32.powi(exp - bias)
    }
}

impl E4m3fn {
    pub fn to_f32(self) -> f32 {
        e4m3_to_f32(self.0, 7, false)
    }
}

impl E4m3fnuz {
    pub fn to_f32(self) -> f32 {
        e4m3_to_f32(self.0, 8, true)
    }
}
