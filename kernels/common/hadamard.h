// The normalised Hadamard rotation that zyfa_quantize_fp8 applies to the head dimension
// (ZYFA_QUANT_HADAMARD), one definition for the CPU backend and later HIP/CUDA kernels.
//
// H_n / sqrt(n) is orthogonal and symmetric, so it is its own inverse, and applying the same
// rotation to every row of Q and of K leaves Q.K^T unchanged while spreading a few large
// "outlier" channels over all channels, which shrinks the per-head amax and the FP8 error.
//
// Supported head dimensions (hadamard_block_size; anything else is unsupported and the
// validator rejects it):
//   - n a power of two (1, 2, 4, ..., 64, 128, 256, ...): one block H_n / sqrt(n);
//   - otherwise a multiple of 64 (192, 320, 384, ...): block-diagonal, head_dim / 64 blocks of
//     H_64 / 8, each rotating its own 64 consecutive channels (still orthogonal and symmetric).
//
// Bit-level definition (a GPU port must reproduce it exactly): the Sylvester-ordered fast
// Walsh-Hadamard transform with butterflies (a, b) -> (a + b, a - b) in fp32, stages of span
// h = 1, 2, 4, ..., n/2 in that order, then one fp32 multiply of every element by the normaliser
// 1/sqrt(n) rounded once to fp32 (exact when n is a power of four).
#ifndef ZYFA_KERNELS_COMMON_HADAMARD_H
#define ZYFA_KERNELS_COMMON_HADAMARD_H

#include "device_compat.h"

namespace zyfa {
namespace numerics {

constexpr int64_t kHadamardSubBlock = 64;  // block size for head dims that are not a power of two

ZYFA_HD bool is_power_of_two(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The size of the diagonal blocks for a head dimension, 0 if the rotation is unsupported.
ZYFA_HD int64_t hadamard_block_size(int64_t head_dim) {
    if (is_power_of_two(head_dim)) return head_dim;
    if (head_dim > 0 && head_dim % kHadamardSubBlock == 0) return kHadamardSubBlock;
    return 0;
}

ZYFA_HD bool hadamard_supported(int64_t head_dim) { return hadamard_block_size(head_dim) != 0; }

// 1/sqrt(n) for n = 2^k, rounded once to fp32, with no sqrt call: 2^(-k/2) is exact for even k;
// for odd k it is 2^(-(k-1)/2) times the fp32 of 1/sqrt(2) (a power-of-two scaling, still exact).
ZYFA_HD float hadamard_normaliser(int64_t n) {
    int k = 0;
    while (((int64_t)1 << k) < n) ++k;
    const float half_power = bits_float((uint32_t)(127 - k / 2) << 23);  // 2^(-floor(k/2))
    return (k & 1) ? half_power * 0.70710678118654752440f : half_power;
}

// In place: x <- (H_n / sqrt(n)) x, with normaliser = hadamard_normaliser(n) and n a power of two.
ZYFA_HD void fwht_inplace(float* x, int64_t n, float normaliser) {
    for (int64_t span = 1; span < n; span *= 2) {
        for (int64_t start = 0; start < n; start += 2 * span) {
            for (int64_t j = start; j < start + span; ++j) {
                const float a = x[j];
                const float b = x[j + span];
                x[j] = a + b;
                x[j + span] = a - b;
            }
        }
    }
    for (int64_t j = 0; j < n; ++j) x[j] *= normaliser;
}

// In place: rotates one row of head_dim values block-diagonally (see the top of this file).
// Returns false, touching nothing, when head_dim is unsupported.
ZYFA_HD bool hadamard_rotate_row(float* row, int64_t head_dim) {
    const int64_t block = hadamard_block_size(head_dim);
    if (block == 0) return false;
    const float normaliser = hadamard_normaliser(block);
    for (int64_t start = 0; start < head_dim; start += block) fwht_inplace(row + start, block, normaliser);
    return true;
}

}  // namespace numerics
}  // namespace zyfa

#endif
