// gfx942 (MI300X, CDNA3) BF16 d128: the gfx950 BF16 kernel's two-wave ping-pong, fitted to what
// gfx942 has:
//   - 64 KiB of LDS (gfx950: 160 KiB). Two stages of an unpadded K block [64][256 B] and V^T block
//     [128][128 B] fill it exactly. K of block i + 1 and V of block i are stored at the end of
//     block i, so between two barriers the waves read K of block i (stage i % 2) and V^T of block
//     i - 1 (stage (i - 1) % 2) while K i + 1 and V i go to the stages nobody reads;
//   - v_mfma_f32_32x32x8_bf16 (K = 8): each gfx950 operand of 8 bf16 feeds two MFMAs (bf16_mfma);
//   - no v_permlane32_swap_b32: the other half's row max / sum comes by ds_bpermute_b32;
//   - no v_maximum3_f32: v_max3_f32 drops NaN scores from m, but their p is NaN, so l is NaN, and
//     the epilogue takes m + 0 l (NaN where l is) for the NaN test (write_output);
//   - no v_cvt_pk_bf16_f32: round to nearest even by integer adds (bf16_round_gfx942).
// Per block i, between two barriers (waves 0-3 / 4-7 share each SIMD):
//   waves 0-3: QK(i) PV(i-1)            | softmax(i)                | store K(i+1) V(i) | barrier
//   waves 4-7: softmax(i-1)             | PV(i-1) QK(i)             | store K(i+1) V(i) | barrier
// The global loads of K(i+2) and V(i+1) are issued after the stores (a whole block of latency).
// LDS operand reads run kVAhead ahead of their MFMA across the QK / PV boundary (mfma_stream_gfx942).
#include <cstddef>
#include <stdexcept>

#include "common/attention_kernel_args.h"
#include "common/exp2_polynomial.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

void KernelBuilder::bf16_mfma(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment) {
    if (!layout_.gfx942) {
        e_.mfma_bf16(d, a, b, c, comment);
        return;
    }
    e_.mfma_bf16_k8(d, a.at(0, 2), b.at(0, 2), c, comment);
    e_.mfma_bf16_k8(d, a.at(2, 2), b.at(2, 2), d);
}

void KernelBuilder::fp8_mfma(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const Reg& scale_a,
                            const Reg& scale_b, const std::string& comment) {
    if (!layout_.gfx942) {
        e_.mfma_scaled(d, a, b, c, scale_a, scale_b, comment);
        return;
    }
    for (int i = 0; i < 4; ++i) e_.mfma_fp8_k16(d, a.at(2 * i, 2), b.at(2 * i, 2), i == 0 ? c : d, i == 0 ? comment : "");
}

// K (k_rows) or V rows of the 64-key block `block` (an SGPR): global -> registers, rows past the
// sequence zero; then the stream's lane addresses move one block on (64-bit: any stride). The K and
// V streams each load consecutive blocks from the window's first, so each advances on its own.
// Paged: the stream's base is its page's (paged_kv.cpp), from the entry it requested a block ago.
void KernelBuilder::issue_rows_gfx942(bool k_rows, const Reg& block) {
    const KernelLayout& L = layout_;
    const Reg data = k_rows ? r_.k_prefetch : r_.v_prefetch;
    const Reg address = k_rows ? r_.k_global_addr : r_.v_global_addr;
    const Reg step = k_rows ? r_.k_block_step : r_.v_block_step;
    const int chunks = k_rows ? L.k_chunks_per_thread : L.v_chunks_per_thread;
    const char* what = k_rows ? "load: K chunks" : "load: V chunks";
    const Reg rows_left = tmp_s("keys of the sequence from the block on");
    const std::string tail = e_.unique_label("tail_rows"), loaded = e_.unique_label("rows_loaded");
    const Reg entry = k_rows ? r_.page_entry : r_.page_entry_v;
    auto loads = [&](const std::string& note) {
        for (int j = 0; j < chunks; ++j) {
            // paged: the lane's 32-bit offset from its wave's page base (paged_kv.cpp)
            std::vector<Operand> ops{W(data.at(4 * j, 4))};
            if (paged()) ops.insert(ops.end(), {R(address.at(0)), R(step)});
            else ops.insert(ops.end(), {R(address), I("off")});
            e_.op("global_load_dwordx4", ops, "offset:" + std::to_string(128 * j), j == 0 ? what + note : "");
        }
    };
    e_.op("s_sub_i32", {W(rows_left), R(r_.seqlen_k), R(block)});
    if (paged()) paged_block_bases(rows_left, block, entry, k_rows, !k_rows);
    e_.op("s_cmp_lt_i32", {R(rows_left), I(kKeysPerBlock)}, "", "a whole block, or the sequence's tail?");
    e_.cbranch("scc1", tail);
    loads("");
    e_.branch(loaded);
    e_.label(tail);
    for (int w = 0; w < data.count; ++w) e_.op("v_mov_b32", {W(data.at(w)), I(0)});
    // Key row tid / 8 < rows_left iff tid < 8 rows_left (no key-row register).
    e_.op("s_lshl_b32", {W(rows_left), R(rows_left), I(3)});
    e_.op("v_cmp_gt_u32", {I("vcc"), R(rows_left), R(r_.thread_id)});
    e_.narrow_exec(r_.saved_exec, "vcc", "rows inside the sequence");
    loads(" (tail)");
    e_.restore_exec(r_.saved_exec);
    e_.label(loaded);
    free(rows_left);
    if (paged()) {  // the stream's next block's page, a block ahead
        paged_prefetch_entry(entry, block, kKeysPerBlock);
        return;
    }
    e_.op("v_lshl_add_u64", {W(address), R(step), I(0), R(address)}, "", "next block, 64-bit");
}

// vmcnt(0): whether K(i + 1) followed V(i) depends on the branch taken, and both were issued a
// whole block ago, so waiting for all of them costs nothing in the steady state.
void KernelBuilder::store_k_gfx942(int stage) {
    e_.waitcnt(0, -1, "the K loaded a block ago");
    for (int j = 0; j < layout_.k_chunks_per_thread; ++j)
        e_.op("ds_write_b128", {R(r_.k_lds_write), R(r_.k_prefetch.at(4 * j, 4))},
              "offset:" + std::to_string(stage * layout_.stage_bytes + 128 * j), j == 0 ? "store: K chunks, row-major (swizzled)" : "");
}

// V^T: word w of chunk j holds dims 64 j + 8 c + 2 w (low half) and + 1 (high half).
void KernelBuilder::store_v_gfx942(int stage) {
    const KernelLayout& L = layout_;
    e_.waitcnt(0, -1, "the V (and K) loaded a block ago");
    for (int j = 0; j < L.v_chunks_per_thread; ++j) {
        for (int w = 0; w < 4; ++w) {
            const Reg word = r_.v_prefetch.at(4 * j + w);
            const int row = 64 * j + 2 * w;  // + 8 c in the address; row % 8 = 2 w picks the swizzled address
            const int base = stage * L.stage_bytes;
            e_.op("ds_write_b16", {R(r_.vt_lds_write.at(2 * w)), R(word)}, "offset:" + std::to_string(base + row * L.vt_row_bytes),
                  j == 0 && w == 0 ? "store: V transposed (swizzled)" : "");
            e_.op("ds_write_b16_d16_hi", {R(r_.vt_lds_write.at(2 * w + 1)), R(word)},
                  "offset:" + std::to_string(base + (row + 1) * L.vt_row_bytes));
        }
    }
}

// End of block i (in `stage`): V(i) into this stage, K(i + 1) into the other; loads of V(i + 1)
// and K(i + 2); barrier; then block i + 1, or `exit_label` after the last block.
void KernelBuilder::finish_block_gfx942(int stage, const std::string& exit_label) {
    const std::string no_next = e_.unique_label("no_next_block");
    store_v_gfx942(stage);
    e_.op("s_add_u32", {W(r_.next_block), R(r_.block), I(kKeysPerBlock)});
    e_.op("s_cmp_lt_i32", {R(r_.next_block), R(r_.keys_end)}, "", "is there a next block?");
    e_.cbranch("scc0", no_next);
    store_k_gfx942(1 - stage);
    issue_rows_gfx942(false, r_.next_block);
    e_.op("s_add_u32", {W(r_.load_block), R(r_.next_block), I(kKeysPerBlock)});
    e_.op("s_cmp_lt_i32", {R(r_.load_block), R(r_.keys_end)}, "", "K of the one after?");
    e_.cbranch("scc0", no_next);
    issue_rows_gfx942(true, r_.load_block);
    e_.label(no_next);
    e_.waitcnt(-1, 0, "LDS writes visible and reads done before the barrier");
    e_.op("s_barrier", {});
    e_.op("s_mov_b32", {W(r_.block), R(r_.next_block)});
    e_.op("s_cmp_ge_i32", {R(r_.block), R(r_.keys_end)});
    e_.cbranch("scc1", exit_label);
}

// QK operand i: S^T tile i % 2, step i / 2 (the two accumulators alternate).
std::vector<StreamOp> KernelBuilder::qk_ops_gfx942(int stage) const {
    std::vector<StreamOp> ops;
    for (int i = 0; i < 2 * layout_.qk_steps; ++i) ops.push_back(StreamOp{false, stage, i});
    return ops;
}

// PV operand n: key step n / o_tiles, O^T tile n % o_tiles (the four accumulators in turn).
std::vector<StreamOp> KernelBuilder::pv_ops_gfx942(int stage) const {
    std::vector<StreamOp> ops;
    for (int n = 0; n < layout_.pv_steps * layout_.o_tiles; ++n) ops.push_back(StreamOp{true, stage, n});
    return ops;
}

void KernelBuilder::read_stream_op_gfx942(const StreamOp& op, int slot) {
    const KernelLayout& L = layout_;
    if (!op.pv) {
        const int t = op.index % 2, step = op.index / 2;
        e_.op("ds_read_b128", {W(ring(slot)), R(r_.k_lds_read.at(step % 4))},
              "offset:" + std::to_string(op.stage * L.stage_bytes + 32 * t * L.k_row_bytes + 128 * (step / 4)),
              "K tile " + std::to_string(t) + " step " + std::to_string(step));
        return;
    }
    const int step = op.index / L.o_tiles, dt = op.index % L.o_tiles;
    e_.op("ds_read_b128", {W(ring(slot)), R(r_.v_lds_read.at(step))},
          "offset:" + std::to_string(op.stage * L.stage_bytes + 32 * dt * L.vt_row_bytes),
          "V^T tile " + std::to_string(dt) + " keys " + std::to_string(16 * step) + "..");
}

// The MFMAs of `ops` in order, operand j in ring slot j % ring_slots(), its LDS read kVAhead
// operands ahead; the first `already_read` reads were issued by the caller.
void KernelBuilder::mfma_stream_gfx942(const std::vector<StreamOp>& ops, int already_read) {
    const int n = static_cast<int>(ops.size());
    for (int j = already_read; j < n && j < kVAhead; ++j) read_stream_op_gfx942(ops[j], j);
    bool p_ready = false;
    for (int j = 0; j < n; ++j) {
        const StreamOp& op = ops[j];
        e_.wait_loads({ring(j)}, op.pv ? "V^T operand" : "K operand");
        if (!op.pv) {
            const int t = op.index % 2, step = op.index / 2;
            bf16_mfma(s_tile(t), ring(j), r_.q_op.at(4 * step, 4), step == 0 ? Reg() : s_tile(t),
                      "QK: S^T tile " + std::to_string(t) + " += K Q^T");
        } else {
            const int step = op.index / layout_.o_tiles, dt = op.index % layout_.o_tiles;
            if (!p_ready) e_.pad_for_mfma({r_.p_op}, "VALU write -> MFMA read");
            p_ready = true;
            e_.pad_for_mfma_acc(o_tile(dt), "VALU write -> MFMA SrcC");
            bf16_mfma(o_tile(dt), ring(j), r_.p_op.at(4 * step, 4), o_tile(dt),
                      "PV: O^T tile " + std::to_string(dt) + " += V^T P^T, keys " + std::to_string(16 * step) + "..");
        }
        if (j + kVAhead < n) read_stream_op_gfx942(ops[j + kVAhead], j + kVAhead);
    }
}

// Waves 0-3: QK of this block, then PV of the previous one (V^T in the other stage), then the
// softmax of this block.
void KernelBuilder::key_block_mfma_first_gfx942(int stage, const std::string& exit_label) {
    const std::string first = e_.unique_label("no_previous_block"), mfma_done = e_.unique_label("mfma_done");
    e_.op("s_setprio", {I(1)}, "", "waves 0-3, stage " + std::to_string(stage) + ": MFMA cluster first");
    e_.op("s_cmp_eq_u32", {R(r_.block), R(r_.block_start)}, "", "PV of the previous block?");
    e_.cbranch("scc1", first);
    {
        std::vector<StreamOp> ops = qk_ops_gfx942(stage);
        const std::vector<StreamOp> pv = pv_ops_gfx942(1 - stage);
        ops.insert(ops.end(), pv.begin(), pv.end());
        mfma_stream_gfx942(ops, 0);
    }
    e_.branch(mfma_done);
    e_.label(first);
    mfma_stream_gfx942(qk_ops_gfx942(stage), 0);
    e_.label(mfma_done);
    e_.op("s_setprio", {I(0)});
    softmax(r_.block);
    finish_block_gfx942(stage, exit_label);
}

// Waves 4-7: the softmax of the previous block (its V^T reads issued first), then its PV and QK
// of this block.
void KernelBuilder::key_block_softmax_first_gfx942(int stage, const std::string& exit_label) {
    const std::string first = e_.unique_label("no_previous_block"), mfma_done = e_.unique_label("mfma_done");
    e_.op("s_cmp_eq_u32", {R(r_.block), R(r_.block_start)}, "", "waves 4-7, stage " + std::to_string(stage) + ": softmax of the previous block");
    e_.cbranch("scc1", first);
    {
        std::vector<StreamOp> ops = pv_ops_gfx942(1 - stage);
        const std::vector<StreamOp> qk = qk_ops_gfx942(stage);
        ops.insert(ops.end(), qk.begin(), qk.end());
        for (int j = 0; j < kVAhead; ++j) read_stream_op_gfx942(ops[j], j);
        const Reg previous = tmp_s("previous key block");
        e_.op("s_add_i32", {W(previous), R(r_.block), I(-kKeysPerBlock)});
        softmax(previous);
        free(previous);
        e_.op("s_setprio", {I(1)}, "", "MFMA cluster");
        mfma_stream_gfx942(ops, kVAhead);
    }
    e_.branch(mfma_done);
    e_.label(first);
    e_.op("s_setprio", {I(1)}, "", "MFMA cluster");
    mfma_stream_gfx942(qk_ops_gfx942(stage), 0);
    e_.label(mfma_done);
    e_.op("s_setprio", {I(0)});
    finish_block_gfx942(stage, exit_label);
}

// The ds_bpermute_b32 address of lane l ^ 32 and the SGPR constants of the bf16 rounding.
void KernelBuilder::gfx942_constants() {
    r_.swap_addr = tmp_v("ds_bpermute address of lane l ^ 32");
    r_.bf16_round_bias = tmp_s("0x7fff: bf16 rounding bias");
    r_.bf16_high_mask = tmp_s("0xffff0000");
    r_.bf16_quiet_bit = tmp_s("0x00400000: quiet NaN bit");
    e_.op("v_lshlrev_b32", {W(r_.swap_addr), I(2), R(r_.thread_id)});
    e_.op("v_xor_b32", {W(r_.swap_addr), I(128), R(r_.swap_addr)}, "", "((tid ^ 32) * 4); bpermute takes lanes mod 64");
    e_.op("s_mov_b32", {W(r_.bf16_round_bias), I("0x7fff")});
    e_.op("s_mov_b32", {W(r_.bf16_high_mask), I("0xffff0000")});
    e_.op("s_mov_b32", {W(r_.bf16_quiet_bit), I("0x400000")});
}

void KernelBuilder::build_gfx942() {
    if (layout_.head_dim_qk != 128 || layout_.head_dim_v != 128 || !layout_.bf16)
        throw std::logic_error("gfx942: BF16 d128 only (the LDS layout and the address registers assume it)");
    allocate_registers();
    load_arguments();
    sequence_span();
    key_ranges();
    constants();
    chunk_addresses();
    gfx942_constants();

    const std::string done = ".Lkey_blocks_done";
    // The first block of the window (block 0 without one): block_start (key_ranges).
    e_.op("s_cmp_le_i32", {R(r_.keys_end), R(r_.block_start)}, "", "no visible key: straight to the epilogue");
    e_.cbranch("scc1", done);
    e_.op("s_mov_b32", {W(r_.block), R(r_.block_start)});
    // K(0) into stage 0; V(0) and K(1) on their way (stored at the end of block 0).
    if (paged()) {  // the first block's page, for each stream
        paged_prefetch_entry(r_.page_entry, r_.block, 0);
        paged_prefetch_entry(r_.page_entry_v, r_.block, 0);
    }
    issue_rows_gfx942(true, r_.block);
    store_k_gfx942(0);
    issue_rows_gfx942(false, r_.block);
    const std::string single = e_.unique_label("single_block");
    e_.op("s_add_u32", {W(r_.load_block), R(r_.block_start), I(kKeysPerBlock)});
    e_.op("s_cmp_lt_i32", {R(r_.load_block), R(r_.keys_end)});
    e_.cbranch("scc0", single);
    issue_rows_gfx942(true, r_.load_block);
    e_.label(single);
    e_.waitcnt(-1, 0, "K(0) in LDS");
    e_.op("s_barrier", {});
    e_.op("v_mov_b32", {W(r_.alpha_pair.at(0)), I("1.0")});
    e_.op("v_mov_b32", {W(r_.row_sum.at(0)), I(0)});
    const std::string softmax_first = ".Lsoftmax_first_group";
    e_.op("s_cmp_ge_u32", {R(r_.wave), I(4)}, "", "waves 4-7 run the softmax half a block later");
    e_.cbranch("scc1", softmax_first);

    // The last block ends in stage s: its V^T is in stage s (stored at its end).
    const std::string mfma_first_loop = ".Lmfma_first_loop";
    e_.label(mfma_first_loop);
    const std::string drains[2] = {".Lmfma_first_drain_stage0", ".Lmfma_first_drain_stage1"};
    for (int stage = 0; stage < 2; ++stage) key_block_mfma_first_gfx942(stage, drains[stage]);
    e_.branch(mfma_first_loop);
    for (int stage = 0; stage < 2; ++stage) {
        e_.label(drains[stage]);
        e_.op("s_setprio", {I(1)});
        mfma_stream_gfx942(pv_ops_gfx942(stage), 0);
        e_.op("s_setprio", {I(0)});
        e_.branch(done);
    }

    e_.label(softmax_first);
    const std::string softmax_first_loop = ".Lsoftmax_first_loop";
    const std::string softmax_drains[2] = {".Lsoftmax_first_drain_stage0", ".Lsoftmax_first_drain_stage1"};
    e_.label(softmax_first_loop);
    for (int stage = 0; stage < 2; ++stage) key_block_softmax_first_gfx942(stage, softmax_drains[stage]);
    e_.branch(softmax_first_loop);
    for (int stage = 0; stage < 2; ++stage) {
        e_.label(softmax_drains[stage]);  // the softmax and PV of the last block
        const std::vector<StreamOp> ops = pv_ops_gfx942(stage);
        for (int j = 0; j < kVAhead; ++j) read_stream_op_gfx942(ops[j], j);
        const Reg previous = tmp_s("last key block");
        e_.op("s_add_i32", {W(previous), R(r_.block), I(-kKeysPerBlock)});
        softmax(previous);
        free(previous);
        mfma_stream_gfx942(ops, kVAhead);
        if (stage == 0) e_.branch(done);
    }
    e_.label(done);
    epilogue();
    e_.label(".Lkernel_end");
    e_.op("s_endpgm", {});
}

// m_new as row_max (phase_lean_p.cpp) with v_max3_f32 (gfx942 has no v_maximum3_f32): a NaN
// score does not reach m, but its p = 2^NaN does reach l, and the epilogue tests m + 0 l.
void KernelBuilder::row_max_gfx942(const Reg& m_new, bool keys_masked) {
    const Reg mx = m_new;
    const Reg s = r_.s_acc;
    e_.op("v_max3_f32", {W(mx), R(s.at(0)), R(s.at(1)), R(s.at(2))}, "", "row max of the lane's 32 keys");
    for (int i = 3; i + 1 < 32; i += 2) e_.op("v_max3_f32", {W(mx), R(mx), R(s.at(i)), R(s.at(i + 1))});
    e_.op("v_max_f32", {W(mx), R(mx), R(s.at(31))});
    const bool lean = !exact_softmax();
    if (lean) {
        // LEAN: a NaN score gives code 0 and no NaN p, so nothing would carry it into l as in
        // EXACT. gfx942 has no NaN-keeping max (v_maximum3_f32): the fp32 sum of the lane's 32
        // scores is NaN iff one is (a score is finite, masked -inf or NaN; never +inf), and such a
        // lane's max becomes +inf, which every later max keeps (the model's poisoned row max,
        // row_max.h: O and lse NaN, write_output).
        // Two sums in turn (a v_pk_ write counts as partial: the next VALU must not touch it).
        const Reg a = tmp_v("sum of the lane's scores (pair)", 2, 2), b = tmp_v("second sum (pair)", 2, 2);
        e_.pad_for_valu({r_.s_acc, a, b}, "QK MFMA result -> VALU");
        e_.op_settled("v_pk_add_f32", {W(a), R(s.at(0, 2)), R(s.at(2, 2))}, "", "NaN test: the lane's scores summed");
        e_.op_settled("v_pk_add_f32", {W(b), R(s.at(4, 2)), R(s.at(6, 2))});
        for (int i = 8; i < 32; i += 4) {
            e_.op_settled("v_pk_add_f32", {W(a), R(a), R(s.at(i, 2))});
            e_.op_settled("v_pk_add_f32", {W(b), R(b), R(s.at(i + 2, 2))});
        }
        e_.op_settled("v_add_f32", {W(a.at(0)), R(a.at(0)), R(a.at(1))});
        e_.op_settled("v_add_f32", {W(b.at(0)), R(b.at(0)), R(b.at(1))});
        e_.op("v_add_f32", {W(a.at(0)), R(a.at(0)), R(b.at(0))});
        e_.op("v_cmp_u_f32", {I("vcc"), R(a.at(0)), R(a.at(0))});
        e_.op("v_mov_b32", {W(a.at(1)), I(float_literal(__builtin_huge_valf()))});
        e_.op_settled("v_cndmask_b32", {W(mx), R(mx), R(a.at(1)), I("vcc")}, "", "a NaN score: max +inf");
        free(a);
        free(b);
    }
    add_other_half_gfx942(mx, true);
    if (keys_masked) e_.op("v_cmp_eq_f32", {I("vcc"), R(r_.neg_inf), R(mx)}, "", "no key of the block visible?");
    const Reg bm = r_.block_max;
    e_.op("v_mul_f32", {W(bm), R(r_.scale_log2), R(mx)}, "", "block max (log2 units); -inf if none visible (finite scale)");
    if (lean) {
        // A NaN block max (a NaN, zero or infinite scale times the raw max) poisons m as well: +inf.
        const Reg nan = tmp_s("block max NaN", 2, 2), inf = tmp_v("+inf");
        e_.op("v_cmp_u_f32", {W(nan), R(bm), R(bm)});
        e_.op("v_mov_b32", {W(inf), I(float_literal(__builtin_huge_valf()))});
        e_.op_settled("v_cndmask_b32", {W(bm), R(bm), R(inf), R(nan)}, "", "NaN block max: +inf");
        free(nan);
        free(inf);
    }
    e_.op("v_max_f32", {W(m_new), R(r_.m), R(bm)});
    if (keys_masked) e_.op("v_cndmask_b32", {W(m_new), R(m_new), R(r_.m), I("vcc")}, "", "then m_new = m");
}

// FP8 LEAN without a scaled MFMA: the codes are 2^k p, and the four 32x32x16 MFMAs add 2^k P V to
// O. O is kept as O 2^K, K the exponent of the latest block (-K in p_scale), the same idea as the
// sm_90a kernels' scaled accumulator (online_softmax.h: scaled_accumulator_rescale): before the
// block's PV, O *= alpha 2^(k - K) and K = k. A power of two is exact, so O 2^-K at the end is the
// model's acc * alpha + partial 2^-k up to fp32 summation order (and 2^-K folds into v_descale in
// write_output); l stays unscaled (update_running_sum: row sum 2^-k). The rescale runs when some
// lane's alpha is not 1 or its k moved, which, unlike alpha alone, also happens while the running
// max stays: a block whose maximum lies 1 or more below it has a larger k.
void KernelBuilder::alpha_and_bias_gfx942(const Reg& m_new) {
    const Reg bm = r_.block_max, x = tmp_v("m - m_new");
    const std::string alpha_done = e_.unique_label("alpha_done");
    const Reg p = r_.alpha_pair.at(0);
    e_.op("v_cmp_lt_f32", {I("vcc"), R(r_.m), R(m_new)}, "", "alpha: did any running max move?");
    e_.op("v_mov_b32", {W(p), I("1.0")});
    e_.cbranch("vccz", alpha_done);
    e_.op("v_sub_f32", {W(x), R(r_.m), R(m_new)});
    // alpha = running_max_rescale(m, m_new, Exp2WithoutTranscendental), as alpha_and_bias.
    exp2_without_transcendental(p, x, r_.exp2_c0);
    e_.label(alpha_done);
    free(x);

    // k = block_scale_exponent(m_new, block_max, max_block_exponent, e4m3fnuz): base 7.
    const Reg gap = tmp_v("m_new - block max"), k = tmp_v("block exponent k");
    const int base = numerics::p_scale_base_exponent(fp8_format());
    const Reg positive_gap = tmp_s("gap > 0", 2, 2);
    e_.op("v_sub_f32", {W(gap), R(m_new), R(bm)});
    e_.op("v_cmp_lt_f32", {W(positive_gap), I(0), R(gap)});
    e_.op("v_cmp_gt_f32", {I("vcc"), R(r_.cap_gap), R(gap)});
    e_.op("v_floor_f32", {W(k), R(gap)});
    e_.op("v_cvt_i32_f32", {W(k), R(k)});
    e_.op("v_add_u32", {W(k), I(base), R(k)});
    e_.op("v_cndmask_b32", {W(k), I(base), R(k), R(positive_gap)}, "", "gap <= 0: k = 7");
    e_.op("v_cndmask_b32", {W(k), R(r_.max_exponent), R(k), I("vcc")}, "", "huge gap, inf or NaN: the cap");
    free(positive_gap);

    // O *= alpha 2^(k - K), K = k (p_scale: -K).
    const Reg factor = tmp_v("alpha 2^(k - K) (pair)", 2, 2);
    const std::string rescale_done = e_.unique_label("rescale_done");
    e_.op("v_add_u32", {W(factor.at(1)), R(k), R(r_.p_scale)}, "", "k - K");
    e_.op("v_sub_u32", {W(r_.p_scale), I(0), R(k)}, "", "-k: O's scale from this block on");
    e_.op("v_ldexp_f32", {W(factor.at(0)), R(p), R(factor.at(1))}, "", "alpha 2^(k - K), exact (a power of two)");
    e_.op("v_cmp_neq_f32", {I("vcc"), I("1.0"), R(factor.at(0))}, "", "does O's scale change in any lane?");
    e_.cbranch("vccz", rescale_done);
    rescale_output(factor);
    e_.label(rescale_done);
    free(factor);

    // bias = ((64 + c) + 8k) - 8 m_new; -inf when m_new is (alpha_and_bias).
    const Reg bias = r_.bias_pair.at(0);
    e_.op("v_cmp_lg_f32", {I("vcc"), R(r_.neg_inf), R(m_new)});
    e_.op("v_cvt_f32_i32", {W(k), R(k)});
    e_.op("v_fmamk_f32", {W(bias), R(k), I(float_literal(8.0f)), R(r_.code_of_one)}, "", "(64 + c) + 8k");
    e_.op("v_fmamk_f32", {W(bias), R(m_new), I(float_literal(-8.0f)), R(bias)}, "", "- 8 m_new");
    e_.op("v_cndmask_b32", {W(bias), R(r_.neg_inf), R(bias), I("vcc")});
    e_.op("v_mov_b32", {W(r_.m), R(m_new)}, "", "m = m_new");
    free(gap);
    free(k);
}

// value = max (or sum) of value and lane l ^ 32's value: the row's other 32 keys.
void KernelBuilder::add_other_half_gfx942(const Reg& value, bool maximum) {
    const Reg other = tmp_v("other half's value");
    e_.op("ds_bpermute_b32", {W(other), R(r_.swap_addr), R(value)}, "", "the other 32 keys are in lane l ^ 32");
    e_.wait_loads({other}, "bpermute");
    e_.op(maximum ? "v_max_f32" : "v_add_f32", {W(value), R(value), R(other)});
    free(other);
}

// dst = x + 0x7fff + bit 16 of x: its high half is bf16(x) rounded to nearest even (half_types.h:
// float_to_bf16), overflow to infinity included. exact_nan: a NaN gives x | quiet bit instead, as
// float_to_bf16 does (the output; P's p is NaN only in rows whose output is NaN anyway).
void KernelBuilder::bf16_round_gfx942(const Reg& dst, const Reg& x, bool exact_nan) {
    e_.op("v_bfe_u32", {W(dst), R(x), I(16), I(1)});
    e_.op("v_add3_u32", {W(dst), R(x), R(r_.bf16_round_bias), R(dst)});
    if (!exact_nan) return;
    const Reg quiet = tmp_v("x | quiet bit");
    e_.op("v_or_b32", {W(quiet), R(r_.bf16_quiet_bit), R(x)});
    e_.op("v_cmp_u_f32", {I("vcc"), R(x), R(x)});
    e_.op_settled("v_cndmask_b32", {W(dst), R(dst), R(quiet), I("vcc")});
    free(quiet);
}

// dst = bf16(a) | bf16(b) << 16, as v_cvt_pk_bf16_f32 on gfx950.
void KernelBuilder::pack_bf16_pair_gfx942(const Reg& dst, const Reg& a, const Reg& b, bool exact_nan) {
    const Reg ra = tmp_v("a rounded"), rb = tmp_v("b rounded");
    bf16_round_gfx942(ra, a, exact_nan);
    bf16_round_gfx942(rb, b, exact_nan);
    e_.op("v_lshrrev_b32", {W(ra), I(16), R(ra)});
    e_.op("v_and_or_b32", {W(dst), R(rb), R(r_.bf16_high_mask), R(ra)});
    free(ra);
    free(rb);
}

}  // namespace gfx950_fp8
}  // namespace zyfa
