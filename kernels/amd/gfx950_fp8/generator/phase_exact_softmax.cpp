// Exact softmax phase (VariantInput::Bf16 and Fp8Exact): the exact online softmax of
// kernels/common/online_softmax.h in fp32, per lane = per query, as the CPU model's BF16 and FP8
// EXACT paths (src/cpu/attention_blocked.cpp):
//   block max and m_new as the FP8 kernels (row_max: NaN-propagating, raw scores then the scale),
//   alpha = running_max_rescale(m, m_new) = (m = -inf ? 0 : 2^(m - m_new)) by v_exp_f32,
//   x = S scale_log2 (rounded), p = 2^(x - m_new) by v_exp_f32 (x + (-m_new): the same rounding as
//   the model's subtraction; -inf where m_new = -inf, so that a row with no key seen yet gets p = 0),
//   masked keys: S = -inf before the row max, and, where the scale is NaN, 0 or +inf (-inf times
//   it is not -inf), x = -inf again before the exponential (p = 0: the model skips masked keys),
//   P = bf16(p) with round to nearest even (v_cvt_pk_bf16_f32, the model's float_to_bf16), packed
//   in S^T register order as the B operand of the PV MFMA; FP8 EXACT: P = e4m3fn(p 2^8) (RNE) for
//   the scaled PV MFMA, whose E8M0 scale 2^-8 is the model's accumulator_update factor,
//   row sum = the fp32 sum of the unrounded p (the model's EXACT denominator), l = l alpha + row sum.
// What differs from the model in the last bits: S from the MFMA (its own summation order), the
// row-sum order (a tree, the model sums keys in order), v_exp_f32 against exp2f (the emulator
// computes both with the host's exp2), and acc = acc alpha then + V^T P^T in the MFMA's order.
#include "common/block_scale.h"
#include "common/fp8_e4m3.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

void KernelBuilder::exact_alpha_and_bias(const Reg& m_new) {
    const Reg x = tmp_v("m - m_new");
    const Reg alpha = r_.alpha_pair.at(0);
    // alpha = 1 for every lane whose running max did not move; when none moved, skip the
    // exponential and O's rescale (done here, in the VALU phase, so the MFMA cluster runs unbroken).
    const std::string alpha_done = e_.unique_label("alpha_done");
    e_.op("v_cmp_lt_f32", {I("vcc"), R(r_.m), R(m_new)}, "", "alpha: did any running max move?");
    e_.op("v_mov_b32", {W(alpha), I("1.0")});
    e_.cbranch("vccz", alpha_done);
    e_.op("v_sub_f32", {W(x), R(r_.m), R(m_new)});
    e_.op("v_cmp_lt_f32", {I("vcc"), R(r_.neg_inf), R(r_.m)}, "", "m = -inf (no key seen yet): alpha = 0");
    e_.op("v_exp_f32", {W(alpha), R(x)}, "", "alpha = 2^(m - m_new)");
    e_.op_settled("v_cndmask_b32", {W(alpha), I(0), R(alpha), I("vcc")});
    rescale_output();
    e_.label(alpha_done);
    free(x);

    const Reg bias = r_.bias_pair.at(0);
    e_.op("v_cmp_lg_f32", {I("vcc"), R(r_.neg_inf), R(m_new)}, "", "-m_new; -inf where m_new = -inf (every p 0)");
    e_.op("v_xor_b32", {W(bias), I("0x80000000"), R(m_new)});
    e_.op_settled("v_cndmask_b32", {W(bias), R(r_.neg_inf), R(bias), I("vcc")});
    e_.op("v_mov_b32", {W(r_.bias_pair.at(1)), R(bias)});
    e_.op("v_mov_b32", {W(r_.m), R(m_new)}, "", "m = m_new");
}

// FP8 EXACT: p 2^8 in place (exact: a power of two; p <= 1 keeps it <= 256 < 448, within
// e4m3fn), rounded to e4m3fn in pairs by v_cvt_pk_fp8_f32 (RNE, the model's fp8_encode) straight
// into P's bytes: P byte f = S^T register f, the low word of dword d holds registers 4d, 4d + 1,
// the high word 4d + 2, 4d + 3. Low words of all eight dwords first, then the high words: a
// high-word write (op_sel destination) is a partial write, and the next VALU must not touch that
// VGPR (dst-sel forwarding, docs/emulator.md). The row sum then sums p 2^8 (exact_p_and_row_sum).
void KernelBuilder::fp8_exact_p() {
    const Reg s = r_.s_acc;
    for (int i = 0; i < 16; ++i) {
        e_.op_settled("v_pk_mul_f32", {W(s.at(2 * i, 2)), R(s.at(2 * i, 2)), R(r_.p_up_pair)}, "",
                      i == 0 ? "p 2^8 (block_scale.h: p_scale_base_exponent)" : "");
    }
    const int dwords = r_.p_op.count;
    for (int half = 0; half < 2; ++half) {
        for (int d = 0; d < dwords; ++d) {
            e_.op("v_cvt_pk_fp8_f32", {W(r_.p_op.at(d)), R(s.at(4 * d + 2 * half)), R(s.at(4 * d + 2 * half + 1))},
                  half == 0 ? "" : "op_sel:[0,0,1]",
                  d == 0 ? (half == 0 ? "P = e4m3fn(p 2^8) (RNE), low words" : "high words") : "");
        }
    }
}

void KernelBuilder::exact_p_and_row_sum(const Reg& block) {
    const Reg s = r_.s_acc;
    for (int i = 0; i < 16; ++i) {
        e_.op("v_pk_mul_f32", {W(s.at(2 * i, 2)), R(s.at(2 * i, 2)), R(r_.scale8_pair)}, "",
              i == 0 ? "x = S scale_log2 (score_scale.h)" : "");
    }
    for (int i = 0; i < 16; ++i) {
        e_.op("v_pk_add_f32", {W(s.at(2 * i, 2)), R(s.at(2 * i, 2)), R(r_.bias_pair)}, "", i == 0 ? "x - m_new" : "");
    }
    // Masked keys again, now on x: a masked -inf score times a NaN or zero scale (a NaN or zero q/k
    // descale) is NaN, and a row that sees no key of the block must get p = 0 there, as the model
    // skips those keys. Only in blocks some row of the wave does not fully see, and only when the
    // scale is not finite and positive (r_.remask, kernel_setup.cpp).
    {
        const std::string no_mask = e_.unique_label("x_no_mask");
        if (windows()) {
            needs_mask_test(block);
        } else {
            const Reg end = tmp_s("block end");
            e_.op("s_add_u32", {W(end), R(block), I(kKeysPerBlock)});
            e_.op("s_cmp_gt_i32", {R(end), R(r_.wave_min_hi)}, "", "masked block: x = -inf where the key is not visible");
            free(end);
        }
        e_.cbranch("scc0", no_mask);
        e_.op("s_cmp_eq_u32", {R(r_.remask), I(0)}, "", "... when -inf times the scale is not -inf");
        e_.cbranch("scc1", no_mask);
        mask_block(block);
        e_.label(no_mask);
    }
    for (int i = 0; i < 32; ++i) e_.op_settled("v_exp_f32", {W(s.at(i)), R(s.at(i))}, "", i == 0 ? "p = 2^(x - m_new)" : "");
    if (layout_.gfx942 && layout_.bf16) {
        for (int i = 0; i < 16; ++i) pack_bf16_pair_gfx942(r_.p_op.at(i), s.at(2 * i), s.at(2 * i + 1), false);
    } else if (layout_.bf16) {
        for (int i = 0; i < 16; ++i) {
            e_.op_settled("v_cvt_pk_bf16_f32", {W(r_.p_op.at(i)), R(s.at(2 * i)), R(s.at(2 * i + 1))}, "",
                          i == 0 ? "P = bf16(p) (RNE), S^T register order" : "");
        }
    } else {
        fp8_exact_p();
    }
    // Row sum of the unrounded p: pairs, then a tree, then the other half's 32 keys (lane l ^ 32).
    for (int width = 2; width < 32; width *= 2) {
        for (int i = 0; i < 32; i += 2 * width) {
            e_.op_settled("v_pk_add_f32", {W(s.at(i, 2)), R(s.at(i, 2)), R(s.at(i + width, 2))}, "",
                          i == 0 && width == 2 ? "row sum of p (fp32)" : "");
        }
    }
    if (layout_.gfx942) {
        e_.op_settled("v_add_f32", {W(r_.row_sum), R(s.at(0)), R(s.at(1))});
        add_other_half_gfx942(r_.row_sum, false);
        if (fp8_exact()) {
            const int base = numerics::p_scale_base_exponent(fp8_format());
            e_.op("v_ldexp_f32", {W(r_.row_sum), R(r_.row_sum), I(-base)}, "", "row sum of p = (row sum of p 2^7) 2^-7");
        }
        e_.op("v_mul_f32", {W(r_.l), R(r_.l), R(r_.alpha_pair.at(0))}, "", "l = l alpha + row sum (online_softmax.h)");
        e_.op("v_add_f32", {W(r_.l), R(r_.l), R(r_.row_sum)});
        return;
    }
    const Reg other = tmp_v("other half's row sum");
    e_.op_settled("v_add_f32", {W(r_.row_sum), R(s.at(0)), R(s.at(1))});
    e_.op("v_mov_b32", {W(other), R(r_.row_sum)});
    e_.pad_for_permlane({r_.row_sum, other}, "VALU write -> permlane");
    e_.op("v_permlane32_swap_b32", {W(r_.row_sum), W(other)}, "", "the other 32 keys are in lane l ^ 32");
    e_.op_settled("v_add_f32", {W(r_.row_sum), R(r_.row_sum), R(other)});
    free(other);
    if (fp8_exact()) {
        // The tree summed p 2^8: 2^-8 back, exact (a power of two), so the sum of the unrounded p.
        const int base = numerics::p_scale_base_exponent(fp8_format());
        e_.op("v_ldexp_f32", {W(r_.row_sum), R(r_.row_sum), I(-base)}, "", "row sum of p = (row sum of p 2^8) 2^-8");
    }
    e_.op("v_mul_f32", {W(r_.l), R(r_.l), R(r_.alpha_pair.at(0))}, "", "l = l alpha + row sum (online_softmax.h)");
    e_.op("v_add_f32", {W(r_.l), R(r_.l), R(r_.row_sum)});
}

}  // namespace gfx950_fp8
}  // namespace zyfa
