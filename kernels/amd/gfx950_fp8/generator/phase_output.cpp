// Output phases: the row-sum MFMA (the codes against an FP8 1.0 operand, scaled by 2^-k: the
// exact sum of the rounded P), the O rescale by alpha (only when some lane's alpha is not 1: the
// running max moved), the PV MFMA accumulating V^T P^T 2^-k into O^T, and l = l alpha + row sum.
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

void KernelBuilder::row_sum_mfma() {
    if (exact_softmax()) return;  // BF16, FP8 EXACT: the row sum of the unrounded p is summed in fp32 by the softmax
    e_.pad_for_mfma({r_.p_op, r_.p_scale}, "VALU write -> MFMA read");
    fp8_mfma(r_.row_sum, r_.ones, r_.p_op, Reg(), r_.scale_one, r_.p_scale, "row sum: 1 . P 2^-k");
}

// O *= alpha, from the softmax's branch taken when some running max moved (alpha 1 elsewhere);
// both halves of each pair read alpha's low word (op_sel_hi).
void KernelBuilder::rescale_output() { rescale_output(r_.alpha_pair); }

void KernelBuilder::rescale_output(const Reg& factor_pair) {
    e_.pad_for_valu({r_.o_acc}, "PV MFMA result -> VALU");
    for (int i = 0; i < r_.o_acc.count / 2; ++i) {
        e_.op("v_pk_mul_f32", {W(r_.o_acc.at(2 * i, 2)), R(r_.o_acc.at(2 * i, 2)), R(factor_pair)}, "op_sel_hi:[1,0]",
              i == 0 ? (factor_pair.text() == r_.alpha_pair.text() ? "O *= alpha" : "O *= alpha 2^(k_new - k_old)") : "");
    }
}

void KernelBuilder::pv_mfma(int ring_first) {
    for (int dt = 0; dt < layout_.o_tiles; ++dt) pv_mfma_tile(ring_first, dt);
}

void KernelBuilder::pv_mfma_tile(int ring_first, int dt) {
    const Reg v_op = ring(ring_first + dt);
    e_.wait_loads({v_op}, "V^T operand");
    e_.pad_for_mfma_acc(o_tile(dt), "VALU write -> MFMA SrcC");
    fp8_mfma(o_tile(dt), v_op, r_.p_op, o_tile(dt), r_.scale_one, r_.p_scale,
                   "PV: O^T tile " + std::to_string(dt) + " += V^T P^T 2^-k");
}

// BF16: O^T tile dt += V^T P^T over the block's 4 key steps of 16; operand n = (step n / 4,
// tile n % 4), the four accumulators in turn. Operands 0 .. kVAhead - 1 were read by
// issue_v_operand_reads; the others are read kVAhead ahead from the same stage.
void KernelBuilder::pv_mfma_bf16(int stage) {
    const KernelLayout& L = layout_;
    const int operands = L.pv_steps * L.o_tiles;
    e_.pad_for_mfma({r_.p_op}, "VALU write -> MFMA read");
    for (int n = 0; n < operands; ++n) {
        const int step = n / L.o_tiles, dt = n % L.o_tiles;
        e_.wait_loads({ring(n)}, "V^T operand");
        e_.pad_for_mfma_acc(o_tile(dt), "VALU write -> MFMA SrcC");
        e_.mfma_bf16(o_tile(dt), ring(n), r_.p_op.at(4 * step, 4), o_tile(dt),
                     "PV: O^T tile " + std::to_string(dt) + " += V^T P^T, keys " + std::to_string(16 * step) + "..");
        const int next = n + kVAhead;
        if (next < operands) {
            const int s2 = next / L.o_tiles, d2 = next % L.o_tiles;
            e_.op("ds_read_b128", {W(ring(next)), R(r_.v_lds_read.at(stage))},
                  "offset:" + std::to_string(32 * d2 * L.vt_row_bytes + 16 * s2));
        }
    }
}

void KernelBuilder::update_running_sum() {
    if (exact_softmax()) return;  // BF16, FP8 EXACT: done by the softmax (exact_p_and_row_sum)
    e_.pad_for_valu({r_.row_sum.at(0)}, "row-sum MFMA result -> VALU");
    if (layout_.gfx942) {
        // No scaled MFMA: the MFMA summed the codes' values, 2^k p; 2^-k is exact (the model's
        // row_sum * exp2_int(-k) of the same exact sum), k the block's, still in p_scale.
        e_.op("v_ldexp_f32", {W(r_.row_sum.at(0)), R(r_.row_sum.at(0)), R(r_.p_scale)}, "", "row sum 2^-k");
    }
    e_.op("v_mul_f32", {W(r_.l), R(r_.l), R(r_.alpha_pair.at(0))}, "", "l = l alpha + row sum");
    e_.op("v_add_f32", {W(r_.l), R(r_.l), R(r_.row_sum.at(0))});
}

}  // namespace gfx950_fp8
}  // namespace zyfa
