// 2^x for x <= 0 from FMAs only: the rescale alpha of the AMD LEAN kernels, which contain no
// v_exp_f32 (the HIP C++ kernels call exp2_without_transcendental; the gfx950 generator emits the
// same steps with these constants, generator/phase_lean_p.cpp).
// x = n + f with n the nearest integer and |f| <= 1/2, 2^f by its degree-7 Taylor polynomial in
// f*ln2 (truncation error (ln2/2)^8/8! = 5e-9 relative, below fp32 resolution), 2^n exactly.
// Below 2^-126 it returns 0: alpha then scales state that is < 2^-126 of the new maximum's
// contribution.
#ifndef ZYFA_KERNELS_COMMON_EXP2_POLYNOMIAL_H
#define ZYFA_KERNELS_COMMON_EXP2_POLYNOMIAL_H

#include "block_scale.h"
#include "device_compat.h"

namespace zyfa {
namespace numerics {

// Horner order, highest degree first: term i is ln2^(7-i) / (7-i)!. A function, not an array: a
// namespace-scope constexpr array is not usable in CUDA device code, a constexpr function is.
constexpr int kExp2PolynomialTerms = 8;  // the generator emits 7 v_fmaak, the first coefficient from a register
ZYFA_HD constexpr float exp2_polynomial_coefficient(int term) {
    return term == 0   ? 1.525273380405984e-05f
           : term == 1 ? 1.5403530393381606e-04f
           : term == 2 ? 1.3333558146428443e-03f
           : term == 3 ? 9.6181291076284772e-03f
           : term == 4 ? 5.5504108664821580e-02f
           : term == 5 ? 2.4022650695910071e-01f
           : term == 6 ? 6.9314718055994531e-01f
                       : 1.0f;
}
constexpr float kExp2PolynomialLowest = -126.0f;  // below: 0 (and for -inf and NaN)

ZYFA_HD float exp2_without_transcendental(float x) {
    if (!(x >= kExp2PolynomialLowest)) return 0.0f;
    const float n = round_half_even(x);
    const float f = x - n;
    float p = exp2_polynomial_coefficient(0);
    p = fmaf(p, f, exp2_polynomial_coefficient(1));
    p = fmaf(p, f, exp2_polynomial_coefficient(2));
    p = fmaf(p, f, exp2_polynomial_coefficient(3));
    p = fmaf(p, f, exp2_polynomial_coefficient(4));
    p = fmaf(p, f, exp2_polynomial_coefficient(5));
    p = fmaf(p, f, exp2_polynomial_coefficient(6));
    p = fmaf(p, f, exp2_polynomial_coefficient(7));
    return p * exp2_int((int)n);
}

// exp2_without_transcendental as a function object, for running_max_rescale (online_softmax.h).
struct Exp2WithoutTranscendental {
    ZYFA_HD float operator()(float x) const { return exp2_without_transcendental(x); }
};

}  // namespace numerics
}  // namespace zyfa

#endif
