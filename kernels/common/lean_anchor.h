// LEAN's P scale on the 128-key instance (params.key_block = 128, the sm_90a kernels): an anchor
// that follows the running maximum up at once and down only past a window, with a constant
// exponent, instead of a per-block exponent.
//
// The 64-key instance (block_scale.h) scales block n by 2^k, k = 8 + floor(m - b) with m the
// running maximum and b the block's maximum: k moves in most blocks, and every move rescales the
// accumulator (on the GPU one multiply per accumulator element, 64 per thread and step at head
// dim 128, which a warp could skip only when none of its rows' scales moved).
//
// The 128-key instance keeps, per row, an anchor a in the place of m and a constant exponent
// k = lean_anchor_exponent (8 in e4m3fn, as EXACT's): block n's codes are those of 2^(s*c - a + 8).
// The anchor moves to b when b > a (a new maximum: the block's largest code would pass 2^8) or
// b < a - kLeanAnchorBelow (the block lies so far below that its codes would give up more than
// that many octaves of e4m3's normal range), and otherwise holds. A move down never goes below
// M - kLeanAnchorMaxDrop, M the row's running maximum: l and the accumulator are kept relative to
// 2^a, and that bounds them by 2^kLeanAnchorMaxDrop times their size relative to M (the role of
// kBlockScaleMaxExponent in the 64-key instance).
//
// Everything else is online_softmax.h with a in the place of m: alpha = 2^(a_old - a_new), exactly
// 1 while a holds (anchor_rescale), l = l * alpha + 2^-8 * sum(codes), acc = acc * alpha +
// 2^-8 * P.V, and lse = a + log2 l: l * 2^a is the sum of the rounded probabilities whatever a
// is, so the sink's fold (attention_sink.h), the lse and zyfa_attn_merge read a as they read m.
// On real activations and the synthetic generators this is as accurate as the per-block exponent
// or more (a block that moves the anchor down has its own maximum on a power of two, which Lean P
// codes exactly), and fewer warp steps rescale: docs/accuracy.md ("LEAN's anchor") has both.
#ifndef ZYFA_KERNELS_COMMON_LEAN_ANCHOR_H
#define ZYFA_KERNELS_COMMON_LEAN_ANCHOR_H

#include "block_scale.h"
#include "device_compat.h"
#include "fp8_e4m3.h"
#include "row_max.h"

namespace zyfa {
namespace numerics {

constexpr float kLeanAnchorBelow = 3.0f;     // octaves below the anchor a block may lie and keep it
constexpr float kLeanAnchorMaxDrop = 56.0f;  // the anchor stays within 2^56 of the running maximum

// k: the anchor's code is 2^8 in e4m3fn (2^7 in e4m3fnuz), the largest power of two below the
// largest finite code (p_scale_base_exponent).
ZYFA_HD int lean_anchor_exponent(Fp8Format f) { return p_scale_base_exponent(f); }

// The anchor after a block with maximum block_max (log2 units; -inf when the row sees none of its
// keys or only -inf scores), running_max = max_keep_nan(the previous running maximum, block_max).
// A NaN or +inf running maximum poisons the row (row_max.h): the anchor takes it, so that the
// epilogue's test of the anchor sees it. `below` is the window's size (a parameter for the
// accuracy studies; every kernel uses kLeanAnchorBelow).
// Written as selects, not branches: the rows of a warp decide differently, and a divergent branch
// in the softmax's dependent chain cost the sm_90a kernel about 10% (docs/hopper-kernel-notes.md).
ZYFA_HD float lean_anchor_update(float anchor, float running_max, float block_max, float below = kLeanAnchorBelow) {
    const bool seen = block_max > -__builtin_inff();
    const bool move = seen && (block_max > anchor || block_max < anchor - below);
    const float lowest = running_max - kLeanAnchorMaxDrop;
    const float moved = block_max > lowest ? block_max : lowest;
    const float next = move ? moved : anchor;
    return row_max_is_poisoned(running_max) ? running_max : next;
}

// alpha for an anchor that moves from a_old to a_new: exactly 1 when it holds (so that a kernel may
// skip the multiply), 0 for the row's first block (a_old = -inf), else 2^(a_old - a_new) by the
// kernel's exponential (> 1 when the anchor moves down).
template <typename Exp2>
ZYFA_HD float anchor_rescale(float a_old, float a_new, Exp2 exp2) {
    const float moved = a_old == -__builtin_inff() ? 0.0f : exp2(a_old - a_new);
    return a_old == a_new ? 1.0f : moved;
}

}  // namespace numerics
}  // namespace zyfa

#endif
