// The paged twin of a contiguous AttentionCase (attention_case.hpp): the same keys and values
// copied into K and V page pools [num_pages, page_size, heads_kv, head_dim] (row and page strides
// optionally padded) in a shuffled page order, read through a block table, with each sequence's
// key count in seqused_k. Every byte of the pools that no key fills (pages no sequence uses, the
// rows past a sequence's last key, the padding) holds 0xFF, a NaN in every input dtype (INT8 k's
// 0xFF is -1, but the INT8 Q/K mode's v is FP8, where it is NaN), so a kernel that multiplied any
// of it would poison its row. Header-only, host memory; the GPU tests
// copy the buffers to the device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "attention_case.hpp"

namespace zyfa_test {

struct PagedLayout {
    int32_t page_size = 16;
    int64_t row_padding = 0;   // extra elements between rows of a page (stride_seq = heads*dim + padding)
    int64_t spare_pages = 3;   // pages in the pools that no sequence uses
    int64_t table_padding = 2; // extra entries per row of the block table
    uint64_t seed = 7;
};

struct PagedKv {
    std::vector<uint8_t> k_pool, v_pool;
    std::vector<int32_t> block_table, seqused_k;
    int64_t num_pages = 0, block_table_stride = 0;
    zyfa_attn_params params;  // the contiguous case's, made paged
    zyfa_tensor tk, tv;       // views of the pools

    PagedKv(const AttentionCase& c, const PagedLayout& layout) {
        const CaseShape& s = c.shape;
        const bool varlen = !s.lengths_q.empty();
        const int64_t ps = layout.page_size;
        // k's and v's own element sizes and dtypes (the INT8 Q/K mode: k INT8, v FP8).
        const size_t elem = zyfa::cpu::dtype_size(c.tk.dtype), v_elem = zyfa::cpu::dtype_size(c.tv.dtype);
        std::vector<int64_t> keys(static_cast<size_t>(s.batch));
        for (int64_t b = 0; b < s.batch; ++b) keys[b] = varlen ? s.lengths_k[b] : s.seqlen_k;
        block_table_stride = (s.seqlen_k + ps - 1) / ps + layout.table_padding;
        int64_t used_pages = 0;
        for (int64_t n : keys) used_pages += (n + ps - 1) / ps;
        num_pages = used_pages + layout.spare_pages;
        std::vector<int32_t> order(static_cast<size_t>(num_pages));
        for (int64_t i = 0; i < num_pages; ++i) order[i] = static_cast<int32_t>(i);
        std::mt19937_64 rng(layout.seed);
        std::shuffle(order.begin(), order.end(), rng);

        const int64_t k_row = s.heads_kv * s.head_dim_qk + layout.row_padding;
        const int64_t v_row = s.heads_kv * s.head_dim_v + layout.row_padding;
        k_pool.assign(static_cast<size_t>(num_pages * ps * k_row) * elem, 0xFF);
        v_pool.assign(static_cast<size_t>(num_pages * ps * v_row) * v_elem, 0xFF);
        // Unused table entries point at pages that hold only NaNs.
        block_table.assign(static_cast<size_t>(s.batch * block_table_stride), order.back());
        seqused_k.assign(keys.begin(), keys.end());
        int64_t next = 0;
        for (int64_t b = 0; b < s.batch; ++b) {
            for (int64_t j = 0; j < keys[b]; ++j) {
                if (j % ps == 0) block_table[b * block_table_stride + j / ps] = order[next++];
                const int64_t page = block_table[b * block_table_stride + j / ps];
                for (int64_t h = 0; h < s.heads_kv; ++h) {
                    const int64_t src_k = zyfa::AttnProblem::offset(view_of(c.tk), c.params.cu_seqlens_k ? c.cu_k[b] : 0, b, j, h);
                    const int64_t src_v = zyfa::AttnProblem::offset(view_of(c.tv), c.params.cu_seqlens_k ? c.cu_k[b] : 0, b, j, h);
                    const int64_t dst_k = (page * ps + j % ps) * k_row + h * s.head_dim_qk;
                    const int64_t dst_v = (page * ps + j % ps) * v_row + h * s.head_dim_v;
                    std::memcpy(&k_pool[dst_k * elem], &c.k[src_k * elem], s.head_dim_qk * elem);
                    std::memcpy(&v_pool[dst_v * v_elem], &c.v[src_v * v_elem], s.head_dim_v * v_elem);
                }
            }
        }
        params = c.params;
        params.cu_seqlens_k = nullptr;
        params.block_table = block_table.data();
        params.seqused_k = seqused_k.data();
        params.block_table_stride = block_table_stride;
        params.num_pages = num_pages;
        params.page_size = layout.page_size;
        tk = pool_view(k_pool.data(), c.tk.dtype, ps, k_row, s.head_dim_qk);
        tv = pool_view(v_pool.data(), c.tv.dtype, ps, v_row, s.head_dim_v);
    }
    PagedKv(const PagedKv&) = delete;
    PagedKv& operator=(const PagedKv&) = delete;

    // A tensor's strides as the library's AttnProblem::offset reads them.
    static zyfa::TensorView view_of(const zyfa_tensor& t) {
        zyfa::TensorView v;
        v.data = t.data;
        v.dtype = t.dtype;
        v.stride_batch = t.stride_batch;
        v.stride_seq = t.stride_seq;
        v.stride_head = t.stride_head;
        return v;
    }

private:
    static zyfa_tensor pool_view(void* data, zyfa_dtype dtype, int64_t page_size, int64_t row, int64_t dim) {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof t);
        t.data = data;
        t.dtype = dtype;
        t.stride_head = dim;
        t.stride_seq = row;
        t.stride_batch = page_size * row;  // the page stride
        return t;
    }
};

}  // namespace zyfa_test
