// validate_attn: zyfa_attn_params + four tensor views -> AttnProblem, or zyfa::Error.
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <string>

#include "common/int8_qk.h"
#include "common/v_transposed.h"
#include "errors.hpp"
#include "validate.hpp"
#include "versioned_struct.hpp"

namespace zyfa {
namespace {

using namespace validation;

constexpr int64_t kMaxHeadDim = 512;

// The caller's params with every field it did not pass (an older, smaller struct) at its default.
zyfa_attn_params read_params(const zyfa_attn_params* user) {
    const size_t min_size = offsetof(zyfa_attn_params, head_dim_v) + sizeof(user->head_dim_v);
    const size_t readable = checked_struct_size(user, sizeof(zyfa_attn_params), min_size, "params", "head_dim_v");

    zyfa_attn_params defaults;
    zyfa_attn_params_init(&defaults, sizeof(defaults));
    zyfa_attn_params params = defaults;
    std::memcpy(&params, user, readable);
    params.struct_size = sizeof(params);
    // A field cut in two by struct_size is not the caller's: restore its default.
#define ZYFA_DEFAULT_BEYOND(member)                                                                     \
    if (!field_within(readable, offsetof(zyfa_attn_params, member), sizeof(params.member))) {          \
        params.member = defaults.member;                                                                \
    }
    ZYFA_DEFAULT_BEYOND(softmax_scale)
    ZYFA_DEFAULT_BEYOND(softmax)
    ZYFA_DEFAULT_BEYOND(window_left)
    ZYFA_DEFAULT_BEYOND(window_right)
    ZYFA_DEFAULT_BEYOND(cu_seqlens_q)
    ZYFA_DEFAULT_BEYOND(cu_seqlens_k)
    ZYFA_DEFAULT_BEYOND(q_descale)
    ZYFA_DEFAULT_BEYOND(k_descale)
    ZYFA_DEFAULT_BEYOND(v_descale)
    ZYFA_DEFAULT_BEYOND(lse)
    ZYFA_DEFAULT_BEYOND(flags)
    ZYFA_DEFAULT_BEYOND(key_block)
    ZYFA_DEFAULT_BEYOND(reserved)
    ZYFA_DEFAULT_BEYOND(sinks)
    ZYFA_DEFAULT_BEYOND(block_table)
    ZYFA_DEFAULT_BEYOND(seqused_k)
    ZYFA_DEFAULT_BEYOND(block_table_stride)
    ZYFA_DEFAULT_BEYOND(num_pages)
    ZYFA_DEFAULT_BEYOND(page_size)
    ZYFA_DEFAULT_BEYOND(reserved2)
    ZYFA_DEFAULT_BEYOND(q_descale_per_token)
    ZYFA_DEFAULT_BEYOND(k_descale_per_block)
    ZYFA_DEFAULT_BEYOND(workspace)
    ZYFA_DEFAULT_BEYOND(workspace_bytes)
    ZYFA_DEFAULT_BEYOND(num_splits)
    ZYFA_DEFAULT_BEYOND(reserved3)
    ZYFA_DEFAULT_BEYOND(key_bias)
#undef ZYFA_DEFAULT_BEYOND
    return params;
}

void require_non_negative(int64_t value, const char* name) {
    if (value < 0) throw_invalid(std::string("params.") + name + " = " + std::to_string(value) + " is negative");
}

void require_head_count(int64_t value, const char* name) {
    if (value <= 0) throw_invalid(std::string("params.") + name + " = " + std::to_string(value) + ", must be > 0");
}

// A bound of the contract (include/zyfa.h), not of a kernel: above it a request is malformed.
void require_head_dim(int64_t value, const char* name) {
    if (value <= 0 || value > kMaxHeadDim) {
        throw_invalid(std::string("params.") + name + " = " + std::to_string(value) + " is outside [1, " +
                      std::to_string(kMaxHeadDim) + "]");
    }
}

void require_window(int32_t value, const char* name) {
    if (value < -1) {
        throw_invalid(std::string("params.") + name + " = " + std::to_string(value) + ", must be >= -1 (-1 = unbounded)");
    }
}

void check_input_dtype(const zyfa_tensor& t, const char* name, zyfa_dtype q_dtype) {
    if (!is_known_dtype(t.dtype)) {
        throw_invalid(std::string(name) + ".dtype = " + std::to_string(t.dtype) + " is not a zyfa_dtype");
    }
    if (t.dtype != q_dtype) {
        throw_invalid(std::string(name) + ".dtype = " + dtype_name(t.dtype) + " differs from q.dtype = " +
                      dtype_name(q_dtype) + " (q, k and v share one dtype)");
    }
}

// The INT8 Q/K mode: k INT8 as q, v FP8 (its format is P's).
void check_int8_mode_dtypes(const zyfa_tensor& k, const zyfa_tensor& v) {
    if (k.dtype != ZYFA_DTYPE_INT8) {
        throw_invalid(std::string("k.dtype = ") + (is_known_dtype(k.dtype) ? dtype_name(k.dtype) : std::to_string(k.dtype)) +
                      " differs from q.dtype = INT8 (the INT8 Q/K mode takes q and k INT8, v FP8)");
    }
    if (!is_fp8(v.dtype)) {
        throw_invalid(std::string("v.dtype = ") + (is_known_dtype(v.dtype) ? dtype_name(v.dtype) : std::to_string(v.dtype)) +
                      " is not FP8 (the INT8 Q/K mode takes q and k INT8, v FP8_E4M3FN or FP8_E4M3FNUZ)");
    }
}

void check_descale_absent(const float* descale, const char* name, zyfa_dtype dtype) {
    if (descale != nullptr) {
        throw_invalid(std::string("params.") + name + " is set but q.dtype = " + dtype_name(dtype) +
                      " is not FP8 (descales are for FP8 inputs only)");
    }
}

}  // namespace

// The checks of zyfa_attn_params that need no tensor (zyfa_attn_fwd_workspace_size runs them alone).
zyfa_attn_params validate_attn_params_only(const zyfa_attn_params* user_params) {
    if (user_params == nullptr) throw_invalid("params is NULL");
    const zyfa_attn_params p = read_params(user_params);

    if ((p.flags & ~static_cast<uint64_t>(ZYFA_ATTN_V_TRANSPOSED)) != 0) {
        throw_invalid("params.flags = " + std::to_string(p.flags) + " has bits other than ZYFA_ATTN_V_TRANSPOSED");
    }
    // The tail padding is where a later field would go: set, it asks for something this library
    // does not know, as a nonzero byte beyond sizeof does.
    if (p.reserved != 0) {
        throw_not_supported("params.reserved = " + std::to_string(p.reserved) +
                            " is not 0 (a field of a newer zyfa is set there)");
    }
    if (p.reserved2 != 0) {
        throw_not_supported("params.reserved2 = " + std::to_string(p.reserved2) +
                            " is not 0 (a field of a newer zyfa is set there)");
    }
    if (p.key_block != 0 && p.key_block != 64 && p.key_block != 128) {
        throw_invalid("params.key_block = " + std::to_string(p.key_block) +
                      " is not 0 (the backend's own), 64 or 128");
    }
    require_non_negative(p.batch, "batch");
    require_non_negative(p.seqlen_q, "seqlen_q");
    require_non_negative(p.seqlen_k, "seqlen_k");
    require_head_count(p.heads_q, "heads_q");
    require_head_count(p.heads_kv, "heads_kv");
    require_head_dim(p.head_dim_qk, "head_dim_qk");
    require_head_dim(p.head_dim_v, "head_dim_v");
    if (p.heads_q % p.heads_kv != 0) {
        throw_invalid("params.heads_kv = " + std::to_string(p.heads_kv) + " does not divide params.heads_q = " +
                      std::to_string(p.heads_q));
    }
    if (p.mask != ZYFA_MASK_NONE && p.mask != ZYFA_MASK_CAUSAL && p.mask != ZYFA_MASK_CAUSAL_BOTTOM_RIGHT) {
        throw_invalid("params.mask = " + std::to_string(p.mask) + " is not a zyfa_mask");
    }
    if (p.softmax != ZYFA_SOFTMAX_AUTO && p.softmax != ZYFA_SOFTMAX_EXACT && p.softmax != ZYFA_SOFTMAX_LEAN) {
        throw_invalid("params.softmax = " + std::to_string(p.softmax) + " is not a zyfa_softmax");
    }
    require_window(p.window_left, "window_left");
    require_window(p.window_right, "window_right");
    if (!std::isfinite(p.softmax_scale)) {
        throw_invalid("params.softmax_scale = " + std::to_string(p.softmax_scale) + " is not finite");
    }
    // Split-KV (0.1.5): the workspace is scratch the library may write, so it is checked as an
    // output below (no overlap with any input or output).
    if (p.num_splits < 0) {
        throw_invalid("params.num_splits = " + std::to_string(p.num_splits) +
                      " is negative (0 = the library's choice, 1 = never split, n > 1 = at most n)");
    }
    if (p.reserved3 != 0) {  // tail padding, as reserved and reserved2
        throw_not_supported("params.reserved3 = " + std::to_string(p.reserved3) +
                            " is not 0 (a field of a newer zyfa is set there)");
    }
    if (p.workspace == nullptr && p.workspace_bytes != 0) {
        throw_invalid("params.workspace_bytes = " + std::to_string(p.workspace_bytes) +
                      " but params.workspace is NULL");
    }
    if (p.workspace_bytes > static_cast<uint64_t>(INT64_MAX)) {
        throw_invalid("params.workspace_bytes = " + std::to_string(p.workspace_bytes) + " exceeds int64");
    }
    if (p.workspace != nullptr) require_aligned("params.workspace", p.workspace, 16, "the split-KV workspace");
    return p;
}

AttnProblem validate_attn(const zyfa_attn_params* user_params, const zyfa_tensor* q, const zyfa_tensor* k,
                          const zyfa_tensor* v, const zyfa_tensor* o, zyfa_backend backend) {
    const zyfa_attn_params p = validate_attn_params_only(user_params);
    if (q == nullptr) throw_invalid("q is NULL");
    if (k == nullptr) throw_invalid("k is NULL");
    if (v == nullptr) throw_invalid("v is NULL");
    if (o == nullptr) throw_invalid("o is NULL");

    // dtypes: q, k, v share one; o is a 16- or 32-bit float.
    for (const zyfa_tensor* t : {q, k, v, o}) {
        const char* name = t == q ? "q" : t == k ? "k" : t == v ? "v" : "o";
        if (t->reserved != 0) {
            throw_invalid(std::string(name) + ".reserved = " + std::to_string(t->reserved) + ", must be 0");
        }
    }
    if (!is_known_dtype(q->dtype)) {
        throw_invalid("q.dtype = " + std::to_string(q->dtype) + " is not a zyfa_dtype");
    }
    const bool int8 = q->dtype == ZYFA_DTYPE_INT8;
    if (int8) {
        check_int8_mode_dtypes(*k, *v);
    } else {
        check_input_dtype(*k, "k", q->dtype);
        check_input_dtype(*v, "v", q->dtype);
    }
    if (o->dtype != ZYFA_DTYPE_BF16 && o->dtype != ZYFA_DTYPE_FP16 && o->dtype != ZYFA_DTYPE_FP32) {
        throw_invalid("o.dtype = " + std::to_string(o->dtype) + " (" + dtype_name(o->dtype) +
                      ") is not an output dtype (BF16, FP16 or FP32)");
    }
    const bool fp8 = is_fp8(q->dtype);
    if (int8) {
        // The per-head descales of FP8 q and k have other shapes: a caller mixing them up would
        // otherwise be read out of bounds or silently ignored.
        if (p.q_descale != nullptr) {
            throw_invalid("params.q_descale is set but q.dtype = INT8: INT8 q takes params.q_descale_per_token "
                          "[batch, heads_q, seqlen_q]");
        }
        if (p.k_descale != nullptr) {
            throw_invalid("params.k_descale is set but k.dtype = INT8: INT8 k takes params.k_descale_per_block "
                          "[batch, heads_kv, ceil(seqlen_k / 64)]");
        }
    } else {
        if (p.q_descale_per_token != nullptr) {
            throw_invalid(std::string("params.q_descale_per_token is set but q.dtype = ") + dtype_name(q->dtype) +
                          " is not INT8 (it is the INT8 Q/K mode's descale)");
        }
        if (p.k_descale_per_block != nullptr) {
            throw_invalid(std::string("params.k_descale_per_block is set but q.dtype = ") + dtype_name(q->dtype) +
                          " is not INT8 (it is the INT8 Q/K mode's descale)");
        }
    }
    if (!fp8 && !int8) {
        check_descale_absent(p.q_descale, "q_descale", q->dtype);
        check_descale_absent(p.k_descale, "k_descale", q->dtype);
        check_descale_absent(p.v_descale, "v_descale", q->dtype);
    }

    // Paged K/V: the pools replace k and v's [batch, seqlen_k] layout, keys are never packed.
    const PagedKvShape paged = check_paged_kv(p, backend);
    const bool is_paged = p.block_table != nullptr;
    // V in the transposed layout: FP8 and contiguous keys (its groups are counted from key 0 of a
    // fixed-length sequence).
    const bool v_transposed = (p.flags & ZYFA_ATTN_V_TRANSPOSED) != 0;
    if (v_transposed) {
        if (!is_fp8(v->dtype)) {
            throw_invalid(std::string("params.flags has ZYFA_ATTN_V_TRANSPOSED but v.dtype = ") +
                          (is_known_dtype(v->dtype) ? dtype_name(v->dtype) : std::to_string(v->dtype)) +
                          " (the transposed layout is for FP8 V)");
        }
        if (is_paged) throw_invalid("params.flags has ZYFA_ATTN_V_TRANSPOSED and params.block_table is set (contiguous V only)");
        if (p.cu_seqlens_k != nullptr) {
            throw_invalid("params.flags has ZYFA_ATTN_V_TRANSPOSED and params.cu_seqlens_k is set (fixed-length V only)");
        }
        if (p.seqlen_k > INT32_MAX) {  // its padding to 128 keys stays far from overflow
            throw_invalid("params.seqlen_k = " + std::to_string(p.seqlen_k) +
                          " exceeds 2^31-1 with ZYFA_ATTN_V_TRANSPOSED");
        }
    }

    // Packed sequences: both cu_seqlens or neither (paged: cu_seqlens_q alone, checked above).
    if (!is_paged && (p.cu_seqlens_q == nullptr) != (p.cu_seqlens_k == nullptr)) {
        throw_invalid(p.cu_seqlens_q != nullptr ? "params.cu_seqlens_q is set but params.cu_seqlens_k is NULL (both or neither)"
                                                : "params.cu_seqlens_k is set but params.cu_seqlens_q is NULL (both or neither)");
    }
    const bool varlen = p.cu_seqlens_q != nullptr;
    int64_t rows_q = p.seqlen_q;
    int64_t rows_k = p.seqlen_k;
    if (varlen) {
        // Before the CPU backend reads them.
        require_aligned("params.cu_seqlens_q", p.cu_seqlens_q, 4, "int32 cu_seqlens");
        require_aligned("params.cu_seqlens_k", p.cu_seqlens_k, 4, "int32 cu_seqlens");
        rows_q = checked_packed_rows(p.cu_seqlens_q, "params.cu_seqlens_q", p.batch, p.seqlen_q, "params.seqlen_q", backend);
        if (!is_paged) {
            rows_k = checked_packed_rows(p.cu_seqlens_k, "params.cu_seqlens_k", p.batch, p.seqlen_k, "params.seqlen_k",
                                         backend);
        }
    }

    AttnProblem problem;
    problem.mask = p.mask;
    problem.batch = p.batch;
    problem.seqlen_q = p.seqlen_q;
    problem.seqlen_k = p.seqlen_k;
    problem.heads_q = p.heads_q;
    problem.heads_kv = p.heads_kv;
    problem.head_dim_qk = p.head_dim_qk;
    problem.head_dim_v = p.head_dim_v;
    problem.softmax_scale = p.softmax_scale != 0.0f
                                ? p.softmax_scale
                                : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim_qk)));
    problem.softmax = p.softmax != ZYFA_SOFTMAX_AUTO ? p.softmax : (fp8 || int8) ? ZYFA_SOFTMAX_LEAN : ZYFA_SOFTMAX_EXACT;
    problem.window_left = p.window_left;
    problem.window_right = p.window_right;
    problem.cu_seqlens_q = p.cu_seqlens_q;
    problem.cu_seqlens_k = p.cu_seqlens_k;
    problem.q_descale = p.q_descale;
    problem.k_descale = p.k_descale;
    problem.v_descale = p.v_descale;
    problem.lse = p.lse;
    problem.key_block = p.key_block;
    problem.sinks = p.sinks;
    problem.block_table = p.block_table;
    problem.seqused_k = is_paged ? p.seqused_k : nullptr;
    problem.block_table_stride = is_paged ? p.block_table_stride : 0;
    problem.num_pages = is_paged ? p.num_pages : 0;
    problem.page_size = is_paged ? p.page_size : 0;
    problem.q_descale_per_token = p.q_descale_per_token;
    problem.k_descale_per_block = p.k_descale_per_block;
    problem.workspace = p.workspace;
    problem.workspace_bytes = p.workspace != nullptr ? static_cast<int64_t>(p.workspace_bytes) : 0;
    problem.num_splits = p.num_splits;
    problem.v_transposed = v_transposed;
    problem.key_bias = p.key_bias;

    const bool empty = problem.empty();
    // Packed totals are exact only where cu_seqlens is host memory (the CPU backend).
    const bool rows_known = !varlen || backend == ZYFA_BACKEND_CPU;
    const TensorShape shape_q{p.batch, rows_q, p.heads_q, p.head_dim_qk, varlen, rows_known};
    // Paged: pools of num_pages pages of page_size rows, the batch axis being the page axis.
    const TensorShape shape_k = is_paged ? TensorShape{p.num_pages, p.page_size, p.heads_kv, p.head_dim_qk, false, true, true}
                                         : TensorShape{p.batch, rows_k, p.heads_kv, p.head_dim_qk, varlen, rows_known};
    // Transposed V: rows are its 16-key groups (seqlen_k padded to 128 keys), each 16 * head_dim_v bytes.
    const TensorShape shape_v =
        is_paged       ? TensorShape{p.num_pages, p.page_size, p.heads_kv, p.head_dim_v, false, true, true}
        : v_transposed ? TensorShape{p.batch, numerics::vt_groups(p.seqlen_k), p.heads_kv,
                                     numerics::kVtGroupKeys * p.head_dim_v, false, true}
                       : TensorShape{p.batch, rows_k, p.heads_kv, p.head_dim_v, varlen, rows_known};
    const TensorShape shape_o{p.batch, rows_q, p.heads_q, p.head_dim_v, varlen, rows_known};
    problem.q = check_tensor_layout(*q, "q", shape_q, empty, backend);
    problem.k = check_tensor_layout(*k, "k", shape_k, empty, backend);
    problem.v = check_tensor_layout(*v, "v", shape_v, empty, backend);
    problem.o = check_tensor_layout(*o, "o", shape_o, empty, backend);

    // lse: [batch, heads_q, seqlen_q] or [heads_q, total_q] fp32; descales: [batch, heads_kv] fp32.
    int64_t lse_count = 0;
    if (p.lse != nullptr) {
        const int64_t lse_rows = varlen ? rows_q : checked_mul(p.batch, p.seqlen_q, "params.lse size batch * seqlen_q");
        lse_count = checked_mul(lse_rows, p.heads_q, "params.lse size");
        checked_mul(lse_count, 4, "params.lse bytes");
        if (!rows_known && lse_count > 0) lse_count = 1;  // [heads_q, total_q]: only entry 0 is certain
    }
    int64_t descale_count = 0;
    if (p.q_descale != nullptr || p.k_descale != nullptr || p.v_descale != nullptr) {
        descale_count = checked_mul(p.batch, p.heads_kv, "params descale size batch * heads_kv");
        checked_mul(descale_count, 4, "params descale bytes");
    }
    // INT8 descales: [batch, heads_q, seqlen_q] and [batch, heads_kv, ceil(seqlen_k / 64)], padded
    // to the longest sequence when varlen, so their sizes never depend on cu_seqlens.
    int64_t token_descale_count = 0, block_descale_count = 0;
    if (p.q_descale_per_token != nullptr) {
        token_descale_count = checked_mul(checked_mul(p.batch, p.heads_q, "params.q_descale_per_token size"), p.seqlen_q,
                                          "params.q_descale_per_token size");
        checked_mul(token_descale_count, 4, "params.q_descale_per_token bytes");
    }
    if (p.k_descale_per_block != nullptr) {
        const int64_t blocks = p.seqlen_k / ZYFA_INT8_KEY_BLOCK + (p.seqlen_k % ZYFA_INT8_KEY_BLOCK != 0 ? 1 : 0);
        block_descale_count = checked_mul(checked_mul(p.batch, p.heads_kv, "params.k_descale_per_block size"), blocks,
                                          "params.k_descale_per_block size");
        checked_mul(block_descale_count, 4, "params.k_descale_per_block bytes");
    }
    if (token_descale_count > 0) require_aligned("params.q_descale_per_token", p.q_descale_per_token, 4, "an fp32 descale");
    if (block_descale_count > 0) require_aligned("params.k_descale_per_block", p.k_descale_per_block, 4, "an fp32 descale");
    if (lse_count > 0) require_aligned("params.lse", p.lse, 4, "the fp32 lse");
    // key_bias: fp32 [batch, heads_q, seqlen_k], or [heads_q, total_k] with packed keys (only its
    // first entry certain where the total is not known on the host).
    int64_t key_bias_count = 0;
    if (p.key_bias != nullptr) {
        const bool packed_keys = varlen && !is_paged;
        const int64_t key_rows = packed_keys ? rows_k : checked_mul(p.batch, p.seqlen_k, "params.key_bias size batch * seqlen_k");
        key_bias_count = checked_mul(key_rows, p.heads_q, "params.key_bias size");
        checked_mul(key_bias_count, 4, "params.key_bias bytes");
        if (packed_keys && !rows_known && key_bias_count > 0) key_bias_count = 1;
        if (empty) key_bias_count = 0;  // no row reads it
    }
    if (key_bias_count > 0) require_aligned("params.key_bias", p.key_bias, 4, "the fp32 key_bias");
    // sinks: fp32 [heads_q], one logit per query head, read by every row of that head.
    const int64_t sink_count = p.sinks != nullptr ? p.heads_q : 0;
    if (sink_count > 0) require_aligned("params.sinks", p.sinks, 4, "fp32 sinks");
    if (descale_count > 0) {
        require_aligned("params.q_descale", p.q_descale, 4, "an fp32 descale");
        require_aligned("params.k_descale", p.k_descale, 4, "an fp32 descale");
        require_aligned("params.v_descale", p.v_descale, 4, "an fp32 descale");
    }

    // Outputs never share memory with inputs or with each other.
    const ByteRange outputs[] = {
        tensor_range("o.data", problem.o, shape_o),
        array_range("params.lse", p.lse, lse_count, 4),
        array_range("params.workspace", p.workspace, problem.workspace_bytes, 1),
    };
    const int64_t cu_count = varlen && !empty ? p.batch + 1 : 0;
    const int64_t seqused_count = is_paged && p.seqused_k != nullptr && !empty ? p.batch : 0;
    const ByteRange inputs[] = {
        tensor_range("q.data", problem.q, shape_q),
        tensor_range("k.data", problem.k, shape_k),
        tensor_range("v.data", problem.v, shape_v),
        array_range("params.cu_seqlens_q", p.cu_seqlens_q, cu_count, 4),
        array_range("params.cu_seqlens_k", p.cu_seqlens_k, cu_count, 4),
        array_range("params.q_descale", p.q_descale, descale_count, 4),
        array_range("params.k_descale", p.k_descale, descale_count, 4),
        array_range("params.v_descale", p.v_descale, descale_count, 4),
        array_range("params.sinks", p.sinks, sink_count, 4),
        array_range("params.block_table", p.block_table, empty ? 0 : paged.table_entries, 4),
        array_range("params.seqused_k", p.seqused_k, seqused_count, 4),
        array_range("params.q_descale_per_token", p.q_descale_per_token, token_descale_count, 4),
        array_range("params.k_descale_per_block", p.k_descale_per_block, block_descale_count, 4),
        array_range("params.key_bias", p.key_bias, key_bias_count, 4),
    };
    require_disjoint(outputs, 3, inputs, sizeof(inputs) / sizeof(inputs[0]));

    // A well-formed request that this kind of backend has no kernel for. Checked last, so that a
    // malformed request is reported as INVALID_ARGUMENT rather than sending the caller to a fallback.
    if (int8 && p.head_dim_qk > numerics::kInt8MaxHeadDim) {
        throw_not_supported("params.head_dim_qk = " + std::to_string(p.head_dim_qk) +
                            " with INT8 q/k: the INT8 Q/K mode takes head dims up to " +
                            std::to_string(numerics::kInt8MaxHeadDim) +
                            " (its int32 scores become fp32 exactly only up to 2^22)");
    }
    if (!fp8 && !int8 && p.softmax == ZYFA_SOFTMAX_LEAN) {
        throw_not_supported(std::string("params.softmax = LEAN needs FP8 inputs, q.dtype = ") + dtype_name(q->dtype));
    }
    if (q->dtype == ZYFA_DTYPE_FP32 && backend != ZYFA_BACKEND_CPU) {
        throw_not_supported("q.dtype = FP32 is accepted by the CPU backend only");
    }
    if (p.key_bias != nullptr && int8) {
        throw_not_supported("params.key_bias with INT8 q/k: the INT8 Q/K mode takes no per-key bias");
    }
    return problem;
}

AttnProblem validate_attn_shape(const zyfa_attn_params* user_params, zyfa_backend backend) {
    const zyfa_attn_params p = validate_attn_params_only(user_params);
    check_paged_kv(p, backend);
    const bool is_paged = p.block_table != nullptr;
    if (!is_paged && (p.cu_seqlens_q == nullptr) != (p.cu_seqlens_k == nullptr)) {
        throw_invalid(p.cu_seqlens_q != nullptr ? "params.cu_seqlens_q is set but params.cu_seqlens_k is NULL (both or neither)"
                                                : "params.cu_seqlens_k is set but params.cu_seqlens_q is NULL (both or neither)");
    }
    if (p.cu_seqlens_q != nullptr) {
        require_aligned("params.cu_seqlens_q", p.cu_seqlens_q, 4, "int32 cu_seqlens");
        require_aligned("params.cu_seqlens_k", p.cu_seqlens_k, 4, "int32 cu_seqlens");
        checked_packed_rows(p.cu_seqlens_q, "params.cu_seqlens_q", p.batch, p.seqlen_q, "params.seqlen_q", backend);
        if (!is_paged) {
            checked_packed_rows(p.cu_seqlens_k, "params.cu_seqlens_k", p.batch, p.seqlen_k, "params.seqlen_k", backend);
        }
    }
    AttnProblem problem;
    problem.mask = p.mask;
    problem.batch = p.batch;
    problem.seqlen_q = p.seqlen_q;
    problem.seqlen_k = p.seqlen_k;
    problem.heads_q = p.heads_q;
    problem.heads_kv = p.heads_kv;
    problem.head_dim_qk = p.head_dim_qk;
    problem.head_dim_v = p.head_dim_v;
    problem.softmax = p.softmax;  // may be AUTO: no dtype here
    problem.window_left = p.window_left;
    problem.window_right = p.window_right;
    problem.cu_seqlens_q = p.cu_seqlens_q;
    problem.cu_seqlens_k = p.cu_seqlens_k;
    problem.sinks = p.sinks;
    problem.block_table = p.block_table;
    problem.num_splits = p.num_splits;
    problem.key_block = p.key_block;
    problem.v_transposed = (p.flags & ZYFA_ATTN_V_TRANSPOSED) != 0;
    return problem;
}

}  // namespace zyfa
