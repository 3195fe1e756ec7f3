#include "split_kv_plan.hpp"

#include <algorithm>

#include "common/split_kv_args.h"

namespace zyfa {
namespace cuda {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t split_kv_row_tiles(const SplitKvShape& shape) {
    return ceil_div(shape.heads_q / shape.heads_kv * shape.seqlen_q, kSplitRows);
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
    return gpu::fit_split_count_to_workspace(shape, splits, workspace_bytes);
}

}  // namespace cuda
}  // namespace zyfa
