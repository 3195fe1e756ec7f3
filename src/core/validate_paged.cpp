// Paged K/V fields of zyfa_attn_params (include/zyfa.h): block_table, seqused_k,
// block_table_stride, num_pages, page_size. Either all unset (contiguous K/V) or a consistent
// paged view; on the CPU backend the host tables are read and every entry a sequence uses is
// checked, on GPU backends they are device memory and only their sizes are checked here.
#include <string>

#include "errors.hpp"
#include "validate.hpp"

namespace zyfa {
namespace validation {

PagedKvShape check_paged_kv(const zyfa_attn_params& p, zyfa_backend backend) {
    PagedKvShape paged;
    if (p.block_table == nullptr) {
        // Contiguous: the paged fields have nothing to describe.
        if (p.seqused_k != nullptr) {
            throw_invalid("params.seqused_k is set but params.block_table is NULL (seqused_k counts the keys of a "
                          "paged cache)");
        }
        if (p.page_size != 0) {
            throw_invalid("params.page_size = " + std::to_string(p.page_size) +
                          " is set but params.block_table is NULL (0 for contiguous K/V)");
        }
        if (p.block_table_stride != 0) {
            throw_invalid("params.block_table_stride = " + std::to_string(p.block_table_stride) +
                          " is set but params.block_table is NULL (0 for contiguous K/V)");
        }
        if (p.num_pages != 0) {
            throw_invalid("params.num_pages = " + std::to_string(p.num_pages) +
                          " is set but params.block_table is NULL (0 for contiguous K/V)");
        }
        return paged;
    }

    if (p.page_size < 1 || p.page_size > kMaxPageSize) {
        throw_invalid("params.page_size = " + std::to_string(p.page_size) + " is outside [1, " +
                      std::to_string(kMaxPageSize) + "]");
    }
    if (p.cu_seqlens_k != nullptr) {
        throw_invalid("params.cu_seqlens_k is set with params.block_table: paged keys are not packed (give each "
                      "sequence's key count in params.seqused_k; queries may be packed with cu_seqlens_q alone)");
    }
    if (p.num_pages < 0) throw_invalid("params.num_pages = " + std::to_string(p.num_pages) + " is negative");
    if (p.num_pages == 0 && p.seqlen_k > 0) {
        throw_invalid("params.num_pages = 0 but params.seqlen_k = " + std::to_string(p.seqlen_k) +
                      " (the pools hold no page)");
    }
    // Pages the longest sequence needs; every row of the table must have room for them.
    const int64_t pages_needed = p.seqlen_k / p.page_size + (p.seqlen_k % p.page_size != 0);
    if (p.block_table_stride < pages_needed) {
        throw_invalid("params.block_table_stride = " + std::to_string(p.block_table_stride) +
                      " is too short: params.seqlen_k = " + std::to_string(p.seqlen_k) + " keys in pages of " +
                      std::to_string(p.page_size) + " need " + std::to_string(pages_needed) + " entries per sequence");
    }
    require_aligned("params.block_table", p.block_table, 4, "int32 page indices");
    if (p.seqused_k != nullptr) require_aligned("params.seqused_k", p.seqused_k, 4, "int32 key counts");

    paged.pages_needed = pages_needed;
    // Entries of the table the request may reach: every row up to the last one's needed pages.
    paged.table_entries = p.batch > 0 && pages_needed > 0
                              ? checked_mul(p.batch - 1, p.block_table_stride, "params.block_table size") + pages_needed
                              : 0;
    checked_mul(paged.table_entries, 4, "params.block_table bytes");
    if (backend != ZYFA_BACKEND_CPU) return paged;  // device memory: the kernels trust the entries

    // Host tables: every key count and every page index a sequence reads.
    for (int64_t b = 0; b < p.batch; ++b) {
        int64_t keys = p.seqlen_k;
        if (p.seqused_k != nullptr) {
            keys = p.seqused_k[b];
            if (keys < 0 || keys > p.seqlen_k) {
                throw_invalid("params.seqused_k[" + std::to_string(b) + "] = " + std::to_string(keys) +
                              " is outside [0, params.seqlen_k = " + std::to_string(p.seqlen_k) + "]");
            }
        }
        const int64_t pages = keys / p.page_size + (keys % p.page_size != 0);
        const int32_t* row = p.block_table + b * p.block_table_stride;
        for (int64_t i = 0; i < pages; ++i) {
            if (row[i] < 0 || row[i] >= p.num_pages) {
                throw_invalid("params.block_table[" + std::to_string(b) + " * block_table_stride + " +
                              std::to_string(i) + "] = " + std::to_string(row[i]) + " is not a page index in [0, " +
                              "params.num_pages = " + std::to_string(p.num_pages) + ")");
            }
        }
    }
    return paged;
}

}  // namespace validation
}  // namespace zyfa
