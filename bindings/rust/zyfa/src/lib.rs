//! Safe Rust bindings of libzyfa: FlashAttention forward kernels for FP8 (e4m3) and BF16 prefill.
//!
//! ```
//! use zyfa::{AttentionOptions, Context, Mask, Tensor, TensorMut};
//! let (b, s, h, d) = (1, 128, 8, 64);
//! let q = vec![0.5f32; b * s * h * d];
//! let v = vec![1f32; b * s * h * d]; // V all ones: every output is 1
//! let mut o = vec![0f32; b * s * h * d];
//! let ctx = Context::cpu()?;
//! let opts = AttentionOptions { mask: Mask::Causal, ..Default::default() };
//! ctx.attention(&opts, &Tensor::new(&q, [b, s, h, d])?, &Tensor::new(&q, [b, s, h, d])?,
//!               &Tensor::new(&v, [b, s, h, d])?, &mut TensorMut::new(&mut o, [b, s, h, d])?, None)?;
//! assert!(o.iter().all(|&x| (x - 1.0).abs() < 1e-6)); // fp32 rounding of the sums
//! # Ok::<(), zyfa::Error>(())
//! ```
//!
//! Host slices run on the CPU backend through [`Context::attention`]; device memory (CUDA/HIP
//! backends) goes through the `unsafe` [`Context::attention_raw`] with raw pointers and a stream.
//!
//! Thread safety: [`Context`] is `Send` and `Sync`: the C library allows calls on one context from
//! any thread, also concurrently; destroying it (Drop) needs exclusive ownership, which Rust's
//! ownership gives. [`Tensor`] / [`TensorMut`] borrow their slices, so the memory outlives the call.
mod context;
mod error;
mod numbers;
mod tensor;

pub use context::{AttentionOptions, Backend, Context, ContextOptions, Descale, Mask, Paged, Softmax, Varlen};
pub use error::{Error, Result, Status};
pub use numbers::{Bf16, DType, E4m3fn, E4m3fnuz, Element, F16};
pub use tensor::{Shape, Tensor, TensorMut};
pub use zyfa_sys as sys;

use std::ffi::CStr;

/// The loaded library's version, "MAJOR.MINOR.PATCH".
pub fn version() -> String {
    unsafe { CStr::from_ptr(sys::zyfa_version_string()) }.to_string_lossy().into_owned()
}

/// One line naming the backends and GPU targets compiled into the loaded library.
pub fn build_info() -> String {
    unsafe { CStr::from_ptr(sys::zyfa_build_info()) }.to_string_lossy().into_owned()
}

/// Whether the loaded library is of the major version these declarations mirror (before 1.0: the
/// same minor too, as a 0.x minor release may change the ABI).
pub fn library_is_compatible() -> bool {
    let number = unsafe { sys::zyfa_version() };
    let (major, minor) = (number / 10000, number / 100 % 100);
    major == sys::ZYFA_VERSION_MAJOR && (major != 0 || minor == sys::ZYFA_VERSION_MINOR)
}
