// zyfa_attn_merge on the CPU: one work item per (sequence, head, tile of query rows), each row
// merged in part order with kernels/common/attn_merge.h, as the GPU kernels merge it. Every row
// writes only its own outputs, so the result does not depend on the number of threads.
#include "attention_merge.hpp"

#include <algorithm>
#include <limits>

#include "common/attn_merge.h"
#include "tensor_access.hpp"

namespace zyfa {
namespace cpu {
namespace {

constexpr int64_t kRowsPerItem = 64;
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
    // Items over (sequence, head, row tile) of the longest sequence; tiles past a shorter packed
    // sequence's end do nothing.
    const int64_t tiles = (p.seqlen_q + kRowsPerItem - 1) / kRowsPerItem;
    const int64_t items = p.batch * p.heads * tiles;
    pool.parallel_for(items, [&](int64_t item, int /*slot*/) {
        const int64_t tile = item % tiles;
        const int64_t h = (item / tiles) % p.heads;
        const int64_t b = item / (tiles * p.heads);
        const int64_t end = std::min(p.len_q(b), (tile + 1) * kRowsPerItem);
        for (int64_t s = tile * kRowsPerItem; s < end; ++s) merge_row(p, b, h, s);
    });
}

}  // namespace cpu
}  // namespace zyfa
