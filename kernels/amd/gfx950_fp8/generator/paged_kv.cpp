// Paged K/V (KernelVariant::paged): K and V rows come from page pools through a block table
// (kernels/common/paged_kv_args.h), passed as amd::AttnExtraArgs after AttnKernelArgs.
//
// The lanes of wave w load the key rows 8w .. 8w + 7 of each 64-key block (K and V chunks alike:
// row tid / 8, fp8_chunk_addresses and bf16_chunk_addresses at head dim 128). With a power-of-two
// page of at least 8 keys those 8 rows lie in one page, so the page is a wave-uniform scalar: per
// block each wave reads one block-table entry (s_load_dword) and forms the K and V base addresses
// of its rows in SGPR pairs; a lane adds its own 32-bit offset (row - 8w) * stride + 16 * column
// (the saddr form of global_load). The host plan keeps 7 * stride + 256 below 2^32 and sends
// other page sizes, head dims and masks to the HIP C++ paged kernel. The table entry of a block is
// loaded one block before its K and V (paged_prefetch_entry), so its latency hides as theirs does.
//
// Registers: the kernel never reads AttnKernelArgs' cu_seqlens_k (null when paged), head_dim_qk or
// head_dim_v (the variant fixes them), so their SGPRs hold this sequence's block-table row, log2 of
// the page size and the number of pages; k_block_step / v_block_step (unused when the addresses do
// not advance) hold the bases of the block being loaded; one VGPR holds the entry on its way.
#include <cstddef>
#include <stdexcept>

#include "amd/attention_extra_args.h"
#include "common/attention_kernel_args.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

namespace {
// Where a PagedKvArgs field lies in the kernel argument segment (AttnExtraArgs::paged comes first).
constexpr unsigned paged_field(size_t offset) { return kExtraArgsOffset + static_cast<unsigned>(offset); }
static_assert(offsetof(amd::AttnExtraArgs, paged) == 0, "AttnExtraArgs begins with the paged view");
constexpr int kRowsPerWaveLoad = 8;  // key rows of a block one wave loads (tid / 8)
}  // namespace

void KernelBuilder::paged_registers() {
    r_.table_row = arg(offsetof(AttnKernelArgs, cu_seqlens_k), 8);
    r_.page_shift = arg(offsetof(AttnKernelArgs, head_dim_qk), 4);
    r_.num_pages = arg(offsetof(AttnKernelArgs, head_dim_v), 4);
}

// The block table's row of this sequence, log2(page_size), num_pages; and the sequence's key count
// (seqused_k[b], or seqlen_k when seqused_k is null) into seqlen_k's argument.
void KernelBuilder::load_paged_arguments() {
    const Reg table = tmp_s("block_table", 2, 2), used = tmp_s("seqused_k", 2, 2), stride = tmp_s("block_table_stride", 2, 2),
              page = tmp_s("page_size");
    e_.op("s_load_dwordx2", {W(table), R(r_.kernarg_ptr), I(paged_field(offsetof(PagedKvArgs, block_table)))}, "",
          "paged K/V: amd::AttnExtraArgs::paged");
    e_.op("s_load_dwordx2", {W(used), R(r_.kernarg_ptr), I(paged_field(offsetof(PagedKvArgs, seqused_k)))});
    e_.op("s_load_dwordx2", {W(stride), R(r_.kernarg_ptr), I(paged_field(offsetof(PagedKvArgs, block_table_stride)))});
    e_.op("s_load_dword", {W(page), R(r_.kernarg_ptr), I(paged_field(offsetof(PagedKvArgs, page_size)))});
    e_.op("s_load_dword", {W(r_.num_pages), R(r_.kernarg_ptr), I(paged_field(offsetof(PagedKvArgs, num_pages)))});
    e_.wait_loads({table, used, stride, page, r_.num_pages}, "paged arguments");
    // table row = block_table + batch * block_table_stride entries of 4 bytes
    e_.op("s_lshl_b64", {W(stride), R(stride), I(2)});
    e_.op("s_mov_b64", {W(r_.table_row), R(table)});
    add_scaled64(r_.table_row, stride, r_.group_z);
    e_.op("s_ff1_i32_b32", {W(r_.page_shift), R(page)}, "", "log2(page_size): a power of two");
    const std::string fixed = e_.unique_label("no_seqused_k");
    const Reg seqlen_k = ZYFA_ARG(seqlen_k);
    e_.op("s_cmp_eq_u64", {R(used), I(0)});
    e_.cbranch("scc1", fixed);
    {
        const Reg off = tmp_s("batch * 4");
        e_.op("s_lshl_b32", {W(off), R(r_.group_z), I(2)});
        e_.op("s_add_u32", {W(used.at(0)), R(used.at(0)), R(off)});
        e_.op("s_addc_u32", {W(used.at(1)), R(used.at(1)), I(0)});
        e_.op("s_load_dword", {W(seqlen_k), R(used), I("0x0")}, "", "seqused_k[batch]: this sequence's keys");
        e_.wait_loads({seqlen_k}, "seqused_k");
        free(off);
    }
    e_.label(fixed);
    free(table);
    free(used);
    free(stride);
    free(page);
}

// Every lane's K and V chunk offsets relative to the first row its wave loads: the contiguous
// addresses chunk_addresses formed from base 0 (gfx942 BF16: lds_addresses_gfx942, the same rows), less 8w rows of stride (32 bits: the host plan
// bounds 7 * stride + 256). The pools' bases move to this kv head.
void KernelBuilder::paged_lane_offsets() {
    if (layout_.head_dim_qk != 128 || layout_.head_dim_v != 128) throw std::logic_error("paged: head dim 128 only");
    const Reg rows = tmp_s("8w (the wave's first row)"), lo = tmp_s("8w rows of stride");
    e_.op("s_lshl_b32", {W(rows), R(r_.wave), I(3)});
    for (bool k : {true, false}) {
        const Reg stride = k ? ZYFA_ARG(k_stride_seq) : ZYFA_ARG(v_stride_seq);
        const Reg address = k ? r_.k_global_addr : r_.v_global_addr;
        e_.op("s_mul_i32", {W(lo), R(stride.at(0)), R(rows)});
        e_.op("v_subrev_u32", {W(address.at(0)), R(lo), R(address.at(0))}, "", k ? "paged: K offset from the wave's first row" : "");
        const Reg base = k ? ZYFA_ARG(k) : ZYFA_ARG(v);
        add_scaled64(base, k ? ZYFA_ARG(k_stride_head) : ZYFA_ARG(v_stride_head), r_.head_kv);
    }
    free(rows);
    free(lo);
}

// Issues the load of the block-table entry of the rows wave w loads from the block at `block` +
// `ahead` keys into `entry` (a VGPR, the same in every lane): a vector load, counted by vmcnt in
// order with the K/V loads, so it can run a whole block ahead without the scalar loads'
// lgkmcnt(0) (which would also wait for LDS). Past the sequence's last key it reads the last key's
// entry (always in the table; the rows are zeroed anyway), so it is issued unconditionally.
void KernelBuilder::paged_prefetch_entry(const Reg& entry, const Reg& block, int ahead) {
    const Reg key = tmp_s("paged: the wave's first key, clamped"), last = tmp_s("paged: last key");
    e_.op("s_lshl_b32", {W(key), R(r_.wave), I(3)});
    e_.op("s_add_u32", {W(key), R(key), R(block)});
    if (ahead != 0) e_.op("s_add_u32", {W(key), R(key), I(ahead)});
    e_.op("s_add_i32", {W(last), R(r_.seqlen_k), I(-1)});
    e_.op("s_min_i32", {W(key), R(key), R(last)});
    e_.op("s_lshr_b32", {W(key), R(key), R(r_.page_shift)});
    e_.op("s_lshl_b32", {W(key), R(key), I(2)}, "", "the entry's byte offset in the table row");
    e_.op("v_mov_b32", {W(entry), R(key)});
    e_.op("global_load_dword", {W(entry), R(entry), R(r_.table_row)}, "",
          "paged: block_table[b][key / page_size] for a later block");
    free(key);
    free(last);
}

// The base addresses of the rows wave w loads from the block at `block` (K into k_block_step, V
// into v_block_step, as asked): pool + page * page stride + (key % page_size) * row stride with
// key = block + 8w and page the table entry paged_prefetch_entry loaded into `entry`. A page index
// outside [0, num_pages) reads as zero keys: rows_left = 0 (the tail path zeroes every row).
void KernelBuilder::paged_block_bases(const Reg& rows_left, const Reg& block, const Reg& entry, bool k_base, bool v_base) {
    const Reg key = tmp_s("paged: the wave's first key"), page = tmp_s("paged: page");
    e_.wait_loads({entry}, "the page, requested a block ago");
    e_.op_settled("v_readfirstlane_b32", {W(page), R(entry)});
    e_.op("s_lshl_b32", {W(key), R(r_.wave), I(3)});
    e_.op("s_add_u32", {W(key), R(key), R(block)}, "", "paged: the page of the wave's 8 rows");
    {
        const Reg slot = tmp_s("paged: key / page_size * page_size");
        e_.op("s_lshr_b32", {W(slot), R(key), R(r_.page_shift)});
        e_.op("s_lshl_b32", {W(slot), R(slot), R(r_.page_shift)});
        e_.op("s_sub_u32", {W(key), R(key), R(slot)}, "", "the row in its page");
        free(slot);
    }
    e_.op("s_cmp_lt_u32", {R(page), R(r_.num_pages)}, "", "a page index outside [0, num_pages): zero keys");
    e_.op("s_cselect_b32", {W(rows_left), R(rows_left), I(0)});
    e_.op("s_cselect_b32", {W(page), R(page), I(0)});
    for (bool k : {true, false}) {
        if (!(k ? k_base : v_base)) continue;
        const Reg base = k ? r_.k_block_step : r_.v_block_step;
        e_.op("s_mov_b64", {W(base), R(k ? ZYFA_ARG(k) : ZYFA_ARG(v))});
        add_scaled64(base, k ? ZYFA_ARG(k_stride_batch) : ZYFA_ARG(v_stride_batch), page);
        add_scaled64(base, k ? ZYFA_ARG(k_stride_seq) : ZYFA_ARG(v_stride_seq), key);
    }
    free(key);
    free(page);
}

}  // namespace gfx950_fp8
}  // namespace zyfa
