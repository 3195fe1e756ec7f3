// Rows that see no key and rows that see a non-finite score (include/zyfa.h), on the emulated AMD
// kernels; shared by the HIP C++ and the generated-assembly tests.
//   - no key: seqlen_k = 0 (K and V data NULL) or every packed key sequence empty: SUCCESS, every
//     O element +0 and every lse -inf over the sentinel GpuCase pre-fills (0xA5 bytes, 12345.0f);
//   - non-finite: rows that see a NaN or +inf score get O = NaN and lse = NaN; every other row
//     agrees with the CPU backend within gpu_check.hpp's bounds.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "common/attention_mask.h"
#include "gpu/gpu_check.hpp"

namespace zyfa_emu_test {

using zyfa_gpu_test::GpuCase;
using zyfa_test::AttentionCase;
using zyfa_test::CaseShape;

// Runs `s` (seqlen_k = 0, or varlen with every key sequence empty) with K and V data NULL and
// checks what every row of it must get. Returns false (after printing why) on any difference.
inline bool check_no_key_rows(zyfa_context* ctx, const CaseShape& s, const std::string& label) {
    zyfa_gpu_test::Session& session = zyfa_gpu_test::session();
    GpuCase gpu(*session.runtime, s);
    gpu.tk.data = nullptr;  // nothing may read them
    gpu.tv.data = nullptr;
    const zyfa_status st = gpu.run(ctx, *session.runtime, session.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  %-48s zyfa_attn_fwd failed: %s: %s\n", label.c_str(), zyfa_status_string(st),
                    zyfa_last_error_message());
        return false;
    }
    int64_t o_not_zero = 0, lse_not_neg_inf = 0;
    for (uint8_t byte : gpu.host.o) o_not_zero += byte != 0;
    for (float lse : gpu.host.lse) lse_not_neg_inf += !(lse == -INFINITY);
    const bool guards = gpu.guards_intact();
    std::printf("  %-48s O bytes not +0: %lld/%zu  lse not -inf: %lld/%zu%s\n", label.c_str(), (long long)o_not_zero,
                gpu.host.o.size(), (long long)lse_not_neg_inf, s.with_lse ? gpu.host.lse.size() : size_t{0},
                guards ? "" : "  OUTPUT GUARD BAND OVERWRITTEN");
    return o_not_zero == 0 && (!s.with_lse || lse_not_neg_inf == 0) && guards;
}

// A non-finite input element: FP8 has no infinity, so there +inf becomes the NaN code.
inline void store_non_finite(std::vector<uint8_t>& data, zyfa_dtype dtype, int64_t index, float value) {
    if (dtype == ZYFA_DTYPE_FP8_E4M3FN) {
        data[static_cast<size_t>(index)] = 0x7F;
    } else if (dtype == ZYFA_DTYPE_FP8_E4M3FNUZ) {
        data[static_cast<size_t>(index)] = 0x80;
    } else {
        zyfa::cpu::store_from_float(data.data(), dtype, index, value);
    }
}

// What a non-finite case poisons (dense, batch 0): one q row made NaN, one k row made +inf (both
// whole rows), and optionally the k descale of one kv head made NaN; -1 for none.
struct NonFinite {
    int64_t q_row = -1, q_head = 0;
    int64_t k_row = -1, k_head = 0;
    int64_t nan_k_descale_head = -1;

    void apply(AttentionCase& c) const {
        const CaseShape& s = c.shape;
        if (q_row >= 0) {
            for (int64_t d = 0; d < s.head_dim_qk; ++d)
                store_non_finite(c.q, s.dtype, (q_row * s.heads_q + q_head) * s.head_dim_qk + d, NAN);
        }
        if (k_row >= 0) {
            for (int64_t d = 0; d < s.head_dim_qk; ++d)
                store_non_finite(c.k, s.dtype, (k_row * s.heads_kv + k_head) * s.head_dim_qk + d, INFINITY);
        }
        if (nan_k_descale_head >= 0) c.k_descale.at(static_cast<size_t>(nan_k_descale_head)) = NAN;
    }

    // Whether (batch b, query head h, row) sees a NaN or +inf score: the NaN q row whenever it
    // sees a key; a row that sees the +inf k row (q.k is NaN: q has both signs); a row of the NaN
    // descale's kv head that sees any key.
    bool poisons(const CaseShape& s, int64_t b, int64_t h, int64_t row) const {
        if (b != 0) return false;
        const auto mask = static_cast<zyfa::numerics::MaskKind>(s.mask);
        const zyfa::numerics::KeyRange keys =
            zyfa::numerics::visible_keys(row, s.seqlen_q, s.seqlen_k, mask, s.window_left, s.window_right);
        const int64_t kv_head = h / (s.heads_q / s.heads_kv);
        if (keys.begin >= keys.end) return false;
        if (row == q_row && h == q_head) return true;
        if (kv_head == k_head && k_row >= keys.begin && k_row < keys.end) return true;
        return kv_head == nan_k_descale_head;
    }
};

// Runs `s` with `nf` applied on `ctx` and on the CPU backend; fails the CMocka test unless the
// poisoned rows are NaN in every O element and in lse, and the others meet check_gpu_case's bounds
// against the CPU backend.
inline void check_non_finite(zyfa_context* ctx, const CaseShape& s, const NonFinite& nf, const std::string& label) {
    zyfa_gpu_test::Session& session = zyfa_gpu_test::session();
    const GpuCase::Edit edit = [&nf](AttentionCase& c) { nf.apply(c); };
    GpuCase gpu(*session.runtime, s, edit);
    const zyfa_status st = gpu.run(ctx, *session.runtime, session.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  %-48s zyfa_attn_fwd failed: %s: %s\n", label.c_str(), zyfa_status_string(st),
                    zyfa_last_error_message());
        fail();
    }
    AttentionCase cpu(s);
    edit(cpu);
    zyfa_gpu_test::run_on_cpu(cpu);

    int64_t poisoned = 0, poisoned_wrong = 0, others = 0, others_non_finite = 0, lse_infinity_mismatch = 0;
    double err2 = 0.0, ref2 = 0.0, lse_max_abs = 0.0;
    for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t row = 0; row < s.seqlen_q; ++row) {
            for (int64_t h = 0; h < s.heads_q; ++h) {
                const int64_t base = ((b * s.seqlen_q + row) * s.heads_q + h) * s.head_dim_v;
                const size_t lse_index = static_cast<size_t>((b * s.heads_q + h) * s.seqlen_q + row);
                const float lg = gpu.host.lse[lse_index], lc = cpu.lse[lse_index];
                if (nf.poisons(s, b, h, row)) {
                    ++poisoned;
                    bool all_nan = !s.with_lse || std::isnan(lg);
                    for (int64_t d = 0; d < s.head_dim_v; ++d) all_nan = all_nan && std::isnan(gpu.host.out(base + d));
                    poisoned_wrong += !all_nan;
                    continue;
                }
                ++others;
                for (int64_t d = 0; d < s.head_dim_v; ++d) {
                    const double g = gpu.host.out(base + d), c = cpu.out(base + d);
                    others_non_finite += !std::isfinite(g);
                    err2 += (g - c) * (g - c);
                    ref2 += c * c;
                }
                if (!s.with_lse) continue;
                if (std::isinf(lg) || std::isinf(lc) || std::isnan(lg) || std::isnan(lc)) {
                    lse_infinity_mismatch += !(lg == lc);
                } else {
                    lse_max_abs = std::fmax(lse_max_abs, std::fabs(double(lg) - lc));
                }
            }
        }
    }
    const double rel_rms = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    const double o_tol = zyfa_gpu_test::o_tolerance_vs_cpu(s.dtype, s.out_dtype);
    const double lse_tol = zyfa_gpu_test::lse_tolerance_vs_cpu(zyfa_gpu_test::resolved_softmax(s));
    const bool guards = gpu.guards_intact();
    std::printf("  %-48s NaN rows %lld (not all NaN: %lld) | other rows %lld vs cpu: rel_rms %.2e (tol %.0e) "
                "non-finite %lld, lse %.1e (tol %.0e) -inf/NaN mismatch %lld%s\n",
                label.c_str(), (long long)poisoned, (long long)poisoned_wrong, (long long)others, rel_rms, o_tol,
                (long long)others_non_finite, lse_max_abs, lse_tol, (long long)lse_infinity_mismatch,
                guards ? "" : "  OUTPUT GUARD BAND OVERWRITTEN");
    assert_true(poisoned > 0);
    assert_true(others > 0);
    assert_int_equal(poisoned_wrong, 0);
    assert_int_equal(others_non_finite, 0);
    assert_true(rel_rms <= o_tol);
    assert_true(lse_max_abs <= lse_tol);
    assert_int_equal(lse_infinity_mismatch, 0);
    assert_true(guards);
}

}  // namespace zyfa_emu_test
