// What a finished row writes, one definition for the CPU model and every GPU kernel:
//   O   = acc * (v_descale / l),     lse = ln2 * (m + log2 l)   (m in log2 units, score_scale.h);
//   a row that saw no key (l = 0, the empty-row rule of include/zyfa.h): O = 0, lse = -inf;
//   a row whose running maximum saw a NaN or +inf score (poisoned, row_max.h): O = lse = NaN.
// The generated gfx950 kernels write the same selects in assembly (generator/kernel_body.cpp,
// with kLn2 from score_scale.h).
#ifndef ZYFA_KERNELS_COMMON_ROW_EPILOGUE_H
#define ZYFA_KERNELS_COMMON_ROW_EPILOGUE_H

#include "device_compat.h"
#include "fp32_exp2_log2.h"
#include "score_scale.h"

namespace zyfa {
namespace numerics {

constexpr float kQuietNaN = __builtin_nanf("");

// Whether the row counts as having seen a key: the test every backend applies to the final l (a
// visible key with a finite score adds a positive probability: the block maximum's p is 1).
ZYFA_HD bool row_saw_key(float l) { return l > 0.0f; }

// The factor O = acc * output_scale(...): one IEEE division per row, 0 for a row that saw no key
// (whose acc is 0 anyway: the division by 0 is never formed).
ZYFA_HD float output_scale(float v_descale, float l) { return l > 0.0f ? v_descale / l : 0.0f; }

// The natural-log lse of a row from its log2-domain running maximum and its row sum.
ZYFA_HD float row_natural_lse(float running_max_log2, float l) { return kLn2 * (running_max_log2 + log2_fp32(l)); }

// The value a finished row stores for one O element (value = acc * output_scale) and for its lse.
ZYFA_HD float row_output(float value, bool poisoned, bool seen) { return poisoned ? kQuietNaN : seen ? value : 0.0f; }
ZYFA_HD float row_lse(float value, bool poisoned, bool seen) {
    return poisoned ? kQuietNaN : seen ? value : -__builtin_huge_valf();
}

}  // namespace numerics
}  // namespace zyfa

#endif
