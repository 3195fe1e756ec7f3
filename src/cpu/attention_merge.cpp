// zyfa_attn_merge on the CPU: one work item per (sequence, head, tile of query rows), each row
// merged in part order with kernels/common/attn_merge.h, as the GPU kernels merge it. Every row
// writes only its own outputs, so the result does not depend on the number of threads.
#include "attention_merge.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "common/attn_merge.h"
#include "tensor_access.hpp"

namespace zyfa {
namespace cpu {
namespace {

constexpr int64_t kRowsPerItem = 64;

struct RowTile {
    int64_t batch;
    int64_t begin;  // first row of the tile within its sequence
};
constexpr int64_t kMaxHeadDim = 512;  // validate_merge's bound: the accumulator lives on the stack

void merge_row(const MergeProblem& p, int64_t b, int64_t h, int64_t s) {
    const int64_t lse_at = p.lse_index(b, h, s);
    float max_lse = -std::numeric_limits<float>::infinity();
    for (const float* part_lse : p.part_lse) max_lse = numerics::merge_max_lse(max_lse, part_lse[lse_at]);

    float acc[kMaxHeadDim];
    std::fill_n(acc, p.head_dim, 0.0f);
    float weight_sum = 0.0f;
    for (int64_t i = 0; i < p.num_parts(); ++i) {
        const float part_lse = p.part_lse[static_cast<size_t>(i)][lse_at];
        if (!numerics::merge_part_contributes(part_lse, max_lse)) continue;
        const float weight = numerics::merge_part_weight(part_lse, max_lse);
        weight_sum += weight;
        const TensorView& part = p.part_o[static_cast<size_t>(i)];
        const int64_t at = AttnProblem::offset(part, p.first_q(b), b, s, h);
        for (int64_t d = 0; d < p.head_dim; ++d) {
            acc[d] = numerics::merge_accumulate(acc[d], weight, load_as_float(part.data, part.dtype, at + d));
        }
    }

    const int64_t out_at = AttnProblem::offset(p.o, p.first_q(b), b, s, h);
    const float scale = numerics::merge_output_scale(weight_sum, max_lse);
    for (int64_t d = 0; d < p.head_dim; ++d) {
        store_from_float(p.o.data, p.o.dtype, out_at + d, numerics::merged_output(acc[d], scale, max_lse));
    }
    if (p.lse != nullptr) p.lse[lse_at] = numerics::merged_lse(max_lse, weight_sum);
}

}  // namespace

void attention_merge(const MergeProblem& problem, WorkerPool& pool) {
    if (problem.empty()) return;
    const MergeProblem& p = problem;
    // Work follows the rows that exist: the row tiles of each sequence (a packed sequence's
    // seqlen_q is only a bound), times the heads. Each sequence with rows has at least one row per
    // tile, so tiles * heads <= rows * heads, the lse size validate_merge proved to fit in int64.
    // Acquired before the first store: a call that runs out of memory writes nothing.
    std::vector<RowTile> tiles;
    for (int64_t b = 0; b < p.batch; ++b) {
        const int64_t rows = p.len_q(b);
        for (int64_t begin = 0; begin < rows; begin += kRowsPerItem) tiles.push_back(RowTile{b, begin});
    }
    const int64_t tile_count = static_cast<int64_t>(tiles.size());
    pool.parallel_for(tile_count * p.heads, [&](int64_t item, int /*slot*/) {
        const RowTile& tile = tiles[static_cast<size_t>(item % tile_count)];
        const int64_t h = item / tile_count;
        const int64_t end = std::min(p.len_q(tile.batch), tile.begin + kRowsPerItem);
        for (int64_t s = tile.begin; s < end; ++s) merge_row(p, tile.batch, h, s);
    });
}

}  // namespace cpu
}  // namespace zyfa
