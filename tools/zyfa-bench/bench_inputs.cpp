#include "bench_inputs.hpp"

#include <algorithm>
#include <cstring>
#include <random>

#include "common/half_types.h"
#include "cpu/tensor_access.hpp"

namespace zyfa_bench {
namespace {

// A dense [batch, seq, heads, dim] view, or packed [rows, heads, dim] when varlen.
zyfa_tensor dense_view(void* data, zyfa_dtype dtype, int64_t seqlen, int64_t heads, int64_t head_dim, bool varlen) {
    zyfa_tensor t;
    std::memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_head = head_dim;
    t.stride_seq = heads * head_dim;
    t.stride_batch = varlen ? 0 : seqlen * heads * head_dim;
    return t;
}

std::vector<int64_t> sequence_lengths(int64_t batch, int64_t longest, bool varlen, std::mt19937_64& rng) {
    std::vector<int64_t> lengths(static_cast<size_t>(batch), longest);
    if (!varlen || longest == 0) return lengths;
    std::uniform_int_distribution<int64_t> length(1, longest);
    for (size_t b = 1; b < lengths.size(); ++b) lengths[b] = length(rng);  // b = 0 keeps the longest
    return lengths;
}

std::vector<int32_t> prefix_sums(const std::vector<int64_t>& lengths) {
    std::vector<int32_t> cu(1, 0);
    for (int64_t len : lengths) cu.push_back(cu.back() + static_cast<int32_t>(len));
    return cu;
}

std::vector<float> normal_values(size_t count, std::mt19937_64& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(count);
    for (float& x : values) x = normal(rng);
    return values;
}

// The activations in a 16-bit or 32-bit dtype (round to nearest even).
void convert(const std::vector<float>& values, zyfa_dtype dtype, HostTensor& tensor) {
    tensor.bytes.resize(values.size() * zyfa::cpu::dtype_size(dtype));
    if (dtype == ZYFA_DTYPE_FP32) {
        std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
        return;
    }
    auto* out = reinterpret_cast<uint16_t*>(tensor.bytes.data());
    for (size_t i = 0; i < values.size(); ++i) {
        out[i] = dtype == ZYFA_DTYPE_BF16 ? zyfa::numerics::float_to_bf16(values[i])
                                          : zyfa::numerics::float_to_fp16(values[i]);
    }
}

// FP8 codes with one descale per (batch, kv head) from zyfa_quantize_fp8. A q tensor under GQA is
// quantised as heads_kv "heads" of group * head_dim values each (the query heads that share a kv
// head are adjacent along the head axis), because q_descale is [batch, heads_kv] in the ABI.
void quantise(zyfa_context* ctx, const std::vector<float>& values, zyfa_dtype dtype, const BenchOptions& options,
              const Activations& activations, int64_t seqlen, int64_t heads, int64_t head_dim, bool is_q,
              HostTensor& tensor, std::vector<float>& descale) {
    tensor.bytes.assign(values.size(), 0);
    const int64_t group = is_q ? options.heads_q / options.heads_kv : 1;
    const int64_t quant_heads = heads / group;
    const int64_t quant_dim = head_dim * group;
    // At least one element: the descale pointer must not be NULL even for an empty problem.
    descale.assign(static_cast<size_t>(std::max<int64_t>(1, options.batch * quant_heads)), 1.0f);

    zyfa_quant_params qp;
    zyfa_quant_params_init(&qp, sizeof qp);
    qp.batch = options.batch;
    qp.seqlen = seqlen;
    qp.heads = quant_heads;
    qp.head_dim = quant_dim;
    const std::vector<int32_t>& cu = is_q ? activations.cu_seqlens_q : activations.cu_seqlens_k;
    qp.cu_seqlens = options.varlen ? cu.data() : nullptr;
    // The library only reads `in`; the view's pointer is non-const in the C ABI.
    const zyfa_tensor in = dense_view(const_cast<float*>(values.data()), ZYFA_DTYPE_FP32, seqlen, quant_heads,
                                      quant_dim, options.varlen);
    const zyfa_tensor out = dense_view(tensor.bytes.data(), dtype, seqlen, quant_heads, quant_dim, options.varlen);
    check_status("zyfa_quantize_fp8", zyfa_quantize_fp8(ctx, &qp, &in, &out, descale.data(), nullptr));
}

// --v-transposed: FP8 V quantised again, into ZYFA_QUANT_V_TRANSPOSED's layout (the kernels' 16-key
// groups adjacent, the sequence padded to 128 keys), and the params told so; the codes and
// descales are the row-major call's.
void make_v_transposed(zyfa_context* ctx, const BenchOptions& options, const Activations& activations,
                       CaseBuffers& buffers) {
    const int64_t dim = options.head_dim_v, heads = options.heads_kv;
    const int64_t group_stride = zyfa::numerics::kVtGroupKeys * dim;
    const int64_t head_stride = zyfa::numerics::vt_groups(options.seqlen_k) * group_stride;
    HostTensor& v = buffers.v;
    v.bytes.assign(static_cast<size_t>(std::max<int64_t>(1, options.batch * heads * head_stride)), 0);
    zyfa_quant_params qp;
    zyfa_quant_params_init(&qp, sizeof qp);
    qp.flags = ZYFA_QUANT_V_TRANSPOSED;
    qp.batch = options.batch;
    qp.seqlen = options.seqlen_k;
    qp.heads = heads;
    qp.head_dim = dim;
    const zyfa_tensor in = dense_view(const_cast<float*>(activations.v.data()), ZYFA_DTYPE_FP32, options.seqlen_k,
                                      heads, dim, false);
    v.view.data = v.bytes.data();
    v.view.stride_seq = group_stride;
    v.view.stride_head = head_stride;
    v.view.stride_batch = heads * head_stride;
    check_status("zyfa_quantize_fp8 (ZYFA_QUANT_V_TRANSPOSED)",
                 zyfa_quantize_fp8(ctx, &qp, &in, &v.view, buffers.v_descale.data(), nullptr));
    buffers.params.flags |= ZYFA_ATTN_V_TRANSPOSED;
}

// --page-size: K and V moved into page pools [num_pages, page_size, heads_kv, dim] in a shuffled
// page order (a cache whose pages were handed out over time), the params made paged.
void make_paged(const BenchOptions& options, const Activations& activations, CaseBuffers& buffers) {
    const int64_t ps = options.page_size;
    const int64_t stride = (options.seqlen_k + ps - 1) / ps;
    int64_t num_pages = 0;
    for (int64_t len : activations.lengths_k) num_pages += (len + ps - 1) / ps;
    std::vector<int32_t> order(static_cast<size_t>(num_pages));
    for (int64_t i = 0; i < num_pages; ++i) order[i] = static_cast<int32_t>(i);
    std::mt19937_64 rng(options.seed + 1);
    std::shuffle(order.begin(), order.end(), rng);
    buffers.block_table.assign(static_cast<size_t>(std::max<int64_t>(1, options.batch * stride)), 0);
    buffers.seqused_k.assign(static_cast<size_t>(std::max<int64_t>(1, options.batch)), 0);
    auto repack = [&](HostTensor& t, int64_t dim) {
        const size_t elem = zyfa::cpu::dtype_size(t.view.dtype);  // INT8 k and FP8 v alike: 1
        const int64_t row = options.heads_kv * dim;
        std::vector<uint8_t> pool(static_cast<size_t>(std::max<int64_t>(1, num_pages * ps * row)) * elem, 0);
        int64_t next = 0, first = 0;
        for (int64_t b = 0; b < options.batch; ++b) {
            const int64_t len = activations.lengths_k[static_cast<size_t>(b)];
            const int64_t src_row0 = options.varlen ? first : b * options.seqlen_k;
            for (int64_t j = 0; j < len; ++j) {
                if (j % ps == 0) buffers.block_table[static_cast<size_t>(b * stride + j / ps)] = order[next++];
                const int64_t page = buffers.block_table[static_cast<size_t>(b * stride + j / ps)];
                std::memcpy(&pool[static_cast<size_t>((page * ps + j % ps) * row) * elem],
                            &t.bytes[static_cast<size_t>((src_row0 + j) * row) * elem], static_cast<size_t>(row) * elem);
            }
            buffers.seqused_k[static_cast<size_t>(b)] = static_cast<int32_t>(len);
            first += len;
        }
        t.bytes.swap(pool);
        t.view.data = t.bytes.data();
        t.view.stride_head = dim;
        t.view.stride_seq = row;
        t.view.stride_batch = ps * row;  // the page stride
    };
    repack(buffers.k, options.head_dim_qk);
    repack(buffers.v, options.head_dim_v);
    zyfa_attn_params& p = buffers.params;
    p.cu_seqlens_k = nullptr;
    p.block_table = buffers.block_table.data();
    p.seqused_k = buffers.seqused_k.data();
    p.block_table_stride = stride;
    p.num_pages = num_pages;
    p.page_size = options.page_size;
}

// The INT8 Q/K mode's q (scale_rows 1: per token and query head) or k (64: per 64 keys) from
// zyfa_quantize_int8, descales in zyfa_attn_params' padded layouts.
void quantise_int8(zyfa_context* ctx, const std::vector<float>& values, const BenchOptions& options,
                   const Activations& activations, int64_t seqlen, int64_t heads, int64_t head_dim, bool is_q,
                   HostTensor& tensor, std::vector<float>& descale) {
    tensor.bytes.assign(values.size(), 0);
    const int32_t scale_rows = is_q ? 1 : ZYFA_INT8_KEY_BLOCK;
    const int64_t groups = (seqlen + scale_rows - 1) / scale_rows;
    descale.assign(static_cast<size_t>(std::max<int64_t>(1, options.batch * heads * groups)), 1.0f);
    zyfa_quant_params qp;
    zyfa_quant_params_init(&qp, sizeof qp);
    qp.batch = options.batch;
    qp.seqlen = seqlen;
    qp.heads = heads;
    qp.head_dim = head_dim;
    qp.scale_rows = scale_rows;
    const std::vector<int32_t>& cu = is_q ? activations.cu_seqlens_q : activations.cu_seqlens_k;
    qp.cu_seqlens = options.varlen ? cu.data() : nullptr;
    const zyfa_tensor in =
        dense_view(const_cast<float*>(values.data()), ZYFA_DTYPE_FP32, seqlen, heads, head_dim, options.varlen);
    const zyfa_tensor out = dense_view(tensor.bytes.data(), ZYFA_DTYPE_INT8, seqlen, heads, head_dim, options.varlen);
    check_status("zyfa_quantize_int8", zyfa_quantize_int8(ctx, &qp, &in, &out, descale.data(), nullptr));
}

}  // namespace

LibraryError::LibraryError(const std::string& call, zyfa_status status)
    : std::runtime_error(call + " failed: " + zyfa_status_string(status) + ": " + zyfa_last_error_message()),
      status_(status) {}

void check_status(const char* call, zyfa_status status) {
    if (status != ZYFA_SUCCESS) throw LibraryError(call, status);
}

Activations make_activations(const BenchOptions& options) {
    std::mt19937_64 rng(options.seed);
    Activations a;
    a.lengths_q = sequence_lengths(options.batch, options.seqlen_q, options.varlen, rng);
    a.lengths_k = options.seqlen_q == options.seqlen_k ? a.lengths_q
                                                       : sequence_lengths(options.batch, options.seqlen_k, options.varlen, rng);
    if (options.varlen) {
        a.cu_seqlens_q = prefix_sums(a.lengths_q);
        a.cu_seqlens_k = prefix_sums(a.lengths_k);
        a.rows_q = a.cu_seqlens_q.back();
        a.rows_k = a.cu_seqlens_k.back();
    } else {
        a.rows_q = options.batch * options.seqlen_q;
        a.rows_k = options.batch * options.seqlen_k;
    }
    a.q = normal_values(static_cast<size_t>(a.rows_q * options.heads_q * options.head_dim_qk), rng);
    a.k = normal_values(static_cast<size_t>(a.rows_k * options.heads_kv * options.head_dim_qk), rng);
    a.v = normal_values(static_cast<size_t>(a.rows_k * options.heads_kv * options.head_dim_v), rng);
    return a;
}

void make_case_buffers(zyfa_context* ctx, const BenchOptions& options, const BenchCase& bench_case,
                       const Activations& activations, CaseBuffers& buffers) {
    const zyfa_dtype dtype = bench_case.dtype;
    const bool varlen = options.varlen;
    const bool int8 = dtype == ZYFA_DTYPE_INT8;
    const zyfa_dtype v_dtype = int8 ? ZYFA_DTYPE_FP8_E4M3FN : dtype;
    if (int8) {
        quantise_int8(ctx, activations.q, options, activations, options.seqlen_q, options.heads_q, options.head_dim_qk,
                      true, buffers.q, buffers.q_descale);
        quantise_int8(ctx, activations.k, options, activations, options.seqlen_k, options.heads_kv, options.head_dim_qk,
                      false, buffers.k, buffers.k_descale);
        quantise(ctx, activations.v, v_dtype, options, activations, options.seqlen_k, options.heads_kv,
                 options.head_dim_v, false, buffers.v, buffers.v_descale);
    } else if (zyfa::cpu::dtype_is_fp8(dtype)) {
        quantise(ctx, activations.q, dtype, options, activations, options.seqlen_q, options.heads_q,
                 options.head_dim_qk, true, buffers.q, buffers.q_descale);
        quantise(ctx, activations.k, dtype, options, activations, options.seqlen_k, options.heads_kv,
                 options.head_dim_qk, false, buffers.k, buffers.k_descale);
        quantise(ctx, activations.v, dtype, options, activations, options.seqlen_k, options.heads_kv,
                 options.head_dim_v, false, buffers.v, buffers.v_descale);
    } else {
        convert(activations.q, dtype, buffers.q);
        convert(activations.k, dtype, buffers.k);
        convert(activations.v, dtype, buffers.v);
    }
    buffers.q.view = dense_view(buffers.q.bytes.data(), dtype, options.seqlen_q, options.heads_q, options.head_dim_qk, varlen);
    buffers.k.view = dense_view(buffers.k.bytes.data(), dtype, options.seqlen_k, options.heads_kv, options.head_dim_qk, varlen);
    buffers.v.view = dense_view(buffers.v.bytes.data(), v_dtype, options.seqlen_k, options.heads_kv, options.head_dim_v, varlen);

    // O in BF16, what a serving stack keeps; FP32 inputs (a CPU-only accuracy mode) get FP32 O.
    const zyfa_dtype out_dtype = dtype == ZYFA_DTYPE_FP32 ? ZYFA_DTYPE_FP32 : ZYFA_DTYPE_BF16;
    buffers.o.bytes.assign(static_cast<size_t>(activations.rows_q * options.heads_q * options.head_dim_v) *
                               zyfa::cpu::dtype_size(out_dtype),
                           0);
    buffers.o.view = dense_view(buffers.o.bytes.data(), out_dtype, options.seqlen_q, options.heads_q, options.head_dim_v, varlen);

    zyfa_attn_params& p = buffers.params;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = options.mask;
    p.batch = options.batch;
    p.seqlen_q = options.seqlen_q;
    p.seqlen_k = options.seqlen_k;
    p.heads_q = options.heads_q;
    p.heads_kv = options.heads_kv;
    p.head_dim_qk = options.head_dim_qk;
    p.head_dim_v = options.head_dim_v;
    p.softmax = bench_case.softmax;
    p.window_left = options.window_left;
    p.window_right = options.window_right;
    if (varlen) {
        p.cu_seqlens_q = activations.cu_seqlens_q.data();
        p.cu_seqlens_k = activations.cu_seqlens_k.data();
    }
    if (options.sinks) {
        buffers.sinks.assign(static_cast<size_t>(options.heads_q), options.sink_value);
        p.sinks = buffers.sinks.data();
    }
    if (int8) {
        p.q_descale_per_token = buffers.q_descale.data();
        p.k_descale_per_block = buffers.k_descale.data();
        p.v_descale = buffers.v_descale.data();
    } else if (zyfa::cpu::dtype_is_fp8(dtype)) {
        p.q_descale = buffers.q_descale.data();
        p.k_descale = buffers.k_descale.data();
        p.v_descale = buffers.v_descale.data();
    }
    if (options.page_size > 0) make_paged(options, activations, buffers);
    if (options.v_transposed && zyfa::cpu::dtype_is_fp8(dtype) && !int8) make_v_transposed(ctx, options, activations, buffers);
}

}  // namespace zyfa_bench
