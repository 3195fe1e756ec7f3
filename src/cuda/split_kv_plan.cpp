#include "split_kv_plan.hpp"

#include <algorithm>

#include "common/split_kv_args.h"

namespace zyfa {
namespace cuda {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

SplitKvShape split_kv_shape(const AttnProblem& problem) {
    SplitKvShape shape;
    shape.batch = problem.batch;
    shape.seqlen_q = problem.seqlen_q;
    shape.seqlen_k = problem.seqlen_k;
    shape.heads_q = problem.heads_q;
    shape.heads_kv = problem.heads_kv;
    shape.head_dim_v = problem.head_dim_v;
    return shape;
}

int64_t split_kv_row_tiles(const SplitKvShape& shape) {
    return ceil_div(shape.heads_q / shape.heads_kv * shape.seqlen_q, kSplitRows);
}

int64_t split_kv_workspace_bytes(const SplitKvShape& shape, int64_t splits) {
    if (splits <= 1) return 0;
    int64_t rows = 0, elements = 0, with_lse = 0, parts = 0, bytes = 0;
    // The layout's largest intermediate: splits * (o + lse + alignment) * 4 bytes.
    if (mul_overflows(shape.batch, shape.seqlen_q, &rows) || mul_overflows(rows, shape.heads_q, &rows) ||
        mul_overflows(rows, shape.head_dim_v + 1, &elements) ||
        __builtin_add_overflow(elements, 2 * kSplitPartAlign, &with_lse) ||
        mul_overflows(with_lse, splits, &parts) || mul_overflows(parts, 4, &bytes)) {
        return -1;
    }
    return split_kv_layout(shape.batch, shape.seqlen_q, shape.heads_q, shape.head_dim_v, splits).total_bytes;
}

int64_t choose_split_count(const SplitKvShape& shape, int multiprocessors, int64_t requested, int64_t workspace_bytes) {
    if (requested == 1 || shape.batch <= 0 || shape.seqlen_q <= 0 || shape.seqlen_k <= 0) return 1;
    if (shape.seqlen_q > kSplitMaxSeqlenQ) return 1;
    const int64_t key_blocks = ceil_div(shape.seqlen_k, kSplitKeyBlock);
    int64_t most = std::min<int64_t>(kSplitMaxParts, key_blocks / kSplitMinBlocksPerSplit);
    if (most < 2) return 1;
    int64_t splits = 0;
    if (requested > 1) {
        splits = std::min(requested, most);
    } else {
        const int64_t sms = std::max(multiprocessors, 1);
        const int64_t unsplit_tiles = ceil_div(shape.seqlen_q, 128) * shape.heads_q * shape.batch;
        const bool wasted = shape.seqlen_q <= 16 || unsplit_tiles < sms;
        if (!wasted) return 1;
        const int64_t base_ctas = shape.batch * shape.heads_kv * split_kv_row_tiles(shape);
        splits = std::min(most, std::max<int64_t>(2, ceil_div(2 * kSplitCtasPerSm * sms, base_ctas)));
    }
    if (workspace_bytes >= 0) {
        while (splits > 1) {
            const int64_t needed = split_kv_workspace_bytes(shape, splits);
            if (needed >= 0 && needed <= workspace_bytes) break;
            --splits;
        }
    } else if (split_kv_workspace_bytes(shape, splits) < 0) {
        return 1;
    }
    return splits;
}

}  // namespace cuda
}  // namespace zyfa
