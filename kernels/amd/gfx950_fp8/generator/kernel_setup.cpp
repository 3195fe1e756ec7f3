// Entry phase: kernel arguments, the sequence span of this workgroup, the key ranges of the
// workgroup and of each wave, the per-lane constants of the score scaling, and Q in registers.
#include <cstddef>
#include <stdexcept>

#include "common/attention_kernel_args.h"
#include "common/block_scale.h"
#include "common/exp2_polynomial.h"
#include "common/fp8_e4m3.h"
#include "common/lean_p.h"
#include "common/score_scale.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

namespace {
constexpr int kArgsFirstSgpr = 8;  // s[0:1] kernarg pointer, s2..s4 workgroup ids
}

KernelBuilder::KernelBuilder(const KernelVariant& variant, PScheme scheme)
    : variant_(variant), scheme_(scheme), layout_(variant), vgprs_(RegFile::Vgpr, 256), sgprs_(RegFile::Sgpr, 102) {
    if (variant.head_dim_v != 128) throw std::runtime_error("gfx950 FP8 generator: head_dim_v must be 128");
}

std::string KernelBuilder::symbol() const {
    const std::string lean = variant_symbol(variant_);
    if (scheme_ == PScheme::LeanP) return lean;
    const std::string prefix = "zyfa_gfx950_fp8_lean_";
    return "zyfa_gfx950_fp8_exactexp_estimate_" + lean.substr(prefix.size());
}

Reg KernelBuilder::arg(size_t offset, size_t bytes) const {
    return r_.args.at(static_cast<int>(offset / 4), static_cast<int>((bytes + 3) / 4));
}

void KernelBuilder::allocate_registers() {
    static_assert(sizeof(AttnKernelArgs) % 8 == 0, "the kernarg segment is loaded in whole dword pairs");
    r_.kernarg_ptr = sgprs_.claim("kernel argument pointer", 0, 2);
    r_.group_x = sgprs_.claim("workgroup id x (query tile, reversed)", 2, 1);
    r_.group_y = sgprs_.claim("workgroup id y (query head)", 3, 1);
    r_.group_z = sgprs_.claim("workgroup id z (batch)", 4, 1);
    r_.args = sgprs_.claim("AttnKernelArgs", kArgsFirstSgpr, static_cast<int>(sizeof(AttnKernelArgs) / 4));
    r_.thread_id = vgprs_.claim("work-item id", 0, 1);
    if (paged()) paged_registers();

    r_.wave = tmp_s("wave index");
    r_.first_q = tmp_s("first query row of the sequence");
    r_.first_k = tmp_s("first key row of the sequence");
    r_.seqlen_q = tmp_s("sequence length q");
    r_.seqlen_k = tmp_s("sequence length k");
    r_.head_kv = tmp_s("kv head");
    r_.row0 = tmp_s("first query of the tile");
    r_.keys_end = tmp_s("end of the tile's visible keys");
    r_.wave_min_hi = tmp_s("smallest visible-key end of the wave");
    r_.wave_max_hi = tmp_s("largest visible-key end of the wave");
    r_.block = tmp_s("key block being computed");
    r_.next_block = tmp_s("key block stored to LDS in this block");
    r_.load_block = tmp_s("key block loaded from memory in this block");
    r_.lse_total_q = tmp_s("total q rows (varlen lse)");
    r_.k_block_step = tmp_s("64 rows of K stride (bytes)", 2, 2);
    r_.v_block_step = tmp_s("64 rows of V stride (bytes)", 2, 2);
    r_.saved_exec = tmp_s("saved EXEC", 2, 2);
    r_.carry = tmp_s("carry out (unused)", 2, 2);

    const KernelLayout& L = layout_;
    if (L.bf16) {
        allocate_bf16_registers();
        return;
    }
    r_.o_acc = tmp_v("O^T accumulators (4 tiles x 16)", 16 * L.o_tiles, 8);
    r_.s_acc = tmp_v("S^T accumulators (2 tiles x 16); tile 0 then the row-sum MFMA result", 32, 8);
    if (fp8_exact()) {
        // The fp32 row sum of the unrounded p, summed by the softmax; S^T holds p until then.
        r_.row_sum = tmp_v("row sum of p");
        r_.p_up_pair = tmp_v("2^8 (pair): P's scale", 2, 2);
        r_.remask = tmp_s("1: mask x again (scale_log2 not finite and positive)");
    } else {
        r_.row_sum = r_.s_acc.at(0, 16);  // S^T is dead once the codes are in P, until the next QK
    }
    r_.operand_ring = tmp_v("LDS operand ring (4 x 8): K, then V^T", 32, 8);
    r_.q_op = tmp_v("Q^T operand (qk_steps x 8)", 8 * L.qk_steps, 8);
    r_.p_op = tmp_v("P codes operand", 8, 8);
    r_.ones = tmp_v("FP8 1.0 operand", 8, 8);
    r_.k_prefetch = tmp_v("K chunks of a block on its way to LDS", 4 * L.k_chunks_per_thread, 4);
    r_.v_prefetch = tmp_v("V chunk of a block on its way to LDS", 4, 4);
    r_.scale8_pair = tmp_v("8 * scale_log2 (pair)", 2, 2);
    r_.alpha_pair = tmp_v("alpha (pair)", 2, 2);
    r_.bias_pair = tmp_v("Lean P bias (pair)", 2, 2);
    r_.exp2_c0 = tmp_v("exp2 polynomial coefficient 0");
    r_.col = tmp_v("lane % 32 (query column)");
    r_.half = tmp_v("lane / 32");
    r_.query = tmp_v("query row of the lane");
    r_.row_hi_local = tmp_v("visible-key end - 4 * half");
    r_.scale_log2 = tmp_v("scale_log2 (> 0; Q negated otherwise)");
    r_.code_of_one = tmp_v("56 + lean centre");
    r_.cap_gap = tmp_v("max_block_exponent - 8 (float)");
    r_.scale_one = tmp_v("E8M0 127 (2^0)");
    // gfx942 LEAN (no scaled MFMA): -k of the latest block, O holding O 2^k (alpha_and_bias_gfx942).
    r_.p_scale = tmp_v(layout_.gfx942 && !fp8_exact() ? "-k: O holds O 2^k" : "E8M0 127 - k");
    r_.m = tmp_v("running max m (log2)");
    r_.l = tmp_v("running sum l");
    r_.block_max = tmp_v("block max, then m_new");
    r_.neg_inf = tmp_v("-inf (float)");
    r_.max_code = tmp_v("126.0: the largest e4m3fn code");
    r_.v_descale = tmp_v("v descale");
    r_.max_exponent = tmp_v("max_block_exponent");
    r_.k_global_addr = tmp_v("K chunk addresses (64-bit, per chunk)", 2 * L.k_chunks_per_thread, 2);
    r_.v_global_addr = tmp_v("V chunk address (64-bit)", 2, 2);
    r_.k_row = tmp_v("K chunk key rows", L.k_chunks_per_thread);
    r_.k_lds_write = tmp_v("K chunk LDS addresses (chunk x stage)", L.stages * L.k_chunks_per_thread);
    r_.v_row = tmp_v("V chunk key row");
    r_.vt_lds_write = tmp_v("V^T chunk LDS address (per stage)", L.stages);
    r_.k_lds_read = tmp_v("K operand LDS address (per stage)", L.stages);
    r_.v_lds_read = tmp_v("V^T operand LDS address (per stage)", L.stages);
    r_.row_lo_local = tmp_v("window start - 4 * half");
    r_.block_start = tmp_s("first key block of the workgroup (window)");
    r_.wave_max_lo = tmp_s("largest window start of the wave");
    if (paged()) r_.page_entry = tmp_v("paged: block-table entry of a later block");
}

// BF16: no FP8 constants, no row-sum MFMA; P is 16 VGPRs of bf16 pairs; K and V chunks of one
// thread share their key row (tid / 8), their 16-byte columns 8 apart (chunk j at + 128 j bytes),
// so one offset register per stream and one LDS address per stage serve every chunk.
void KernelBuilder::allocate_bf16_registers() {
    const KernelLayout& L = layout_;
    r_.o_acc = tmp_v("O^T accumulators (4 tiles x 16)", 16 * L.o_tiles, 8);
    r_.s_acc = tmp_v("S^T accumulators (2 tiles x 16), then p, then the row-sum partials", 32, 8);
    r_.operand_ring = tmp_v("LDS operand ring (8 x 4): K, then V^T", 32, 8);
    r_.q_op = tmp_v("Q^T operand (qk_steps x 4)", 4 * L.qk_steps, 8);
    r_.p_op = tmp_v("P operand (bf16 pairs, S^T register order)", 16, 8);
    r_.k_prefetch = tmp_v("K chunks of a block on its way to LDS", 4 * L.k_chunks_per_thread, 4);
    r_.v_prefetch = tmp_v("V chunks of a block on its way to LDS", 4 * L.v_chunks_per_thread, 4);
    r_.scale8_pair = tmp_v("scale_log2 (pair)", 2, 2);
    r_.alpha_pair = tmp_v("alpha (pair)", 2, 2);
    r_.bias_pair = tmp_v("-m_new (pair; -inf where m_new = -inf)", 2, 2);
    r_.col = tmp_v("lane % 32 (query column)");
    r_.half = tmp_v("lane / 32");
    r_.query = tmp_v("query row of the lane");
    r_.row_hi_local = tmp_v("visible-key end - 4 * half");
    r_.scale_log2 = tmp_v("scale_log2 (> 0; Q negated otherwise)");
    r_.m = tmp_v("running max m (log2)");
    r_.l = tmp_v("running sum l");
    r_.row_sum = tmp_v("row sum of the block's p");
    r_.block_max = tmp_v("block max, then m_new");
    r_.neg_inf = tmp_v("-inf (float)");
    r_.v_descale = tmp_v("v descale");
    r_.remask = tmp_s("1: mask x again (scale_log2 not finite and positive)");
    r_.k_global_addr = tmp_v("K chunk 0 address (64-bit)", 2, 2);
    r_.v_global_addr = tmp_v("V chunk 0 address (64-bit)", 2, 2);
    // No key-row register (tid / 8): the tail loads compare tid with 8 x the rows left
    // (phase_load.cpp, kernel_body_gfx942.cpp), which leaves a VGPR for the window start at 256.
    if (L.gfx942) {
        // The swizzled layout (lds_swizzle_gfx942.cpp): the stage is an offset, the XOR a register.
        r_.k_lds_write = tmp_v("K chunk 0 LDS address (stage 0, swizzled)");
        r_.vt_lds_write = tmp_v("V^T LDS address per dim % 8 (stage 0, swizzled)", 8);
        r_.k_lds_read = tmp_v("K operand LDS address per step % 4 (stage 0, swizzled)", 4);
        r_.v_lds_read = tmp_v("V^T operand LDS address per key step (stage 0, swizzled)", 4);
    } else {
        r_.k_lds_write = tmp_v("K chunk 0 LDS address (per stage)", L.stages);
        r_.vt_lds_write = tmp_v("V^T chunk 0 LDS address (per stage)", L.stages);
        r_.k_lds_read = tmp_v("K operand LDS address (per stage)", L.stages);
        r_.v_lds_read = tmp_v("V^T operand LDS address (per stage)", L.stages);
    }
    r_.row_lo_local = tmp_v("window start - 4 * half");
    r_.block_start = tmp_s("first key block of the workgroup (window)");
    r_.wave_max_lo = tmp_s("largest window start of the wave");
    if (paged()) r_.page_entry = tmp_v("paged: block-table entry of a later block");
    if (paged() && L.gfx942) r_.page_entry_v = tmp_v("paged: block-table entry of a later block (V stream)");
}

void KernelBuilder::load_arguments() {
    const int dwords = r_.args.count;
    int done = 0;
    for (int size : {16, 8, 4, 2}) {
        while (dwords - done >= size) {
            e_.op("s_load_dwordx" + std::to_string(size),
                  {W(r_.args.at(done, size)), R(r_.kernarg_ptr), I(std::to_string(done * 4))}, "",
                  done == 0 ? "AttnKernelArgs (kernels/common/attention_kernel_args.h)" : "");
            done += size;
        }
    }
    e_.wait_loads({r_.args}, "kernel arguments");
    if (paged()) load_paged_arguments();
    if (layout_.bf16) {
        // Q, K, V strides in bytes from here on (2-byte elements); O's stay in elements.
        const size_t strides[] = {offsetof(AttnKernelArgs, q_stride_batch), offsetof(AttnKernelArgs, q_stride_seq),
                                  offsetof(AttnKernelArgs, q_stride_head),  offsetof(AttnKernelArgs, k_stride_batch),
                                  offsetof(AttnKernelArgs, k_stride_seq),   offsetof(AttnKernelArgs, k_stride_head),
                                  offsetof(AttnKernelArgs, v_stride_batch), offsetof(AttnKernelArgs, v_stride_seq),
                                  offsetof(AttnKernelArgs, v_stride_head)};
        for (size_t offset : strides) {
            const Reg stride = arg(offset, 8);
            e_.op("s_lshl_b64", {W(stride), R(stride), I(1)}, "", offset == strides[0] ? "bf16: Q, K, V strides in bytes" : "");
        }
    }
}

// quotient = dividend / divisor for wave-uniform non-negative integers below 2^23: a float
// estimate corrected by one step each way.
void KernelBuilder::uniform_udiv(const Reg& quotient, const Reg& dividend, const Reg& divisor) {
    const Reg a = tmp_v("udiv dividend"), b = tmp_v("udiv divisor");
    e_.op("v_cvt_f32_u32", {W(a), R(dividend)});
    e_.op("v_cvt_f32_u32", {W(b), R(divisor)});
    e_.op("v_rcp_f32", {W(b), R(b)});
    e_.nop(1, "transcendental -> dependent VALU");
    e_.op("v_mul_f32", {W(a), R(a), R(b)});
    e_.op("v_cvt_u32_f32", {W(a), R(a)});
    e_.op_settled("v_readfirstlane_b32", {W(quotient), R(a)});
    const Reg rem = tmp_s("udiv remainder"), t = tmp_s("udiv step");
    e_.op("s_mul_i32", {W(t), R(quotient), R(divisor)});
    e_.op("s_sub_i32", {W(rem), R(dividend), R(t)});
    e_.op("s_cmp_ge_i32", {R(rem), R(divisor)});
    e_.op("s_cselect_b32", {W(t), I(1), I(0)});
    e_.op("s_add_i32", {W(quotient), R(quotient), R(t)});
    e_.op("s_cmp_lt_i32", {R(rem), I(0)});
    e_.op("s_cselect_b32", {W(t), I(-1), I(0)});
    e_.op("s_add_i32", {W(quotient), R(quotient), R(t)});
    free(a);
    free(b);
    free(rem);
    free(t);
}

// address (SGPR pair) += stride64 (SGPR pair) * index32 (SGPR, non-negative).
void KernelBuilder::add_scaled64(const Reg& address, const Reg& stride64, const Reg& index32) {
    const Reg lo = tmp_s("product lo"), hi = tmp_s("product hi"), t = tmp_s("product cross");
    e_.op("s_mul_i32", {W(lo), R(stride64.at(0)), R(index32)});
    e_.op("s_mul_hi_u32", {W(hi), R(stride64.at(0)), R(index32)});
    e_.op("s_mul_i32", {W(t), R(stride64.at(1)), R(index32)});
    e_.op("s_add_u32", {W(hi), R(hi), R(t)});
    e_.op("s_add_u32", {W(address.at(0)), R(address.at(0)), R(lo)});
    e_.op("s_addc_u32", {W(address.at(1)), R(address.at(1)), R(hi)});
    free(lo);
    free(hi);
    free(t);
}

void KernelBuilder::sequence_span() {
    const Reg cu_q = ZYFA_ARG(cu_seqlens_q), cu_k = ZYFA_ARG(cu_seqlens_k);
    const std::string varlen = e_.unique_label("varlen"), done = e_.unique_label("span_done");
    e_.op("s_mov_b32", {W(r_.lse_total_q), I(0)});
    e_.op("s_cmp_lg_u64", {R(cu_q), I(0)}, "", "varlen when cu_seqlens_q is set");
    e_.cbranch("scc1", varlen);
    e_.op("s_mov_b32", {W(r_.first_q), I(0)});
    e_.op("s_mov_b32", {W(r_.first_k), I(0)});
    e_.op("s_mov_b32", {W(r_.seqlen_q), R(ZYFA_ARG(seqlen_q))});
    e_.op("s_mov_b32", {W(r_.seqlen_k), R(ZYFA_ARG(seqlen_k))});
    e_.branch(done);
    e_.label(varlen);
    {
        const Reg addr = tmp_s("cu_seqlens address", 2, 2), pair_q = tmp_s("cu_seqlens_q[b:b+1]", 2, 2),
                  pair_k = tmp_s("cu_seqlens_k[b:b+1]", 2, 2), off = tmp_s("batch * 4");
        e_.op("s_lshl_b32", {W(off), R(r_.group_z), I(2)});
        e_.op("s_add_u32", {W(addr.at(0)), R(cu_q.at(0)), R(off)});
        e_.op("s_addc_u32", {W(addr.at(1)), R(cu_q.at(1)), I(0)});
        e_.op("s_load_dwordx2", {W(pair_q), R(addr), I("0x0")});
        if (!paged()) {  // paged: cu_seqlens_k is null, the keys per sequence came from seqused_k
            e_.op("s_add_u32", {W(addr.at(0)), R(cu_k.at(0)), R(off)});
            e_.op("s_addc_u32", {W(addr.at(1)), R(cu_k.at(1)), I(0)});
            e_.op("s_load_dwordx2", {W(pair_k), R(addr), I("0x0")});
        }
        e_.op("s_lshl_b32", {W(off), R(ZYFA_ARG(batch)), I(2)});
        e_.op("s_add_u32", {W(addr.at(0)), R(cu_q.at(0)), R(off)});
        e_.op("s_addc_u32", {W(addr.at(1)), R(cu_q.at(1)), I(0)});
        e_.op("s_load_dword", {W(r_.lse_total_q), R(addr), I("0x0")}, "", "cu_seqlens_q[batch]: lse rows");
        e_.wait_loads({pair_q, pair_k, r_.lse_total_q}, "cu_seqlens");
        e_.op("s_mov_b32", {W(r_.first_q), R(pair_q.at(0))});
        e_.op("s_sub_i32", {W(r_.seqlen_q), R(pair_q.at(1)), R(pair_q.at(0))});
        if (paged()) {
            e_.op("s_mov_b32", {W(r_.first_k), I(0)});
            e_.op("s_mov_b32", {W(r_.seqlen_k), R(ZYFA_ARG(seqlen_k))});
        } else {
            e_.op("s_mov_b32", {W(r_.first_k), R(pair_k.at(0))});
            e_.op("s_sub_i32", {W(r_.seqlen_k), R(pair_k.at(1)), R(pair_k.at(0))});
        }
        free(addr);
        free(pair_q);
        free(pair_k);
        free(off);
    }
    e_.label(done);
}

// The end of the keys row `row` sees (attention_mask.h, no window), for a row inside the sequence.
// Mask none: end = min(seqlen_k, row + seqlen_k - seqlen_q + window_right + 1, clamped at 0)
// when window_right >= 0 (attention_mask.h: visible_keys; under a causal mask window_right >= 0
// ends no earlier than the diagonal). c = seqlen_k - seqlen_q + 1 + window_right, or 2^30 (no
// right window: min gives seqlen_k); window_right is taken as at most 2^30 (no sequence is longer).
Reg KernelBuilder::right_window_offset() {
    const Reg c = tmp_s("diagonal offset + 1 + window_right"), w = tmp_s("window_right, at most 2^30");
    e_.op("s_min_i32", {W(w), R(ZYFA_ARG(window_right)), I("0x40000000")});
    e_.op("s_sub_i32", {W(c), R(r_.seqlen_k), R(r_.seqlen_q)});
    e_.op("s_add_i32", {W(c), R(c), I(1)});
    e_.op("s_add_i32", {W(c), R(c), R(w)});
    e_.op("s_cmp_lt_i32", {R(ZYFA_ARG(window_right)), I(0)});
    e_.op("s_cselect_b32", {W(c), I("0x40000000"), R(c)}, "", "no right window");
    free(w);
    return c;
}

void KernelBuilder::row_hi_of(const Reg& dst, const Reg& row, bool row_is_sgpr) {
    const VariantMask mask = variant_.mask;
    if (windows() && mask == VariantMask::None) {
        const Reg c = right_window_offset();
        if (row_is_sgpr) {
            e_.op("s_add_i32", {W(dst), R(row), R(c)});
            e_.op("s_min_i32", {W(dst), R(dst), R(r_.seqlen_k)});
            e_.op("s_max_i32", {W(dst), R(dst), I(0)});
        } else {
            e_.op("v_add_u32", {W(dst), R(c), R(row)});
            e_.op("v_min_i32", {W(dst), R(r_.seqlen_k), R(dst)});
            e_.op("v_max_i32", {W(dst), I(0), R(dst)});
        }
        free(c);
        return;
    }
    if (row_is_sgpr) {
        if (mask == VariantMask::None) {
            e_.op("s_mov_b32", {W(dst), R(r_.seqlen_k)});
        } else if (mask == VariantMask::CausalTopLeft) {
            e_.op("s_add_i32", {W(dst), R(row), I(1)});
            e_.op("s_min_i32", {W(dst), R(dst), R(r_.seqlen_k)});
        } else {
            const Reg d = tmp_s("diagonal offset");
            e_.op("s_sub_i32", {W(d), R(r_.seqlen_k), R(r_.seqlen_q)});
            e_.op("s_add_i32", {W(dst), R(row), R(d)});
            e_.op("s_add_i32", {W(dst), R(dst), I(1)});
            e_.op("s_min_i32", {W(dst), R(dst), R(r_.seqlen_k)});
            e_.op("s_max_i32", {W(dst), R(dst), I(0)});
            free(d);
        }
        return;
    }
    if (mask == VariantMask::None) {
        e_.op("v_mov_b32", {W(dst), R(r_.seqlen_k)});
    } else if (mask == VariantMask::CausalTopLeft) {
        e_.op("v_add_u32", {W(dst), I(1), R(row)});
        e_.op("v_min_i32", {W(dst), R(r_.seqlen_k), R(dst)});
    } else {
        const Reg d = tmp_s("diagonal offset");
        e_.op("s_sub_i32", {W(d), R(r_.seqlen_k), R(r_.seqlen_q)});
        e_.op("s_add_i32", {W(d), R(d), I(1)});
        e_.op("v_add_u32", {W(dst), R(d), R(row)});
        e_.op("v_min_i32", {W(dst), R(r_.seqlen_k), R(dst)});
        e_.op("v_max_i32", {W(dst), I(0), R(dst)});
        free(d);
    }
}

// The row's window start (attention_mask.h: visible_keys): max(0, row + d - window_left)
// with d = 0 (causal top-left) or seqlen_k - seqlen_q, and 0 without a left window (c = -2^30);
// window_left is taken as at most 2^30.
void KernelBuilder::row_lo_of(const Reg& dst, const Reg& row, bool row_is_sgpr) {
    const Reg c = tmp_s("diagonal offset - window_left"), w = tmp_s("window_left, at most 2^30");
    e_.op("s_min_i32", {W(w), R(ZYFA_ARG(window_left)), I("0x40000000")});
    if (variant_.mask == VariantMask::CausalTopLeft) {
        e_.op("s_sub_i32", {W(c), I(0), R(w)});
    } else {
        e_.op("s_sub_i32", {W(c), R(r_.seqlen_k), R(r_.seqlen_q)});
        e_.op("s_sub_i32", {W(c), R(c), R(w)});
    }
    e_.op("s_cmp_lt_i32", {R(ZYFA_ARG(window_left)), I(0)});
    e_.op("s_cselect_b32", {W(c), I("0xc0000000"), R(c)}, "", "no left window: every row starts at key 0");
    if (row_is_sgpr) {
        e_.op("s_add_i32", {W(dst), R(row), R(c)});
        e_.op("s_max_i32", {W(dst), R(dst), I(0)});
    } else {
        e_.op("v_add_u32", {W(dst), R(c), R(row)});
        e_.op("v_max_i32", {W(dst), I(0), R(dst)});
    }
    free(c);
    free(w);
}

void KernelBuilder::key_ranges() {
    // Heaviest tiles (the last ones under a causal mask) first, as the HIP kernels do.
    const Reg t = tmp_s("tile index");
    e_.op("s_add_u32", {W(t), R(ZYFA_ARG(seqlen_q)), I(255)});
    e_.op("s_lshr_b32", {W(t), R(t), I(8)});
    e_.op("s_sub_u32", {W(t), R(t), I(1)});
    e_.op("s_sub_u32", {W(t), R(t), R(r_.group_x)});
    e_.op("s_lshl_b32", {W(r_.row0), R(t), I(8)}, "", "row0 = tile * 256");
    free(t);
    e_.op("s_cmp_ge_i32", {R(r_.row0), R(r_.seqlen_q)}, "", "tile past this sequence: nothing to do");
    e_.cbranch("scc1", ".Lkernel_end");

    const Reg group = tmp_s("query heads per kv head");
    uniform_udiv(group, ZYFA_ARG(heads_q), ZYFA_ARG(heads_kv));
    uniform_udiv(r_.head_kv, r_.group_y, group);
    free(group);

    const Reg v = tmp_v("wave index (vector)");
    e_.op("v_lshrrev_b32", {W(v), I(6), R(r_.thread_id)});
    e_.op_settled("v_readfirstlane_b32", {W(r_.wave), R(v)});
    free(v);
    e_.op("v_and_b32", {W(r_.col), I(31), R(r_.thread_id)});
    e_.op("v_bfe_u32", {W(r_.half), R(r_.thread_id), I(5), I(1)});

    const Reg first_row = tmp_s("first row of the wave"), last_row = tmp_s("last row of the wave"),
              hi = tmp_s("visible-key end");
    e_.op("s_lshl_b32", {W(first_row), R(r_.wave), I(5)});
    e_.op("s_add_u32", {W(first_row), R(first_row), R(r_.row0)});
    e_.op("v_add_u32", {W(r_.query), R(first_row), R(r_.col)});

    // Per lane: the end of its visible keys (0 past the sequence), minus 4 * half.
    row_hi_of(r_.row_hi_local, r_.query, false);
    e_.op("v_cmp_gt_i32", {I("vcc"), R(r_.seqlen_q), R(r_.query)});
    e_.op_settled("v_cndmask_b32", {W(r_.row_hi_local), I(0), R(r_.row_hi_local), I("vcc")}, "", "rows past the sequence see no key");
    {
        const Reg h4 = tmp_v("4 * half");
        e_.op("v_lshlrev_b32", {W(h4), I(2), R(r_.half)});
        e_.op("v_sub_u32", {W(r_.row_hi_local), R(r_.row_hi_local), R(h4)});
        if (windows()) {
            row_lo_of(r_.row_lo_local, r_.query, false);
            e_.op("v_sub_u32", {W(r_.row_lo_local), R(r_.row_lo_local), R(h4)});
        }
        free(h4);
    }
    if (windows()) {
        // The workgroup starts at its first row's window start (it grows with the row), a block
        // boundary below it, as the CPU model aligns blocks to multiples of 64 from key 0.
        row_lo_of(r_.block_start, r_.row0, true);
        e_.op("s_and_b32", {W(r_.block_start), R(r_.block_start), I(-kKeysPerBlock)});
    }

    // Workgroup: keys [0, keys_end) of the last row in the sequence (the end grows with the row).
    e_.op("s_add_u32", {W(last_row), R(r_.row0), I(255)});
    e_.op("s_add_i32", {W(hi), R(r_.seqlen_q), I(-1)});
    e_.op("s_min_i32", {W(last_row), R(last_row), R(hi)});
    row_hi_of(r_.keys_end, last_row, true);

    // Wave: the largest end (0 if no row of the wave is in the sequence) decides which blocks it
    // computes; the smallest (0 if some row is past the sequence) which blocks need no mask.
    e_.op("s_add_u32", {W(last_row), R(first_row), I(31)});
    e_.op("s_add_i32", {W(hi), R(r_.seqlen_q), I(-1)});
    e_.op("s_min_i32", {W(hi), R(last_row), R(hi)});
    row_hi_of(r_.wave_max_hi, hi, true);
    if (windows()) row_lo_of(r_.wave_max_lo, hi, true);  // the wave's last row in the sequence starts last
    e_.op("s_cmp_lt_i32", {R(first_row), R(r_.seqlen_q)});
    e_.op("s_cselect_b32", {W(r_.wave_max_hi), R(r_.wave_max_hi), I(0)});
    row_hi_of(r_.wave_min_hi, first_row, true);
    e_.op("s_cmp_lt_i32", {R(last_row), R(r_.seqlen_q)});
    e_.op("s_cselect_b32", {W(r_.wave_min_hi), R(r_.wave_min_hi), I(0)});
    if (windows()) {
        // A block needs no mask iff wave_max_lo <= block and block + 64 <= wave_min_hi, i.e.
        // block - wave_max_lo <= span = wave_min_hi - 64 - wave_max_lo (unsigned: a block before
        // wave_max_lo wraps). No such block (span < 0): wave_max_lo = 2^30 and span 0, so every
        // block is masked (both bounds: the per-lane ones decide).
        const Reg span = tmp_s("mask-free span");
        e_.op("s_sub_i32", {W(span), R(r_.wave_min_hi), I(kKeysPerBlock)});
        e_.op("s_sub_i32", {W(span), R(span), R(r_.wave_max_lo)});
        e_.op("s_cmp_lt_i32", {R(span), I(0)});
        e_.op("s_cselect_b32", {W(r_.wave_max_lo), I("0x40000000"), R(r_.wave_max_lo)});
        e_.op("s_cselect_b32", {W(r_.wave_min_hi), I(0), R(span)}, "", "wave_min_hi := the mask-free span");
        free(span);
    }
    free(first_row);
    free(last_row);
    free(hi);
}

void KernelBuilder::constants() {
    const Reg index = tmp_s("descale index * 4"), addr = tmp_s("descale address", 2, 2);
    e_.op("s_mul_i32", {W(index), R(r_.group_z), R(ZYFA_ARG(heads_kv))});
    e_.op("s_add_u32", {W(index), R(index), R(r_.head_kv)});
    e_.op("s_lshl_b32", {W(index), R(index), I(2)});
    const Reg qd = tmp_s("q descale"), kd = tmp_s("k descale"), vd = tmp_s("v descale");
    const Reg descales[3] = {qd, kd, vd};
    const Reg pointers[3] = {ZYFA_ARG(q_descale), ZYFA_ARG(k_descale), ZYFA_ARG(v_descale)};
    for (int i = 0; i < 3; ++i) {
        const std::string skip = e_.unique_label("descale_null");
        e_.op("s_mov_b32", {W(descales[i]), I("1.0")}, "", "a null descale pointer means 1");
        e_.op("s_cmp_eq_u64", {R(pointers[i]), I(0)});
        e_.cbranch("scc1", skip);
        e_.op("s_add_u32", {W(addr.at(0)), R(pointers[i].at(0)), R(index)});
        e_.op("s_addc_u32", {W(addr.at(1)), R(pointers[i].at(1)), I(0)});
        e_.op("s_load_dword", {W(descales[i]), R(addr), I("0x0")});
        e_.wait_loads({descales[i]}, "descale");
        e_.label(skip);
    }
    free(index);
    free(addr);

    // scale_log2 = ((softmax_scale * q_descale) * k_descale) * log2(e), the order of score_scale.h.
    const Reg sl = r_.scale_log2;
    e_.op("v_mov_b32", {W(sl), R(ZYFA_ARG(softmax_scale))});
    e_.op("v_mul_f32", {W(sl), R(qd), R(sl)});
    e_.op("v_mul_f32", {W(sl), R(kd), R(sl)});
    e_.op("v_mul_f32", {W(sl), I(float_literal(numerics::kLog2e)), R(sl)});
    const Reg s8 = r_.scale8_pair.at(0);
    if (exact_softmax()) {
        e_.op("v_mov_b32", {W(s8), R(sl)}, "",
              std::string(layout_.bf16 ? "bf16" : "fp8 exact") + ": x = S scale_log2 (score_scale.h), then x - m_new");
    } else if (scheme_ == PScheme::LeanP) {
        e_.op("v_mul_f32", {W(s8), I(float_literal(8.0f)), R(sl)}, "", "8 * scale_log2 (lean_p.h)");
    } else {
        e_.op("v_mov_b32", {W(s8), R(sl)}, "", "exact exponential (estimate only): scale_log2 itself");
    }
    // A negative scale: negate Q (its FP8 sign bits) and the scale, so that the row max is a max
    // of raw scores and masked scores can be -inf: S * c is unchanged bit for bit.
    const Reg flip = tmp_s("Q sign flip");
    const std::string positive = e_.unique_label("scale_positive");
    e_.op("s_mov_b32", {W(flip), I(0)});
    e_.op("v_cmp_gt_f32", {I("vcc"), I(0), R(sl)});
    e_.cbranch("vccz", positive);
    e_.op("s_mov_b32", {W(flip), I(layout_.bf16 ? "0x80008000" : "0x80808080")});
    e_.op("v_xor_b32", {W(sl), I("0x80000000"), R(sl)});
    e_.op("v_xor_b32", {W(s8), I("0x80000000"), R(s8)});
    e_.label(positive);
    e_.op("v_mov_b32", {W(r_.scale8_pair.at(1)), R(s8)});
    if (exact_softmax()) {
        // A masked score (-inf) times scale_log2 is -inf unless the scale is NaN, 0 or +inf (a
        // NaN, zero or infinite descale: the API passes none with BF16, FP8 may have one): then
        // exact_p_and_row_sum masks x again.
        const Reg finite = tmp_s("0 < scale_log2 < inf", 2, 2);
        e_.op("v_cmp_gt_f32", {I("vcc"), I(float_literal(__builtin_huge_valf())), R(sl)});
        e_.op("v_cmp_lt_f32", {W(finite), I(0), R(sl)});
        e_.op("s_and_b64", {I("vcc"), I("vcc"), R(finite)});
        e_.op("s_cmp_lg_u64", {I("vcc"), I(0)}, "", "the scale is uniform: any lane decides");
        e_.op("s_cselect_b32", {W(r_.remask), I(0), I(1)});
        free(finite);
    }
    free(qd);
    free(kd);

    if (layout_.bf16) e_.op("v_mov_b32", {W(r_.neg_inf), I(float_literal(-__builtin_huge_valf()))}, "", "-inf");
    else fp8_constants();
    e_.op("v_mov_b32", {W(r_.m), I(float_literal(-__builtin_huge_valf()))});
    e_.op("v_mov_b32", {W(r_.l), I(0)});
    for (int i = 0; i < r_.o_acc.count; ++i) e_.op("v_mov_b32", {W(r_.o_acc.at(i)), I(0)});
    e_.op("v_mov_b32", {W(r_.v_descale), R(vd)});
    free(vd);
    load_q(flip);
    free(flip);
}

void KernelBuilder::fp8_constants() {
    if (fp8_exact()) {
        e_.op("v_mov_b32", {W(r_.scale_one), I(127)});
        e_.op("v_mov_b32", {W(r_.neg_inf), I(float_literal(-__builtin_huge_valf()))}, "", "-inf");
        // EXACT: P = e4m3fn(p 2^8) (the model's fixed exponent), and the PV MFMA's E8M0 scale of P
        // takes the 2^8 back, as the model's accumulator_update does with 2^-8. No Lean P constant.
        // gfx942: e4m3fnuz, 2^7 (p 2^8 could reach 256 > 240); no scaled MFMA, so O accumulates
        // P V 2^7 and the epilogue takes 2^-7 back (write_output).
        const int base = numerics::p_scale_base_exponent(fp8_format());
        e_.op("v_mov_b32", {W(r_.p_scale), I(127 - base)}, "", "E8M0 2^-8");
        e_.op("v_mov_b32", {W(r_.p_up_pair.at(0)), I(float_literal(static_cast<float>(1 << base)))}, "", "2^8");
        e_.op("v_mov_b32", {W(r_.p_up_pair.at(1)), R(r_.p_up_pair.at(0))});
        return;
    }
    // gfx942 reads e4m3fnuz: code of 1.0 64, largest code 127 (240), base exponent 7 (lean_p.h,
    // block_scale.h); gfx950 e4m3fn: 56, 126, 8.
    const numerics::Fp8Format format = fp8_format();
    const int base = numerics::p_scale_base_exponent(format);
    e_.op("v_mov_b32", {W(r_.code_of_one), R(ZYFA_ARG(lean_centre))});
    e_.op("v_add_f32", {W(r_.code_of_one), I(float_literal(numerics::lean_p_code_of_one(format))),
                        R(r_.code_of_one)}, "", layout_.gfx942 ? "64 + lean centre" : "56 + lean centre");
    {
        const Reg t = tmp_s("max exponent - 8");
        e_.op("s_add_i32", {W(t), R(ZYFA_ARG(max_block_exponent)), I(-base)});
        e_.op("v_cvt_f32_i32", {W(r_.cap_gap), R(t)});
        e_.op("v_mov_b32", {W(r_.max_exponent), R(ZYFA_ARG(max_block_exponent))});
        free(t);
    }
    e_.op("v_mov_b32", {W(r_.scale_one), I(127)});
    e_.op("v_mov_b32", {W(r_.exp2_c0), I(float_literal(numerics::exp2_polynomial_coefficient(0)))});
    e_.op("v_mov_b32", {W(r_.neg_inf), I(float_literal(-__builtin_huge_valf()))}, "", "-inf");
    e_.op("v_mov_b32", {W(r_.max_code), I(float_literal(numerics::lean_p_max_code(format)))});
    for (int i = 0; i < 8; ++i) {
        if (layout_.gfx942) e_.op("v_mov_b32", {W(r_.ones.at(i)), I("0x40404040")}, "", i == 0 ? "e4m3fnuz 1.0 in every byte" : "");
        else e_.op("v_mov_b32", {W(r_.ones.at(i)), I("0x38383838")}, "", i == 0 ? "e4m3fn 1.0 in every byte" : "");
    }
    // gfx942: O starts as 0 2^base (any exponent: O is 0); the first block's deferred l update reads it.
    if (layout_.gfx942) e_.op("v_mov_b32", {W(r_.p_scale), I(-base)}, "", "-k of O's scale 2^k");
}

void KernelBuilder::load_q(const Reg& flip) {
    // Q^T operand: lane (col, half) holds 32 bytes of its query row per 64-wide step.
    const Reg base = tmp_s("Q row 0 address", 2, 2);
    e_.op("s_mov_b64", {W(base), R(ZYFA_ARG(q))});
    add_scaled64(base, ZYFA_ARG(q_stride_batch), r_.group_z);
    add_scaled64(base, ZYFA_ARG(q_stride_head), r_.group_y);
    add_scaled64(base, ZYFA_ARG(q_stride_seq), r_.first_q);
    const Reg addr_v = tmp_v("Q address", 2, 2), t = tmp_v("Q address part");
    e_.op("v_mov_b32", {W(addr_v.at(0)), R(base.at(0))});
    e_.op("v_mov_b32", {W(addr_v.at(1)), R(base.at(1))});
    e_.op("v_mad_u64_u32", {W(addr_v), W(r_.carry), R(r_.query), R(ZYFA_ARG(q_stride_seq).at(0)), R(addr_v)});
    e_.op("v_mul_lo_u32", {W(t), R(r_.query), R(ZYFA_ARG(q_stride_seq).at(1))});
    e_.op("v_add_u32", {W(addr_v.at(1)), R(addr_v.at(1)), R(t)});
    const int half_bytes = layout_.op_regs * 4;  // FP8 32, BF16 16
    e_.op("v_mad_u64_u32", {W(addr_v), W(r_.carry), R(r_.half), I(half_bytes), R(addr_v)}, "",
          "+ half * " + std::to_string(half_bytes) + " bytes");
    for (int i = 0; i < r_.q_op.count; ++i) e_.op("v_mov_b32", {W(r_.q_op.at(i)), I(0)});
    e_.op("v_cmp_gt_i32", {I("vcc"), R(r_.seqlen_q), R(r_.query)});
    e_.narrow_exec(r_.saved_exec, "vcc", "rows in the sequence load Q; the others keep 0");
    for (int step = 0; step < layout_.qk_steps; ++step) {
        for (int h = 0; h < layout_.op_regs / 4; ++h) {
            e_.op("global_load_dwordx4", {W(r_.q_op.at(layout_.op_regs * step + 4 * h, 4)), R(addr_v), I("off")},
                  "offset:" + std::to_string(layout_.step_bytes * step + 16 * h));
        }
    }
    e_.restore_exec(r_.saved_exec);
    e_.wait_loads({r_.q_op}, "Q");
    if (layout_.gfx942 && !layout_.bf16) {
        // e4m3fnuz: 0x00 (zero) and 0x80 (NaN) have no negative; flip only bytes with a nonzero
        // magnitude: bit 7 of ((q & 0x7f..) + 0x7f..) per byte (no carry leaves a byte).
        const Reg t = tmp_v("bytes with a magnitude");
        for (int i = 0; i < r_.q_op.count; ++i) {
            e_.op("v_and_b32", {W(t), I("0x7f7f7f7f"), R(r_.q_op.at(i))});
            e_.op("v_add_u32", {W(t), I("0x7f7f7f7f"), R(t)});
            e_.op("v_and_b32", {W(t), R(flip), R(t)});
            e_.op("v_xor_b32", {W(r_.q_op.at(i)), R(t), R(r_.q_op.at(i))});
        }
        free(t);
    } else {
    for (int i = 0; i < r_.q_op.count; ++i) e_.op("v_xor_b32", {W(r_.q_op.at(i)), R(flip), R(r_.q_op.at(i))});
    }
    free(base);
    free(addr_v);
    free(t);
}

void KernelBuilder::chunk_addresses() {
    // Block 0 addresses of this (batch, kv head) sequence; each lane adds its row and column in 64
    // bits (lane_address), so no stride is too large.
    const Reg k_base = tmp_s("K address of block 0", 2, 2), v_base = tmp_s("V address of block 0", 2, 2);
    if (paged()) {
        // Offsets from base 0, made relative to each wave's first row by paged_lane_offsets.
        e_.op("s_mov_b64", {W(k_base), I(0)});
        e_.op("s_mov_b64", {W(v_base), I(0)});
        if (layout_.gfx942 && layout_.bf16) lds_addresses_gfx942(k_base, v_base);
        else if (layout_.bf16) bf16_chunk_addresses(k_base, v_base);
        else fp8_chunk_addresses(k_base, v_base);
        paged_lane_offsets();
        free(k_base);
        free(v_base);
        return;
    }
    e_.op("s_mov_b64", {W(k_base), R(ZYFA_ARG(k))});
    add_scaled64(k_base, ZYFA_ARG(k_stride_batch), r_.group_z);
    add_scaled64(k_base, ZYFA_ARG(k_stride_head), r_.head_kv);
    add_scaled64(k_base, ZYFA_ARG(k_stride_seq), r_.first_k);
    if (windows()) add_scaled64(k_base, ZYFA_ARG(k_stride_seq), r_.block_start);  // the window's first block
    e_.op("s_mov_b64", {W(v_base), R(ZYFA_ARG(v))});
    add_scaled64(v_base, ZYFA_ARG(v_stride_batch), r_.group_z);
    add_scaled64(v_base, ZYFA_ARG(v_stride_head), r_.head_kv);
    add_scaled64(v_base, ZYFA_ARG(v_stride_seq), r_.first_k);
    if (windows()) add_scaled64(v_base, ZYFA_ARG(v_stride_seq), r_.block_start);
    e_.op("s_lshl_b64", {W(r_.k_block_step), R(ZYFA_ARG(k_stride_seq)), I(kKeysPerBlockLog2)});
    e_.op("s_lshl_b64", {W(r_.v_block_step), R(ZYFA_ARG(v_stride_seq)), I(kKeysPerBlockLog2)});
    if (layout_.gfx942 && layout_.bf16) {
        lds_addresses_gfx942(k_base, v_base);
    } else if (layout_.bf16) {
        bf16_chunk_addresses(k_base, v_base);
    } else {
        fp8_chunk_addresses(k_base, v_base);
    }
    free(k_base);
    free(v_base);
}

// address (VGPR pair) = base (SGPR pair) + row * stride (SGPR pair, bytes) + 16 * column, in 64 bits.
void KernelBuilder::lane_address(const Reg& address, const Reg& base, const Reg& row, const Reg& stride,
                                 const Reg& column) {
    const Reg t = tmp_v("row * stride, high word");
    e_.op("v_mov_b32", {W(address.at(0)), R(base.at(0))});
    e_.op("v_mov_b32", {W(address.at(1)), R(base.at(1))});
    e_.op("v_mad_u64_u32", {W(address), W(r_.carry), R(row), R(stride.at(0)), R(address)});
    e_.op("v_mul_lo_u32", {W(t), R(row), R(stride.at(1))});
    e_.op("v_add_u32", {W(address.at(1)), R(address.at(1)), R(t)});
    e_.op("v_mad_u64_u32", {W(address), W(r_.carry), R(column), I(16), R(address)});
    free(t);
}

// BF16: thread tid loads and stores key row tid / 8, 16-byte columns tid % 8 + 8 j of K (j <
// k_chunks_per_thread) and of V (j < 2): chunk j sits 128 j bytes after chunk 0 in memory and in
// the K rows of LDS; V chunk j holds dims 64 j + 8 (tid % 8) .. + 7, V^T rows 64 j apart.
void KernelBuilder::bf16_chunk_addresses(const Reg& k_base, const Reg& v_base) {
    const KernelLayout& L = layout_;
    const Reg c = tmp_v("chunk column"), t = tmp_v("chunk tmp"), row = tmp_v("chunk key row");
    e_.op("v_lshrrev_b32", {W(row), I(3), R(r_.thread_id)});
    e_.op("v_and_b32", {W(c), I(7), R(r_.thread_id)});
    lane_address(r_.k_global_addr, k_base, row, ZYFA_ARG(k_stride_seq), c);
    lane_address(r_.v_global_addr, v_base, row, ZYFA_ARG(v_stride_seq), c);
    e_.op("v_mul_u32_u24", {W(t), I(L.k_row_bytes), R(row)});
    e_.op("v_lshl_add_u32", {W(r_.k_lds_write.at(0)), R(c), I(4), R(t)});
    // V^T: dim 8 c + e of key row r at row 8 c + e, column vt_position(r) (2 bytes each).
    const Reg pos = r_.vt_lds_write.at(0);
    e_.op("v_bfe_u32", {W(pos), R(row), I(2), I(1)});
    e_.op("v_lshlrev_b32", {W(pos), I(5), R(pos)});
    e_.op("v_bfe_u32", {W(t), R(row), I(5), I(1)});
    e_.op("v_lshl_add_u32", {W(pos), R(t), I(4), R(pos)});
    e_.op("v_bfe_u32", {W(t), R(row), I(3), I(2)});
    e_.op("v_lshl_add_u32", {W(pos), R(t), I(2), R(pos)});
    e_.op("v_and_b32", {W(t), I(3), R(row)});
    e_.op("v_add_u32", {W(pos), R(pos), R(t)});
    e_.op("v_lshlrev_b32", {W(pos), I(1), R(pos)}, "", "2-byte elements");
    e_.op("v_mul_u32_u24", {W(t), I(std::to_string(8 * L.vt_row_bytes)), R(c)});
    e_.op("v_add_u32", {W(pos), R(pos), R(t)});
    e_.op("v_add_u32", {W(pos), I(std::to_string(L.vt_offset)), R(pos)});
    // Operand reads: K row 32 t + col at step * 32 + half * 16; V^T row 32 dt + col at half * 64 + step * 16.
    e_.op("v_mul_u32_u24", {W(t), I(L.k_row_bytes), R(r_.col)});
    e_.op("v_lshl_add_u32", {W(r_.k_lds_read.at(0)), R(r_.half), I(4), R(t)});
    e_.op("v_mul_u32_u24", {W(t), I(L.vt_row_bytes), R(r_.col)});
    e_.op("v_lshl_add_u32", {W(r_.v_lds_read.at(0)), R(r_.half), I(6), R(t)});
    e_.op("v_add_u32", {W(r_.v_lds_read.at(0)), I(std::to_string(L.vt_offset)), R(r_.v_lds_read.at(0))});
    for (int stage = 1; stage < L.stages; ++stage) {
        const std::string shift = std::to_string(stage * L.stage_bytes);
        for (const Reg& a : {r_.k_lds_read, r_.v_lds_read, r_.vt_lds_write, r_.k_lds_write})
            e_.op("v_add_u32", {W(a.at(stage)), I(shift), R(a.at(0))});
    }
    free(c);
    free(t);
    free(row);
}

void KernelBuilder::fp8_chunk_addresses(const Reg& k_base, const Reg& v_base) {
    const KernelLayout& L = layout_;
    const Reg i = tmp_v("chunk index"), c = tmp_v("chunk column"), t = tmp_v("chunk tmp");
    const Reg magic = tmp_s("1 / chunks per row (fixed point)");
    const unsigned per_row = static_cast<unsigned>(L.k_chunks_per_row);
    e_.op("s_mov_b32", {W(magic), I(std::to_string((0x100000000ull + per_row - 1) / per_row))});
    for (int j = 0; j < L.k_chunks_per_thread; ++j) {
        // chunk i = tid + 512 j: key row i / per_row, 16-byte column i % per_row.
        e_.op("v_add_u32", {W(i), I(std::to_string(512 * j)), R(r_.thread_id)});
        e_.op("v_mul_hi_u32", {W(r_.k_row.at(j)), R(magic), R(i)});
        e_.op("v_mul_u32_u24", {W(t), I(L.k_chunks_per_row), R(r_.k_row.at(j))});
        e_.op("v_sub_u32", {W(c), R(i), R(t)});
        lane_address(r_.k_global_addr.at(2 * j, 2), k_base, r_.k_row.at(j), ZYFA_ARG(k_stride_seq), c);
        e_.op("v_mul_u32_u24", {W(t), I(L.k_row_bytes), R(r_.k_row.at(j))});
        e_.op("v_lshl_add_u32", {W(r_.k_lds_write.at(L.stages * j)), R(c), I(4), R(t)});
        if (j > 0) {
            // Threads without a second chunk: row 2^32 - 1, which no (unsigned) row count exceeds.
            e_.op("v_cmp_gt_u32", {I("vcc"), I(std::to_string(kKeysPerBlock * L.k_chunks_per_row - kThreadsPerWorkgroup * j)), R(r_.thread_id)});
            e_.op_settled("v_cndmask_b32", {W(r_.k_row.at(j)), I(-1), R(r_.k_row.at(j)), I("vcc")});
        }
    }
    free(magic);
    // V: chunk tid, key row tid / 8, 16 dims 16 (tid % 8) ...; written transposed at
    // vt_position(row) (attention_fwd.h): 32 ((r >> 2) & 1) + 16 (r >> 5) + 4 ((r >> 3) & 3) + (r & 3).
    e_.op("v_lshrrev_b32", {W(r_.v_row), I(3), R(r_.thread_id)});
    e_.op("v_and_b32", {W(c), I(7), R(r_.thread_id)});
    lane_address(r_.v_global_addr, v_base, r_.v_row, ZYFA_ARG(v_stride_seq), c);
    const Reg pos = r_.vt_lds_write.at(0);
    e_.op("v_bfe_u32", {W(pos), R(r_.v_row), I(2), I(1)});
    e_.op("v_lshlrev_b32", {W(pos), I(5), R(pos)});
    e_.op("v_bfe_u32", {W(t), R(r_.v_row), I(5), I(1)});
    e_.op("v_lshl_add_u32", {W(pos), R(t), I(4), R(pos)});
    e_.op("v_bfe_u32", {W(t), R(r_.v_row), I(3), I(2)});
    e_.op("v_lshl_add_u32", {W(pos), R(t), I(2), R(pos)});
    e_.op("v_and_b32", {W(t), I(3), R(r_.v_row)});
    e_.op("v_add_u32", {W(pos), R(pos), R(t)});
    e_.op("v_mul_u32_u24", {W(t), I(std::to_string(16 * L.vt_row_bytes)), R(c)});
    e_.op("v_add_u32", {W(pos), R(pos), R(t)});
    e_.op("v_add_u32", {W(pos), I(std::to_string(L.vt_offset)), R(pos)});
    // Operand reads: K row 32 t + col at step * 64 + half * 32; V^T row 32 dt + col at half * 32.
    e_.op("v_mul_u32_u24", {W(t), I(L.k_row_bytes), R(r_.col)});
    e_.op("v_lshl_add_u32", {W(r_.k_lds_read.at(0)), R(r_.half), I(5), R(t)});
    e_.op("v_mul_u32_u24", {W(t), I(L.vt_row_bytes), R(r_.col)});
    e_.op("v_lshl_add_u32", {W(r_.v_lds_read.at(0)), R(r_.half), I(5), R(t)});
    e_.op("v_add_u32", {W(r_.v_lds_read.at(0)), I(std::to_string(L.vt_offset)), R(r_.v_lds_read.at(0))});
    // The same addresses in the other stages (one register per stage: ds offsets are 16-bit).
    for (int stage = 1; stage < L.stages; ++stage) {
        const std::string shift = std::to_string(stage * L.stage_bytes);
        for (const Reg& a : {r_.k_lds_read, r_.v_lds_read, r_.vt_lds_write})
            e_.op("v_add_u32", {W(a.at(stage)), I(shift), R(a.at(0))});
        for (int j = 0; j < L.k_chunks_per_thread; ++j)
            e_.op("v_add_u32", {W(r_.k_lds_write.at(L.stages * j + stage)), I(shift), R(r_.k_lds_write.at(L.stages * j))});
    }
    free(i);
    free(c);
    free(t);
}

}  // namespace gfx950_fp8
}  // namespace zyfa
