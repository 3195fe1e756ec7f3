// The bounds of a GPU result against the CPU backend on random inputs: zyfa-check's pass/fail
// and the GPU test tier's (tests/gpu/gpu_check.hpp includes this header), in one place.
#pragma once

#include "zyfa.h"

namespace zyfa_check {

// Relative RMS of O_gpu - O_cpu (over the RMS of O_cpu) allowed on random inputs.
//
// The kernels and the CPU model run the same blocked algorithm with the same fp32 operations in
// the same places (64-key blocks from the sequence start, the same scale folding, P rounded as
// the model rounds it, the same Lean P codes, block exponents and rounded row sum). What differs:
// the order of the sums inside the tensor-core MMAs (S = Q K^T over head_dim, P.V over a block),
// and exp2 / log2 / reciprocal implementations that may differ by an ulp. That moves S and the
// accumulators by about 1e-6 relative, and reaches O in two ways:
//   - directly: ~1e-6 relative, invisible at these bounds;
//   - through a P element lying within that noise of a rounding boundary of P's format, which
//     then rounds the other way and moves by one step: bf16 2^-8, fp16 2^-11, an e4m3 code up to
//     2^-3, a Lean P code 2^(1/8) - 1 = 9%. O's relative change is about step * sqrt(rate).
// FP16 3e-4 and BF16 1e-3 allow such flips on about 1% of P elements. FP8 1e-2 allows them on
// about 1% of elements even with an FP8 tensor-core adder narrower than fp32 (reported for Hopper
// FP8 MMAs); it is still 6-8x under the fp64 tolerances (1/16, 0.085), and the exact-score test
// (p_code_agreement_test.cpp) holds the P codes themselves to zero mismatches.
// The output dtype adds its own flips: a 1e-6 difference before rounding to bf16 (fp16) changes
// a small fraction of elements by one output ulp.
inline double o_tolerance(zyfa_dtype in, zyfa_dtype out) {
    double tol;
    switch (in) {
        case ZYFA_DTYPE_FP16: tol = 3e-4; break;
        case ZYFA_DTYPE_BF16: tol = 1e-3; break;
        default: tol = 1e-2; break;
    }
    if (out == ZYFA_DTYPE_BF16) tol += 5e-4;
    if (out == ZYFA_DTYPE_FP16) tol += 1e-4;
    return tol;
}

// Largest |lse_gpu - lse_cpu|. EXACT sums unrounded fp32 probabilities: only the score noise
// (at most ~1e-4 relative with a narrow FP8 adder) reaches lse: 1e-3. LEAN sums the rounded
// codes: one flipped code holding a fraction f of the row sum moves lse by ln(1 + 0.09 f); 0.05
// allows a flip of a code holding half the row (a very peaked row).
inline double lse_tolerance(zyfa_softmax softmax) { return softmax == ZYFA_SOFTMAX_LEAN ? 0.05 : 1e-3; }

}  // namespace zyfa_check
