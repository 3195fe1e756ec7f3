//! Context (one backend on one device) and the attention / quantisation calls on it.
use std::ffi::CStr;
use std::mem::{size_of, MaybeUninit};
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use crate::error::{Error, Result};
use crate::tensor::{Shape, Tensor, TensorMut};

/// Which backend a context runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// HIP, then CUDA, then the CPU: the first compiled in that finds a device.
    Auto,
    Cpu,
    Hip,
    Cuda,
}

impl Backend {
    fn code(self) -> i32 {
        match self {
            Backend::Auto => zyfa_sys::ZYFA_BACKEND_AUTO,
            Backend::Cpu => zyfa_sys::ZYFA_BACKEND_CPU,
            Backend::Hip => zyfa_sys::ZYFA_BACKEND_HIP,
            Backend::Cuda => zyfa_sys::ZYFA_BACKEND_CUDA,
        }
    }
    fn from_code(code: i32) -> Backend {
        match code {
            zyfa_sys::ZYFA_BACKEND_CPU => Backend::Cpu,
            zyfa_sys::ZYFA_BACKEND_HIP => Backend::Hip,
            zyfa_sys::ZYFA_BACKEND_CUDA => Backend::Cuda,
            _ => Backend::Auto,
        }
    }
}

/// Options of [`Context::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextOptions {
    pub backend: Backend,
    /// GPU ordinal.
    pub device: i32,
    /// CPU backend worker threads, 0 = all hardware threads.
    pub num_threads: i32,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions { backend: Backend::Auto, device: 0, num_threads: 0 }
    }
}

/// Which keys a query sees (docs/api.md): none, causal top-left (j <= i), causal bottom-right
/// (j <= i + seqlen_k - seqlen_q, as flash_attn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mask {
    None,
    Causal,
    CausalBottomRight,
}

/// Softmax numerics: Auto (Lean for FP8 inputs, Exact otherwise), Exact, Lean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Softmax {
    Auto,
    Exact,
    Lean,
}

/// FP8 dequantisation factors, each fp32 [batch * heads_kv].
#[derive(Debug, Clone, Copy)]
pub struct Descale<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
}

/// Packed sequences: cu_seqlens are [batch + 1] prefix sums; max_seqlen bound every length.
#[derive(Debug, Clone, Copy)]
pub struct Varlen<'a> {
    pub cu_seqlens_q: &'a [i32],
    pub cu_seqlens_k: &'a [i32],
    pub max_seqlen_q: usize,
    pub max_seqlen_k: usize,
}

/// Paged K/V (include/zyfa.h): k and v are page pools, batched views [num_pages, page_size,
/// heads_kv, head_dim]; key j of sequence b is row j % page_size of page
/// block_table[b * block_table_stride + j / page_size]. q is batched, or packed with `varlen`
/// (whose cu_seqlens_k must then be empty: paged keys are not packed).
#[derive(Debug, Clone, Copy)]
pub struct Paged<'a> {
    pub block_table: &'a [i32],
    /// Entries per sequence in block_table.
    pub block_table_stride: usize,
    /// Keys of each sequence ([batch]); None = max_seqlen_k each.
    pub seqused_k: Option<&'a [i32]>,
    /// The longest sequence's key count.
    pub max_seqlen_k: usize,
}

/// Everything about an attention call besides the tensors.
#[derive(Debug, Clone, Copy)]
pub struct AttentionOptions<'a> {
    pub mask: Mask,
    /// (left, right) sliding window, -1 = unbounded.
    pub window: (i32, i32),
    /// None = 1/sqrt(head_dim).
    pub softmax_scale: Option<f32>,
    pub softmax: Softmax,
    pub descale: Option<Descale<'a>>,
    pub varlen: Option<Varlen<'a>>,
    /// Keys per online-softmax step (params.key_block): 0 = the backend's own (CPU and AMD 64),
    /// 64 or 128. LEAN's block scales depend on it; a backend without kernels for it returns
    /// NotSupported, any other value is InvalidArgument.
    pub key_block: i32,
    /// Attention sinks, fp32 [heads_q] (params.sinks; gpt-oss, FlashAttention-3's s_aux): one
    /// logit per query head, in the units of the scaled scores, that joins every row's softmax
    /// denominator and multiplies no value. The lse then includes it (a row without keys gets
    /// O = 0, lse = the sink): when merging parts, pass sinks to one part only.
    pub sinks: Option<&'a [f32]>,
    /// K and V read through a block table from page pools; None = contiguous.
    pub paged: Option<Paged<'a>>,
}

impl<'a> Default for AttentionOptions<'a> {
    fn default() -> Self {
        AttentionOptions { mask: Mask::None, window: (-1, -1), softmax_scale: None, softmax: Softmax::Auto,
                           descale: None, varlen: None, key_block: 0, sinks: None,
                           paged: None }
    }
}

/// A libzyfa context bound to one backend and one device; destroyed on drop.
///
/// `Send + Sync`: the C library allows calls on one context from any thread, also concurrently
/// (the CPU backend then runs them one after the other); only destruction needs exclusive access.
#[derive(Debug)]
pub struct Context {
    raw: NonNull<zyfa_sys::zyfa_context>,
}

unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        unsafe { zyfa_sys::zyfa_context_destroy(self.raw.as_ptr()) }
    }
}

impl Context {
    pub fn new(options: &ContextOptions) -> Result<Context> {
        let mut opts = MaybeUninit::<zyfa_sys::zyfa_context_options>::uninit();
        let mut opts = unsafe {
            zyfa_sys::zyfa_context_options_init(opts.as_mut_ptr(), size_of::<zyfa_sys::zyfa_context_options>());
            opts.assume_init()
        };
        opts.backend = options.backend.code();
        opts.device = options.device;
        opts.num_threads = options.num_threads;
        let mut raw = ptr::null_mut();
        Error::check(unsafe { zyfa_sys::zyfa_context_create(&opts, &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Context { raw })
            .ok_or_else(|| Error { status: crate::Status::Internal, message: "NULL context".into() })
    }

    /// A CPU-backend context using all hardware threads.
    pub fn cpu() -> Result<Context> {
        Context::new(&ContextOptions { backend: Backend::Cpu, ..Default::default() })
    }

    pub fn backend(&self) -> Backend {
        Backend::from_code(unsafe { zyfa_sys::zyfa_context_backend(self.raw.as_ptr()) })
    }

    /// "cpu", "sm_90", "gfx950", ...
    pub fn device_name(&self) -> String {
        unsafe { CStr::from_ptr(zyfa_sys::zyfa_context_device_name(self.raw.as_ptr())) }
            .to_string_lossy()
            .into_owned()
    }

    pub fn as_raw(&self) -> *mut zyfa_sys::zyfa_context {
        self.raw.as_ptr()
    }

    /// Attention forward on host slices (CPU backend): o = softmax(scale Q K^T + mask) V, and the
    /// log-sum-exp into `lse` when given ([batch * heads_q * seqlen_q], or [heads_q * total_q]
    /// when packed). Query head h reads kv head h / (heads_q / heads_kv).
    pub fn attention(&self, options: &AttentionOptions, q: &Tensor, k: &Tensor, v: &Tensor, o: &mut TensorMut,
                     lse: Option<&mut [f32]>) -> Result<()> {
        self.require_host(&[q.host, k.host, v.host, o.host])?;
        let mut params = self.params(options, q, k, v, o)?;
        if let Some(lse) = lse {
            let needed = match q.shape {
                Shape::Batched([b, s, h, _]) => b * h * s,
                Shape::Packed([t, h, _]) => h * t,
            };
            if lse.len() < needed {
                return Err(Error::invalid(format!("lse has {} elements, needs {}", lse.len(), needed)));
            }
            params.lse = lse.as_mut_ptr();
        }
        Error::check(unsafe {
            zyfa_sys::zyfa_attn_fwd(self.as_raw(), &params, &q.raw, &k.raw, &v.raw, &o.raw, ptr::null_mut())
        })
    }

    /// The kernel [`Context::attention`] would run, or why it would not.
    pub fn attention_kernel_name(&self, options: &AttentionOptions, q: &Tensor, k: &Tensor, v: &Tensor,
                                 o: &TensorMut) -> Result<String> {
        let params = self.params(options, q, k, v, o)?;
        let name = unsafe { zyfa_sys::zyfa_attn_kernel_name(self.as_raw(), &params, &q.raw, &k.raw, &v.raw, &o.raw) };
        if name.is_null() {
            Error::check(unsafe {
                zyfa_sys::zyfa_attn_supported(self.as_raw(), &params, &q.raw, &k.raw, &v.raw, &o.raw)
            })?;
            return Err(Error::invalid("no kernel"));
        }
        Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
    }

    /// Attention forward with caller-built parameters, for device memory on the GPU backends:
    /// enqueued on `stream` (cudaStream_t / hipStream_t, NULL = default stream), never synchronising.
    ///
    /// # Safety
    /// Every pointer in `params` and the views must be valid for the problem it describes, on the
    /// context's device, until the stream work completes.
    pub unsafe fn attention_raw(&self, params: &zyfa_sys::zyfa_attn_params, q: &Tensor, k: &Tensor, v: &Tensor,
                                o: &mut TensorMut, stream: *mut c_void) -> Result<()> {
        Error::check(zyfa_sys::zyfa_attn_fwd(self.as_raw(), params, &q.raw, &k.raw, &v.raw, &o.raw, stream))
    }

    /// Quantises `x` (f32/F16/Bf16, [batch, seq, heads, dim] or packed with `varlen` =
    /// (cu_seqlens, max_seqlen)) into `out` (E4m3fn or E4m3fnuz), with one scale per (batch, head)
    /// written to `descale` [batch * heads]: x ~= out * descale. `hadamard` rotates the head
    /// dimension first (use it on Q and K alike).
    pub fn quantize_fp8(&self, x: &Tensor, out: &mut TensorMut, descale: &mut [f32], hadamard: bool,
                        varlen: Option<(&[i32], usize)>) -> Result<()> {
        self.quantize(x, out, descale, None, hadamard, varlen)
    }

    /// `quantize_fp8` with K smoothing (ZYFA_QUANT_SMOOTH, for K only): each (sequence, head,
    /// channel)'s mean over the sequence is subtracted first and written to `mean`
    /// [batch * heads * head_dim]: x ~= out * descale + mean (rotated back first with `hadamard`).
    /// Attention's O is unchanged; its lse is lower by softmax_scale * q . mean, q the original
    /// query row and mean its kv head's (docs/api.md, K smoothing).
    pub fn quantize_fp8_smoothed(&self, x: &Tensor, out: &mut TensorMut, descale: &mut [f32], mean: &mut [f32],
                                 hadamard: bool, varlen: Option<(&[i32], usize)>) -> Result<()> {
        self.quantize(x, out, descale, Some(mean), hadamard, varlen)
    }

    fn quantize(&self, x: &Tensor, out: &mut TensorMut, descale: &mut [f32], mean: Option<&mut [f32]>,
                hadamard: bool, varlen: Option<(&[i32], usize)>) -> Result<()> {
        self.require_host(&[x.host, out.host])?;
        if x.shape != out.shape {
            return Err(Error::invalid(format!("out shape {:?} != x shape {:?}", out.shape, x.shape)));
        }
        let mut p = MaybeUninit::<zyfa_sys::zyfa_quant_params>::uninit();
        let mut p = unsafe {
            zyfa_sys::zyfa_quant_params_init(p.as_mut_ptr(), size_of::<zyfa_sys::zyfa_quant_params>());
            p.assume_init()
        };
        p.flags = if hadamard { zyfa_sys::ZYFA_QUANT_HADAMARD } else { 0 };
        if mean.is_some() {
            p.flags |= zyfa_sys::ZYFA_QUANT_SMOOTH;
        }
        match (x.shape, varlen) {
            (Shape::Batched([b, s, h, d]), None) => {
                p.batch = b as i64;
                p.seqlen = s as i64;
                p.heads = h as i64;
                p.head_dim = d as i64;
            }
            (Shape::Packed([t, h, d]), Some((cu, max_seqlen))) => {
                p.batch = check_cu_seqlens(cu, t, "cu_seqlens")? as i64;
                p.seqlen = max_seqlen as i64;
                p.heads = h as i64;
                p.head_dim = d as i64;
                p.cu_seqlens = cu.as_ptr();
            }
            _ => return Err(Error::invalid("a packed x needs varlen (cu_seqlens, max_seqlen), a batched one none")),
        }
        let needed = (p.batch * p.heads) as usize;
        if descale.len() < needed {
            return Err(Error::invalid(format!("descale has {} elements, needs {}", descale.len(), needed)));
        }
        if let Some(mean) = mean {
            let needed = needed * p.head_dim as usize;
            if mean.len() < needed {
                return Err(Error::invalid(format!("mean has {} elements, needs {}", mean.len(), needed)));
            }
            p.smooth_mean = mean.as_mut_ptr();
        }
        Error::check(unsafe {
            zyfa_sys::zyfa_quantize_fp8(self.as_raw(), &p, &x.raw, &out.raw, descale.as_mut_ptr(), ptr::null_mut())
        })
    }

    /// Merges partial attention results over disjoint key sets for the same queries (split keys,
    /// a prefix cache and a new chunk, context parallelism) into `o`, and the merged lse into
    /// `lse` when given: per row, in f32, lse = ln(sum_i exp(lse_i)), O = sum_i exp(lse_i - lse) O_i.
    /// `parts` are the parts' O views (f32/F16/Bf16, the shape of `o`), `part_lse` their lse
    /// ([batch * heads * seqlen_q], or [heads * total_q] when packed with `varlen` =
    /// (cu_seqlens_q, max_seqlen_q)), as [`Context::attention`] writes them. A part whose lse is
    /// -inf adds nothing; a row whose parts are all -inf gets O = 0, lse = -inf; NaN or +inf: NaN.
    pub fn attention_merge(&self, parts: &[&Tensor], part_lse: &[&[f32]], o: &mut TensorMut,
                           lse: Option<&mut [f32]>, varlen: Option<(&[i32], usize)>) -> Result<()> {
        let mut host: Vec<bool> = parts.iter().map(|t| t.host).collect();
        host.push(o.host);
        self.require_host(&host)?;
        if parts.is_empty() || parts.len() != part_lse.len() {
            return Err(Error::invalid(format!("{} parts and {} lse arrays: need as many, at least one", parts.len(),
                                              part_lse.len())));
        }
        let mut p = MaybeUninit::<zyfa_sys::zyfa_merge_params>::uninit();
        let mut p = unsafe {
            zyfa_sys::zyfa_merge_params_init(p.as_mut_ptr(), size_of::<zyfa_sys::zyfa_merge_params>());
            p.assume_init()
        };
        p.num_parts = i32::try_from(parts.len()).map_err(|_| Error::invalid("too many parts"))?;
        let rows = match (o.shape, varlen) {
            (Shape::Batched([b, s, h, d]), None) => {
                p.batch = b as i64;
                p.seqlen_q = s as i64;
                p.heads = h as i64;
                p.head_dim_v = d as i64;
                b * s
            }
            (Shape::Packed([t, h, d]), Some((cu, max_seqlen))) => {
                p.batch = check_cu_seqlens(cu, t, "cu_seqlens_q")? as i64;
                p.seqlen_q = max_seqlen as i64;
                p.heads = h as i64;
                p.head_dim_v = d as i64;
                p.cu_seqlens_q = cu.as_ptr();
                t
            }
            _ => return Err(Error::invalid("a packed o needs varlen (cu_seqlens_q, max_seqlen_q), a batched one none")),
        };
        let needed = rows * p.heads as usize;
        for (i, part) in parts.iter().enumerate() {
            if part.shape != o.shape {
                return Err(Error::invalid(format!("part {} has shape {:?}, o {:?}", i, part.shape, o.shape)));
            }
            if part_lse[i].len() < needed {
                return Err(Error::invalid(format!("part_lse[{}] has {} elements, needs {}", i, part_lse[i].len(),
                                                  needed)));
            }
        }
        if let Some(lse) = lse {
            if lse.len() < needed {
                return Err(Error::invalid(format!("lse has {} elements, needs {}", lse.len(), needed)));
            }
            p.lse = lse.as_mut_ptr();
        }
        let raw: Vec<zyfa_sys::zyfa_tensor> = parts.iter().map(|t| t.raw).collect();
        let lse_ptrs: Vec<*const f32> = part_lse.iter().map(|l| l.as_ptr()).collect();
        Error::check(unsafe {
            zyfa_sys::zyfa_attn_merge(self.as_raw(), &p, raw.as_ptr(), lse_ptrs.as_ptr(), &o.raw, ptr::null_mut())
        })
    }

    /// zyfa_attn_merge with caller-built parameters and views, for device memory on the GPU
    /// backends: enqueued on `stream`, never synchronising.
    ///
    /// # Safety
    /// Every pointer in `params`, `parts`, `part_lse` and `o` must be valid for the problem, on the
    /// context's device, until the stream work completes; the two slices hold `params.num_parts`.
    pub unsafe fn attention_merge_raw(&self, params: &zyfa_sys::zyfa_merge_params, parts: &[zyfa_sys::zyfa_tensor],
                                      part_lse: &[*const f32], o: &mut TensorMut, stream: *mut c_void) -> Result<()> {
        if parts.len() != params.num_parts as usize || part_lse.len() != parts.len() {
            return Err(Error::invalid("parts and part_lse must hold params.num_parts entries"));
        }
        Error::check(zyfa_sys::zyfa_attn_merge(self.as_raw(), params, parts.as_ptr(), part_lse.as_ptr(), &o.raw,
                                               stream))
    }

    fn require_host(&self, host: &[bool]) -> Result<()> {
        if host.iter().any(|h| !h) || self.backend() != Backend::Cpu {
            return Err(Error::invalid("host slices need a CPU context and host views; use attention_raw for \
                                       device memory"));
        }
        Ok(())
    }

    /// zyfa_attn_params from the views' shapes, checked against each other and the slices' lengths.
    fn params(&self, options: &AttentionOptions, q: &Tensor, k: &Tensor, v: &Tensor, o: &TensorMut)
              -> Result<zyfa_sys::zyfa_attn_params> {
        let mut p = MaybeUninit::<zyfa_sys::zyfa_attn_params>::uninit();
        let mut p = unsafe {
            zyfa_sys::zyfa_attn_params_init(p.as_mut_ptr(), size_of::<zyfa_sys::zyfa_attn_params>());
            p.assume_init()
        };
        if let Some(paged) = options.paged {
            return self.paged_params(p, options, &paged, q, k, v, o);
        }
        let (batch, seqlen_q, seqlen_k) = match (q.shape, k.shape, v.shape, options.varlen) {
            (Shape::Batched(qs), Shape::Batched(ks), Shape::Batched(vs), None) => {
                if ks[0] != qs[0] || vs[0] != ks[0] || vs[1] != ks[1] {
                    return Err(Error::invalid(format!(
                        "q {:?}, k {:?}, v {:?}: batch and k/v sequence lengths must agree", qs, ks, vs)));
                }
                (qs[0], qs[1], ks[1])
            }
            (Shape::Packed(qs), Shape::Packed(ks), Shape::Packed(vs), Some(varlen)) => {
                if vs[0] != ks[0] {
                    return Err(Error::invalid(format!("k {:?} and v {:?} must have the same total", ks, vs)));
                }
                let batch = check_cu_seqlens(varlen.cu_seqlens_q, qs[0], "cu_seqlens_q")?;
                if check_cu_seqlens(varlen.cu_seqlens_k, ks[0], "cu_seqlens_k")? != batch {
                    return Err(Error::invalid("cu_seqlens_q and cu_seqlens_k must have the same length"));
                }
                p.cu_seqlens_q = varlen.cu_seqlens_q.as_ptr();
                p.cu_seqlens_k = varlen.cu_seqlens_k.as_ptr();
                (batch, varlen.max_seqlen_q, varlen.max_seqlen_k)
            }
            _ => {
                return Err(Error::invalid(
                    "q, k, v must all be batched (no varlen) or all packed (with varlen options)"))
            }
        };
        self.common_params(p, options, batch, seqlen_q, seqlen_k, q, k, v, o)
    }

    /// params() for paged K/V: the pools' shapes, the table's and seqused_k's lengths.
    #[allow(clippy::too_many_arguments)]
    fn paged_params(&self, mut p: zyfa_sys::zyfa_attn_params, options: &AttentionOptions, paged: &Paged,
                    q: &Tensor, k: &Tensor, v: &Tensor, o: &TensorMut) -> Result<zyfa_sys::zyfa_attn_params> {
        let (ks, vs) = match (k.shape, v.shape) {
            (Shape::Batched(ks), Shape::Batched(vs)) => (ks, vs),
            _ => return Err(Error::invalid("paged k and v are pools [num_pages, page_size, heads_kv, head_dim]")),
        };
        if vs[0] != ks[0] || vs[1] != ks[1] {
            return Err(Error::invalid(format!("k pool {:?} and v pool {:?} must have the same pages", ks, vs)));
        }
        let (batch, seqlen_q) = match (q.shape, options.varlen) {
            (Shape::Batched(qs), None) => (qs[0], qs[1]),
            (Shape::Packed(qs), Some(varlen)) => {
                if !varlen.cu_seqlens_k.is_empty() {
                    return Err(Error::invalid("paged keys are not packed: cu_seqlens_k must be empty"));
                }
                (check_cu_seqlens(varlen.cu_seqlens_q, qs[0], "cu_seqlens_q")?, varlen.max_seqlen_q)
            }
            _ => return Err(Error::invalid("paged q is batched, or packed with varlen options")),
        };
        if let Some(varlen) = options.varlen {
            p.cu_seqlens_q = varlen.cu_seqlens_q.as_ptr();
        }
        if paged.block_table.len() < batch * paged.block_table_stride {
            return Err(Error::invalid(format!("block_table has {} entries, needs batch * block_table_stride = {}",
                                              paged.block_table.len(), batch * paged.block_table_stride)));
        }
        if let Some(used) = paged.seqused_k {
            if used.len() < batch {
                return Err(Error::invalid(format!("seqused_k has {} entries, needs batch = {}", used.len(), batch)));
            }
            p.seqused_k = used.as_ptr();
        }
        p.block_table = paged.block_table.as_ptr();
        p.block_table_stride = paged.block_table_stride as i64;
        p.num_pages = ks[0] as i64;
        p.page_size = ks[1] as i32;
        self.common_params(p, options, batch, seqlen_q, paged.max_seqlen_k, q, k, v, o)
    }

    /// The fields every layout shares, after the sequence layout is known.
    #[allow(clippy::too_many_arguments)]
    fn common_params(&self, mut p: zyfa_sys::zyfa_attn_params, options: &AttentionOptions, batch: usize,
                     seqlen_q: usize, seqlen_k: usize, q: &Tensor, k: &Tensor, v: &Tensor, o: &TensorMut)
                     -> Result<zyfa_sys::zyfa_attn_params> {
        if k.shape.dim() != q.shape.dim() {
            return Err(Error::invalid(format!("k head_dim {} != q head_dim {}", k.shape.dim(), q.shape.dim())));
        }
        if v.shape.heads() != k.shape.heads() {
            return Err(Error::invalid("k and v must have the same number of heads"));
        }
        let expected_o = match q.shape {
            Shape::Batched([b, s, h, _]) => Shape::Batched([b, s, h, v.shape.dim()]),
            Shape::Packed([t, h, _]) => Shape::Packed([t, h, v.shape.dim()]),
        };
        if o.shape != expected_o {
            return Err(Error::invalid(format!("o has shape {:?}, expected {:?}", o.shape, expected_o)));
        }
        p.mask = match options.mask {
            crate::Mask::None => zyfa_sys::ZYFA_MASK_NONE,
            crate::Mask::Causal => zyfa_sys::ZYFA_MASK_CAUSAL,
            crate::Mask::CausalBottomRight => zyfa_sys::ZYFA_MASK_CAUSAL_BOTTOM_RIGHT,
        };
        p.softmax = match options.softmax {
            Softmax::Auto => zyfa_sys::ZYFA_SOFTMAX_AUTO,
            Softmax::Exact => zyfa_sys::ZYFA_SOFTMAX_EXACT,
            Softmax::Lean => zyfa_sys::ZYFA_SOFTMAX_LEAN,
        };
        p.batch = batch as i64;
        p.seqlen_q = seqlen_q as i64;
        p.seqlen_k = seqlen_k as i64;
        p.heads_q = q.shape.heads() as i64;
        p.heads_kv = k.shape.heads() as i64;
        p.head_dim_qk = q.shape.dim() as i64;
        p.head_dim_v = v.shape.dim() as i64;
        p.softmax_scale = options.softmax_scale.unwrap_or(0.0);
        p.window_left = options.window.0;
        p.window_right = options.window.1;
        p.key_block = options.key_block;
        if let Some(d) = options.descale {
            let needed = batch * k.shape.heads();
            for (name, s) in [("q", d.q), ("k", d.k), ("v", d.v)] {
                if s.len() < needed {
                    return Err(Error::invalid(format!("{}_descale has {} elements, needs batch * heads_kv = {}",
                                                      name, s.len(), needed)));
                }
            }
            p.q_descale = d.q.as_ptr();
            p.k_descale = d.k.as_ptr();
            p.v_descale = d.v.as_ptr();
        }
        if let Some(s) = options.sinks {
            if s.len() != q.shape.heads() {
                return Err(Error::invalid(format!("sinks has {} elements, needs heads_q = {}", s.len(),
                                                  q.shape.heads())));
            }
            p.sinks = s.as_ptr();
        }
        Ok(p)
    }
}

/// Checks host cu_seqlens against the packed rows (the library checks order and max lengths);
/// returns the batch size.
fn check_cu_seqlens(cu: &[i32], rows: usize, name: &str) -> Result<usize> {
    if cu.is_empty() {
        return Err(Error::invalid(format!("{} is empty; it needs batch + 1 entries", name)));
    }
    let last = cu[cu.len() - 1];
    if last < 0 || last as usize > rows || cu.iter().any(|&x| x < 0) {
        return Err(Error::invalid(format!("{} ends at {}, outside the {} packed rows", name, last, rows)));
    }
    Ok(cu.len() - 1)
}
