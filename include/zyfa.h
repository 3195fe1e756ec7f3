/*
 * zyfa.h - the public C ABI of zyfa, FlashAttention forward kernels for FP8 (OCP e4m3) and BF16
 * prefill on AMD Instinct (gfx950, gfx942), NVIDIA Hopper and the CPU.
 *
 * One plain C99 header: it includes only <stddef.h> and <stdint.h>, so bindgen, cgo and ctypes
 * read it with no GPU toolkit installed. Later versions only append: new functions, new enum
 * values, new fields at the end of a struct (whose struct_size then grows).
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef ZYFA_H
#define ZYFA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------------------------- */
#define ZYFA_VERSION_MAJOR 0
#define ZYFA_VERSION_MINOR 1
#define ZYFA_VERSION_PATCH 0
#define ZYFA_VERSION_NUMBER (ZYFA_VERSION_MAJOR * 10000 + ZYFA_VERSION_MINOR * 100 + ZYFA_VERSION_PATCH)

/* ---------------------------------------------------------------------------------------------
 * Export macro: only ZYFA_API declarations are exported from libzyfa.so.
 * ------------------------------------------------------------------------------------------- */
#if defined(_WIN32)
#  if defined(ZYFA_BUILDING_LIBRARY)
#    define ZYFA_API __declspec(dllexport)
#  else
#    define ZYFA_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define ZYFA_API __attribute__((visibility("default")))
#else
#  define ZYFA_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Status codes. Values are stable: never renumbered, never reused.
 * NOT_SUPPORTED means "no kernel for this valid request here" (a caller may fall back);
 * INVALID_ARGUMENT means a caller bug.
 * ------------------------------------------------------------------------------------------- */
typedef int32_t zyfa_status;
#define ZYFA_SUCCESS                0
#define ZYFA_ERROR_INVALID_ARGUMENT 1
#define ZYFA_ERROR_NOT_SUPPORTED    2
#define ZYFA_ERROR_NO_DEVICE        3
#define ZYFA_ERROR_DEVICE           4
#define ZYFA_ERROR_OUT_OF_MEMORY    5
#define ZYFA_ERROR_INTERNAL         6

/* ---------------------------------------------------------------------------------------------
 * Enumerations, stored as int32_t (an enum's size is not portable across FFIs). Append-only.
 * ------------------------------------------------------------------------------------------- */
typedef int32_t zyfa_dtype;
#define ZYFA_DTYPE_FP32         1
#define ZYFA_DTYPE_FP16         2
#define ZYFA_DTYPE_BF16         3
#define ZYFA_DTYPE_FP8_E4M3FN   4 /* OCP e4m3: bias 7, max 448, NaN = S.1111.111; gfx950, NVIDIA, CPU */
#define ZYFA_DTYPE_FP8_E4M3FNUZ 5 /* bias 8, max 240, NaN = 0x80 only, no -0; gfx942, CPU */
#define ZYFA_DTYPE_INT8         6 /* signed 8-bit integer: q and k of the INT8 Q/K mode (CPU, HIP) */

typedef int32_t zyfa_backend;
#define ZYFA_BACKEND_AUTO 0 /* HIP, then CUDA, then CPU */
#define ZYFA_BACKEND_CPU  1
#define ZYFA_BACKEND_HIP  2
#define ZYFA_BACKEND_CUDA 3

typedef int32_t zyfa_mask;
#define ZYFA_MASK_NONE                0
#define ZYFA_MASK_CAUSAL              1 /* top-left: query i sees keys j <= i */
#define ZYFA_MASK_CAUSAL_BOTTOM_RIGHT 2 /* query i sees keys j <= i + seqlen_k - seqlen_q */

typedef int32_t zyfa_softmax;
#define ZYFA_SOFTMAX_AUTO  0 /* LEAN for FP8 inputs, EXACT otherwise */
#define ZYFA_SOFTMAX_EXACT 1 /* exp2 in fp32; FP8: P scaled by 2^8, rounded to e4m3 (RNE) */
#define ZYFA_SOFTMAX_LEAN  2 /* ZYFA: Lean P codes, per-key-block 2^k scaling, rounded row sum */

/* The INT8 Q/K mode: keys per scale of k (zyfa_attn_params.k_descale_per_block; the
 * zyfa_quant_params.scale_rows that quantises K for it). */
#define ZYFA_INT8_KEY_BLOCK 64

/* zyfa_quant_params.flags: rotate the head dimension by a normalised Hadamard matrix first. */
#define ZYFA_QUANT_HADAMARD 1u
/* zyfa_quant_params.flags: subtract each channel's mean over the sequence first (K smoothing) and
 * return it in zyfa_quant_params.smooth_mean. */
#define ZYFA_QUANT_SMOOTH   2u
/* zyfa_quant_params.flags (0.1.7): write out in the transposed V layout that zyfa_attn_fwd reads with
 * ZYFA_ATTN_V_TRANSPOSED (FP8 V only: it is the byte order the NVIDIA kernels' P.V reads, so they
 * copy V instead of transposing it). Per (batch, head) the keys form groups of 16, padded with zero
 * keys to a multiple of 128 keys; out.stride_seq is the distance between groups (16 * head_dim for
 * the layout the NVIDIA kernels read), each group head_dim chunks of 16 bytes, chunk d holding
 * column d of the group's keys in the order 0,1,8,9,2,3,10,11,4,5,12,13,6,7,14,15:
 * element [b, key, h, d] = data + b*stride_batch + h*stride_head + (key / 16)*stride_seq + d*16 +
 * byte(key % 16). Not with params.cu_seqlens (docs/api.md, "V in the transposed layout"). */
#define ZYFA_QUANT_V_TRANSPOSED 4u

/* zyfa_attn_params.flags (0.1.7): v is FP8 in the transposed layout of ZYFA_QUANT_V_TRANSPOSED
 * (seqlen_k keys padded to a multiple of 128, stride_seq the distance between 16-key groups).
 * Contiguous keys only: not with cu_seqlens or block_table. */
#define ZYFA_ATTN_V_TRANSPOSED 1u
/* zyfa_quant_params.flags, on K (0.1.6): also write Q smoothing's exact per-key score bias,
 * key_bias_scale * query_mean . (k_j - smooth_mean), to zyfa_quant_params.key_bias, for
 * zyfa_attn_params.key_bias. */
#define ZYFA_QUANT_KEY_BIAS 8u

/* ---------------------------------------------------------------------------------------------
 * Structures. Only fixed-width integers, floats and pointers. Growable structs start with
 * struct_size and are filled by their *_init function; the library reads only the fields
 * that lie within struct_size. A struct_size below the oldest layout or above 4096 (an
 * uninitialised struct) is INVALID_ARGUMENT; a larger, newer struct whose extra bytes are not all
 * zero asks for fields this library does not know: NOT_SUPPORTED.
 * ------------------------------------------------------------------------------------------- */

/* Opaque handle bound to one backend and one device. */
typedef struct zyfa_context zyfa_context;

/* Options for zyfa_context_create. Fill with zyfa_context_options_init. */
typedef struct zyfa_context_options {
    uint32_t     struct_size;
    zyfa_backend backend;     /* default AUTO: HIP, then CUDA, then CPU */
    int32_t      device;      /* GPU ordinal, default 0 */
    int32_t      num_threads; /* CPU backend worker threads, 0 = all hardware threads; at most 1024 */
} zyfa_context_options;

/* A strided view of a [batch, seq, head, dim] tensor; the dim axis is contiguous.
 * Element [b, s, h, d] = data + b*stride_batch + s*stride_seq + h*stride_head + d (elements). */
typedef struct zyfa_tensor {
    void*      data;         /* device pointer on GPU backends, host pointer on the CPU backend */
    zyfa_dtype dtype;
    int32_t    reserved;     /* must be 0 */
    int64_t    stride_batch; /* in elements; ignored when the sequence lengths are packed (varlen) */
    int64_t    stride_seq;
    int64_t    stride_head;
} zyfa_tensor;

/* One attention problem. Fill with zyfa_attn_params_init, then set the fields. */
typedef struct zyfa_attn_params {
    uint32_t       struct_size;
    zyfa_mask      mask;
    int64_t        batch;
    int64_t        seqlen_q;      /* the longest sequence when varlen */
    int64_t        seqlen_k;
    int64_t        heads_q;
    int64_t        heads_kv;      /* heads_q % heads_kv == 0: MHA, GQA, MQA */
    int64_t        head_dim_qk;
    int64_t        head_dim_v;    /* may differ from head_dim_qk (MLA 192/128) */
    float          softmax_scale; /* 0 = 1/sqrt(head_dim_qk) */
    zyfa_softmax   softmax;
    int32_t        window_left;   /* sliding window, -1 = unbounded */
    int32_t        window_right;  /* -1 = unbounded */
    const int32_t* cu_seqlens_q;  /* [batch+1] prefix sums of packed lengths, NULL = fixed length */
    const int32_t* cu_seqlens_k;
    const float*   q_descale;     /* FP8 only: fp32 [batch, heads_kv], NULL = 1 */
    const float*   k_descale;
    const float*   v_descale;
    float*         lse;           /* optional output, natural-log sum-exp of the scaled scores the
                                     kernel sees: [batch, heads_q, seqlen_q], or [heads_q, total_q]
                                     when varlen. EXACT: of the fp32 exponentials (within ~1e-5).
                                     LEAN: the log of its rounded row sum, the decoded Lean P codes
                                     times their block scales that O is divided by, not the true
                                     log-sum-exp: lse - exact lies in [-0.084, +0.062] (docs/api.md).
                                     With K smoothed (ZYFA_QUANT_SMOOTH), the smoothed scores' lse:
                                     add softmax_scale * q . smooth_mean for the unsmoothed one */
    uint64_t       flags;         /* 0, or ZYFA_ATTN_V_TRANSPOSED (0.1.7); other bits INVALID_ARGUMENT */
    /* Appended after 0.1's layout; an older caller's struct_size ends before it and reads as 0. */
    int32_t        key_block;     /* keys per online-softmax step: 0 = the backend's own choice, or
                                     64 or 128 (else INVALID_ARGUMENT). LEAN's block scales and the
                                     running maximum that both modes round P against depend on it;
                                     a backend without kernels for the value returns NOT_SUPPORTED */
    int32_t        reserved;      /* must be 0: spells out the tail padding (room for a later
                                     field; nonzero is NOT_SUPPORTED) */
    /* Appended in 0.1.4; an older caller's struct_size ends before them and they read as 0/NULL. */
    const float*   sinks;         /* optional attention sinks, fp32 [heads_q], NULL = none: one learned
                                     logit per query head, in the units of the scaled scores (natural
                                     log), that joins every row's softmax denominator and multiplies
                                     no value (gpt-oss; FlashAttention-3's s_aux): softmax over
                                     [scores..., sinks[h]] with the sink's column dropped. lse then
                                     includes the sink (a row without keys gets O = 0, lse = sink):
                                     when merging parts, pass sinks to one part only. -inf = no sink
                                     (the same bits as NULL); NaN or +inf gives O = lse = NaN, as a
                                     score would (docs/api.md, Attention sinks) */
    /* Paged K/V (0.1.4). With block_table set, k and v are page pools of num_pages pages of
       page_size rows: element [page, row, head, d] = data + page*stride_batch + row*stride_seq +
       head*stride_head + d, i.e. stride_batch is the page stride. Key j of sequence b lies in
       page block_table[b*block_table_stride + j/page_size] at row j % page_size. seqlen_k is
       the longest sequence's key count; cu_seqlens_k must be NULL (queries may be packed with
       cu_seqlens_q alone). NULL block_table: k and v are contiguous, the fields below are 0. */
    const int32_t* block_table;   /* [batch, block_table_stride] int32 page indices, or NULL */
    const int32_t* seqused_k;     /* paged only: [batch] keys of each sequence, in [0, seqlen_k];
                                     NULL = seqlen_k keys each */
    int64_t        block_table_stride; /* entries between sequences' rows of block_table,
                                          >= ceil(seqlen_k / page_size) */
    int64_t        num_pages;     /* pages in each of the k and v pools; every index read must
                                     lie in [0, num_pages) */
    int32_t        page_size;     /* keys per page, in [1, 256] (vLLM 16, SGLang 1) */
    int32_t        reserved2;     /* must be 0 (tail padding, as reserved) */
    /* Appended in 0.1.4, after the paged fields: the descales of the INT8 Q/K mode (q.dtype =
       k.dtype = ZYFA_DTYPE_INT8, v FP8 with v_descale per head as above; q_descale and k_descale
       must then be NULL). Set without INT8 q/k they are INVALID_ARGUMENT. NULL = 1. Padded
       layouts, seqlen_q and seqlen_k the longest sequence when varlen or paged (block n of a
       sequence covers its keys 64n..64n+63, counted in the sequence, not in the page pool): */
    const float*   q_descale_per_token; /* fp32 [batch, heads_q, seqlen_q], one per query token */
    const float*   k_descale_per_block; /* fp32 [batch, heads_kv, ceil(seqlen_k / 64)], one per
                                           ZYFA_INT8_KEY_BLOCK keys */
    /* Appended in 0.1.5: split-KV (short query chunks and decode steps against long keys). The
       keys of each query tile are split across thread blocks whose partial results (fp32 O and
       lse) go to the caller's workspace and are merged by lse (zyfa_attn_merge's maths) in a
       second launch. zyfa_attn_fwd_workspace_size says how many bytes the split this library
       chooses needs; with workspace NULL or smaller, zyfa_attn_fwd runs the largest split count
       that fits (1 = the unsplit kernels, so an older caller gets exactly the unsplit results).
       The split count depends only on the shape, the device's SM count, num_splits and
       workspace_bytes: results are bitwise deterministic for a given shape and workspace.
       The CPU backend never splits and ignores them beyond validation (docs/api.md, Split-KV). */
    void*          workspace;       /* device memory on GPU backends, at least 16-byte aligned, for
                                       the split partial results; NULL = none */
    uint64_t       workspace_bytes; /* bytes at workspace; 0 with NULL */
    int32_t        num_splits;      /* 0 = the library's heuristic, 1 = never split, n > 1 = split
                                       the keys into at most n parts (at most 64) */
    int32_t        reserved3;       /* must be 0 */
    /* Appended in 0.1.6; an older caller's struct_size ends before it and it reads as NULL. */
    const float*   key_bias;        /* optional per-key score bias, fp32, NULL = none:
                                       [batch, heads_q, seqlen_k] (fixed-length or paged keys; seqlen_k
                                       the longest sequence, key j counted in its sequence), or
                                       [heads_q, total_k] when cu_seqlens_k packs the keys. Added to
                                       every scaled score of key j in query head h, in the units of
                                       the scaled scores (natural log, as sinks): score =
                                       softmax_scale * q . k + key_bias[.., h, j]. It is Q smoothing's
                                       exact correction (ZYFA_QUANT_KEY_BIAS writes it) or any
                                       additive per-key bias; -inf drops the key, NaN or +inf makes
                                       every row that sees the key NaN, as such a score would. lse
                                       includes it. CPU backend and HIP (its HIP C++ kernels), every
                                       dtype but INT8 q/k; CUDA: NOT_SUPPORTED (docs/api.md, Per-key
                                       score bias) */
} zyfa_attn_params;

/* One quantisation problem for zyfa_quantize_fp8. Fill with zyfa_quant_params_init. */
typedef struct zyfa_quant_params {
    uint32_t       struct_size;
    uint32_t       flags;       /* ZYFA_QUANT_HADAMARD, ZYFA_QUANT_SMOOTH, ZYFA_QUANT_V_TRANSPOSED (any of them) */
    int64_t        batch;
    int64_t        seqlen;
    int64_t        heads;
    int64_t        head_dim;
    const int32_t* cu_seqlens;  /* NULL = fixed length */
    /* Appended after 0.1's layout; an older caller's struct_size ends before it and reads as NULL. */
    float*         smooth_mean; /* output, with ZYFA_QUANT_SMOOTH only (else NULL): fp32
                                   [batch, heads, head_dim], the mean subtracted from each
                                   (sequence, head), in the unrotated basis */
    /* Appended in 0.1.4; an older caller's struct_size ends before it and reads as 0. */
    int32_t        scale_rows;  /* rows of a sequence that share one scale: 0 = all of them, one
                                   descale per (batch, head), zyfa_quantize_fp8's only choice;
                                   zyfa_quantize_int8: 1 (per token, for Q) or
                                   ZYFA_INT8_KEY_BLOCK (per 64 keys, for K) */
    int32_t        reserved;    /* must be 0: spells out the tail padding (nonzero is NOT_SUPPORTED) */
    /* Appended in 0.1.6, for ZYFA_QUANT_KEY_BIAS (Q smoothing) only; otherwise NULL and 0. An older
       caller's struct_size ends before them and they read as NULL and 0. */
    const float*   query_mean;     /* input: fp32 [batch, query_heads, head_dim], Q's per-channel mean
                                      over the sequence in the basis of this call's input (the
                                      smooth_mean that quantising Q with ZYFA_QUANT_SMOOTH wrote; if
                                      you rotated Q yourself, rotate the mean back first) */
    float*         key_bias;       /* output: fp32 [batch, query_heads, seqlen] (seqlen the longest
                                      sequence when varlen; a shorter one's trailing entries are not
                                      written) or [query_heads, total] when cu_seqlens packs them:
                                      zyfa_attn_params.key_bias's layouts */
    int64_t        query_heads;    /* the attention's heads_q: a positive multiple of heads; query
                                      head h reads K head h / (query_heads / heads) */
    float          key_bias_scale; /* the attention's softmax_scale, finite (0 = 1/sqrt(head_dim)) */
    int32_t        reserved2;      /* must be 0 (tail padding, as reserved) */
} zyfa_quant_params;

/* One merge problem for zyfa_attn_merge: num_parts partial results of the same queries over
 * disjoint key sets. Fill with zyfa_merge_params_init. */
typedef struct zyfa_merge_params {
    uint32_t       struct_size;
    int32_t        num_parts;    /* parts to merge, >= 1 */
    int64_t        batch;
    int64_t        seqlen_q;     /* the longest sequence when varlen */
    int64_t        heads;        /* query heads (the parts' heads_q) */
    int64_t        head_dim_v;   /* elements per head of O, in [1, 512] */
    const int32_t* cu_seqlens_q; /* [batch+1] prefix sums of packed lengths, NULL = fixed length */
    float*         lse;          /* optional output, the merged lse in the parts' layout:
                                    [batch, heads, seqlen_q], or [heads, total_q] when varlen */
} zyfa_merge_params;

/* ---------------------------------------------------------------------------------------------
 * Library information
 * ------------------------------------------------------------------------------------------- */

/* The run-time version as ZYFA_VERSION_NUMBER of the library that was loaded; bindings compare
 * its major (value / 10000) with the header's.
 * Thread safety: safe from any thread.
 * Lifetime: returns a value. */
ZYFA_API uint32_t zyfa_version(void);

/* The run-time version as "MAJOR.MINOR.PATCH".
 * Thread safety: safe from any thread.
 * Lifetime: static string, never NULL, never freed. */
ZYFA_API const char* zyfa_version_string(void);

/* One line naming the backends and the GPU targets compiled into this library.
 * Thread safety: safe from any thread.
 * Lifetime: static string, never NULL, never freed. */
ZYFA_API const char* zyfa_build_info(void);

/* A short English name of a status code ("invalid argument"); unknown codes give "unknown status".
 * Thread safety: safe from any thread.
 * Lifetime: static string, never NULL, never freed. */
ZYFA_API const char* zyfa_status_string(zyfa_status status);

/* The detail of this thread's most recent failed zyfa call, naming the offending field and value;
 * "" if no call on this thread has failed. Successful calls leave it as it was.
 * Thread safety: thread-local; each thread sees only its own message.
 * Lifetime: valid until the next zyfa call on this thread; never NULL. */
ZYFA_API const char* zyfa_last_error_message(void);

/* ---------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------- */

/* Zeroes the first struct_size bytes of *opts, sets opts->struct_size = struct_size and fills the
 * defaults that lie within it (backend AUTO, device 0, num_threads 0). NULL opts is a no-op.
 * Pass sizeof(zyfa_context_options).
 * Thread safety: safe from any thread on distinct structs.
 * Lifetime: writes only *opts; keeps nothing. */
ZYFA_API void zyfa_context_options_init(zyfa_context_options* opts, size_t struct_size);

/* Creates a context bound to one backend and device and loads what it needs (code objects,
 * worker threads), so that zyfa_attn_fwd allocates nothing. opts NULL means defaults. With
 * backend AUTO the first of HIP, CUDA, CPU that is compiled in and finds a device is chosen.
 * Returns ZYFA_ERROR_NOT_SUPPORTED for a backend not compiled in, ZYFA_ERROR_NO_DEVICE when its
 * device is absent, ZYFA_ERROR_INVALID_ARGUMENT for num_threads < 0 or > 1024, and
 * ZYFA_ERROR_OUT_OF_MEMORY when memory or a worker thread cannot be had (every thread already
 * started is joined first). On failure *out is set to NULL. ZYFA_LOG=info in the environment
 * prints on stderr which backend was chosen and why the others were not.
 * Thread safety: safe from any thread.
 * Lifetime: the caller owns *out and releases it with zyfa_context_destroy. */
ZYFA_API zyfa_status zyfa_context_create(const zyfa_context_options* opts, zyfa_context** out);

/* Destroys a context; NULL is a no-op. Work enqueued on GPU streams must have completed.
 * Thread safety: no other call may use ctx concurrently or afterwards.
 * Lifetime: ctx is invalid afterwards. */
ZYFA_API void zyfa_context_destroy(zyfa_context* ctx);

/* The backend a context is bound to (never AUTO for a valid context); ZYFA_BACKEND_AUTO for NULL.
 * Thread safety: safe from any thread.
 * Lifetime: returns a value. */
ZYFA_API zyfa_backend zyfa_context_backend(const zyfa_context* ctx);

/* The device a context runs on: "cpu", "gfx950", "sm_90", ...; "" for NULL.
 * Thread safety: safe from any thread.
 * Lifetime: owned by ctx, valid until zyfa_context_destroy(ctx). */
ZYFA_API const char* zyfa_context_device_name(const zyfa_context* ctx);

/* ---------------------------------------------------------------------------------------------
 * Attention
 *
 * O = softmax(softmax_scale * (Q*q_descale) (K*k_descale)^T + mask) (V*v_descale), per query
 * head h reading kv head h / (heads_q / heads_kv). Key j is visible to query i (per sequence,
 * lengths sq and sk, d = 0 for CAUSAL and d = sk - sq otherwise) when: mask is NONE or
 * j <= i + d; window_left < 0 or j >= i + d - window_left; window_right < 0 or
 * j <= i + d + window_right. A row that sees no key (seqlen_k = 0, an empty packed key sequence,
 * a mask or window that hides every key) gets O = 0 and lse = -inf (lse = sinks[h] with sinks).
 * With sinks, each row's denominator also holds exp(sinks[h]): the softmax of [scores..., sink]
 * with the sink's column dropped, folded in after the last key (LEAN: as the exact exponential,
 * beside the rounded row sum). The generated gfx950 assembly kernels take no sinks: the HIP
 * backend runs such problems on its HIP C++ kernels.
 * q, k, v share one dtype (FP8 e4m3fn, FP8 e4m3fnuz, FP16, BF16, or FP32 on the CPU backend);
 * o is BF16, FP16 or FP32. The INT8 Q/K mode: q and k ZYFA_DTYPE_INT8 with the per-token and
 * per-64-key-block descales of zyfa_attn_params (zyfa_quantize_int8 makes them), v FP8 with
 * v_descale per head; the raw score is the exact int32 dot product (head_dim_qk <= 256, else
 * NOT_SUPPORTED), scaled by softmax_scale * q_descale_per_token * k_descale_per_block; both
 * softmax modes, AUTO = LEAN; CPU backend, HIP (gfx950 with v e4m3fn, gfx942 with v e4m3fnuz, head
 * dims 64 and 128) and CUDA sm_90a at head dims 64 and 128 (NOT_SUPPORTED elsewhere). INT8
 * combines with sinks and paged K/V on the CPU backend and on HIP (paged: head dim 128); the CUDA
 * INT8 kernels take sinks but no block table (INT8 + paged is NOT_SUPPORTED on CUDA; docs/api.md,
 * The INT8 Q/K mode). With cu_seqlens_q/k (both or neither) the sequences are packed along
 * the seq axis and stride_batch is ignored.
 *
 * Paged K/V (params.block_table set): k and v are page pools [num_pages, page_size, heads_kv, dim]
 * whose stride_batch is the page stride; sequence b's key j is row j % page_size of page
 * block_table[b * block_table_stride + j / page_size], and it has seqused_k[b] keys (seqlen_k when
 * seqused_k is NULL). Queries are dense or packed with cu_seqlens_q alone (cu_seqlens_k NULL).
 * The result is bitwise the contiguous call's on the same keys. INVALID_ARGUMENT: page_size
 * outside [1, 256], cu_seqlens_k set, block_table_stride < ceil(seqlen_k / page_size), num_pages
 * < 0 (or 0 with keys), paged fields without a block table; on the CPU backend also seqused_k[b]
 * outside [0, seqlen_k] and a page index outside [0, num_pages) (GPU backends do not read the
 * tables: the caller guarantees them). Backends without paged kernels return NOT_SUPPORTED
 * (docs/api.md, Paged K/V).
 *
 * Non-finite values: a row that sees a score which is NaN or +inf after scaling (a NaN or inf in
 * q or k, a NaN or inf descale, a dot product beyond fp32) gets O = NaN and lse = NaN, on every
 * backend; a score of -inf is a probability of 0. A sink of NaN or +inf makes every row of its
 * head NaN; a sink of -inf is none. NaN or inf in v reaches O through P.V (a masked
 * key inside a key block is multiplied by 0, and 0 * NaN is NaN).
 *
 * Bounds (INVALID_ARGUMENT beyond them, on every backend): head_dim_qk and head_dim_v in
 * [1, 512]; batch, seqlens and heads >= 0 (heads >= 1) with every element and byte offset of
 * every view within int64. A valid request that a GPU kernel cannot take (sizes beyond int32,
 * head dims or layouts without a kernel) is NOT_SUPPORTED, naming the limit.
 *
 * Memory: every pointer is aligned to its element: q, k, v, o to their dtype's size (1, 2 or 4
 * bytes; FP8 tensors on GPU backends to 16 bytes, strides to 16 elements), lse, descales, sinks
 * and cu_seqlens to 4 bytes; otherwise INVALID_ARGUMENT naming the field and the alignment. zyfa
 * never computes in place: the bytes an output reaches (o, lse) must not overlap those of any
 * input (q, k, v, cu_seqlens, descales, sinks) or of the other output, else INVALID_ARGUMENT
 * naming both (inputs may overlap each other, e.g. q, k, v as views of one packed QKV tensor).
 * With packed sequences on a GPU backend the totals are in device memory, so only each buffer's
 * first row is checked there. On a GPU backend every pointer must be device memory of the context's device
 * (or host memory the device can access: pinned and mapped, managed); host memory it cannot
 * reach is INVALID_ARGUMENT ("q.data = 0x.. is host memory; this context is CUDA device 0").
 * ------------------------------------------------------------------------------------------- */

/* Zeroes the first struct_size bytes of *p, sets p->struct_size = struct_size and fills the
 * defaults that lie within it (softmax AUTO, window_left and window_right -1). NULL is a no-op.
 * Pass sizeof(zyfa_attn_params).
 * Thread safety: safe from any thread on distinct structs.
 * Lifetime: writes only *p; keeps nothing. */
ZYFA_API void zyfa_attn_params_init(zyfa_attn_params* p, size_t struct_size);

/* Checks a request without running it: ZYFA_SUCCESS if zyfa_attn_fwd would run it,
 * ZYFA_ERROR_INVALID_ARGUMENT for a malformed request, ZYFA_ERROR_NOT_SUPPORTED for a valid
 * request that has no kernel on this context's device. Reads no tensor data (GPU backends ask the
 * driver where each pointer lives, as zyfa_attn_fwd does).
 * Thread safety: safe from any thread, also concurrently on one context.
 * Lifetime: borrows its arguments for the call only. */
ZYFA_API zyfa_status zyfa_attn_supported(zyfa_context* ctx, const zyfa_attn_params* p,
                                         const zyfa_tensor* q, const zyfa_tensor* k,
                                         const zyfa_tensor* v, const zyfa_tensor* o);

/* The name of the kernel that zyfa_attn_fwd would run for this request, or NULL if it is not
 * supported (zyfa_last_error_message says why).
 * Thread safety: safe from any thread, also concurrently on one context.
 * Lifetime: static string, never freed. */
ZYFA_API const char* zyfa_attn_kernel_name(zyfa_context* ctx, const zyfa_attn_params* p,
                                           const zyfa_tensor* q, const zyfa_tensor* k,
                                           const zyfa_tensor* v, const zyfa_tensor* o);

/* Computes attention forward into o (and p->lse when not NULL). On GPU backends it is enqueued on
 * stream (hipStream_t or CUstream; NULL = the default stream), allocates nothing and never
 * synchronises; the CPU backend ignores stream and returns when the result is written. A failed
 * call writes nothing to any output, whatever the failure (out of memory included). A problem
 * with no query row (batch or seqlen_q 0) succeeds and writes nothing; with seqlen_k 0 every row
 * gets O = 0 and lse = -inf (k and v data may then be NULL).
 * Thread safety: safe from any thread, also concurrently on one context (the CPU backend then
 * runs the calls one after the other on its worker threads).
 * Lifetime: borrows its arguments for the call; device buffers must outlive the stream work. */
ZYFA_API zyfa_status zyfa_attn_fwd(zyfa_context* ctx, const zyfa_attn_params* p,
                                   const zyfa_tensor* q, const zyfa_tensor* k,
                                   const zyfa_tensor* v, const zyfa_tensor* o, void* stream);

/* The bytes of device workspace (zyfa_attn_params.workspace) that zyfa_attn_fwd's split-KV path
 * would use for this problem on ctx's device with p->num_splits (p->workspace and
 * p->workspace_bytes are ignored here): 0 when it would not split, always 0 on the CPU backend.
 * p is validated as zyfa_attn_fwd validates it (INVALID_ARGUMENT naming the field, *bytes then
 * unwritten); the tensors are not needed, so the bytes assume the problem's dtype has split
 * kernels (NVIDIA: BF16 and FP16 at head dims 64/64 and 128/128, contiguous or paged K/V, with or
 * without sinks; other problems never split and leave the workspace untouched). With packed sequences the bound
 * batch * seqlen_q rows is used. The result may be passed to zyfa_attn_fwd for any problem of
 * the same shape; a smaller workspace gives fewer splits, never an error.
 * Thread safety: safe from any thread, also concurrently on one context.
 * Lifetime: borrows its arguments for the call only. */
ZYFA_API zyfa_status zyfa_attn_fwd_workspace_size(zyfa_context* ctx, const zyfa_attn_params* p, size_t* bytes);

/* ---------------------------------------------------------------------------------------------
 * Quantisation
 * ------------------------------------------------------------------------------------------- */

/* Zeroes the first struct_size bytes of *p and sets p->struct_size = struct_size (all other
 * defaults are zero). NULL is a no-op. Pass sizeof(zyfa_quant_params).
 * Thread safety: safe from any thread on distinct structs.
 * Lifetime: writes only *p; keeps nothing. */
ZYFA_API void zyfa_quant_params_init(zyfa_quant_params* p, size_t struct_size);

/* Quantises a BF16/FP16/FP32 [batch, seqlen, heads, head_dim] tensor to FP8 (out->dtype e4m3fn or
 * e4m3fnuz) with one scale per (batch, head): out = round(x * max_fp8 / amax), and writes
 * descale[b * heads + h] = amax / max_fp8 (1 when amax is 0). With ZYFA_QUANT_SMOOTH each
 * (batch, head, channel)'s mean over the sequence is first subtracted and written to
 * p->smooth_mean[(b * heads + h) * head_dim + d] (0 for an empty sequence); on K every score of
 * a query row shifts by the same q . mean, so O is unchanged and the lse that zyfa_attn_fwd
 * returns is lower by softmax_scale * q . mean; on Q only together with the key bias below (Q
 * smoothing, docs/api.md). With ZYFA_QUANT_KEY_BIAS (on K; CPU and HIP backends, CUDA: NOT_SUPPORTED)
 * p->key_bias[.., hq, j] = key_bias_scale * (query_mean[b, hq, :] . (k_j - smooth_mean)), the dot
 * product in fp64 on the fp32 smoothed row before any rotation, rounded once; pass it as
 * zyfa_attn_params.key_bias. With ZYFA_QUANT_HADAMARD the head
 * dimension is then multiplied by the normalised Hadamard matrix H/sqrt(n) (n = head_dim when a
 * power of two, else blocks of 64 for a multiple of 64); use it on Q and K alike so QK^T is
 * unchanged. Smoothing comes first, so smooth_mean is in the caller's (unrotated) basis.
 * head_dim is at most 65536. Pointers are aligned to their element (in to 2 or 4 bytes,
 * descale, smooth_mean, query_mean, key_bias and cu_seqlens to 4; out to 16 bytes on GPU
 * backends) and out, descale, smooth_mean and key_bias overlap neither in, cu_seqlens, query_mean
 * nor each other (INVALID_ARGUMENT otherwise, as for attention); smooth_mean NULL with
 * ZYFA_QUANT_SMOOTH, or set without it, is INVALID_ARGUMENT, and likewise the key bias's fields
 * and its flag. A failed call writes nothing. On the CPU backend a non-finite input (or query
 * mean, or bias) is INVALID_ARGUMENT.
 * Thread safety: safe from any thread, also concurrently on one context.
 * Lifetime: borrows its arguments for the call; device buffers must outlive the stream work. */
ZYFA_API zyfa_status zyfa_quantize_fp8(zyfa_context* ctx, const zyfa_quant_params* p,
                                       const zyfa_tensor* in, const zyfa_tensor* out,
                                       float* descale, void* stream);

/* Quantises a BF16/FP16/FP32 [batch, seqlen, heads, head_dim] tensor to symmetric INT8 (out->dtype
 * ZYFA_DTYPE_INT8) for the INT8 Q/K mode, with one scale per p->scale_rows rows of each (sequence,
 * head): 1 for Q (per token), ZYFA_INT8_KEY_BLOCK for K (per 64 keys); any other value is
 * INVALID_ARGUMENT. Per group, amax = max |x| over its rows and head_dim; out = round-to-nearest-
 * even(x * (127 / amax)) clamped to [-127, 127], and descale[(b * heads + h) * groups + g] =
 * amax / 127 (1 when amax is 0), groups = ceil(seqlen / scale_rows), seqlen the longest sequence
 * when varlen (a shorter sequence's trailing entries are not written): exactly the layouts of
 * zyfa_attn_params.q_descale_per_token (heads = heads_q) and k_descale_per_block (heads =
 * heads_kv). ZYFA_QUANT_SMOOTH and ZYFA_QUANT_HADAMARD as in zyfa_quantize_fp8 (smoothing first,
 * one mean per (batch, head) over the whole sequence; Hadamard on Q and K alike); every other
 * rule (alignment, no overlap, non-finite input, a failed call writes nothing) is
 * zyfa_quantize_fp8's; on GPU backends non-finite input is not checked, as there (a NaN or an
 * infinity reaches its group's descale). CPU, HIP and CUDA backends, with the same codes and
 * descales bit for bit (docs/api.md says where that has been checked).
 * Thread safety: safe from any thread, also concurrently on one context.
 * Lifetime: borrows its arguments for the call; device buffers must outlive the stream work. */
ZYFA_API zyfa_status zyfa_quantize_int8(zyfa_context* ctx, const zyfa_quant_params* p,
                                        const zyfa_tensor* in, const zyfa_tensor* out,
                                        float* descale, void* stream);

/* ---------------------------------------------------------------------------------------------
 * Merging partial attention results (split keys, context parallelism)
 *
 * Given num_parts results (O_i, lse_i) of zyfa_attn_fwd (or of any attention whose lse is the
 * natural log of the denominator O_i was divided by) for the same query rows over disjoint key
 * sets, zyfa_attn_merge writes per row, in fp32 with the largest lse_i as the shift M:
 *     w_i = exp(lse_i - M),  lse = M + ln(sum_i w_i),  O = (sum_i w_i * O_i) / sum_i w_i,
 * the attention over the union of the keys. A part with lse_i = -inf (its row saw no key) adds
 * nothing and its O_i is not read; a row whose parts are all -inf gets O = 0 and lse = -inf (as
 * zyfa_attn_fwd's rows that see no key); an lse_i that is NaN or +inf gives O = NaN, lse = NaN; a
 * NaN in an O_i that is read reaches O. LEAN parts: e^lse * O is the sum of the parts' rounded
 * probabilities times V, each part rounded against its own running maximum (docs/api.md). Parts
 * computed with sinks: each part's lse counts its sink, so pass sinks to one part only (or merge
 * the sink as a part of its own: O_i = 0, lse_i = sinks[h]).
 * ------------------------------------------------------------------------------------------- */

/* Zeroes the first struct_size bytes of *p and sets p->struct_size = struct_size (every default
 * is zero). NULL is a no-op. Pass sizeof(zyfa_merge_params).
 * Thread safety: safe from any thread on distinct structs.
 * Lifetime: writes only *p; keeps nothing. */
ZYFA_API void zyfa_merge_params_init(zyfa_merge_params* p, size_t struct_size);

/* Merges the parts into o (BF16, FP16 or FP32 [batch, seqlen_q, heads, head_dim_v], or packed)
 * and p->lse when not NULL. part_o[i] is part i's O (BF16, FP16 or FP32, the parts' dtypes may
 * differ, each with its own strides, the layout rules of zyfa_attn_fwd's o) and part_lse[i] its
 * fp32 lse in zyfa_attn_fwd's layout; the two arrays hold num_parts entries and are host memory
 * read during the call (their pointers are device pointers on GPU backends). Not in place: o and
 * p->lse may overlap no part, no part lse, cu_seqlens_q nor each other (INVALID_ARGUMENT naming
 * both). Validation as zyfa_attn_fwd's (INVALID_ARGUMENT naming the field; a failed call writes
 * nothing). GPU backends take at most 64 parts per call (NOT_SUPPORTED beyond: merge in groups,
 * FP32 O with lse, then merge the groups), enqueue one launch on stream, allocate no device
 * memory (the parts' descriptors travel in the kernel parameter) and never synchronise; the
 * validation of any number of parts uses host memory. The CPU backend ignores stream. A problem without rows succeeds and writes
 * nothing. The result does not depend on the backend beyond exp/log rounding (a few ulp).
 * Thread safety: safe from any thread, also concurrently on one context.
 * Lifetime: borrows its arguments for the call; device buffers must outlive the stream work. */
ZYFA_API zyfa_status zyfa_attn_merge(zyfa_context* ctx, const zyfa_merge_params* p,
                                     const zyfa_tensor* part_o, const float* const* part_lse,
                                     const zyfa_tensor* o, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZYFA_H */
