// QK MFMA phase: S^T = K Q^T for the block's two 32-key tiles (K from LDS as the A operand, Q^T
// resident as B), each lane's accumulator column its own query; then the mask phase sets the
// scores of keys a row does not see to -inf (only in blocks some row of the wave does not fully
// see: the diagonal blocks and the sequence's tail).
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

// BF16 (FP8: fp8_mfma_cluster, kernel_body.cpp). Operand i: step i / 2 of tile i % 2 (the two
// accumulators alternate), kVAhead reads ahead.
void KernelBuilder::qk_mfma_bf16(int stage) {
    const KernelLayout& L = layout_;
    const int operands = 2 * L.qk_steps;
    auto read = [&](int i) {
        const int t = i % 2, step = i / 2;
        e_.op("ds_read_b128", {W(ring(i)), R(r_.k_lds_read.at(stage))},
              "offset:" + std::to_string(32 * t * L.k_row_bytes + step * L.step_bytes),
              "K tile " + std::to_string(t) + " step " + std::to_string(step));
    };
    for (int i = 0; i < operands && i < kVAhead; ++i) read(i);
    for (int i = 0; i < operands; ++i) {
        const int t = i % 2, step = i / 2;
        e_.wait_loads({ring(i)}, "K operand");
        e_.mfma_bf16(s_tile(t), ring(i), r_.q_op.at(4 * step, 4), step == 0 ? Reg() : s_tile(t),
                     "QK: S^T tile " + std::to_string(t) + " += K Q^T");
        if (i + kVAhead < operands) read(i + kVAhead);
    }
}

// FP8 K operand i (tile i / qk_steps, step i % qk_steps) into ring slot i % 4.
void KernelBuilder::read_k_operand(int stage, int i) {
    const KernelLayout& L = layout_;
    const int t = i / L.qk_steps, step = i % L.qk_steps;
    const int offset = 32 * t * L.k_row_bytes + step * L.step_bytes;
    e_.op("ds_read_b128", {W(ring(i).at(0, 4)), R(r_.k_lds_read.at(stage))}, "offset:" + std::to_string(offset),
          "K tile " + std::to_string(t) + " step " + std::to_string(step));
    e_.op("ds_read_b128", {W(ring(i).at(4, 4)), R(r_.k_lds_read.at(stage))}, "offset:" + std::to_string(offset + 16));
}

void KernelBuilder::qk_mfma_step(int i) {
    const int t = i / layout_.qk_steps, step = i % layout_.qk_steps;
    e_.wait_loads({ring(i)}, "K operand");
    fp8_mfma(s_tile(t), ring(i), r_.q_op.at(8 * step, 8), step == 0 ? Reg() : s_tile(t), r_.scale_one,
                   r_.scale_one, "QK: S^T tile " + std::to_string(t) + " += K Q^T");
}

// FP8 V^T tile dt of the block in `stage` into ring slot dt (the next PV's operand).
void KernelBuilder::read_v_operand(int stage, int dt) {
    const Reg op = ring(dt);
    const int offset = 32 * dt * layout_.vt_row_bytes;
    e_.op("ds_read_b128", {W(op.at(0, 4)), R(r_.v_lds_read.at(stage))}, "offset:" + std::to_string(offset),
          "V^T tile " + std::to_string(dt));
    e_.op("ds_read_b128", {W(op.at(4, 4)), R(r_.v_lds_read.at(stage))}, "offset:" + std::to_string(offset + 16));
}

// BF16: the first kVAhead of the block's 16 V^T operands (pv_mfma_bf16 reads the rest).
void KernelBuilder::issue_v_operand_reads_bf16(int stage) {
    const KernelLayout& L = layout_;
    for (int n = 0; n < kVAhead; ++n) {
        const int step = n / L.o_tiles, dt = n % L.o_tiles;
        e_.op("ds_read_b128", {W(ring(n)), R(r_.v_lds_read.at(stage))},
              "offset:" + std::to_string(32 * dt * L.vt_row_bytes + 16 * step),
              n == 0 ? "V^T operands of the next PV, the first " + std::to_string(kVAhead) : "");
    }
}

// The keys before each row's window start too, only in blocks that start before some row's
// (r_.wave_max_lo: 0 without a window, so never).
void KernelBuilder::mask_block(const Reg& block) {
    mask_scores(block);
    if (!windows()) return;
    const std::string done = e_.unique_label("window_start_done");
    e_.op("s_cmp_lt_i32", {R(block), R(r_.wave_max_lo)}, "", "a window starts after the block's first key?");
    e_.cbranch("scc0", done);
    const Reg limit = tmp_v("window start relative to the block and half");
    const Reg masks[2] = {tmp_s("lane mask", 2, 2), tmp_s("lane mask", 2, 2)};
    e_.op("v_subrev_u32", {W(limit), R(block), R(r_.row_lo_local)});
    auto mask_of = [&](int e) { return e % 3 == 0 ? I("vcc") : R(masks[e % 3 - 1]); };
    auto mask_dst = [&](int e) { return e % 3 == 0 ? I("vcc") : W(masks[e % 3 - 1]); };
    for (int e = 0; e < 32 + 2; ++e) {
        if (e < 32) {
            const int t = e / 16, v = e % 16;
            e_.op("v_cmp_ge_i32", {mask_dst(e), I(32 * t + 8 * (v / 4) + v % 4), R(limit)});
        }
        if (e >= 2) {
            const Reg s = r_.s_acc.at(e - 2);
            e_.op("v_cndmask_b32", {W(s), R(r_.neg_inf), R(s), mask_of(e - 2)}, "", e == 2 ? "mask before the window: -inf" : "");
        }
    }
    free(limit);
    free(masks[0]);
    free(masks[1]);
    e_.label(done);
}

void KernelBuilder::mask_scores(const Reg& block) {
    // Register v of tile t holds key block + 32 t + 8 (v / 4) + 4 half + v % 4: visible iff
    // 32 t + 8 (v / 4) + v % 4 < row_hi - block - 4 half. A VALU-written lane mask needs 2 wait
    // states before a VALU reads it (gfx940+), so each compare runs two elements ahead of its
    // select, rotating over VCC and two SGPR pairs.
    const Reg limit = tmp_v("visible-key end relative to the block and half");
    const Reg masks[2] = {tmp_s("lane mask", 2, 2), tmp_s("lane mask", 2, 2)};
    e_.op("v_subrev_u32", {W(limit), R(block), R(r_.row_hi_local)});
    auto mask_of = [&](int e) { return e % 3 == 0 ? I("vcc") : R(masks[e % 3 - 1]); };
    auto mask_dst = [&](int e) { return e % 3 == 0 ? I("vcc") : W(masks[e % 3 - 1]); };
    for (int e = 0; e < 32 + 2; ++e) {
        if (e < 32) {
            const int t = e / 16, v = e % 16;
            e_.op("v_cmp_lt_i32", {mask_dst(e), I(32 * t + 8 * (v / 4) + v % 4), R(limit)});
        }
        if (e >= 2) {
            const Reg s = r_.s_acc.at(e - 2);
            e_.op("v_cndmask_b32", {W(s), R(r_.neg_inf), R(s), mask_of(e - 2)}, "", e == 2 ? "mask: -inf" : "");
        }
    }
    free(limit);
    free(masks[0]);
    free(masks[1]);
}

}  // namespace gfx950_fp8
}  // namespace zyfa
