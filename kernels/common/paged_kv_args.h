// Paged K/V (include/zyfa.h, params.block_table) as the GPU kernels receive it: a second kernel
// parameter of the paged kernel variants (NVIDIA: inside WsTmaParams; AMD: its own), one definition
// for the host launch code and the kernels of both vendors. Plain fixed-width fields only.
//
// K and V are page pools [num_pages, page_size, heads_kv, head_dim] whose page stride is
// AttnKernelArgs::k/v_stride_batch; key j of sequence b is row j % page_size of page
// block_table[b * block_table_stride + j / page_size]; sequence b has seqused_k[b] keys, or
// AttnKernelArgs::seqlen_k when seqused_k is null; cu_seqlens_k is null (queries may be packed).
// A page index outside [0, num_pages) reads as a page of zero keys (the host cannot check device
// tables; the kernels never read outside the pools).
#ifndef ZYFA_KERNELS_COMMON_PAGED_KV_ARGS_H
#define ZYFA_KERNELS_COMMON_PAGED_KV_ARGS_H

#include <stdint.h>

#include "attention_kernel_args.h"
#include "device_compat.h"

namespace zyfa {

struct PagedKvArgs {
    const int32_t* block_table;
    const int32_t* seqused_k;  // [batch] keys per sequence; null: AttnKernelArgs::seqlen_k each
    int64_t block_table_stride;
    int32_t page_size;
    int32_t tma_box_rows;  // NVIDIA, with tensor maps: rows per copy (attention_ws_tma_params.h); else 0
    int32_t num_pages;
    int32_t reserved;
};

// The number of keys of sequence `batch`.
ZYFA_HD int paged_key_count(const AttnKernelArgs& a, const PagedKvArgs& p, int batch) {
    return p.seqused_k ? p.seqused_k[batch] : a.seqlen_k;
}

// The element offset of key `key` of sequence `batch` in a pool (its page times page_stride plus
// its row times row_stride), or -1 when the table holds a page index outside [0, num_pages).
ZYFA_HD int64_t paged_key_offset(const PagedKvArgs& p, int64_t page_stride, int64_t row_stride, int batch, int key) {
    const int32_t page = p.block_table[batch * p.block_table_stride + key / p.page_size];
    if (page < 0 || page >= p.num_pages) return -1;
    return page * page_stride + (key % p.page_size) * row_stride;
}

}  // namespace zyfa

#endif
