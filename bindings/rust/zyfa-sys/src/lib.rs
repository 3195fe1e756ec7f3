//! Raw declarations of libzyfa's C ABI, written by hand from include/zyfa.h (version 0.1) and
//! checked against the C compiler's layout by tests/layout.rs. Everything here is `unsafe` to
//! call; the `zyfa` crate is the safe layer. Later library versions only append, so these stay
//! valid for every 0.1.x library.
#![allow(non_camel_case_types)]

use std::marker::{PhantomData, PhantomPinned};
use std::os::raw::{c_char, c_void};

pub const ZYFA_VERSION_MAJOR: u32 = 0;
pub const ZYFA_VERSION_MINOR: u32 = 1;
pub const ZYFA_VERSION_PATCH: u32 = 0;
pub const ZYFA_VERSION_NUMBER: u32 = ZYFA_VERSION_MAJOR * 10000 + ZYFA_VERSION_MINOR * 100 + ZYFA_VERSION_PATCH;

pub type zyfa_status = i32;
pub const ZYFA_SUCCESS: zyfa_status = 0;
pub const ZYFA_ERROR_INVALID_ARGUMENT: zyfa_status = 1;
pub const ZYFA_ERROR_NOT_SUPPORTED: zyfa_status = 2;
pub const ZYFA_ERROR_NO_DEVICE: zyfa_status = 3;
pub const ZYFA_ERROR_DEVICE: zyfa_status = 4;
pub const ZYFA_ERROR_OUT_OF_MEMORY: zyfa_status = 5;
pub const ZYFA_ERROR_INTERNAL: zyfa_status = 6;

pub type zyfa_dtype = i32;
pub const ZYFA_DTYPE_FP32: zyfa_dtype = 1;
pub const ZYFA_DTYPE_FP16: zyfa_dtype = 2;
pub const ZYFA_DTYPE_BF16: zyfa_dtype = 3;
pub const ZYFA_DTYPE_FP8_E4M3FN: zyfa_dtype = 4;
pub const ZYFA_DTYPE_FP8_E4M3FNUZ: zyfa_dtype = 5;
/// q and k of the INT8 Q/K mode (0.1.4; v FP8).
pub const ZYFA_DTYPE_INT8: zyfa_dtype = 6;
/// Keys per k descale of the INT8 Q/K mode.
pub const ZYFA_INT8_KEY_BLOCK: i32 = 64;

pub type zyfa_backend = i32;
pub const ZYFA_BACKEND_AUTO: zyfa_backend = 0;
pub const ZYFA_BACKEND_CPU: zyfa_backend = 1;
pub const ZYFA_BACKEND_HIP: zyfa_backend = 2;
pub const ZYFA_BACKEND_CUDA: zyfa_backend = 3;

pub type zyfa_mask = i32;
pub const ZYFA_MASK_NONE: zyfa_mask = 0;
pub const ZYFA_MASK_CAUSAL: zyfa_mask = 1;
pub const ZYFA_MASK_CAUSAL_BOTTOM_RIGHT: zyfa_mask = 2;

pub type zyfa_softmax = i32;
pub const ZYFA_SOFTMAX_AUTO: zyfa_softmax = 0;
pub const ZYFA_SOFTMAX_EXACT: zyfa_softmax = 1;
pub const ZYFA_SOFTMAX_LEAN: zyfa_softmax = 2;

pub const ZYFA_QUANT_HADAMARD: u32 = 1;
pub const ZYFA_QUANT_SMOOTH: u32 = 2;
/// 0.1.7: `out` in the transposed V layout that `ZYFA_ATTN_V_TRANSPOSED` reads (docs/api.md).
pub const ZYFA_QUANT_V_TRANSPOSED: u32 = 4;
/// 0.1.7, `zyfa_attn_params.flags`: v is FP8 in the transposed layout (docs/api.md).
pub const ZYFA_ATTN_V_TRANSPOSED: u64 = 1;
/// With ZYFA_QUANT_KEY_BIAS (on K), Q smoothing's per-key bias is written to key_bias (0.1.6).
pub const ZYFA_QUANT_KEY_BIAS: u32 = 8;

/// Opaque context handle.
#[repr(C)]
pub struct zyfa_context {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct zyfa_context_options {
    pub struct_size: u32,
    pub backend: zyfa_backend,
    pub device: i32,
    pub num_threads: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct zyfa_tensor {
    pub data: *mut c_void,
    pub dtype: zyfa_dtype,
    pub reserved: i32,
    pub stride_batch: i64,
    pub stride_seq: i64,
    pub stride_head: i64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct zyfa_attn_params {
    pub struct_size: u32,
    pub mask: zyfa_mask,
    pub batch: i64,
    pub seqlen_q: i64,
    pub seqlen_k: i64,
    pub heads_q: i64,
    pub heads_kv: i64,
    pub head_dim_qk: i64,
    pub head_dim_v: i64,
    pub softmax_scale: f32,
    pub softmax: zyfa_softmax,
    pub window_left: i32,
    pub window_right: i32,
    pub cu_seqlens_q: *const i32,
    pub cu_seqlens_k: *const i32,
    pub q_descale: *const f32,
    pub k_descale: *const f32,
    pub v_descale: *const f32,
    pub lse: *mut f32,
    pub flags: u64,
    /// Appended after 0.1: keys per online-softmax step, 0 = the backend's own, 64 or 128.
    pub key_block: i32,
    /// Must be 0 (the tail padding, spelled out).
    pub reserved: i32,
    /// Appended in 0.1.4: fp32 [heads_q] attention sinks or null, then paged K/V.
    pub sinks: *const f32,
    /// Paged K/V: [batch, block_table_stride] page indices; NULL = contiguous K/V (include/zyfa.h).
    pub block_table: *const i32,
    /// Paged only: [batch] keys per sequence, NULL = seqlen_k each.
    pub seqused_k: *const i32,
    pub block_table_stride: i64,
    pub num_pages: i64,
    /// Keys per page, 1 to 256.
    pub page_size: i32,
    /// Must be 0.
    pub reserved2: i32,
    /// Appended in 0.1.4 after the paged fields, the INT8 Q/K mode: fp32 [batch, heads_q, seqlen_q] q descales.
    pub q_descale_per_token: *const f32,
    /// Appended in 0.1.4: fp32 [batch, heads_kv, ceil(seqlen_k / 64)] k descales.
    pub k_descale_per_block: *const f32,
    /// Appended in 0.1.5, split-KV: device workspace for the partial results, NULL = none.
    pub workspace: *mut c_void,
    /// Bytes at workspace (zyfa_attn_fwd_workspace_size says how many the split needs).
    pub workspace_bytes: u64,
    /// 0 = the library's heuristic, 1 = never split, n > 1 = at most n splits.
    pub num_splits: i32,
    /// Must be 0.
    pub reserved3: i32,
    /// Appended in 0.1.6: fp32 per-key score bias [batch, heads_q, seqlen_k] (or [heads_q, total_k]
    /// with packed keys), NULL = none; CPU backend only.
    pub key_bias: *const f32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct zyfa_quant_params {
    pub struct_size: u32,
    pub flags: u32,
    pub batch: i64,
    pub seqlen: i64,
    pub heads: i64,
    pub head_dim: i64,
    pub cu_seqlens: *const i32,
    /// Appended after 0.1: with ZYFA_QUANT_SMOOTH, the fp32 [batch, heads, head_dim] mean output.
    pub smooth_mean: *mut f32,
    /// Appended in 0.1.4: rows per scale, 0 (zyfa_quantize_fp8), or 1 / 64 (zyfa_quantize_int8).
    pub scale_rows: i32,
    /// Must be 0 (the tail padding, spelled out).
    pub reserved: i32,
    /// Appended in 0.1.6, with ZYFA_QUANT_KEY_BIAS only: fp32 [batch, query_heads, head_dim] input.
    pub query_mean: *const f32,
    /// fp32 [batch, query_heads, seqlen] (or [query_heads, total]) output: zyfa_attn_params.key_bias.
    pub key_bias: *mut f32,
    /// The attention's heads_q, a multiple of heads.
    pub query_heads: i64,
    /// The attention's softmax_scale (0 = 1/sqrt(head_dim)).
    pub key_bias_scale: f32,
    /// Must be 0.
    pub reserved2: i32,
}

/// zyfa_attn_merge's problem (added after 0.1.2, version node ZYFA_0.1.3).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct zyfa_merge_params {
    pub struct_size: u32,
    pub num_parts: i32,
    pub batch: i64,
    pub seqlen_q: i64,
    pub heads: i64,
    pub head_dim_v: i64,
    pub cu_seqlens_q: *const i32,
    /// Optional output: the merged fp32 lse in the parts' layout.
    pub lse: *mut f32,
}

extern "C" {
    pub fn zyfa_version() -> u32;
    pub fn zyfa_version_string() -> *const c_char;
    pub fn zyfa_build_info() -> *const c_char;
    pub fn zyfa_status_string(status: zyfa_status) -> *const c_char;
    pub fn zyfa_last_error_message() -> *const c_char;

    pub fn zyfa_context_options_init(opts: *mut zyfa_context_options, struct_size: usize);
    pub fn zyfa_context_create(opts: *const zyfa_context_options, out: *mut *mut zyfa_context) -> zyfa_status;
    pub fn zyfa_context_destroy(ctx: *mut zyfa_context);
    pub fn zyfa_context_backend(ctx: *const zyfa_context) -> zyfa_backend;
    pub fn zyfa_context_device_name(ctx: *const zyfa_context) -> *const c_char;

    pub fn zyfa_attn_params_init(p: *mut zyfa_attn_params, struct_size: usize);
    pub fn zyfa_attn_supported(
        ctx: *mut zyfa_context,
        p: *const zyfa_attn_params,
        q: *const zyfa_tensor,
        k: *const zyfa_tensor,
        v: *const zyfa_tensor,
        o: *const zyfa_tensor,
    ) -> zyfa_status;
    pub fn zyfa_attn_kernel_name(
        ctx: *mut zyfa_context,
        p: *const zyfa_attn_params,
        q: *const zyfa_tensor,
        k: *const zyfa_tensor,
        v: *const zyfa_tensor,
        o: *const zyfa_tensor,
    ) -> *const c_char;
    pub fn zyfa_attn_fwd(
        ctx: *mut zyfa_context,
        p: *const zyfa_attn_params,
        q: *const zyfa_tensor,
        k: *const zyfa_tensor,
        v: *const zyfa_tensor,
        o: *const zyfa_tensor,
        stream: *mut c_void,
    ) -> zyfa_status;

    pub fn zyfa_quant_params_init(p: *mut zyfa_quant_params, struct_size: usize);
    pub fn zyfa_quantize_fp8(
        ctx: *mut zyfa_context,
        p: *const zyfa_quant_params,
        input: *const zyfa_tensor,
        output: *const zyfa_tensor,
        descale: *mut f32,
        stream: *mut c_void,
    ) -> zyfa_status;

    /// Added in 0.1.4 (version node ZYFA_0.1.4).
    pub fn zyfa_quantize_int8(
        ctx: *mut zyfa_context,
        p: *const zyfa_quant_params,
        input: *const zyfa_tensor,
        output: *const zyfa_tensor,
        descale: *mut f32,
        stream: *mut c_void,
    ) -> zyfa_status;

    /// Added in 0.1.5 (node ZYFA_0.1.5): the split-KV workspace bytes zyfa_attn_fwd would use.
    pub fn zyfa_attn_fwd_workspace_size(
        ctx: *mut zyfa_context,
        p: *const zyfa_attn_params,
        bytes: *mut usize,
    ) -> zyfa_status;
    pub fn zyfa_merge_params_init(p: *mut zyfa_merge_params, struct_size: usize);
    pub fn zyfa_attn_merge(
        ctx: *mut zyfa_context,
        p: *const zyfa_merge_params,
        part_o: *const zyfa_tensor,
        part_lse: *const *const f32,
        o: *const zyfa_tensor,
        stream: *mut c_void,
    ) -> zyfa_status;
}
