// zyfa-check's pass/fail bounds: the GPU test tier's bounds against the CPU backend
// (tests/gpu/gpu_check.hpp: o_tolerance_vs_cpu, lse_tolerance_vs_cpu, where their reasons are
// written out), restated here because a user tool does not include the test harness.
// tests/emu/asm_end_to_end_test.cpp asserts that both give the same numbers for every dtype pair.
#pragma once

#include "zyfa.h"

namespace zyfa_check {

// Relative RMS of O_gpu - O_cpu over the RMS of O_cpu: summation order inside the matrix
// instructions and ulp-level exp2/log2 differences flip a rounded P element by one step of its
// format now and then (FP8 1e-2, BF16 1e-3, FP16 3e-4), plus one output ulp on a few elements.
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

// Largest |lse_gpu - lse_cpu|: LEAN sums rounded codes, one flipped code moves lse by up to
// ln(1.09 ...) of its share (0.05); EXACT only sees score noise (1e-3).
inline double lse_tolerance(zyfa_softmax softmax) { return softmax == ZYFA_SOFTMAX_LEAN ? 0.05 : 1e-3; }

}  // namespace zyfa_check
