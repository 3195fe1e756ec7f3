// The kernel body: entry phases, the key-block loop and the epilogue.
//
// Two-wave ping-pong: each SIMD runs one wave of waves 0-3 and one of waves 4-7. Between two
// barriers, i.e. for key block i, they run:
//   waves 0-3: rowsum(i-1) PV(i-1) QK(i)   | mask + Lean P(i) + rescale   | store(i+1) load(i+2) | barrier
//   waves 4-7: mask + Lean P(i-1) + rescale | rowsum(i-1) PV(i-1) QK(i)    | store(i+1) load(i+2) | barrier
// so each SIMD alternates one wave's nine-MFMA cluster with the other wave's Lean P (VALU).
// Each wave reads block i's V^T operands into registers at the end of block i, before the
// barrier, and keeps S^T of block i in registers across it, so both groups read only stage i % 2
// between two barriers while block i + 1 is written into the other stage. After the loop, waves
// 0-3 drain PV of the last block, waves 4-7 its Lean P and PV.
//
// Phases:
//   load    (end of block i) issue block i + 2's K/V global loads into registers
//   QK      S^T = K Q^T from LDS
//   mask    only where some row of the wave does not see the whole block
//   Lean P  row max (NaN-propagating), alpha and O *= alpha when some running max moved, k,
//           codes packed as the FP8 P operand
//   rowsum  one MFMA: 1 . P 2^-k
//   PV      O^T += V^T P^T 2^-k (four MFMAs); l = l alpha + row sum
//   store   (end of block i) block i + 1's K/V registers into LDS; s_waitcnt lgkmcnt(0); s_barrier
// The two LDS stages are unrolled, so every LDS address register and offset is static. A block
// some row of a wave does not see is computed anyway with those keys masked (codes 0).
#include <cstddef>
#include <stdexcept>

#include "common/attention_kernel_args.h"
#include "common/exp2_polynomial.h"
#include "common/score_scale.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

void KernelBuilder::needs_mask_test(const Reg& block) {
    if (windows()) {
        const Reg offset = tmp_s("block - largest window start");
        e_.op("s_sub_u32", {W(offset), R(block), R(r_.wave_max_lo)});
        e_.op("s_cmp_gt_u32", {R(offset), R(r_.wave_min_hi)}, "", "does some row of the wave miss a key of the block?");
        free(offset);
        return;
    }
    const Reg end = tmp_s("block end");
    e_.op("s_add_u32", {W(end), R(block), I(kKeysPerBlock)});
    e_.op("s_cmp_gt_i32", {R(end), R(r_.wave_min_hi)}, "", "does some row of the wave miss a key of the block?");
    free(end);
}

void KernelBuilder::softmax(const Reg& block) {
    const std::string no_mask = e_.unique_label("no_mask"), max_done = e_.unique_label("row_max_done");
    e_.pad_for_valu({r_.s_acc}, "QK MFMA result -> VALU");
    needs_mask_test(block);
    const Reg m_new = tmp_v("row max of raw scores, then m_new");
    e_.cbranch("scc0", no_mask);
    mask_block(block);
    if (layout_.gfx942) row_max_gfx942(m_new, true);
    else row_max(m_new, true);
    e_.branch(max_done);
    e_.label(no_mask);
    if (layout_.gfx942) row_max_gfx942(m_new, false);
    else row_max(m_new, false);  // the steady state: no mask, no guard
    e_.label(max_done);
    if (exact_softmax()) {
        exact_alpha_and_bias(m_new);
        free(m_new);
        exact_p_and_row_sum(block);
        return;
    }
    alpha_and_bias(m_new);
    free(m_new);
    if (scheme_ == PScheme::LeanP) lean_p_codes();
    else exact_p_codes();
}

// BF16: PV of the block before the one in `stage`, from the previous stage (its first operands
// read before the barrier). FP8: fp8_mfma_cluster.
void KernelBuilder::previous_pv_bf16(int stage) { pv_mfma_bf16((stage + layout_.stages - 1) % layout_.stages); }

void KernelBuilder::last_pv(int stage) {
    if (layout_.bf16) pv_mfma_bf16(stage);
    else pv_mfma(0);
}

void KernelBuilder::finish_block(int stage, const std::string& exit_label) {
    const std::string no_store = e_.unique_label("no_store");
    e_.op("s_add_u32", {W(r_.next_block), R(r_.block), I(kKeysPerBlock)});
    e_.op("s_cmp_lt_i32", {R(r_.next_block), R(r_.keys_end)}, "", "store: is there a next block?");
    e_.cbranch("scc0", no_store);
    store_block_to_lds((stage + 1) % layout_.stages);
    e_.op("s_add_u32", {W(r_.load_block), R(r_.next_block), I(kKeysPerBlock)});
    e_.op("s_cmp_lt_i32", {R(r_.load_block), R(r_.keys_end)}, "", "load: and the one after?");
    e_.cbranch("scc0", no_store);
    issue_block_loads();
    e_.label(no_store);
    e_.waitcnt(-1, 0, "LDS writes visible and reads done before the barrier");
    e_.op("s_barrier", {});
    e_.op("s_mov_b32", {W(r_.block), R(r_.next_block)});
    e_.op("s_cmp_ge_i32", {R(r_.block), R(r_.keys_end)});
    e_.cbranch("scc1", exit_label);
}

// FP8: one wave's MFMA cluster: the previous block's row sum and PV (none before the first
// block), l's update, QK of this block. Each LDS read into the ring is issued right after the MFMA
// that last reads its slot, so that it runs in the shadow of the MFMAs that follow (the wave
// waits on the matrix pipe there anyway): K operand j (slot j % 4) after PV tile j, or after QK
// of operand j - 4; V^T tile dt of this block (for the next PV) after the last QK reading slot dt.
void KernelBuilder::fp8_mfma_cluster(int stage) {
    const KernelLayout& L = layout_;
    const int operands = 2 * L.qk_steps;
    if (L.o_tiles != ring_slots() || operands < ring_slots()) throw std::logic_error("FP8 cluster: ring layout");
    const std::string first = e_.unique_label("no_previous_block"), qk = e_.unique_label("qk");
    e_.op("s_cmp_eq_u32", {R(r_.block), R(r_.block_start)}, "", "PV of the previous block");
    e_.cbranch("scc1", first);
    row_sum_mfma();
    for (int dt = 0; dt < L.o_tiles; ++dt) {
        pv_mfma_tile(0, dt);
        read_k_operand(stage, dt);
    }
    e_.branch(qk);
    e_.label(first);
    for (int j = 0; j < ring_slots(); ++j) read_k_operand(stage, j);
    e_.label(qk);
    update_running_sum();  // the previous block's (alpha 1, row sum 0 before the first); before QK reuses S^T
    for (int i = 0; i < operands; ++i) {
        qk_mfma_step(i);
        if (i + ring_slots() < operands) read_k_operand(stage, i + ring_slots());
        else read_v_operand(stage, i % ring_slots());
    }
}

// Waves 0-3: the previous block's rowsum / PV, then QK of this block (one MFMA cluster of nine),
// then Lean P of this block.
void KernelBuilder::key_block_mfma_first(int stage, const std::string& exit_label) {
    e_.op("s_setprio", {I(1)}, "", "waves 0-3, stage " + std::to_string(stage) + ": MFMA cluster first");
    if (!layout_.bf16) {
        fp8_mfma_cluster(stage);  // the previous block's V^T operands were read before the barrier
        e_.op("s_setprio", {I(0)});
        softmax(r_.block);
        finish_block(stage, exit_label);
        return;
    }
    // The previous block's V^T operands were read before the barrier: its MFMAs start at once.
    const std::string first = e_.unique_label("no_previous_block");
    e_.op("s_cmp_eq_u32", {R(r_.block), R(r_.block_start)}, "", "PV of the previous block");
    e_.cbranch("scc1", first);
    row_sum_mfma();
    previous_pv_bf16(stage);
    e_.label(first);
    update_running_sum();
    qk_mfma_bf16(stage);
    e_.op("s_setprio", {I(0)});
    // For the next body's PV, read before the barrier (after it block i + 2 overwrites the stage);
    // issued now, their latency hides behind Lean P.
    issue_v_operand_reads_bf16(stage);
    softmax(r_.block);
    finish_block(stage, exit_label);
}

// Waves 4-7: Lean P of the previous block (while waves 0-3 keep the matrix pipe busy), then its
// rowsum / PV and QK of this block.
void KernelBuilder::key_block_softmax_first(int stage, const std::string& exit_label) {
    const std::string first = e_.unique_label("no_previous_block");
    e_.op("s_cmp_eq_u32", {R(r_.block), windows() ? R(r_.block_start) : I(0)}, "",
          "waves 4-7, stage " + std::to_string(stage) + ": Lean P of the previous block");
    e_.cbranch("scc1", first);
    {
        const Reg previous = tmp_s("previous key block");
        e_.op("s_add_i32", {W(previous), R(r_.block), I(-kKeysPerBlock)});
        softmax(previous);
        free(previous);
    }
    if (!layout_.bf16) {
        e_.label(first);
        e_.op("s_setprio", {I(1)}, "", "MFMA cluster");
        fp8_mfma_cluster(stage);
        e_.op("s_setprio", {I(0)});
        finish_block(stage, exit_label);
        return;
    }
    e_.op("s_setprio", {I(1)}, "", "MFMA cluster");
    row_sum_mfma();
    previous_pv_bf16(stage);
    e_.label(first);
    update_running_sum();
    e_.op("s_setprio", {I(1)}, "", "MFMA cluster");
    qk_mfma_bf16(stage);
    e_.op("s_setprio", {I(0)});
    issue_v_operand_reads_bf16(stage);
    finish_block(stage, exit_label);
}

void KernelBuilder::build() {
    if (layout_.gfx942 && layout_.bf16) {
        build_gfx942();
        return;
    }
    allocate_registers();
    load_arguments();
    sequence_span();
    key_ranges();
    constants();
    chunk_addresses();
    if (layout_.gfx942) gfx942_constants();  // FP8 EXACT on gfx942: ds_bpermute, bf16 output

    const std::string done = ".Lkey_blocks_done";
    if (windows()) {
        // The first block of the window (block 0 without one).
        e_.op("s_cmp_le_i32", {R(r_.keys_end), R(r_.block_start)}, "", "no visible key: straight to the epilogue");
        e_.cbranch("scc1", done);
        e_.op("s_mov_b32", {W(r_.block), R(r_.block_start)});
        e_.op("s_mov_b32", {W(r_.load_block), R(r_.block_start)});
    } else {
        e_.op("s_cmp_le_i32", {R(r_.keys_end), I(0)}, "", "no visible key: straight to the epilogue");
        e_.cbranch("scc1", done);
        e_.op("s_mov_b32", {W(r_.block), I(0)});
        e_.op("s_mov_b32", {W(r_.load_block), I(0)});
    }
    const std::string single = e_.unique_label("single_block");
    if (paged()) paged_prefetch_entry(r_.page_entry, r_.load_block, 0);  // the first block's page
    issue_block_loads();
    store_block_to_lds(0);
    if (windows()) e_.op("s_add_u32", {W(r_.load_block), R(r_.block_start), I(kKeysPerBlock)});
    else e_.op("s_mov_b32", {W(r_.load_block), I(kKeysPerBlock)});
    e_.op("s_cmp_lt_i32", {R(r_.load_block), R(r_.keys_end)});
    e_.cbranch("scc0", single);
    issue_block_loads();
    e_.label(single);
    e_.waitcnt(-1, 0, "block 0 in LDS");
    e_.op("s_barrier", {});
    // Both groups: alpha 1 and row sum 0 make the first block's deferred l update l = l * 1 + 0.
    e_.op("v_mov_b32", {W(r_.alpha_pair.at(0)), I("1.0")});
    e_.op("v_mov_b32", {W(r_.row_sum.at(0)), I(0)});
    const int stages = layout_.stages;
    const std::string softmax_first = ".Lsoftmax_first_group";
    e_.op("s_cmp_ge_u32", {R(r_.wave), I(4)}, "", "waves 4-7 run Lean P half a block later");
    e_.cbranch("scc1", softmax_first);

    const std::string mfma_first_loop = ".Lmfma_first_loop";
    e_.label(mfma_first_loop);
    std::string drains[KernelLayout::kMaxStages];
    for (int stage = 0; stage < stages; ++stage) {
        drains[stage] = ".Lmfma_first_drain_stage" + std::to_string(stage);
        key_block_mfma_first(stage, drains[stage]);
    }
    e_.branch(mfma_first_loop);
    for (int stage = 0; stage < stages; ++stage) {
        e_.label(drains[stage]);  // V^T operands of the last block are in the ring already (BF16: the first ones)
        row_sum_mfma();
        last_pv(stage);
        update_running_sum();
        e_.branch(done);
    }

    e_.label(softmax_first);
    const std::string softmax_first_loop = ".Lsoftmax_first_loop";
    // FP8: one drain (the last block's S and V^T operands are in registers); BF16: one per stage
    // (the rest of its V^T operands are read from its stage).
    const int softmax_drains = layout_.bf16 ? stages : 1;
    std::string softmax_drain[KernelLayout::kMaxStages];
    for (int stage = 0; stage < softmax_drains; ++stage)
        softmax_drain[stage] = layout_.bf16 ? ".Lsoftmax_first_drain_stage" + std::to_string(stage) : ".Lsoftmax_first_drain";
    e_.label(softmax_first_loop);
    for (int stage = 0; stage < stages; ++stage) key_block_softmax_first(stage, softmax_drain[layout_.bf16 ? stage : 0]);
    e_.branch(softmax_first_loop);
    for (int stage = 0; stage < softmax_drains; ++stage) {
        e_.label(softmax_drain[stage]);  // Lean P and PV of the last block (its S and V^T operands are in registers)
        {
            const Reg previous = tmp_s("last key block");
            e_.op("s_add_i32", {W(previous), R(r_.block), I(-kKeysPerBlock)});
            softmax(previous);
            free(previous);
        }
        row_sum_mfma();
        last_pv(stage);
        update_running_sum();
        if (stage + 1 < softmax_drains) e_.branch(done);
    }
    e_.label(done);
    epilogue();
    e_.label(".Lkernel_end");
    e_.op("s_endpgm", {});
}

void KernelBuilder::epilogue() {
    write_output();
    write_lse();
}

void KernelBuilder::write_output() {
    if (layout_.gfx942) {
        // m's max dropped NaN scores (v_max3_f32), whose p made l NaN: m + 0 l is NaN there.
        e_.op("v_fma_f32", {W(r_.m), R(r_.l), I(0), R(r_.m)}, "", "gfx942: m = NaN where l is NaN");
        if (fp8_exact()) {
            // No scaled MFMA: O holds P V with P = p 2^7 (fp8_constants); 2^-7 is exact.
            const int base = numerics::p_scale_base_exponent(fp8_format());
            e_.op("v_ldexp_f32", {W(r_.v_descale), R(r_.v_descale), I(-base)}, "", "gfx942 FP8 EXACT: v_descale 2^-7");
        }
        // LEAN: O holds O 2^k, k the last block's exponent (alpha_and_bias_gfx942); its 2^-k is
        // applied to the factor after the division (exact: the factor stays normal); before it, with a sink's
        // alpha, v_descale 2^-k alpha could fall below 2^-96, the division's scaled range.
    }
    fold_sink();
    // out_scale = l > 0 ? v_descale / l : 0 (correctly rounded division, as the model's); NaN
    // where m is NaN or +inf.
    const Reg l_positive = tmp_s("l > 0", 2, 2);
    const Reg l_safe = tmp_v("l or 1"), den = tmp_v("div den"), num = tmp_v("div num"), rcp = tmp_v("div rcp"),
              q = tmp_v("div quotient"), err = tmp_v("div error"), scale = tmp_v("out scale (pair)", 2, 2);
    e_.op("v_cmp_lt_f32", {W(l_positive), I(0), R(r_.l)}, "", "epilogue: O = acc * (v_descale / l)");
    e_.op_settled("v_cndmask_b32", {W(l_safe), I("1.0"), R(r_.l), R(l_positive)});
    e_.op("v_div_scale_f32", {W(den), W(r_.carry), R(l_safe), R(l_safe), R(r_.v_descale)});
    e_.op("v_div_scale_f32", {W(num), I("vcc"), R(r_.v_descale), R(l_safe), R(r_.v_descale)});
    e_.op("v_rcp_f32", {W(rcp), R(den)});
    e_.nop(1, "transcendental -> dependent VALU");
    e_.op("v_fma_f32", {W(err), R(den, "-"), R(rcp), I("1.0")});
    e_.op("v_fma_f32", {W(rcp), R(err), R(rcp), R(rcp)});
    e_.op("v_mul_f32", {W(q), R(num), R(rcp)});
    e_.op("v_fma_f32", {W(err), R(den, "-"), R(q), R(num)});
    e_.op("v_fma_f32", {W(q), R(err), R(rcp), R(q)});
    e_.op("v_fma_f32", {W(err), R(den, "-"), R(q), R(num)});
    e_.op("v_div_fmas_f32", {W(q), R(err), R(rcp), R(q)});
    e_.op("v_cmp_gt_f32", {I("vcc"), I(float_literal(__builtin_huge_valf())), R(r_.m)}, "",
          "m NaN or +inf (the row saw a NaN or +inf score): O = NaN");
    e_.op("v_div_fixup_f32", {W(q), R(q), R(l_safe), R(r_.v_descale)});
    e_.op("v_cndmask_b32", {W(scale.at(0)), I(0), R(q), R(l_positive)});
    e_.op("v_mov_b32", {W(scale.at(1)), I(float_literal(__builtin_nanf("")))}, "", "(a literal and VCC exceed the constant bus)");
    e_.op("v_cndmask_b32", {W(scale.at(0)), R(scale.at(1)), R(scale.at(0)), I("vcc")});
    if (layout_.gfx942 && !layout_.bf16 && !fp8_exact()) {
        e_.op("v_ldexp_f32", {W(scale.at(0)), R(scale.at(0)), R(r_.p_scale)}, "", "gfx942 FP8 LEAN: the factor 2^-k");
    }
    e_.op("v_mov_b32", {W(scale.at(1)), R(scale.at(0))});
    free(den);
    free(num);
    free(rcp);
    free(q);
    free(err);
    e_.pad_for_valu({r_.o_acc}, "PV MFMA result -> VALU");
    for (int i = 0; i < r_.o_acc.count / 2; ++i) {
        e_.op("v_pk_mul_f32", {W(r_.o_acc.at(2 * i, 2)), R(r_.o_acc.at(2 * i, 2)), R(scale)});
    }
    free(scale);

    // Element offset of (batch, head, first_q + query, 4 half), then bytes per the output dtype.
    const Reg offset = tmp_s("O element offset", 2, 2);
    e_.op("s_mov_b64", {W(offset), I(0)});
    add_scaled64(offset, arg(offsetof(AttnKernelArgs, o_stride_batch), 8), r_.group_z);
    add_scaled64(offset, arg(offsetof(AttnKernelArgs, o_stride_head), 8), r_.group_y);
    add_scaled64(offset, arg(offsetof(AttnKernelArgs, o_stride_seq), 8), r_.first_q);
    const Reg o_stride_seq = arg(offsetof(AttnKernelArgs, o_stride_seq), 8);
    const Reg addr = tmp_v("O address", 2, 2), t = tmp_v("O address part");
    e_.op("v_mov_b32", {W(addr.at(0)), R(offset.at(0))});
    e_.op("v_mov_b32", {W(addr.at(1)), R(offset.at(1))});
    e_.op("v_mad_u64_u32", {W(addr), W(r_.carry), R(r_.query), R(o_stride_seq.at(0)), R(addr)});
    e_.op("v_mul_lo_u32", {W(t), R(r_.query), R(o_stride_seq.at(1))});
    e_.op("v_add_u32", {W(addr.at(1)), R(addr.at(1)), R(t)});
    e_.op("v_mad_u64_u32", {W(addr), W(r_.carry), R(r_.half), I(4), R(addr)}, "", "+ 4 half elements");
    free(offset);

    const Reg o_ptr = arg(offsetof(AttnKernelArgs, o), 8), dtype = arg(offsetof(AttnKernelArgs, out_dtype), 4);
    const std::string half = e_.unique_label("out_16bit"), fp16 = e_.unique_label("out_fp16"),
                      stored = e_.unique_label("out_stored");
    e_.op("v_cmp_gt_i32", {I("vcc"), R(r_.seqlen_q), R(r_.query)});
    e_.narrow_exec(r_.saved_exec, "vcc", "rows past the sequence write nothing");
    e_.op("s_cmp_eq_u32", {R(dtype), I(static_cast<int>(kKernelFp32))});
    e_.cbranch("scc0", half);
    // fp32: 4 consecutive dims per register quad, dims 32 dt + 8 g + 4 half + (0..3).
    e_.op("v_lshlrev_b64", {W(addr), I(2), R(addr)});
    e_.op("v_lshl_add_u64", {W(addr), R(addr), I(0), R(o_ptr)});
    for (int dt = 0; dt < layout_.o_tiles; ++dt) {
        for (int g = 0; g < 4; ++g) {
            e_.op("global_store_dwordx4", {R(addr), R(o_tile(dt).at(4 * g, 4)), I("off")},
                  "offset:" + std::to_string((32 * dt + 8 * g) * 4), dt == 0 && g == 0 ? "O fp32" : "");
        }
    }
    e_.branch(stored);
    // bf16 or fp16: pairs converted with round to nearest even (the CPU model's float_to_bf16 /
    // float_to_fp16), one conversion per two elements.
    e_.label(half);
    e_.op("v_lshlrev_b64", {W(addr), I(1), R(addr)});
    e_.op("v_lshl_add_u64", {W(addr), R(addr), I(0), R(o_ptr)});
    auto store_pairs = [&](const char* convert, const char* note) {
        for (int dt = 0; dt < layout_.o_tiles; ++dt) {
            for (int g = 0; g < 4; ++g) {
                const Reg packed = r_.operand_ring.at(8 * dt + 2 * g, 2);
                const Reg src = o_tile(dt).at(4 * g, 4);
                e_.op(convert, {W(packed.at(0)), R(src.at(0)), R(src.at(1))}, "", dt == 0 && g == 0 ? note : "");
                e_.op(convert, {W(packed.at(1)), R(src.at(2)), R(src.at(3))});
                e_.op("global_store_dwordx2", {R(addr), R(packed), I("off")}, "offset:" + std::to_string((32 * dt + 8 * g) * 2));
            }
        }
    };
    if (layout_.gfx942) {
        // bf16 only (the manifest lists no fp16 output for gfx942: no v_cvt_pk_f16_f32 there).
        for (int dt = 0; dt < layout_.o_tiles; ++dt) {
            for (int g = 0; g < 4; ++g) {
                const Reg packed = r_.operand_ring.at(8 * dt + 2 * g, 2);
                const Reg src = o_tile(dt).at(4 * g, 4);
                pack_bf16_pair_gfx942(packed.at(0), src.at(0), src.at(1), true);
                pack_bf16_pair_gfx942(packed.at(1), src.at(2), src.at(3), true);
                e_.op("global_store_dwordx2", {R(addr), R(packed), I("off")}, "offset:" + std::to_string((32 * dt + 8 * g) * 2),
                      dt == 0 && g == 0 ? "O bf16 (RNE)" : "");
            }
        }
        e_.label(stored);
    } else {
    e_.op("s_cmp_eq_u32", {R(dtype), I(static_cast<int>(kKernelBf16))});
    e_.cbranch("scc0", fp16);
    store_pairs("v_cvt_pk_bf16_f32", "O bf16 (RNE)");
    e_.branch(stored);
    e_.label(fp16);
    store_pairs("v_cvt_pk_f16_f32", "O fp16 (RNE)");
    e_.label(stored);
    }
    e_.restore_exec(r_.saved_exec);
    free(addr);
    free(t);

    // lse needs l_positive and l_safe: keep them for write_lse().
    lse_l_positive_ = l_positive;
    lse_l_safe_ = l_safe;
}

// Attention sinks (params.sinks; common/attention_sink.h, fold_sink), when the pointer is set: the
// head's logit z = sinks[head] log2 e joins the finished row as one more score that multiplies no
// value: m' = max(m, z) keeping NaN, alpha = 2^(m - m'), l' = l alpha + 2^(z - m'), O's factor
// (v_descale alpha) / l' and the lse of m' and l' (write_output, write_lse, unchanged). Both
// exponentials are the FMA polynomial, as on every backend; each product and sum rounds once, as
// the model's. Without sinks a scalar branch skips it all: those rows keep their bits.
void KernelBuilder::fold_sink() {
    const Reg sinks = arg(offsetof(AttnKernelArgs, sinks), 8);
    const std::string none = e_.unique_label("no_sink");
    e_.op("s_cmp_eq_u64", {R(sinks), I(0)}, "", "sinks: fold the head's sink into m, l and O's factor");
    e_.cbranch("scc1", none);
    const Reg addr = tmp_s("sink address", 2, 2), sink = tmp_s("sinks[head]");
    e_.op("s_lshl_b32", {W(sink), R(r_.group_y), I(2)});
    e_.op("s_add_u32", {W(addr.at(0)), R(sinks.at(0)), R(sink)});
    e_.op("s_addc_u32", {W(addr.at(1)), R(sinks.at(1)), I(0)});
    e_.op("s_load_dword", {W(sink), R(addr), I("0x0")});
    e_.wait_loads({sink}, "sink");
    free(addr);
    const Reg z = tmp_v("z = sink log2 e"), m_new = tmp_v("m' = max(m, z)"), x = tmp_v("exp2 argument"),
              alpha = tmp_v("alpha = 2^(m - m')"), term = tmp_v("2^(z - m')");
    e_.op("v_mov_b32", {W(z), R(sink)});
    free(sink);
    e_.op("v_mul_f32", {W(z), I(float_literal(numerics::kLog2e)), R(z)}, "", "z = sink log2 e");
    if (layout_.gfx942) {
        // No v_maximum3_f32: v_max_f32 drops a NaN, so a NaN in m or z (or m + z's inf - inf,
        // whose rows are poisoned either way: O and lse NaN) is put back.
        const Reg sum = tmp_v("m + z");
        e_.op("v_max_f32", {W(m_new), R(r_.m), R(z)});
        e_.op("v_add_f32", {W(sum), R(r_.m), R(z)});
        e_.op("v_cmp_u_f32", {I("vcc"), R(sum), R(sum)});
        e_.op_settled("v_cndmask_b32", {W(m_new), R(m_new), R(sum), I("vcc")}, "", "m' = max(m, z), NaN kept");
        free(sum);
    } else {
        e_.op("v_maximum3_f32", {W(m_new), R(r_.m), R(z), R(z)}, "", "m' = max(m, z), NaN kept");
    }
    // LEAN keeps the polynomial's leading coefficient in a register; BF16 and FP8 EXACT load it here.
    const Reg c0 = exact_softmax() ? tmp_v("exp2 polynomial coefficient 0") : r_.exp2_c0;
    if (exact_softmax()) e_.op("v_mov_b32", {W(c0), I(float_literal(numerics::exp2_polynomial_coefficient(0)))});
    e_.op("v_sub_f32", {W(x), R(r_.m), R(m_new)});
    exp2_without_transcendental(alpha, x, c0);
    e_.op("v_sub_f32", {W(x), R(z), R(m_new)});
    exp2_without_transcendental(term, x, c0);
    if (exact_softmax()) free(c0);
    e_.op("v_mul_f32", {W(r_.l), R(r_.l), R(alpha)}, "", "l' = l alpha + 2^(z - m')");
    e_.op("v_add_f32", {W(r_.l), R(r_.l), R(term)});
    e_.op("v_mul_f32", {W(r_.v_descale), R(r_.v_descale), R(alpha)}, "", "O's factor: (v_descale alpha) / l'");
    e_.op("v_mov_b32", {W(r_.m), R(m_new)}, "", "m = m'");
    free(z);
    free(m_new);
    free(x);
    free(alpha);
    free(term);
    e_.label(none);
}

// dst = exp2_without_transcendental(x) (common/exp2_polynomial.h), the one emitter of it (LEAN's
// alpha, the sinks' fold): 0 for x < -126, -inf or NaN; else 2^f by the degree-7 polynomial times
// 2^n, x = n + f, c0 a register holding the leading coefficient (the first FMA's multiplicand).
// Where it is kept x >= -126, and x <= 0 in every use, so v_rndne_f32 is round_half_even and
// v_ldexp_f32 the product with 2^n. vcc holds x >= -126 from the first instruction to the last.
void KernelBuilder::exp2_without_transcendental(const Reg& dst, const Reg& x, const Reg& c0) {
    const Reg n = tmp_v("round(x)"), f = tmp_v("x - n");
    e_.op("v_cmp_le_f32", {I("vcc"), I(float_literal(numerics::kExp2PolynomialLowest)), R(x)}, "",
          "read after the polynomial (lane mask: 2 wait states)");
    e_.op("v_rndne_f32", {W(n), R(x)});
    e_.op("v_sub_f32", {W(f), R(x), R(n)});
    e_.op("v_fmaak_f32", {W(dst), R(c0), R(f), I(float_literal(numerics::exp2_polynomial_coefficient(1)))});
    for (int i = 2; i < numerics::kExp2PolynomialTerms; ++i) {
        e_.op("v_fmaak_f32", {W(dst), R(dst), R(f), I(float_literal(numerics::exp2_polynomial_coefficient(i)))});
    }
    e_.op("v_cvt_i32_f32", {W(n), R(n)});
    e_.op("v_ldexp_f32", {W(dst), R(dst), R(n)}, "", "2^f 2^n");
    e_.op("v_cndmask_b32", {W(dst), I(0), R(dst), I("vcc")}, "", "x < -126, -inf or NaN: 0");
    free(n);
    free(f);
}

void KernelBuilder::write_lse() {
    const Reg lse_ptr = arg(offsetof(AttnKernelArgs, lse), 8);
    const std::string none = e_.unique_label("no_lse");
    e_.op("s_cmp_eq_u64", {R(lse_ptr), I(0)}, "", "lse = ln2 (m + log2 l), -inf where l = 0, NaN where m is NaN or +inf");
    e_.cbranch("scc1", none);
    const Reg value = tmp_v("lse"), t = tmp_v("lse tmp");
    e_.op("v_log_f32", {W(t), R(lse_l_safe_)});
    e_.nop(1, "transcendental -> dependent VALU");
    e_.op("v_add_f32", {W(t), R(r_.m), R(t)});
    e_.op("v_cmp_gt_f32", {I("vcc"), I(float_literal(__builtin_huge_valf())), R(r_.m)});
    e_.op("v_mul_f32", {W(t), I(float_literal(numerics::kLn2)), R(t)});
    e_.op("v_cndmask_b32", {W(value), R(r_.neg_inf), R(t), R(lse_l_positive_)});
    e_.op("v_mov_b32", {W(t), I(float_literal(__builtin_nanf("")))});
    e_.op("v_cndmask_b32", {W(value), R(t), R(value), I("vcc")});
    // Row index: varlen head * total_q + first_q + query, else (batch * heads_q + head) * seqlen_q + query.
    const Reg fixed = tmp_s("lse row base (fixed length)"), varlen = tmp_s("lse row base (varlen)");
    e_.op("s_mul_i32", {W(fixed), R(r_.group_z), R(arg(offsetof(AttnKernelArgs, heads_q), 4))});
    e_.op("s_add_u32", {W(fixed), R(fixed), R(r_.group_y)});
    e_.op("s_mul_i32", {W(fixed), R(fixed), R(arg(offsetof(AttnKernelArgs, seqlen_q), 4))});
    e_.op("s_mul_i32", {W(varlen), R(r_.group_y), R(r_.lse_total_q)});
    e_.op("s_add_u32", {W(varlen), R(varlen), R(r_.first_q)});
    e_.op("s_cmp_lg_u64", {R(arg(offsetof(AttnKernelArgs, cu_seqlens_q), 8)), I(0)});
    e_.op("s_cselect_b32", {W(fixed), R(varlen), R(fixed)});
    const Reg index = tmp_v("lse index"), addr = tmp_v("lse address", 2, 2);
    e_.op("v_add_u32", {W(index), R(fixed), R(r_.query)});
    e_.op("v_mad_u64_u32", {W(addr), W(r_.carry), R(index), I(4), R(lse_ptr)});
    const Reg first_half = tmp_s("lanes of half 0", 2, 2);
    e_.op("v_cmp_eq_u32", {W(first_half), I(0), R(r_.half)});
    e_.op("v_cmp_gt_i32", {I("vcc"), R(r_.seqlen_q), R(r_.query)});
    e_.op("s_and_b64", {I("vcc"), I("vcc"), R(first_half)});
    e_.narrow_exec(r_.saved_exec, "vcc", "one lane per row in the sequence");
    e_.op("global_store_dword", {R(addr), R(value), I("off")});
    e_.restore_exec(r_.saved_exec);
    free(value);
    free(t);
    free(fixed);
    free(varlen);
    free(index);
    free(addr);
    free(first_half);
    e_.label(none);
}

int KernelBuilder::vgpr_count() const { return (vgprs_.high_water() + 7) / 8 * 8; }
int KernelBuilder::sgpr_count() const { return sgprs_.high_water(); }
std::string KernelBuilder::register_map() const { return vgprs_.map_text("//") + sgprs_.map_text("//"); }

}  // namespace gfx950_fp8
}  // namespace zyfa
