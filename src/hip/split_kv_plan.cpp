#include "split_kv_plan.hpp"

#include <algorithm>

#include "amd/attention_tile_shape.h"
#include "common/split_kv_args.h"

namespace zyfa {
namespace hip {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t split_kv_query_tiles(const gpu::SplitKvShape& shape) { return ceil_div(shape.seqlen_q, amd::kRows); }

int64_t choose_split_count(const gpu::SplitKvShape& shape, int compute_units, int64_t requested,
                           int64_t workspace_bytes) {
    if (requested == 1 || shape.batch <= 0 || shape.seqlen_q <= 0 || shape.seqlen_k <= 0 || shape.heads_q <= 0) {
        return 1;
    }
    if (shape.seqlen_q > gpu::kSplitMaxSeqlenQ) return 1;
    const int64_t key_blocks = ceil_div(shape.seqlen_k, amd::kKeyBlock);
    const int64_t most = std::min<int64_t>(kSplitMaxParts, key_blocks / gpu::kSplitMinBlocksPerSplit);
    if (most < 2) return 1;
    int64_t splits = 0;
    if (requested > 1) {
        splits = std::min(requested, most);
    } else {
        const int64_t cus = std::max(compute_units, 1);
        const int64_t workgroups = split_kv_query_tiles(shape) * shape.heads_q * shape.batch;
        if (workgroups >= cus) return 1;
        splits = std::min(most, std::max<int64_t>(2, ceil_div(2 * cus, workgroups)));
    }
    return gpu::fit_split_count_to_workspace(shape, splits, workspace_bytes);
}

}  // namespace hip
}  // namespace zyfa
