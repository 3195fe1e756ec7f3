// Argument checking: turns the caller's C structs into the normalised problems of problem.hpp or
// throws zyfa::Error (INVALID_ARGUMENT for a caller bug, NOT_SUPPORTED for a valid request that
// this backend kind cannot take) with a message naming the field and its value. Reads only within
// each struct_size and, on the CPU backend, the host cu_seqlens arrays; never any tensor data.
#pragma once

#include <cstdint>

#include "problem.hpp"
#include "zyfa.h"

namespace zyfa {

// `backend` is the context's backend (never AUTO): FP32 inputs, pointer alignment and whether
// cu_seqlens can be read on the host depend on it.
AttnProblem validate_attn(const zyfa_attn_params* p, const zyfa_tensor* q, const zyfa_tensor* k,
                          const zyfa_tensor* v, const zyfa_tensor* o, zyfa_backend backend);

// zyfa_attn_fwd_workspace_size: the checks of validate_attn that need no tensor view, and the
// shape fields of the problem (the views, descales and the workspace left empty; softmax as the
// caller passed it, possibly AUTO).
AttnProblem validate_attn_shape(const zyfa_attn_params* p, zyfa_backend backend);

// Which entry point: zyfa_quantize_fp8 (FP8 out, one scale per (batch, head)) or zyfa_quantize_int8
// (INT8 out, one scale per params.scale_rows rows).
enum class QuantEntry { Fp8, Int8 };

QuantProblem validate_quant(const zyfa_quant_params* p, const zyfa_tensor* in, const zyfa_tensor* out,
                            float* descale, zyfa_backend backend, QuantEntry entry = QuantEntry::Fp8);

// part_o and part_lse hold p->num_parts entries (host arrays).
MergeProblem validate_merge(const zyfa_merge_params* p, const zyfa_tensor* part_o, const float* const* part_lse,
                            const zyfa_tensor* o, zyfa_backend backend);

namespace validation {

// Helpers shared by validate_attn.cpp and validate_quant.cpp (validate_layout.cpp).

bool is_fp8(zyfa_dtype dtype);
bool is_known_dtype(zyfa_dtype dtype);
int64_t element_size(zyfa_dtype dtype);  // bytes; the dtype must be known
const char* dtype_name(zyfa_dtype dtype);  // "BF16", ..., "unknown"

// The logical shape of one [batch, seq, head, dim] tensor. When varlen the batch axis is folded
// into the packed seq axis: rows is the packed total (or an upper bound of it on GPU backends).
struct TensorShape {
    int64_t batch = 0;
    int64_t rows = 0;  // seqlen per batch, or the packed total when varlen
    int64_t heads = 0;
    int64_t head_dim = 0;
    bool varlen = false;
    bool rows_known = true;  // false when rows is only a bound (packed rows on a GPU backend)
    bool pages = false;      // a paged K/V pool: the batch axis holds pages (messages say so)
};

// Checks reserved, strides (non-negative, non-overlapping), int64 overflow of element and byte
// offsets, data != NULL unless the problem is empty or the view has no element, data aligned to
// the element size (2 bytes for BF16/FP16, 4 for FP32) on every backend, and on GPU backends the
// 16-byte alignment of FP8 tensors. The dtype must already be known. Returns the normalised view.
TensorView check_tensor_layout(const zyfa_tensor& t, const char* name, const TensorShape& shape,
                               bool empty_problem, zyfa_backend backend);

// Checks that the packed lengths of `batch` sequences fit and returns the packed total. On the CPU
// backend the host array cu[batch + 1] is read and checked (starts at 0, never decreases, each
// length <= max_len); on GPU backends it is device memory, so the bound batch * max_len (at most
// INT32_MAX) is returned instead.
int64_t checked_packed_rows(const int32_t* cu, const char* name, int64_t batch, int64_t max_len,
                            const char* max_len_name, zyfa_backend backend);

// --- Paged K/V (validate_paged.cpp) ---------------------------------------------------------------

constexpr int64_t kMaxPageSize = 256;

struct PagedKvShape {
    int64_t pages_needed = 0;   // ceil(seqlen_k / page_size): entries per row of the table in use
    int64_t table_entries = 0;  // int32 entries of block_table the request may read
};

// The paged fields of p (already read within struct_size): all unset when block_table is NULL, else
// page_size in [1, 256], cu_seqlens_k NULL, num_pages and block_table_stride large enough, tables
// aligned; on the CPU backend every seqused_k entry in [0, seqlen_k] and every page index a
// sequence reads in [0, num_pages). INVALID_ARGUMENT naming the field otherwise.
PagedKvShape check_paged_kv(const zyfa_attn_params& p, zyfa_backend backend);

// --- Buffers (validate_buffers.cpp): alignment and the no-overlap rule ---------------------------

// The bytes a buffer reaches, for the no-overlap rule; empty (begin == end) when it has none.
struct ByteRange {
    const char* name = "";  // "o.data", "params.lse"
    uintptr_t begin = 0;
    uintptr_t end = 0;
    bool empty() const { return begin == end; }
};

// Elements from a view's first to one past its last (0 without elements); layout already checked.
int64_t tensor_span_elements(const TensorView& t, const TensorShape& shape);
ByteRange tensor_range(const char* name, const TensorView& t, const TensorShape& shape);
ByteRange array_range(const char* name, const void* data, int64_t count, int64_t element_bytes);

// INVALID_ARGUMENT "<field_name> = 0x.. is not N-byte aligned, which <what> needs".
void require_aligned(const char* field_name, const void* data, int64_t alignment, const char* what);

// INVALID_ARGUMENT naming both buffers when an output overlaps another output or any input.
void require_disjoint(const ByteRange* outputs, size_t output_count, const ByteRange* inputs, size_t input_count);

// a * b, throwing INVALID_ARGUMENT naming `what` when it overflows int64.
int64_t checked_mul(int64_t a, int64_t b, const char* what);

}  // namespace validation
}  // namespace zyfa
