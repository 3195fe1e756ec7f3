// Load phase: key block i + 2's K and V rows go global -> registers at the end of block i (their
// latency hides behind the whole of block i + 1), then registers -> LDS stage (i + 2) % 2 at the
// end of block i + 1: K row-major with one ds_write_b128, V transposed byte by byte into V^T.
// Keys past the sequence are zero in LDS (0 * garbage could be NaN).
#include <cstddef>
#include <stdexcept>

#include "common/attention_kernel_args.h"
#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

// Waves whose threads have a K chunk j (j > 0: d192's 768 chunks are 1.5 per thread, so waves 0-3).
int KernelBuilder::chunk_waves(int j) const {
    const int threads = kKeysPerBlock * layout_.k_chunks_per_row - kThreadsPerWorkgroup * j;
    if (threads % 64 != 0) throw std::logic_error("K chunks do not end on a wave boundary");
    return threads / 64;
}

void KernelBuilder::issue_block_loads() {
    const KernelLayout& L = layout_;
    const Reg rows_left = tmp_s("keys of the sequence from the block on");
    const std::string tail = e_.unique_label("tail_block_loads"), loaded = e_.unique_label("block_loaded");
    e_.op("s_sub_i32", {W(rows_left), R(r_.seqlen_k), R(r_.load_block)});
    if (paged()) paged_block_bases(rows_left, r_.load_block, r_.page_entry, true, true);
    // The address operands of a load: the lane's 64-bit address, or (paged) its 32-bit offset from
    // the SGPR base of its wave's rows.
    auto k_address = [&](int j) -> std::vector<Operand> {
        if (paged()) return {R(r_.k_global_addr.at(2 * j)), R(r_.k_block_step)};
        return {R(r_.k_global_addr.at(2 * j, 2)), I("off")};
    };
    auto v_address = [&]() -> std::vector<Operand> {
        if (paged()) return {R(r_.v_global_addr.at(0)), R(r_.v_block_step)};
        return {R(r_.v_global_addr), I("off")};
    };
    auto load = [&](const Reg& data, std::vector<Operand> address, const std::string& modifiers, const std::string& comment) {
        std::vector<Operand> ops{W(data)};
        ops.insert(ops.end(), address.begin(), address.end());
        e_.op("global_load_dwordx4", ops, modifiers, comment);
    };
    e_.op("s_cmp_lt_i32", {R(rows_left), I(kKeysPerBlock)}, "", "load: a whole block, or the sequence's tail?");
    e_.cbranch("scc1", tail);
    if (L.bf16) {
        // Chunk j of K / V: 128 j bytes after chunk 0 (bf16_chunk_addresses).
        auto loads = [&](const std::string& what) {
            for (int j = 0; j < L.k_chunks_per_thread; ++j)
                load(r_.k_prefetch.at(4 * j, 4), k_address(0), "offset:" + std::to_string(128 * j), j == 0 ? "load: K chunks" + what : "");
            for (int j = 0; j < L.v_chunks_per_thread; ++j)
                load(r_.v_prefetch.at(4 * j, 4), v_address(), "offset:" + std::to_string(128 * j), j == 0 ? "load: V chunks" + what : "");
        };
        loads("");
        e_.branch(loaded);
        e_.label(tail);  // rows past the sequence are zero
        for (const Reg& data : {r_.k_prefetch, r_.v_prefetch})
            for (int w = 0; w < data.count; ++w) e_.op("v_mov_b32", {W(data.at(w)), I(0)});
        // Key row tid / 8 < rows_left iff tid < 8 rows_left (no key-row register in BF16).
        e_.op("s_lshl_b32", {W(rows_left), R(rows_left), I(3)});
        e_.op("v_cmp_gt_u32", {I("vcc"), R(rows_left), R(r_.thread_id)});
        e_.narrow_exec(r_.saved_exec, "vcc", "K and V rows inside the sequence");
        loads(" (tail)");
        e_.restore_exec(r_.saved_exec);
    } else {
    for (int j = 0; j < L.k_chunks_per_thread; ++j) {
        const std::string no_chunk = e_.unique_label("no_second_chunk");
        if (j > 0) {
            e_.op("s_cmp_ge_u32", {R(r_.wave), I(chunk_waves(j))}, "", "waves with a second K chunk");
            e_.cbranch("scc1", no_chunk);
        }
        load(r_.k_prefetch.at(4 * j, 4), k_address(j), "", "load: K chunk");
        if (j > 0) e_.label(no_chunk);
    }
    load(r_.v_prefetch, v_address(), "", "load: V chunk");
    e_.branch(loaded);
    // The tail: rows past the sequence are zero.
    e_.label(tail);
    for (int j = 0; j < L.k_chunks_per_thread; ++j) {
        const Reg data = r_.k_prefetch.at(4 * j, 4);
        for (int w = 0; w < 4; ++w) e_.op("v_mov_b32", {W(data.at(w)), I(0)});
        e_.op("v_cmp_gt_u32", {I("vcc"), R(rows_left), R(r_.k_row.at(j))});
        e_.narrow_exec(r_.saved_exec, "vcc", "K rows inside the sequence");
        load(data, k_address(j), "", "load: K chunk (tail)");
        e_.restore_exec(r_.saved_exec);
    }
    for (int w = 0; w < 4; ++w) e_.op("v_mov_b32", {W(r_.v_prefetch.at(w)), I(0)});
    e_.op("v_cmp_gt_u32", {I("vcc"), R(rows_left), R(r_.v_row)});
    e_.narrow_exec(r_.saved_exec, "vcc", "V rows inside the sequence");
    load(r_.v_prefetch, v_address(), "", "load: V chunk (tail)");
    e_.restore_exec(r_.saved_exec);
    }
    e_.label(loaded);
    free(rows_left);

    if (paged()) {  // no address advances: the next load's bases come from the table
        paged_prefetch_entry(r_.page_entry, r_.load_block, kKeysPerBlock);
        return;
    }
    // Advance every lane's addresses by one block (kKeysPerBlock = 64 rows), in 64 bits.
    for (int j = 0; j < r_.k_global_addr.count / 2; ++j)
        e_.op("v_lshl_add_u64", {W(r_.k_global_addr.at(2 * j, 2)), R(r_.k_block_step), I(0), R(r_.k_global_addr.at(2 * j, 2))});
    e_.op("v_lshl_add_u64", {W(r_.v_global_addr), R(r_.v_block_step), I(0), R(r_.v_global_addr)});
}

void KernelBuilder::store_block_to_lds(int stage) {
    const KernelLayout& L = layout_;
    const int base = 0;  // the stage is in the address register
    e_.wait_loads({r_.k_prefetch, r_.v_prefetch}, "the K and V loaded a block ago");
    if (L.bf16) {
        for (int j = 0; j < L.k_chunks_per_thread; ++j)
            e_.op("ds_write_b128", {R(r_.k_lds_write.at(stage)), R(r_.k_prefetch.at(4 * j, 4))},
                  "offset:" + std::to_string(128 * j), j == 0 ? "store: K chunks, row-major" : "");
        // V^T: word w of chunk j holds dims 64 j + 8 c + 2 w (low half) and + 1 (high half).
        for (int j = 0; j < L.v_chunks_per_thread; ++j) {
            for (int w = 0; w < 4; ++w) {
                const Reg word = r_.v_prefetch.at(4 * j + w);
                const int row = 64 * j + 2 * w;
                e_.op("ds_write_b16", {R(r_.vt_lds_write.at(stage)), R(word)}, "offset:" + std::to_string(row * L.vt_row_bytes),
                      j == 0 && w == 0 ? "store: V transposed" : "");
                e_.op("ds_write_b16_d16_hi", {R(r_.vt_lds_write.at(stage)), R(word)},
                      "offset:" + std::to_string((row + 1) * L.vt_row_bytes));
            }
        }
        return;
    }
    for (int j = 0; j < L.k_chunks_per_thread; ++j) {
        const std::string no_chunk = e_.unique_label("no_second_chunk");
        if (j > 0) {
            e_.op("s_cmp_ge_u32", {R(r_.wave), I(chunk_waves(j))}, "", "waves with a second K chunk");
            e_.cbranch("scc1", no_chunk);
        }
        e_.op("ds_write_b128", {R(r_.k_lds_write.at(L.stages * j + stage)), R(r_.k_prefetch.at(4 * j, 4))}, "offset:" + std::to_string(base),
              "store: K chunk, row-major");
        if (j > 0) e_.label(no_chunk);
    }
    // V^T: dim d = 16 c + 4 w + b of the chunk goes to row d, column vt_position(row).
    const Reg shifted = tmp_v("V bytes 1 and 3");
    for (int w = 0; w < 4; ++w) {
        const Reg word = r_.v_prefetch.at(w);
        auto offset = [&](int b) { return "offset:" + std::to_string(base + (4 * w + b) * L.vt_row_bytes); };
        e_.op("v_lshrrev_b32", {W(shifted), I(8), R(word)});
        e_.op("ds_write_b8", {R(r_.vt_lds_write.at(stage)), R(word)}, offset(0), w == 0 ? "store: V transposed" : "");
        e_.op("ds_write_b8", {R(r_.vt_lds_write.at(stage)), R(shifted)}, offset(1));
        e_.op("ds_write_b8_d16_hi", {R(r_.vt_lds_write.at(stage)), R(word)}, offset(2));
        e_.op("ds_write_b8_d16_hi", {R(r_.vt_lds_write.at(stage)), R(shifted)}, offset(3));
    }
    free(shifted);
}

}  // namespace gfx950_fp8
}  // namespace zyfa
