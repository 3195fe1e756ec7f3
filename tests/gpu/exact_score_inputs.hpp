// Inputs that make a kernel's P visible and its scores exact, and the count of differing P
// values read back from O: shared by the NVIDIA P-code test (p_code_agreement_test.cpp) and the
// AMD emulator's bitwise test (tests/emu/amd_end_to_end_test.cpp).
//
// Exact scores: Q and K hold integers in [-2, 2] (exact in every input dtype), so every product
// and every partial sum of S = Q K^T is an integer far below 2^24, whatever the MMA's order.
// Visible P: V one-hot (key j has a 1 in dimension j), so O[i][j] = P[i][j] * c with c one
// constant per (row, 64-key block); the ratio O_gpu / O_model is then the same for every key whose
// P agrees and jumps by at least one step of P's format where it does not.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gpu_session.hpp"

namespace zyfa_gpu_test {

inline int64_t element_count(const std::vector<uint8_t>& bytes, zyfa_dtype dtype) {
    return static_cast<int64_t>(bytes.size() / zyfa::cpu::dtype_size(dtype));
}

// Q and K of integers in [-2, 2]: every score is exact in fp32 whatever the summation order.
// (INT8 q/k need none of this: their int32 scores are exact whatever the codes.)
inline void integer_qk(AttentionCase& c, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> small(-2, 2);
    const zyfa_dtype dtype = c.shape.dtype;
    for (int64_t i = 0; i < element_count(c.q, dtype); ++i) zyfa::cpu::store_from_float(c.q.data(), dtype, i, float(small(rng)));
    for (int64_t i = 0; i < element_count(c.k, dtype); ++i) zyfa::cpu::store_from_float(c.k.data(), dtype, i, float(small(rng)));
}

// V of integers in [-1, 1].
inline void integer_v(AttentionCase& c, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> unit(-1, 1);
    const zyfa_dtype dtype = c.tv.dtype;  // the INT8 Q/K mode: v is FP8
    for (int64_t i = 0; i < element_count(c.v, dtype); ++i) zyfa::cpu::store_from_float(c.v.data(), dtype, i, float(unit(rng)));
}

// v_j = e_j for every kv head (fixed-length [batch, seqlen_k, heads_kv, head_dim_v] layout;
// seqlen_k <= head_dim_v).
inline void one_hot_v(AttentionCase& c) {
    const CaseShape& s = c.shape;
    const zyfa_dtype dtype = c.tv.dtype;  // the INT8 Q/K mode: v is FP8
    for (int64_t i = 0; i < element_count(c.v, dtype); ++i) {
        const int64_t d = i % s.head_dim_v;
        const int64_t key = (i / (s.head_dim_v * s.heads_kv)) % s.seqlen_k;
        zyfa::cpu::store_from_float(c.v.data(), dtype, i, d == key ? 1.0f : 0.0f);
    }
}

// Half the smallest relative step between adjacent values of P's format: a ratio moving by more
// than this is a different P. (O's own fp32 rounding moves the ratio by ~1e-7.)
inline double p_step_threshold(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_BF16: return 1.5e-3;  // adjacent bf16 differ by >= 2^-8 relative
        case ZYFA_DTYPE_FP16: return 2.0e-4;  // fp16: >= 2^-11
        default: return 3.0e-2;               // e4m3: >= 1/15 (1.875 -> 2.0)
    }
}

// Of the O ratios of one (row, key block) whose P is non-zero on both sides, those further than
// `threshold` from their median: the P values that differ (the median is a P that agrees, as
// long as most do).
inline int64_t ratio_jumps(const std::vector<double>& ratios, double threshold) {
    if (ratios.empty()) return 0;
    std::vector<double> sorted = ratios;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const double median = sorted[sorted.size() / 2];
    int64_t jumps = 0;
    for (double r : ratios) jumps += std::fabs(r / median - 1.0) > threshold;
    return jumps;
}

// The P values that one-hot V makes visible (O's column j is key j's P times one constant per row
// and 64-key block), [batch * seqlen_q, heads_q, head_dim_v] fixed-length O: how many were compared
// (non-zero on either side) and how many differ from the CPU model's (a sign change, or a ratio
// jump within the block, ratio_jumps).
struct PComparison {
    int64_t compared = 0;
    int64_t mismatched = 0;
};
inline PComparison compare_p_through_one_hot_v(const AttentionCase& gpu, const AttentionCase& cpu) {
    const CaseShape& s = gpu.shape;
    const double threshold = p_step_threshold(s.dtype);
    PComparison r;
    for (int64_t row = 0; row < s.batch * s.seqlen_q; ++row)
        for (int64_t h = 0; h < s.heads_q; ++h) {
            const int64_t base = (row * s.heads_q + h) * s.head_dim_v;
            for (int64_t block = 0; block < s.head_dim_v; block += 64) {
                std::vector<double> ratios;
                for (int64_t j = block; j < std::min<int64_t>(block + 64, s.head_dim_v); ++j) {
                    const double g = gpu.out(base + j), c = cpu.out(base + j);
                    if (g == 0.0 && c == 0.0) continue;
                    ++r.compared;
                    if (!(g / c > 0.0)) {
                        ++r.mismatched;
                        continue;
                    }
                    ratios.push_back(g / c);
                }
                r.mismatched += ratio_jumps(ratios, threshold);
            }
        }
    return r;
}

// lse on exact scores: m is exact and l is the same sum (LEAN: of identical codes) up to order
// and the last ulp of log2: 2e-4.
// FP8 LEAN on sm_90a sums each row's P codes in the e4m3 tensor core (a wgmma per 32 keys against
// a ones tile, each k-step into its own column), whose adder keeps fewer bits than fp32: codes far
// below the largest of their 32 lose low bits, so l comes out a little small. Measured up to
// 1.2e-3 on these cases (H200, docs/hopper-kernel-notes.md, 2026-12-04); 2e-3 holds that and still
// fails a wrong normalisation: the unrounded sum gives ~3e-3, a wrong block exponent 0.69.
inline double exact_score_lse_tol(zyfa_dtype dtype, zyfa_softmax softmax) {
    return dtype == ZYFA_DTYPE_FP8_E4M3FN && softmax == ZYFA_SOFTMAX_LEAN ? 2e-3 : 2e-4;
}

}  // namespace zyfa_gpu_test
