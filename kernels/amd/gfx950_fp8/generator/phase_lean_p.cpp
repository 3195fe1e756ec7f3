// Lean P phase (kernels/common/lean_p.h, block_scale.h), per lane = per query:
//   block max of the raw scores (the scale is > 0, so max(S) * c = max(S * c) bit for bit),
//   m_new = max(m, block max), both maxima keeping NaN (v_maximum3_f32, common/row_max.h: a NaN or
//   +inf scaled score leaves m NaN or +inf, and the epilogue writes NaN for the row),
//   alpha = 2^(m - m_new) from FMAs (no v_exp_f32),
//   k = block_scale_exponent(m_new, block max), bias = ((56 + c) + 8k) - 8 m_new,
//   code = trunc(clamp(fma(S, 8 scale_log2, bias), 0, 126)), written straight into its byte of
//   the P operand (SDWA) in P's byte order (the S^T register order), the E8M0 scale of P = 127 - k.
#include "common/block_scale.h"
#include "common/exp2_polynomial.h"
#include "common/fp8_e4m3.h"
#include "common/lean_p.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

void KernelBuilder::row_max(const Reg& m_new, bool keys_masked) {
    const Reg mx = m_new, other = tmp_v("other half's max");
    const Reg s = r_.s_acc;
    e_.op("v_maximum3_f32", {W(mx), R(s.at(0)), R(s.at(1)), R(s.at(2))}, "", "Lean P: row max (NaN-propagating)");
    for (int i = 3; i + 1 < 32; i += 2) e_.op("v_maximum3_f32", {W(mx), R(mx), R(s.at(i)), R(s.at(i + 1))});
    e_.op("v_maximum3_f32", {W(mx), R(mx), R(s.at(31)), R(s.at(31))});
    e_.op("v_mov_b32", {W(other), R(mx)});
    e_.pad_for_permlane({mx, other}, "VALU write -> permlane");
    e_.op("v_permlane32_swap_b32", {W(mx), W(other)}, "", "the other 32 keys are in lane l ^ 32");
    e_.op("v_maximum3_f32", {W(mx), R(mx), R(other), R(other)});
    free(other);
    // A row that sees no key of a masked block has the raw maximum -inf (a visible raw score is
    // finite or NaN: e4m3fn has no inf), and its m must stay: with a NaN or zero scale, -inf times
    // the scale is NaN. Only m_new needs the select: the block exponent takes a NaN block max as it
    // takes -inf (the cap). Unmasked blocks: every row sees every key.
    if (keys_masked) e_.op("v_cmp_eq_f32", {I("vcc"), R(r_.neg_inf), R(mx)}, "", "no key of the block visible?");
    const Reg bm = r_.block_max;
    e_.op("v_mul_f32", {W(bm), R(r_.scale_log2), R(mx)}, "", "block max (log2 units); -inf if none visible (finite scale)");
    e_.op("v_maximum3_f32", {W(m_new), R(r_.m), R(bm), R(bm)});
    if (keys_masked) e_.op("v_cndmask_b32", {W(m_new), R(m_new), R(r_.m), I("vcc")}, "", "then m_new = m");
}

void KernelBuilder::alpha_and_bias(const Reg& m_new) {
    if (layout_.gfx942) {
        alpha_and_bias_gfx942(m_new);
        return;
    }
    const Reg bm = r_.block_max, x = tmp_v("m - m_new");
    // alpha = 1 for every lane whose running max did not move; when none moved, skip the
    // polynomial and O's rescale (m = m_new = -inf gives alpha 1 instead of 0: l and O are 0 there
    // either way). O is rescaled here, in the VALU phase, so the MFMA cluster runs unbroken.
    const std::string alpha_done = e_.unique_label("alpha_done");
    const Reg p = r_.alpha_pair.at(0);
    e_.op("v_cmp_lt_f32", {I("vcc"), R(r_.m), R(m_new)}, "", "alpha: did any running max move?");
    e_.op("v_mov_b32", {W(p), I("1.0")});
    e_.cbranch("vccz", alpha_done);
    e_.op("v_sub_f32", {W(x), R(r_.m), R(m_new)});
    // alpha = running_max_rescale(m, m_new, Exp2WithoutTranscendental) (common/online_softmax.h):
    // x in [-126, 0] wherever alpha is kept; m = -inf gives x -inf or NaN, alpha 0.
    exp2_without_transcendental(p, x, r_.exp2_c0);
    rescale_output();
    e_.label(alpha_done);
    free(x);

    // k = block_scale_exponent(m_new, block_max, max_block_exponent, e4m3fn).
    const Reg gap = tmp_v("m_new - block max"), k = tmp_v("block exponent k");
    const int base = numerics::p_scale_base_exponent(numerics::Fp8Format::E4M3FN);
    const Reg positive_gap = tmp_s("gap > 0", 2, 2);
    e_.op("v_sub_f32", {W(gap), R(m_new), R(bm)});
    e_.op("v_cmp_lt_f32", {W(positive_gap), I(0), R(gap)});
    e_.op("v_cmp_gt_f32", {I("vcc"), R(r_.cap_gap), R(gap)});
    e_.op("v_floor_f32", {W(k), R(gap)});
    e_.op("v_cvt_i32_f32", {W(k), R(k)});
    e_.op("v_add_u32", {W(k), I(base), R(k)});
    e_.op("v_cndmask_b32", {W(k), I(base), R(k), R(positive_gap)}, "", "gap <= 0: k = 8");
    e_.op("v_cndmask_b32", {W(k), R(r_.max_exponent), R(k), I("vcc")}, "", "huge gap, inf or NaN: the cap");
    free(positive_gap);
    e_.op("v_sub_u32", {W(r_.p_scale), I(127), R(k)}, "", "E8M0 2^-k");
    // bias = ((56 + c) + 8k) - 8 m_new; -inf when m_new is (no key seen yet: every code 0). 8k and
    // 8 m_new are exact (or 8 m_new overflows, and so does the fused difference), so each FMA
    // rounds as the separate product and sum. The exact exponential (estimate only): bias =
    // k - m_new, so that 2^(S scale_log2 + bias) = 2^k p <= 2^8, within e4m3fn; -inf likewise
    // (every p 0). The P FMAs read the low word for both halves (op_sel_hi).
    const Reg bias = r_.bias_pair.at(0);
    e_.op("v_cmp_lg_f32", {I("vcc"), R(r_.neg_inf), R(m_new)});
    e_.op("v_cvt_f32_i32", {W(k), R(k)});
    if (scheme_ == PScheme::LeanP) {
        e_.op("v_fmamk_f32", {W(bias), R(k), I(float_literal(8.0f)), R(r_.code_of_one)}, "", "(56 + c) + 8k");
        e_.op("v_fmamk_f32", {W(bias), R(m_new), I(float_literal(-8.0f)), R(bias)}, "", "- 8 m_new");
    } else {
        e_.op("v_sub_f32", {W(bias), R(k), R(m_new)});
    }
    e_.op("v_cndmask_b32", {W(bias), R(r_.neg_inf), R(bias), I("vcc")});
    e_.op("v_mov_b32", {W(r_.m), R(m_new)}, "", "m = m_new");
    free(gap);
    free(k);
}

void KernelBuilder::lean_p_codes() {
    const Reg s = r_.s_acc;
    for (int i = 0; i < 16; ++i) {
        e_.op("v_pk_fma_f32", {W(s.at(2 * i, 2)), R(s.at(2 * i, 2)), R(r_.scale8_pair), R(r_.bias_pair)}, "op_sel_hi:[1,1,0]",
              i == 0 ? "Lean P: fma(S, 8 scale_log2, bias)" : "");
    }
    // The clamp to [0, 126]: v_cvt_u32_f32 already maps y < 0 and NaN to 0, and the cap cannot act
    // where every lane's m passes numerics::lean_p_cap_unreachable (|m| < 2^19; the bound and its
    // proof, for truncation with c + 1/2 too, are in common/lean_p.h) or is -inf (bias -inf: every
    // code 0). So the upper clamp (v_med3_f32) only runs when some lane's running max is huge, +inf
    // or NaN.
    static_assert(numerics::kLeanPCapUnreachableBelow == 524288.0f, "the register's name below says 2^19");
    const std::string no_clamp = e_.unique_label("codes_need_no_clamp");
    const Reg bound = tmp_s("2^19"), infinite = tmp_s("lanes with m = -inf", 2, 2);
    e_.op("s_mov_b32", {W(bound), I(float_literal(numerics::kLeanPCapUnreachableBelow))});
    e_.op("v_cmp_gt_f32", {I("vcc"), R(bound), Operand{"|" + r_.m.text() + "|", r_.m, Role::Read}});
    e_.op("v_cmp_eq_f32", {W(infinite), R(r_.neg_inf), R(r_.m)});
    e_.op("s_or_b64", {I("vcc"), I("vcc"), R(infinite)});
    e_.op("s_cmp_eq_u64", {I("vcc"), I(-1)}, "", "every lane: |m| < 2^19 or m = -inf?");
    e_.cbranch("scc1", no_clamp);
    for (int i = 0; i < 32; ++i) {
        e_.op("v_med3_f32", {W(s.at(i)), R(s.at(i)), I(0), R(r_.max_code)}, "", i == 0 ? "clamp [0, 126] (NaN -> 0)" : "");
    }
    e_.label(no_clamp);
    free(bound);
    free(infinite);
    // Truncate to the code and pack: the SDWA form writes byte f % 4 of P dword f / 4 directly
    // (P byte f = S^T register f = 16 t + v), keeping the other bytes. Byte 0 of every dword
    // first, then byte 1, ...: a VALU right after a partial write of the same VGPR needs a wait
    // state on gfx940+ (dst-sel forwarding), and 8 dwords apart the writes need none.
    const int dwords = r_.p_op.count;
    for (int byte = 0; byte < 4; ++byte) {
        for (int d = 0; d < dwords; ++d) {
            const int f = 4 * d + byte;
            e_.op("v_cvt_u32_f32_sdwa", {W(r_.p_op.at(d)), R(s.at(f))},
                  "dst_sel:BYTE_" + std::to_string(byte) +
                      (byte == 0 ? " dst_unused:UNUSED_PAD" : " dst_unused:UNUSED_PRESERVE") + " src0_sel:DWORD",
                  f == 0 ? "truncate to the code (< 0, NaN: 0) into its byte of P, byte 0 of each dword first" : "");
        }
    }
}

// The exact exponential in the same place (PScheme::ExactExpEstimate, never shipped): p =
// 2^(S scale_log2 + k - m_new) by v_exp_f32, rounded to e4m3fn in pairs by v_cvt_pk_fp8_f32 (RNE)
// straight into P's bytes (P byte f = S^T register f: the low word of dword d holds registers
// 4d, 4d + 1, the high word 4d + 2, 4d + 3). p <= 2^8 < 448 unless m is NaN or +inf, where the
// epilogue writes NaN anyway, so no clamp. Low words of all eight dwords first, then the high
// words: a high-word write (op_sel destination) is a partial write, and the next VALU must not
// touch that VGPR (dst-sel forwarding, docs/emulator.md).
void KernelBuilder::exact_p_codes() {
    const Reg s = r_.s_acc;
    for (int i = 0; i < 16; ++i) {
        e_.op("v_pk_fma_f32", {W(s.at(2 * i, 2)), R(s.at(2 * i, 2)), R(r_.scale8_pair), R(r_.bias_pair)}, "op_sel_hi:[1,1,0]",
              i == 0 ? "exact P (estimate only): S scale_log2 + k - m_new" : "");
    }
    for (int i = 0; i < 32; ++i) e_.op("v_exp_f32", {W(s.at(i)), R(s.at(i))}, "", i == 0 ? "2^k p" : "");
    const int dwords = r_.p_op.count;
    for (int half = 0; half < 2; ++half) {
        for (int d = 0; d < dwords; ++d) {
            e_.op("v_cvt_pk_fp8_f32", {W(r_.p_op.at(d)), R(s.at(4 * d + 2 * half)), R(s.at(4 * d + 2 * half + 1))},
                  half == 0 ? "" : "op_sel:[0,0,1]",
                  d == 0 ? (half == 0 ? "to e4m3fn (RNE), low words" : "high words") : "");
        }
    }
}

}  // namespace gfx950_fp8
}  // namespace zyfa
