// Builds the program of one variant: the registers it names, and the phases the schedule is made
// of. The phases live in their own files:
//   kernel_setup.cpp   entry: kernel arguments, sequence span, per-wave key ranges, constants, Q
//   phase_load.cpp     K/V block: global -> registers (two blocks ahead) -> LDS stage (one ahead)
//   phase_scores.cpp   QK MFMA (S^T = K Q^T) and the causal / tail mask
//   phase_lean_p.cpp   row max (NaN-propagating), alpha, block exponent, Lean P codes packed as the FP8 operand
//   phase_exact_softmax.cpp  BF16 and FP8 EXACT: alpha and p by v_exp_f32, P rounded, the fp32 row sum
//   phase_output.cpp   row-sum MFMA, O rescale, PV MFMA, running sum
//   kernel_body.cpp    the two-wave ping-pong key-block loops (two LDS stages unrolled), epilogue
//   lds_swizzle_gfx942.cpp  gfx942 BF16: the XOR-swizzled LDS layout of K and V^T (no padding)
//   kernel_body_gfx942.cpp  gfx942 BF16: the same ping-pong with V stored a block after K (64 KiB
//                      of LDS), 32x32x8 MFMAs, and the gfx942 forms of the softmax's cross-lane
//                      and bf16 steps
#ifndef ZYFA_GFX950_FP8_KERNEL_BUILDER_HPP
#define ZYFA_GFX950_FP8_KERNEL_BUILDER_HPP

#include <string>
#include <vector>

#include "common/block_scale.h"
#include "common/fp8_e4m3.h"
#include "emitter.hpp"
#include "kernel_layout.hpp"
#include "kernel_variant.hpp"
#include "register_allocator.hpp"

namespace zyfa {
namespace gfx950_fp8 {

// The SGPRs of an AttnKernelArgs field (the whole struct is loaded into r_.args).
#define ZYFA_ARG(field) arg(offsetof(AttnKernelArgs, field), sizeof(AttnKernelArgs::field))

// The registers of the kernel, by meaning. VGPRs hold per-lane values (lane l: query l % 32 of
// the wave, key/dim half l / 32); SGPRs hold values uniform over the wave or workgroup.
struct KernelRegs {
    // entry state
    Reg kernarg_ptr, group_x, group_y, group_z, thread_id;
    Reg args;  // the whole AttnKernelArgs
    // uniform scalars
    Reg wave, first_q, first_k, seqlen_q, seqlen_k, head_kv, row0, keys_end;
    Reg wave_min_hi, wave_max_hi;  // smallest / largest visible-key end over the wave's rows
    // Windows: the first key block of the workgroup (the first row's window start, rounded
    // down to a block), and the largest window start over the wave's rows; wave_min_hi then holds
    // the mask-free span (softmax: a block needs no mask iff block - wave_max_lo <= span, unsigned).
    Reg block_start, wave_max_lo;
    Reg block, next_block, load_block;  // key block computed / stored to LDS / loaded from memory
    // 64 rows of K / V stride in bytes: what a lane's K / V address advances by per key block.
    Reg k_block_step, v_block_step;
    Reg lse_total_q, carry, saved_exec;
    Reg remask;  // BF16, FP8 EXACT: 1 when scale_log2 is not finite and positive (a NaN, zero or infinite descale)
    // per-lane constants and state
    Reg col, half, query, row_hi_local;  // row_hi_local = visible-key end - 4 * half
    Reg row_lo_local;                    // window start - 4 * half
    Reg scale_log2, scale8_pair, code_of_one, cap_gap, scale_one, p_scale, neg_inf, max_code, v_descale, max_exponent;
    Reg m, l, alpha_pair, bias_pair, block_max;
    Reg exp2_c0;             // FP8: the exp2 polynomial's leading coefficient (the first FMA's multiplicand)
    Reg ones;                // the FP8 1.0 operand of the row-sum MFMA
    Reg p_up_pair;           // FP8 EXACT: 2^8 (pair), P's scale before the rounding to e4m3fn
    Reg q_op;                // Q^T operand, qk_steps x 8
    Reg s_acc;               // S^T, 2 tiles x 16
    Reg p_op;                // P codes, 8
    Reg row_sum;             // the row-sum MFMA's 16 registers (= S^T tile 0; only register 0 is read)
    Reg o_acc;               // O^T, o_tiles x 16
    Reg operand_ring;        // 4 x 8: K then V operands from LDS
    Reg k_prefetch, v_prefetch;
    // Per chunk: the 64-bit global address of the lane's 16 bytes in the block to load next (the
    // key block advances it: no 32-bit offset, so any stride), and the chunk's key row.
    Reg k_global_addr, v_global_addr, k_row, v_row;
    Reg k_lds_write, vt_lds_write, k_lds_read, v_lds_read;
    // gfx942: ds_bpermute_b32 address of lane l ^ 32, and the SGPR constants of the bf16 rounding
    Reg swap_addr, bf16_round_bias, bf16_high_mask, bf16_quiet_bit;
    // Paged K/V (paged_kv.cpp): this sequence's block-table row, log2(page_size), num_pages.
    Reg table_row, page_shift, num_pages;
    Reg page_entry;    // VGPR: the block-table entry of a later block's rows, loaded ahead
    Reg page_entry_v;  // gfx942 BF16: the same for the V stream (V rows load a block after K's)
};

// gfx942: one MFMA of a stream (kernel_body_gfx942.cpp): QK operand `index` of K in `stage`, or PV
// operand `index` of V^T in `stage`.
struct StreamOp {
    bool pv;
    int stage;
    int index;
};

// How the softmax phase turns scores into the FP8 P operand. LeanP is what ships. ExactExpEstimate
// is the same schedule with the exact exponential (v_exp_f32, then v_cvt_pk_fp8_f32), emitted only
// by `zyfa-gfx950-fp8-gen --estimate-only-exact-exp DIR` for the cycle model's calibration against
// ZYFA's published 60% (docs/emulator.md, "Calibration"): never in prebuilt/, the manifest or
// libzyfa.
enum class PScheme { LeanP, ExactExpEstimate };

class KernelBuilder {
public:
    explicit KernelBuilder(const KernelVariant& variant, PScheme scheme = PScheme::LeanP);
    void build();

    const Emitter& emitter() const { return e_; }
    const KernelLayout& layout() const { return layout_; }
    const KernelVariant& variant() const { return variant_; }
    PScheme scheme() const { return scheme_; }
    // variant_symbol(); the estimate-only exact-exponential kernels are
    // zyfa_gfx950_fp8_exactexp_estimate_<dims>_<mask>, a name libzyfa's manifest never holds.
    std::string symbol() const;
    int vgpr_count() const;
    int sgpr_count() const;
    std::string register_map() const;

private:
    // kernel_setup.cpp
    void allocate_registers();
    void allocate_bf16_registers();
    void fp8_constants();
    void load_q(const Reg& flip);
    void fp8_chunk_addresses(const Reg& k_base, const Reg& v_base);
    void bf16_chunk_addresses(const Reg& k_base, const Reg& v_base);
    void lane_address(const Reg& address, const Reg& base, const Reg& row, const Reg& stride, const Reg& column);
    void load_arguments();
    void sequence_span();
    void key_ranges();
    void constants();
    void load_q();
    void chunk_addresses();
    Reg arg(size_t offset, size_t bytes) const;
    void uniform_udiv(const Reg& quotient, const Reg& dividend, const Reg& divisor);
    void add_scaled64(const Reg& address, const Reg& stride64, const Reg& index32);
    void row_hi_of(const Reg& dst, const Reg& row, bool row_is_sgpr);
    void row_lo_of(const Reg& dst, const Reg& row, bool row_is_sgpr);  // the window start
    Reg right_window_offset();
    void needs_mask_test(const Reg& block);  // SCC = some row of the wave misses a key of the block
    // phase_load.cpp
    int chunk_waves(int j) const;
    void issue_block_loads();
    void store_block_to_lds(int stage);
    // phase_scores.cpp
    void qk_mfma_bf16(int stage);
    void qk_mfma_step(int i);                // FP8: QK MFMA of K operand i (ring slot i % 4)
    void read_k_operand(int stage, int i);   // FP8
    void read_v_operand(int stage, int dt);  // FP8
    void issue_v_operand_reads_bf16(int stage);
    void mask_scores(const Reg& block);
    void mask_block(const Reg& block);  // mask_scores, then (a window) the keys before each row's window
    // phase_lean_p.cpp
    void row_max(const Reg& m_new, bool keys_masked);  // keys_masked: after mask_scores
    void alpha_and_bias(const Reg& m_new);
    void lean_p_codes();
    void exact_p_codes();  // PScheme::ExactExpEstimate
    // phase_exact_softmax.cpp (VariantInput::Bf16 and Fp8Exact)
    void exact_alpha_and_bias(const Reg& m_new);
    void exact_p_and_row_sum(const Reg& block);
    void fp8_exact_p();  // FP8 EXACT: P = e4m3fn(p 2^8)
    // phase_output.cpp
    void row_sum_mfma();
    void rescale_output();
    void rescale_output(const Reg& factor_pair);  // O *= the pair's low word
    void pv_mfma(int ring_first);
    void pv_mfma_tile(int ring_first, int dt);
    void pv_mfma_bf16(int stage);  // V^T of the block from LDS stage `stage`, the first kVAhead operands already read
    void update_running_sum();
    // kernel_body.cpp
    void softmax(const Reg& block);
    void finish_block(int stage, const std::string& exit_label);
    void previous_pv_bf16(int stage);
    void last_pv(int stage);
    void fp8_mfma_cluster(int stage);
    void key_block_mfma_first(int stage, const std::string& exit_label);
    void key_block_softmax_first(int stage, const std::string& exit_label);
    void epilogue();
    // paged_kv.cpp
    void paged_registers();
    void load_paged_arguments();
    void paged_lane_offsets();
    void paged_block_bases(const Reg& rows_left, const Reg& block, const Reg& entry, bool k_base, bool v_base);
    void paged_prefetch_entry(const Reg& entry, const Reg& block, int ahead);
    // lds_swizzle_gfx942.cpp
    void lds_addresses_gfx942(const Reg& k_base, const Reg& v_base);  // also the lanes' 64-bit K/V addresses
    // kernel_body_gfx942.cpp
    void build_gfx942();
    void gfx942_constants();
    void issue_rows_gfx942(bool k_rows, const Reg& block);
    void store_k_gfx942(int stage);
    void store_v_gfx942(int stage);
    void finish_block_gfx942(int stage, const std::string& exit_label);
    std::vector<StreamOp> qk_ops_gfx942(int stage) const;
    std::vector<StreamOp> pv_ops_gfx942(int stage) const;
    void read_stream_op_gfx942(const StreamOp& op, int slot);
    void mfma_stream_gfx942(const std::vector<StreamOp>& ops, int already_read);
    void key_block_mfma_first_gfx942(int stage, const std::string& exit_label);
    void key_block_softmax_first_gfx942(int stage, const std::string& exit_label);
    void row_max_gfx942(const Reg& m_new, bool keys_masked);
    void alpha_and_bias_gfx942(const Reg& m_new);  // FP8 LEAN: alpha, k, O *= alpha 2^(k_new - k_old), bias
    void add_other_half_gfx942(const Reg& value, bool maximum);
    void bf16_round_gfx942(const Reg& dst, const Reg& x, bool exact_nan);
    void pack_bf16_pair_gfx942(const Reg& dst, const Reg& a, const Reg& b, bool exact_nan);
    // D = C + A B over 8 bf16 per lane: one 32x32x16 MFMA (gfx950), or two 32x32x8 ones over the
    // operands' register halves (gfx942: A and B split alike, so the same products are summed).
    void bf16_mfma(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment);
    // FP8 D = C + A B (32 bytes per lane): the scaled 32x32x64 f8f6f4 MFMA (gfx950), or four
    // unscaled 32x32x16 fp8 ones over register pairs (gfx942; the scales are then applied by the
    // caller: FP8 EXACT's 2^-7 in the epilogue, FP8 LEAN's 2^-k by alpha_and_bias_gfx942).
    void fp8_mfma(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const Reg& scale_a, const Reg& scale_b,
                  const std::string& comment);
    numerics::Fp8Format fp8_format() const {
        return layout_.gfx942 ? numerics::Fp8Format::E4M3FNUZ : numerics::Fp8Format::E4M3FN;
    }
    void write_output();
    void fold_sink();
    void exp2_without_transcendental(const Reg& dst, const Reg& x, const Reg& c0);
    void write_lse();

    bool fp8_exact() const { return variant_.input == VariantInput::Fp8Exact; }
    bool paged() const { return variant_.paged; }
    // Sliding windows (params window_left / window_right at run time): every variant (BF16 since
    // 2026-12-04: its key-row register gave way to the per-lane window start, phase_load.cpp).
    bool windows() const { return true; }
    // The exact online softmax in fp32 (BF16, FP8 EXACT): v_exp_f32, the row sum of the unrounded p.
    bool exact_softmax() const { return layout_.bf16 || fp8_exact(); }
    int ring_slots() const { return r_.operand_ring.count / layout_.op_regs; }
    Reg ring(int i) const { return r_.operand_ring.at(layout_.op_regs * (i % ring_slots()), layout_.op_regs); }
    static constexpr int kVAhead = 6;  // BF16: V^T / K operand reads in flight ahead of their MFMA
    Reg s_tile(int t) const { return r_.s_acc.at(16 * t, 16); }
    Reg o_tile(int dt) const { return r_.o_acc.at(16 * dt, 16); }
    Reg tmp_v(const std::string& name, int count = 1, int align = 1) { return vgprs_.allocate(name, count, align); }
    Reg tmp_s(const std::string& name, int count = 1, int align = 1) { return sgprs_.allocate(name, count, align); }
    void free(const Reg& r) { (r.file == RegFile::Vgpr ? vgprs_ : sgprs_).release(r); }

    KernelVariant variant_;
    PScheme scheme_;
    KernelLayout layout_;
    Emitter e_;
    RegisterAllocator vgprs_, sgprs_;
    KernelRegs r_;
    Reg lse_l_positive_, lse_l_safe_;  // from write_output() to write_lse()
};

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
