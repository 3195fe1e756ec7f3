// The emulated AMD kernels against the CPU model on exact-score inputs (integer Q and K, one-hot
// V: tests/gpu/exact_score_inputs.hpp), shared by the HIP C++ and the generated-assembly tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/attention_mask.h"
#include "core/validate.hpp"
#include "cpu/attention_blocked.hpp"
#include "gpu/exact_score_inputs.hpp"
#include "hip/attention_launch_plan.hpp"
#include "support/attention_case.hpp"

namespace zyfa_emu_test {

// The CPU model as the AMD kernels round: EXACT unchanged; LEAN with truncating conversion
// (v_cvt_i32_f32 / v_cvt_u32_f32) and the HIP catalogue's Lean P centre.
inline void run_amd_model(zyfa_test::AttentionCase& c) {
    const zyfa::AttnProblem problem = zyfa::validate_attn(&c.params, &c.tq, &c.tk, &c.tv, &c.to, ZYFA_BACKEND_CPU);
    zyfa::cpu::NumericsModel model = zyfa::cpu::NumericsModel::for_problem(problem);
    if (problem.softmax == ZYFA_SOFTMAX_LEAN) {
        const float centre = zyfa::hip::make_hip_attn_catalogue()->lean_centre();
        assert_true(centre == zyfa::numerics::lean_p_centre_for(zyfa::numerics::FloatToIntRounding::TowardZero));
        model.rounding = zyfa::numerics::FloatToIntRounding::TowardZero;
        model.lean_centre = centre;
    }
    zyfa::cpu::WorkerPool pool(1);
    zyfa::cpu::attention_blocked(problem, model, pool);
}

inline uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

struct BitwiseReport {
    int64_t elements = 0, bitwise_equal = 0;
    int64_t masked = 0, masked_not_zero = 0;  // O elements of keys the row does not see
    int64_t rows = 0, empty_rows = 0, lse_infinity_mismatch = 0, lse_bits_differ = 0;
    double lse_max_rel = 0.0;                  // over rows finite on both sides
    int64_t p_compared = 0, p_mismatched = 0;  // P values read from O (one-hot V), by ratio
};

// Compares the emulated kernel's O/lse with the model's: bit counts, masked elements (must be +0),
// the -inf rows of lse, and the P values behind O (ratios within one row and 64-key block must
// all be equal where P agrees; a step of P's format is >= 1/15 (e4m3) or 2^-8 (bf16)).
inline BitwiseReport compare_bitwise(const zyfa_test::AttentionCase& gpu, const zyfa_test::AttentionCase& model) {
    const zyfa_test::CaseShape& s = model.shape;
    const auto mask = static_cast<zyfa::numerics::MaskKind>(s.mask);
    const double step = zyfa_gpu_test::p_step_threshold(s.dtype);
    BitwiseReport r;
    for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t row = 0; row < s.seqlen_q; ++row) {
            const zyfa::numerics::KeyRange range =
                zyfa::numerics::visible_keys(row, s.seqlen_q, s.seqlen_k, mask, s.window_left, s.window_right);
            for (int64_t h = 0; h < s.heads_q; ++h) {
                ++r.rows;
                const size_t lse_index = size_t((b * s.heads_q + h) * s.seqlen_q + row);
                const float lg = gpu.lse[lse_index], lm = model.lse[lse_index];
                r.empty_rows += lm == -INFINITY;
                r.lse_bits_differ += bits_of(lg) != bits_of(lm);
                if ((lg == -INFINITY) != (lm == -INFINITY)) {
                    ++r.lse_infinity_mismatch;
                } else if (lm != -INFINITY) {
                    r.lse_max_rel = std::max(r.lse_max_rel, std::fabs(double(lg) - lm) / std::max(1.0, std::fabs(double(lm))));
                }
                const int64_t base = ((b * s.seqlen_q + row) * s.heads_q + h) * s.head_dim_v;
                for (int64_t block = 0; block < s.head_dim_v; block += 64) {
                    std::vector<double> ratios;
                    for (int64_t j = block; j < std::min<int64_t>(block + 64, s.head_dim_v); ++j) {
                        const float g = gpu.out(base + j), m = model.out(base + j);
                        ++r.elements;
                        r.bitwise_equal += bits_of(g) == bits_of(m);
                        if (j < range.begin || j >= range.end) {
                            ++r.masked;
                            r.masked_not_zero += bits_of(g) != 0u;
                            continue;
                        }
                        if (g == 0.0f && m == 0.0f) continue;
                        ++r.p_compared;
                        if (!(double(g) / m > 0.0)) {
                            ++r.p_mismatched;  // zero on one side, a sign flip or a NaN
                        } else {
                            ratios.push_back(double(g) / m);
                        }
                    }
                    r.p_mismatched += zyfa_gpu_test::ratio_jumps(ratios, step);
                }
            }
        }
    }
    return r;
}

}  // namespace zyfa_emu_test
