// Which keys a query sees (docs/api.md): per sequence of lengths sq, sk, with diagonal offset
// d = 0 for CAUSAL (top-left) and d = sk - sq for NONE and CAUSAL_BOTTOM_RIGHT, key j is visible
// to query i when: mask is NONE or j <= i + d; window_left < 0 or j >= i + d - window_left;
// window_right < 0 or j <= i + d + window_right. The visible keys always form one interval.
#ifndef ZYFA_KERNELS_COMMON_ATTENTION_MASK_H
#define ZYFA_KERNELS_COMMON_ATTENTION_MASK_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

enum class MaskKind : int { None = 0, Causal = 1, CausalBottomRight = 2 };  // = zyfa_mask values

struct KeyRange {
    int64_t begin;  // first visible key
    int64_t end;    // one past the last; begin >= end means the row sees no key
};

ZYFA_HD int64_t mask_diagonal_offset(MaskKind mask, int64_t seqlen_q, int64_t seqlen_k) {
    return mask == MaskKind::Causal ? 0 : seqlen_k - seqlen_q;
}

ZYFA_HD KeyRange visible_keys(int64_t query, int64_t seqlen_q, int64_t seqlen_k, MaskKind mask,
                              int64_t window_left, int64_t window_right) {
    const int64_t diagonal = query + mask_diagonal_offset(mask, seqlen_q, seqlen_k);
    int64_t begin = 0;
    int64_t end = seqlen_k;
    if (mask != MaskKind::None && diagonal + 1 < end) end = diagonal + 1;
    if (window_right >= 0 && diagonal + window_right + 1 < end) end = diagonal + window_right + 1;
    if (window_left >= 0 && diagonal - window_left > begin) begin = diagonal - window_left;
    if (end < begin) end = begin;
    return KeyRange{begin, end};
}

ZYFA_HD bool key_visible(int64_t query, int64_t key, int64_t seqlen_q, int64_t seqlen_k, MaskKind mask,
                         int64_t window_left, int64_t window_right) {
    const int64_t diagonal = query + mask_diagonal_offset(mask, seqlen_q, seqlen_k);
    if (mask != MaskKind::None && key > diagonal) return false;
    if (window_left >= 0 && key < diagonal - window_left) return false;
    if (window_right >= 0 && key > diagonal + window_right) return false;
    return key >= 0 && key < seqlen_k;
}

}  // namespace numerics
}  // namespace zyfa

#endif
