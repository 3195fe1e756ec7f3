// Runs a case through the public API and checks it against the fp64 reference with the
// tolerance of its dtype and softmax mode.
#pragma once

#include <cstdio>
#include <string>

#include "core/validate.hpp"
#include "cpu/attention_reference.hpp"
#include "numerics/cmocka_cpp.hpp"
#include "support/attention_case.hpp"

namespace zyfa_test {

// Relative RMS error of O allowed against fp64 on inputs exact in their dtype, so that only the
// kernel's own rounding counts. Each bound is the largest relative rounding error of one element of
// P; O's error is a weighted sum of independent per-element errors, so its RMS relative to O sits
// near the per-element RMS error, well under these maxima (the printed figures show by how much):
//   FP32: P stays fp32; exp2f and fp32 sums over <= a few hundred terms: ~1e-6.
//   FP16: P rounded to fp16 for P.V, half an ulp = 2^-11 relative.
//   BF16: P rounded to bf16, half an ulp = 2^-9 relative.
//   FP8 EXACT: P*2^8 rounded to e4m3, half an ulp = 2^-4 relative (RMS over uniform mantissas ~2.7%).
//   FP8 LEAN: Lean P reads back within 8.5% of 2^x (tests/numerics/lean_p_test.cpp), RMS 3.1%.
// The output dtype adds its own half ulp (bf16 2^-9, fp16 2^-11).
inline double o_tolerance(zyfa_dtype in, zyfa_softmax softmax, zyfa_dtype out) {
    double tol;
    switch (in) {
        case ZYFA_DTYPE_FP32: tol = 1e-5; break;
        case ZYFA_DTYPE_FP16: tol = 1.0 / 2048; break;
        case ZYFA_DTYPE_BF16: tol = 1.0 / 512; break;
        default: tol = softmax == ZYFA_SOFTMAX_EXACT ? 1.0 / 16 : 0.085; break;
    }
    if (out == ZYFA_DTYPE_BF16) tol += 1.0 / 512;
    if (out == ZYFA_DTYPE_FP16) tol += 1.0 / 2048;
    return tol;
}

// lse: EXACT sums unrounded fp32 probabilities (error ~1e-6 relative, so ~1e-5 absolute in lse
// after fp32 log2); LEAN sums the rounded ones, each 0.9195x to 1.0635x the exact one, so
// ln(l'/l) lies in [-0.0840, +0.0616] (reached: numerics_model_test's test_lean_lse_reaches_its_bound).
inline double lse_tolerance(zyfa_softmax softmax) { return softmax == ZYFA_SOFTMAX_LEAN ? 0.085 : 1e-4; }

inline ErrorStats check_case(zyfa_context* ctx, const CaseShape& shape, const char* label) {
    AttentionCase c(shape);
    const zyfa_status st = c.run(ctx);
    if (st != ZYFA_SUCCESS) {
        std::printf("%s: zyfa_attn_fwd failed: %s: %s\n", label, zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
    const zyfa::AttnProblem problem = zyfa::validate_attn(&c.params, &c.tq, &c.tk, &c.tv, &c.to, ZYFA_BACKEND_CPU);
    const auto ref = zyfa::cpu::attention_reference_fp64(problem);
    const ErrorStats e = compare(c, ref);
    const double tol = o_tolerance(shape.dtype, problem.softmax, shape.out_dtype);
    const double lse_tol = lse_tolerance(problem.softmax);
    std::printf("  %-44s rel_rms %.2e (tol %.1e)  max_abs %.2e  lse_err %.2e (tol %.0e)\n", label, e.rel_rms, tol,
                e.max_abs, e.lse_max_abs, lse_tol);
    assert_true(e.rel_rms <= tol);
    assert_true(e.lse_max_abs <= lse_tol);
    assert_int_equal(e.lse_mismatched_infinities, 0);
    return e;
}

}  // namespace zyfa_test
