// Attention sinks (zyfa_attn_params.sinks): one logit per query head that joins every row's softmax
// denominator and multiplies no value, as gpt-oss uses them (FlashAttention-3's s_aux). One
// definition for the CPU model (src/cpu/attention_blocked.cpp) and every GPU kernel. The sink acts
// once per row, after the last key block, on the row's final running maximum m (log2 units,
// row_max.h), row sum l and accumulator acc, so no kernel's main loop changes:
//   z     = sink * log2 e                  the scaled scores' units (natural log) in log2 units
//   m'    = max(m, z), NaN-keeping         a NaN or +inf sink poisons the row, as such a score does
//   alpha = 2^(m - m')                     0 when m = -inf (the row saw no key)
//   l'    = l * alpha + 2^(z - m')         the sink's term 0 when z = -inf
//   O     = acc * ((v_descale * alpha) / l'),   lse = ln2 * (m' + log2 l')   (row_epilogue.h)
// Shifting by m' keeps both exponentials in [0, 1] and l' of order 1 to the key count, so nothing
// overflows however far the sink lies above or below the scores. A row that sees no key but a
// finite sink gets O = 0 and lse = the sink (softmax over the sink alone). z = -inf (a sink of
// -inf, or none) gives m' = m, alpha = 1, l' = l: the same bits as a call without sinks.
//
// LEAN: the sink's term is the fp32 exponential, not a Lean P code. The rounded row sum counts
// exactly the rounded probabilities that multiply V so that numerator and denominator agree; the
// sink multiplies no V, so there is nothing for its term to agree with, and rounding it would only
// add error. l' is then the rounded row sum plus the exact sink mass.
//
// Both exponentials are exp2_without_transcendental (exp2_polynomial.h) on every backend: FMAs
// only, so the fold gives identical bits on the CPU, CUDA and AMD from the same m and l (and AMD's
// LEAN kernels stay free of v_exp_f32). It returns 0 below 2^-126: a sink more than 126 octaves
// below m adds nothing l could hold, one more than 126 octaves above leaves O = 0.
#ifndef ZYFA_KERNELS_COMMON_ATTENTION_SINK_H
#define ZYFA_KERNELS_COMMON_ATTENTION_SINK_H

#include "device_compat.h"
#include "exp2_polynomial.h"
#include "online_softmax.h"
#include "row_epilogue.h"
#include "row_max.h"
#include "score_scale.h"

namespace zyfa {
namespace numerics {

// z for a query head: -inf without sinks (sinks NULL), so the fold below changes nothing.
ZYFA_HD float sink_log2(const float* sinks, int64_t head) {
    return sinks ? sinks[head] * kLog2e : -__builtin_huge_valf();
}

// A finished row with its sink folded in.
struct SinkedRow {
    float max_log2;  // m'
    float sum;       // l'
    float rescale;   // alpha: acc, kept relative to m, times alpha is relative to m'
};

ZYFA_HD SinkedRow fold_sink(float running_max_log2, float l, float sink_log2_value) {
    const Exp2WithoutTranscendental exp2;
    SinkedRow row;
    row.max_log2 = max_keep_nan(running_max_log2, sink_log2_value);
    row.rescale = running_max_rescale(running_max_log2, row.max_log2, exp2);
    row.sum = running_sum_update(l, row.rescale, running_max_rescale(sink_log2_value, row.max_log2, exp2));
    return row;
}

// What a finished row writes, as row_epilogue.h's functions of the folded row: the factor O's
// accumulator is multiplied by, whether the row counts as seen (a key or a finite sink), whether
// it is poisoned, and its natural-log lse before row_lse's selects.
ZYFA_HD float sinked_output_scale(float v_descale, const SinkedRow& row) {
    return output_scale(v_descale * row.rescale, row.sum);
}
ZYFA_HD bool sinked_row_seen(const SinkedRow& row) { return row_saw_key(row.sum); }
ZYFA_HD bool sinked_row_poisoned(const SinkedRow& row) { return row_max_is_poisoned(row.max_log2); }
ZYFA_HD float sinked_row_lse(const SinkedRow& row) { return row_natural_lse(row.max_log2, row.sum); }

}  // namespace numerics
}  // namespace zyfa

#endif
