// The blocked attention of the GPU kernels, one (batch, query head, query tile) per work item:
//   for each key block of model.key_block keys (aligned to the sequence start, as on the GPU):
//     S = Q K^T (fp32, raw dot products), x = S * scale_log2 (log2 domain)
//     m_new = max(m_old, block max) keeping NaN (common/row_max.h), alpha = exp2(m_old - m_new)
//       (LEAN with the lazy anchor: m is the anchor of common/lean_anchor.h and k is constant)
//     P = the scheme's rounded probabilities (scaled by 2^k), l = alpha*l + row sum
//     acc = alpha*acc + 2^-k * (P V)
//   the sink, if any, joins m and l (common/attention_sink.h: m' = max(m, z), l' = l alpha + 2^(z - m'))
//   O = acc * (v_descale alpha / l'), lse = ln2 * (m' + log2 l'); NaN for a row whose m' is NaN or +inf.
// The INT8 Q/K mode (common/int8_qk.h): S is the exact int32 dot product, held biased by 1.5 * 2^23
// as the GPU's integer add leaves it, and its scale_log2 is per (query token, 64-key block); keys
// are read through key_offset as every mode's (paged K/V included), and the sink joins as above.
// The update and the epilogue are kernels/common's online_softmax.h, attention_sink.h and row_epilogue.h.
// Every product and sum is fp32 in a fixed order, so the result does not depend on threads.
#include "attention_blocked.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/attention_mask.h"
#include "common/attention_sink.h"
#include "common/block_scale.h"
#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "common/int8_qk.h"
#include "common/key_bias.h"
#include "common/lean_anchor.h"
#include "common/lean_p.h"
#include "common/online_softmax.h"
#include "common/row_epilogue.h"
#include "common/row_max.h"
#include "common/score_scale.h"
#include "core/errors.hpp"
#include "tensor_access.hpp"

namespace zyfa {
namespace cpu {

namespace {

constexpr int64_t kQueryTile = 32;  // rows per work item: K/V blocks are decoded once per tile
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// How P is rounded before P.V, decided by the input dtype and the scheme.
enum class PRounding { None, Bf16, Fp16, Fp8Rne, LeanCode };

struct WorkItem {
    int64_t batch;
    int64_t head;
    int64_t row_begin;
    int64_t row_end;
};

// One worker slot's buffers, sized for the largest tile before the call's first store: a work
// item allocates nothing, so a call that runs out of memory fails before it writes any output.
struct Scratch {
    void size_for(int64_t rows, int64_t dqk, int64_t dv, int64_t bk, bool int8) {
        q.resize(static_cast<size_t>(rows * dqk));
        kt.resize(static_cast<size_t>(dqk * bk));
        v.resize(static_cast<size_t>(bk * dv));
        s.resize(static_cast<size_t>(rows * bk));
        p.resize(static_cast<size_t>(bk));
        partial.resize(static_cast<size_t>(dv));
        if (int8) {
            q32.resize(static_cast<size_t>(rows * dqk));
            kt32.resize(static_cast<size_t>(dqk * bk));
            s32.resize(static_cast<size_t>(rows * bk));
            k_descale.resize(static_cast<size_t>(bk));
            key_log2.resize(static_cast<size_t>(bk));
            key_log2x8.resize(static_cast<size_t>(bk));
        }
        bias_log2.resize(static_cast<size_t>(bk));
        acc.resize(static_cast<size_t>(rows * dv));
        m.resize(static_cast<size_t>(rows));
        running_max.resize(static_cast<size_t>(rows));
        l.resize(static_cast<size_t>(rows));
    }

    std::vector<float> q;        // [tile][dqk]
    std::vector<float> kt;       // [dqk][block]  K block transposed
    std::vector<float> v;        // [block][dv]
    std::vector<float> s;        // [tile][block] raw scores
    std::vector<float> p;        // [block]       one row's rounded probabilities (scaled)
    std::vector<float> partial;  // [dv]
    std::vector<float> acc;      // [tile][dv]
    std::vector<float> m, l;     // [tile]
    std::vector<float> running_max;  // [tile] the lazy anchor's M (m is then the anchor)
    // The INT8 Q/K mode: integer operands, int32 scores and the per-key factors of one row.
    std::vector<int32_t> q32;         // [tile][dqk]
    std::vector<int32_t> kt32;        // [dqk][block]
    std::vector<int32_t> s32;         // [tile][block]
    std::vector<float> k_descale;     // [block] each key's k_descale_per_block entry
    std::vector<float> key_log2;      // [block] one row's scale_log2 per key
    std::vector<float> key_log2x8;    // [block] 8 * key_log2
    std::vector<float> bias_log2;     // [block] the keys' biases (key_bias) in log2 units
};

// The two hot loops, compiled for AVX2 as well as the baseline and picked at load time. Without
// FMA contraction (-ffp-contract=off) and without reassociation every lane computes the same
// sums in the same order, so both clones give identical bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)  /* sanitizer-instrumented ifunc resolvers run before the runtime starts */
#define ZYFA_HOT_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define ZYFA_HOT_LOOP
#endif

// s[r][j] = sum over d in order of q[r][d] * kt[d][j]: vectorised across keys, never reassociated.
ZYFA_HOT_LOOP void scores_tile(const float* q, const float* kt, float* s, int64_t rows, int64_t dqk, int64_t bk) {
    for (int64_t r = 0; r < rows; ++r) {
        float* sr = s + r * bk;
        const float* qr = q + r * dqk;
        for (int64_t j = 0; j < bk; ++j) sr[j] = 0.0f;
        for (int64_t d = 0; d < dqk; ++d) {
            const float qv = qr[d];
            const float* ktd = kt + d * bk;
            for (int64_t j = 0; j < bk; ++j) sr[j] += qv * ktd[j];
        }
    }
}

// partial[d] = sum over keys in order of p[j] * v[j][d].
ZYFA_HOT_LOOP void probabilities_times_values(const float* p, const float* v, float* partial, int64_t n, int64_t dv) {
    for (int64_t d = 0; d < dv; ++d) partial[d] = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
        const float pj = p[j];
        const float* vj = v + j * dv;
        for (int64_t d = 0; d < dv; ++d) partial[d] += pj * vj[d];
    }
}

// s[r][j] = q[r] . kt[:, j] in int32 (exact: |s| <= 2^22 for head_dim_qk <= 256), then the biased
// fp32 the GPU's integer add yields (common/int8_qk.h).
ZYFA_HOT_LOOP void int8_scores_tile(const int32_t* q, const int32_t* kt, int32_t* acc, float* s, int64_t rows,
                                    int64_t dqk, int64_t bk) {
    for (int64_t r = 0; r < rows; ++r) {
        int32_t* ar = acc + r * bk;
        const int32_t* qr = q + r * dqk;
        for (int64_t j = 0; j < bk; ++j) ar[j] = 0;
        for (int64_t d = 0; d < dqk; ++d) {
            const int32_t qv = qr[d];
            const int32_t* ktd = kt + d * bk;
            for (int64_t j = 0; j < bk; ++j) ar[j] += qv * ktd[j];
        }
        float* sr = s + r * bk;
        for (int64_t j = 0; j < bk; ++j) sr[j] = numerics::int8_score_biased(ar[j]);
    }
}

float descale_or_one(const float* descale, const AttnProblem& p, int64_t b, int64_t hk) {
    return descale ? descale[b * p.heads_kv + hk] : 1.0f;
}

class BlockedAttention {
public:
    BlockedAttention(const AttnProblem& problem, const NumericsModel& model) : p_(problem), model_(model) {
        if (model.key_block <= 0) throw Error(ZYFA_ERROR_INTERNAL, "numerics model: key_block must be > 0");
        int8_ = p_.int8_qk();
        fp8_ = dtype_is_fp8(p_.q.dtype) || int8_;  // P is rounded to FP8: v's format
        format_ = fp8_format_of(p_.v.dtype);
        p_values_ = fp8_values(p_.v.dtype);
        if (model.scheme == SoftmaxScheme::Lean) {
            if (!fp8_) throw_not_supported("softmax LEAN needs FP8 q/k/v (or INT8 q/k with FP8 v)");
            rounding_ = PRounding::LeanCode;
        } else if (fp8_) {
            rounding_ = PRounding::Fp8Rne;
        } else if (p_.q.dtype == ZYFA_DTYPE_BF16) {
            rounding_ = PRounding::Bf16;
        } else if (p_.q.dtype == ZYFA_DTYPE_FP16) {
            rounding_ = PRounding::Fp16;
        } else {
            rounding_ = PRounding::None;
        }
        // EXACT scales P by 2^8 (2^7 in fnuz) before rounding to FP8; NAIVE does not.
        fixed_exponent_ = (fp8_ && model.scheme == SoftmaxScheme::Exact) ? numerics::p_scale_base_exponent(format_) : 0;
        if (model.scheme == SoftmaxScheme::Lean) fixed_exponent_ = numerics::p_scale_base_exponent(format_);
        build_items();
    }

    int64_t item_count() const { return static_cast<int64_t>(items_.size()); }

    // Scratch for `slots` threads, each large enough for any item of this problem.
    std::vector<Scratch> make_scratch(int slots) const {
        int64_t rows = 0;
        for (const WorkItem& item : items_) rows = std::max(rows, item.row_end - item.row_begin);
        std::vector<Scratch> scratch(static_cast<size_t>(slots));
        for (Scratch& sc : scratch) sc.size_for(rows, p_.head_dim_qk, p_.head_dim_v, model_.key_block, int8_);
        return scratch;
    }

    void run_item(int64_t index, Scratch& scratch) const { run(items_[static_cast<size_t>(index)], scratch); }

private:
    void build_items() {
        for (int64_t b = 0; b < p_.batch; ++b) {
            const int64_t sq = p_.len_q(b);
            if (sq == 0) continue;  // work follows the rows that exist, never batch x heads alone
            for (int64_t h = 0; h < p_.heads_q; ++h)
                for (int64_t r = 0; r < sq; r += kQueryTile)
                    items_.push_back(WorkItem{b, h, r, std::min(sq, r + kQueryTile)});
        }
        // Longest first (the last tiles of a causal sequence see the most keys): better balance.
        std::stable_sort(items_.begin(), items_.end(),
                         [](const WorkItem& a, const WorkItem& b) { return a.row_begin > b.row_begin; });
    }

    void run(const WorkItem& item, Scratch& sc) const {
        const AttnProblem& p = p_;
        const int64_t b = item.batch, h = item.head, hk = p.kv_head(h);
        const int64_t sq = p.len_q(b), sk = p.len_k(b);
        const int64_t rows = item.row_end - item.row_begin;
        const int64_t dqk = p.head_dim_qk, dv = p.head_dim_v, bk = model_.key_block;
        const auto mask = static_cast<numerics::MaskKind>(p.mask);

        // fp32 constants of this (batch, kv head), in the order the kernels compute them.
        const float qd = descale_or_one(p.q_descale, p, b, hk);
        const float kd = descale_or_one(p.k_descale, p, b, hk);
        const float vd = descale_or_one(p.v_descale, p, b, hk);
        const float scale_log2 = numerics::score_scale_log2(p.softmax_scale, qd, kd);
        const float scale8_log2 = 8.0f * scale_log2;

        // The slot's buffers hold the largest tile (make_scratch); this tile uses their fronts.
        std::fill_n(sc.acc.begin(), rows * dv, 0.0f);
        std::fill_n(sc.m.begin(), rows, kNegInf);
        std::fill_n(sc.running_max.begin(), rows, kNegInf);
        std::fill_n(sc.l.begin(), rows, 0.0f);

        for (int64_t r = 0; r < rows; ++r) {
            const int64_t off = AttnProblem::offset(p.q, p.first_q(b), b, item.row_begin + r, h);
            if (int8_) {
                const int8_t* qi = static_cast<const int8_t*>(p.q.data) + off;
                for (int64_t d = 0; d < dqk; ++d) sc.q32[r * dqk + d] = qi[d];
            } else {
                for (int64_t d = 0; d < dqk; ++d) sc.q[r * dqk + d] = load_as_float(p.q.data, p.q.dtype, off + d);
            }
        }

        // Keys any row of the tile sees; blocks are aligned to multiples of bk from key 0.
        int64_t keys_begin = sk, keys_end = 0;
        for (int64_t r = 0; r < rows; ++r) {
            const auto range = numerics::visible_keys(item.row_begin + r, sq, sk, mask, p.window_left, p.window_right);
            if (range.begin < range.end) {
                keys_begin = std::min(keys_begin, range.begin);
                keys_end = std::max(keys_end, range.end);
            }
        }
        for (int64_t block = keys_begin - keys_begin % bk; block < keys_end; block += bk) {
            const int64_t n = std::min(bk, sk - block);
            load_kv_block(b, hk, block, n, sc);
            if (int8_) {
                int8_scores_tile(sc.q32.data(), sc.kt32.data(), sc.s32.data(), sc.s.data(), rows, p.head_dim_qk, bk);
            } else {
                scores_tile(sc.q.data(), sc.kt.data(), sc.s.data(), rows, p.head_dim_qk, bk);
            }
            const float* bias_log2 = nullptr;
            if (p.key_bias) {  // the block's biases in log2 units, for every row of the tile
                for (int64_t j = 0; j < n; ++j)
                    sc.bias_log2[j] = numerics::key_bias_log2(p.key_bias[p.key_bias_index(b, h, block + j)]);
                bias_log2 = sc.bias_log2.data();
            }
            for (int64_t r = 0; r < rows; ++r) {
                const auto range = numerics::visible_keys(item.row_begin + r, sq, sk, mask, p.window_left, p.window_right);
                const int64_t lo = std::max(range.begin, block) - block;
                const int64_t hi = std::min(range.end, block + n) - block;
                if (lo >= hi) continue;  // the block is invisible to this row: its state is unchanged
                const float* key_log2 = nullptr;
                const float* key_log2x8 = nullptr;
                if (int8_) {
                    // fp32 factors of this (query token, 64-key block), in the kernels' order.
                    const float qd_row = p.q_token_descale(b, h, item.row_begin + r);
                    for (int64_t j = 0; j < n; ++j) {
                        sc.key_log2[j] = numerics::score_scale_log2(p.softmax_scale, qd_row, sc.k_descale[j]);
                        sc.key_log2x8[j] = 8.0f * sc.key_log2[j];
                    }
                    key_log2 = sc.key_log2.data();
                    key_log2x8 = sc.key_log2x8.data();
                }
                update_row(&sc.s[r * bk], key_log2, key_log2x8, bias_log2, lo, hi, n, scale_log2, scale8_log2,
                           sc.m[r], sc.running_max[r], sc.l[r], &sc.acc[r * dv], sc);
            }
        }

        // The sink joins each row's denominator after the last key block (common/attention_sink.h);
        // without sinks z = -inf and the fold changes nothing.
        const float sink_z = numerics::sink_log2(p.sinks, h);
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = item.row_begin + r;
            const int64_t off = AttnProblem::offset(p.o, p.first_q(b), b, i, h);
            const numerics::SinkedRow row = numerics::fold_sink(sc.m[r], sc.l[r], sink_z);
            const float out_scale = numerics::sinked_output_scale(vd, row);
            const bool poisoned = numerics::sinked_row_poisoned(row);
            const bool seen = numerics::sinked_row_seen(row);
            for (int64_t d = 0; d < dv; ++d) {
                const float value = numerics::row_output(sc.acc[r * dv + d] * out_scale, poisoned, seen);
                store_from_float(p.o.data, p.o.dtype, off + d, value);
            }
            if (p.lse) p.lse[p.lse_index(b, h, i)] = numerics::row_lse(numerics::sinked_row_lse(row), poisoned, seen);
        }
    }

    void load_kv_block(int64_t b, int64_t hk, int64_t block, int64_t n, Scratch& sc) const {
        const AttnProblem& p = p_;
        const int64_t dqk = p.head_dim_qk, dv = p.head_dim_v, bk = model_.key_block;
        for (int64_t j = 0; j < n; ++j) {
            const int64_t k_off = key_offset(p, p.k, b, block + j, hk);
            if (int8_) {
                const int8_t* ki = static_cast<const int8_t*>(p.k.data) + k_off;
                for (int64_t d = 0; d < dqk; ++d) sc.kt32[d * bk + j] = ki[d];
                sc.k_descale[j] = p.k_block_descale(b, hk, block + j);
            } else {
                for (int64_t d = 0; d < dqk; ++d) sc.kt[d * bk + j] = load_as_float(p.k.data, p.k.dtype, k_off + d);
            }
            load_v_row(p, b, block + j, hk, &sc.v[j * dv]);
        }
        for (int64_t j = n; j < bk; ++j)
            for (int64_t d = 0; d < dqk; ++d) {
                if (int8_) sc.kt32[d * bk + j] = 0;
                else sc.kt[d * bk + j] = 0.0f;
            }
    }


    // s: the block's raw scores of one row; INT8: biased (common/int8_qk.h) with per-key factors
    // key_log2[j] and key_log2x8[j] instead of the row's scale_log2 and scale8_log2 (null otherwise).
    // bias_log2 (AttnProblem::key_bias; null otherwise, never with INT8): each key's bias in log2
    // units, taken by the score's FMA and, times 8, added to LEAN's FMA constant (common/key_bias.h).
    void update_row(const float* s, const float* key_log2, const float* key_log2x8, const float* bias_log2, int64_t lo,
                    int64_t hi, int64_t n, float scale_log2, float scale8_log2, float& m, float& running_max, float& l,
                    float* acc, Scratch& sc) const {
        const int64_t dv = p_.head_dim_v;
        // The log2-domain score, rounded once: S_raw * scale_log2 (+ the key's bias, one FMA).
        auto score_log2 = [&](int64_t j) {
            if (bias_log2) return numerics::biased_score_log2(s[j], scale_log2, bias_log2[j]);
            return key_log2 ? numerics::int8_score_value(s[j]) * key_log2[j] : s[j] * scale_log2;
        };
        float block_max = kNegInf;
        for (int64_t j = lo; j < hi; ++j) block_max = numerics::max_keep_nan(block_max, score_log2(j));
        const bool lazy = model_.lazy_anchor();
        // m: the running maximum, or with the lazy anchor the anchor (running_max is then M).
        running_max = numerics::max_keep_nan(running_max, block_max);
        const float m_new = lazy ? numerics::lean_anchor_update(m, running_max, block_max, model_.lean_anchor_below)
                                 : running_max;
        if (numerics::row_max_is_poisoned(m_new)) {  // a NaN or +inf score: the row's O and lse are NaN
            m = m_new;
            return;
        }
        const float alpha = lazy ? numerics::anchor_rescale(m, m_new, numerics::Exp2Fp32{})
                                 : numerics::running_max_rescale(m, m_new);

        int exponent = fixed_exponent_;
        if (lazy)
            exponent = numerics::lean_anchor_exponent(format_);
        else if (model_.scheme == SoftmaxScheme::Lean && model_.block_scaling)
            exponent = numerics::block_scale_exponent(m_new, block_max, model_.max_block_exponent, format_);
        // Study only (NumericsModel::lean_fractional_block_exponent): 0 in every kernel.
        float fraction = 0.0f;
        if (model_.scheme == SoftmaxScheme::Lean && !lazy && model_.block_scaling &&
            model_.lean_fractional_block_exponent &&
            exponent < model_.max_block_exponent && m_new - block_max > 0.0f)
            fraction = (m_new - block_max) - std::floor(m_new - block_max);

        float row_sum = 0.0f;
        float* pr = sc.p.data();
        for (int64_t j = 0; j < n; ++j) pr[j] = 0.0f;
        if (rounding_ == PRounding::LeanCode) {
            const float bias = numerics::lean_p_bias(m_new - fraction, exponent, model_.lean_centre, format_);
            for (int64_t j = lo; j < hi; ++j) {
                // INT8: the removal of the score's bias folded into the FMA's constant.
                uint8_t code = key_log2x8
                                   ? numerics::lean_p_code(s[j], key_log2x8[j],
                                                           numerics::int8_lean_p_bias(bias, key_log2x8[j]),
                                                           model_.rounding, format_)
                                   : numerics::lean_p_code(s[j], scale8_log2,
                                                           bias_log2 ? numerics::lean_p_bias_with_key_bias(bias, bias_log2[j])
                                                                     : bias,
                                                           model_.rounding, format_);
                if (model_.flush_subnormal_codes && code < 8) code = 0;
                pr[j] = p_values_[code];
                const float t = score_log2(j) - m_new;
                if (t >= model_.lean_exact_p_from)  // study only: exp2 + RNE instead of the code
                    pr[j] = p_values_[numerics::fp8_encode(numerics::exp2_fp32(t + fraction) *
                                                               numerics::exp2_int(exponent), format_)];
                // The rounded row sum: what multiplies V, not what exp2 would have given.
                row_sum += model_.rounded_row_sum ? pr[j] : numerics::exp2_fp32(t);
            }
            if (model_.rounded_row_sum) row_sum *= numerics::exp2_int(-exponent);
            if (model_.rounded_row_sum && fraction != 0.0f) row_sum *= numerics::exp2_fp32(-fraction);
        } else {
            const float up = numerics::exp2_int(exponent);
            for (int64_t j = lo; j < hi; ++j) {
                const float prob = numerics::exp2_fp32(score_log2(j) - m_new);
                row_sum += prob;  // EXACT and NAIVE: the denominator of unrounded probabilities
                pr[j] = round_p(prob * up);
            }
        }

        float* partial = sc.partial.data();
        probabilities_times_values(pr, sc.v.data(), partial, n, dv);
        float down = numerics::exp2_int(-exponent);
        if (fraction != 0.0f) down *= numerics::exp2_fp32(-fraction);
        for (int64_t d = 0; d < dv; ++d) acc[d] = numerics::accumulator_update(acc[d], alpha, partial[d], down);
        l = numerics::running_sum_update(l, alpha, row_sum);
        m = m_new;
    }

    float round_p(float scaled) const {
        switch (rounding_) {
            case PRounding::Bf16: return numerics::bf16_to_float(numerics::float_to_bf16(scaled));
            case PRounding::Fp16: return numerics::fp16_to_float(numerics::float_to_fp16(scaled));
            case PRounding::Fp8Rne: return p_values_[numerics::fp8_encode(scaled, format_)];
            default: return scaled;
        }
    }

    const AttnProblem& p_;
    const NumericsModel& model_;
    bool fp8_ = false;   // P is rounded to FP8 (FP8 inputs, or the INT8 Q/K mode)
    bool int8_ = false;  // the INT8 Q/K mode
    numerics::Fp8Format format_ = numerics::Fp8Format::E4M3FN;
    const float* p_values_ = nullptr;  // decoded FP8 codes of the P format
    PRounding rounding_ = PRounding::None;
    int fixed_exponent_ = 0;
    std::vector<WorkItem> items_;
};

}  // namespace

void attention_blocked(const AttnProblem& problem, const NumericsModel& model, WorkerPool& pool) {
    if (problem.empty()) return;
    BlockedAttention attention(problem, model);
    std::vector<Scratch> scratch = attention.make_scratch(pool.slot_count(attention.item_count()));
    pool.parallel_for(attention.item_count(),
                      [&](int64_t i, int slot) { attention.run_item(i, scratch[static_cast<size_t>(slot)]); });
}

}  // namespace cpu
}  // namespace zyfa
