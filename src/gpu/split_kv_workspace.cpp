#include "split_kv_workspace.hpp"

#include "common/split_kv_args.h"

namespace zyfa {
namespace gpu {
namespace {

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

int64_t fit_split_count_to_workspace(const SplitKvShape& shape, int64_t splits, int64_t workspace_bytes) {
    if (workspace_bytes >= 0) {
        while (splits > 1) {
            const int64_t needed = split_kv_workspace_bytes(shape, splits);
            if (needed >= 0 && needed <= workspace_bytes) break;
            --splits;
        }
        return splits > 1 ? splits : 1;
    }
    if (splits > 1 && split_kv_workspace_bytes(shape, splits) < 0) return 1;
    return splits > 1 ? splits : 1;
}

}  // namespace gpu
}  // namespace zyfa
