// How a raw score becomes the log2-domain exponent, and back to natural-log lse: the constants and
// the order of the fp32 products, defined once because every backend must round them the same way.
#ifndef ZYFA_KERNELS_COMMON_SCORE_SCALE_H
#define ZYFA_KERNELS_COMMON_SCORE_SCALE_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

constexpr float kLog2e = 1.44269504088896340736f;
constexpr float kLn2 = 0.693147180559945309417f;

// x = S_raw * score_scale_log2(...) with S_raw = q . k on the stored (undescaled) values.
// The order ((scale * q_descale) * k_descale) * log2(e) is part of the numerics contract.
ZYFA_HD float score_scale_log2(float softmax_scale, float q_descale, float k_descale) {
    return ((softmax_scale * q_descale) * k_descale) * kLog2e;
}

}  // namespace numerics
}  // namespace zyfa

#endif
