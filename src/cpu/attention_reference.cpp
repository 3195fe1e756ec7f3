#include "attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/attention_mask.h"
#include "tensor_access.hpp"

namespace zyfa {
namespace cpu {

namespace {

double descale_of(const float* descale, const AttnProblem& p, int64_t b, int64_t kv_head) {
    return descale ? static_cast<double>(descale[b * p.heads_kv + kv_head]) : 1.0;
}

}  // namespace

ReferenceOutput attention_reference_fp64(const AttnProblem& p) {
    ReferenceOutput out;
    const int64_t rows = p.total_q();
    out.o.assign(static_cast<size_t>(rows * p.heads_q * p.head_dim_v), 0.0);
    out.lse.assign(static_cast<size_t>(rows * p.heads_q), -std::numeric_limits<double>::infinity());
    const auto mask = static_cast<numerics::MaskKind>(p.mask);
    std::vector<double> scores, q_row;
    for (int64_t b = 0; b < p.batch; ++b) {
        const int64_t sq = p.len_q(b), sk = p.len_k(b);
        for (int64_t h = 0; h < p.heads_q; ++h) {
            const int64_t hk = p.kv_head(h);
            const double qd = descale_of(p.q_descale, p, b, hk);
            const double kd = descale_of(p.k_descale, p, b, hk);
            const double vd = descale_of(p.v_descale, p, b, hk);
            for (int64_t i = 0; i < sq; ++i) {
                const int64_t q_off = AttnProblem::offset(p.q, p.first_q(b), b, i, h);
                q_row.resize(static_cast<size_t>(p.head_dim_qk));
                // INT8 q/k: per-token and per-64-key-block descales instead of the per-head ones.
                const double qd_row = p.int8_qk() ? static_cast<double>(p.q_token_descale(b, h, i)) : qd;
                for (int64_t d = 0; d < p.head_dim_qk; ++d)
                    q_row[d] = load_as_float(p.q.data, p.q.dtype, q_off + d) * qd_row;
                scores.assign(static_cast<size_t>(sk), 0.0);
                double max_score = -std::numeric_limits<double>::infinity();
                for (int64_t j = 0; j < sk; ++j) {
                    if (!numerics::key_visible(i, j, sq, sk, mask, p.window_left, p.window_right)) continue;
                    const int64_t k_off = key_offset(p, p.k, b, j, hk);
                    const double kd_key = p.int8_qk() ? static_cast<double>(p.k_block_descale(b, hk, j)) : kd;
                    double dot = 0.0;
                    for (int64_t d = 0; d < p.head_dim_qk; ++d)
                        dot += q_row[d] * (load_as_float(p.k.data, p.k.dtype, k_off + d) * kd_key);
                    scores[j] = dot * static_cast<double>(p.softmax_scale);
                    if (scores[j] > max_score) max_score = scores[j];
                }
                // The sink joins the denominator only (softmax over [scores..., sink], its column
                // dropped): a row that sees no key but a finite sink gets O = 0, lse = the sink; a
                // NaN or +inf sink makes the row NaN, as such a score does.
                const double sink = p.sinks ? static_cast<double>(p.sinks[h]) : -std::numeric_limits<double>::infinity();
                const int64_t row = p.varlen() ? p.first_q(b) + i : b * p.seqlen_q + i;
                double* o_row = &out.o[static_cast<size_t>((row * p.heads_q + h) * p.head_dim_v)];
                const size_t lse_at = static_cast<size_t>(p.lse_index(b, h, i));
                if (std::isnan(sink) || sink == std::numeric_limits<double>::infinity()) {
                    for (int64_t d = 0; d < p.head_dim_v; ++d) o_row[d] = std::numeric_limits<double>::quiet_NaN();
                    out.lse[lse_at] = std::numeric_limits<double>::quiet_NaN();
                    continue;
                }
                if (max_score == -std::numeric_limits<double>::infinity()) {  // sees no key: O = 0
                    out.lse[lse_at] = sink;                                       // -inf without a sink
                    continue;
                }
                const double shift = std::max(max_score, sink);
                double sum = sink == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(sink - shift);
                for (int64_t j = 0; j < sk; ++j) {
                    if (!numerics::key_visible(i, j, sq, sk, mask, p.window_left, p.window_right)) continue;
                    const double w = std::exp(scores[j] - shift);
                    sum += w;
                    const int64_t v_off = key_offset(p, p.v, b, j, hk);
                    for (int64_t d = 0; d < p.head_dim_v; ++d)
                        o_row[d] += w * (load_as_float(p.v.data, p.v.dtype, v_off + d) * vd);
                }
                for (int64_t d = 0; d < p.head_dim_v; ++d) o_row[d] /= sum;
                out.lse[lse_at] = shift + std::log(sum);
            }
        }
    }
    return out;
}

}  // namespace cpu
}  // namespace zyfa
