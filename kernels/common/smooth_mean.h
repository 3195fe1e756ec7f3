// K smoothing (ZYFA_QUANT_SMOOTH): the per-channel mean over the sequence that zyfa_quantize_fp8
// subtracts before quantising, one definition for the CPU backend and the GPU kernels.
//
// Why it is exact for attention: subtracting one vector m from every key of a (batch, kv head)
// shifts every score of a query row by the same q.m, which softmax removes; O is unchanged and
// ln(sum exp) moves by softmax_scale * q.m (the caller adds it back: docs/api.md, "K smoothing").
// That holds for any m, as long as the m reported is the m subtracted; the mean is the m that
// leaves the smallest values to quantise (a key bias shared by all tokens costs e4m3's 3 mantissa
// bits on every element otherwise).
//
// Bit-level definition (a GPU port must reproduce it exactly):
//   - per (slice, channel d), kSmoothLanes fp64 partial sums: lane l adds the fp32 input values of
//     the slice's rows s = l, l + 8, l + 16, ... in increasing s (s counted from the sequence's
//     first row), each converted exactly to fp64, starting from +0.0;
//   - sum = ((lane0 + lane1) + lane2) + ... + lane7, in fp64;
//   - mean = (float)(sum / count), an fp64 division rounded once to fp32 (count = rows of the
//     slice; an empty slice has mean 0);
//   - the value quantised is x - mean in fp32 (one rounding), before any Hadamard rotation.
// fp64 so that the mean does not depend on how long the sequence is (an fp32 running sum of 100K
// rows loses ~17 bits); eight lanes so that a GPU spreads one channel over eight warps.
#ifndef ZYFA_KERNELS_COMMON_SMOOTH_MEAN_H
#define ZYFA_KERNELS_COMMON_SMOOTH_MEAN_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

constexpr int kSmoothLanes = 8;

// The lane that row s of a slice adds into.
ZYFA_HD int smooth_lane(int64_t s) { return (int)(s % kSmoothLanes); }

// One term of a lane's sum.
ZYFA_HD double smooth_accumulate(double partial, float x) { return partial + (double)x; }

// The mean from one channel's kSmoothLanes partial sums.
ZYFA_HD float smooth_mean_from_lanes(const double* lanes, int64_t count) {
    if (count <= 0) return 0.0f;
    double sum = lanes[0];
    for (int l = 1; l < kSmoothLanes; ++l) sum = sum + lanes[l];
    return (float)(sum / (double)count);
}

// The smoothed value, which is then rotated (with ZYFA_QUANT_HADAMARD) and encoded.
ZYFA_HD float smooth_subtract(float x, float mean) { return x - mean; }

}  // namespace numerics
}  // namespace zyfa

#endif
