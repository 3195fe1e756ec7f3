#include "attention_flops.hpp"

#include "common/attention_mask.h"

namespace zyfa_bench {

int64_t visible_pairs(int64_t sq, int64_t sk, zyfa_mask mask, int32_t window_left, int32_t window_right) {
    // The shared definition of visibility (kernels/common), so the count matches what runs.
    const auto kind = static_cast<zyfa::numerics::MaskKind>(mask);
    int64_t pairs = 0;
    for (int64_t i = 0; i < sq; ++i) {
        const zyfa::numerics::KeyRange keys = zyfa::numerics::visible_keys(i, sq, sk, kind, window_left, window_right);
        if (keys.end > keys.begin) pairs += keys.end - keys.begin;
    }
    return pairs;
}

int64_t visible_pairs(const std::vector<int64_t>& lengths_q, const std::vector<int64_t>& lengths_k, zyfa_mask mask,
                      int32_t window_left, int32_t window_right) {
    int64_t pairs = 0;
    for (size_t b = 0; b < lengths_q.size(); ++b)
        pairs += visible_pairs(lengths_q[b], lengths_k[b], mask, window_left, window_right);
    return pairs;
}

double attention_flops(int64_t pairs, int64_t heads_q, int64_t head_dim_qk, int64_t head_dim_v) {
    return 2.0 * static_cast<double>(head_dim_qk + head_dim_v) * static_cast<double>(pairs) *
           static_cast<double>(heads_q);
}

}  // namespace zyfa_bench
