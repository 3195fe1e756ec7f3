#include "attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/attention_mask.h"
#include "tensor_access.hpp"
#include "worker_pool.hpp"

namespace zyfa {
namespace cpu {

namespace {

double descale_of(const float* descale, const AttnProblem& p, int64_t b, int64_t kv_head) {
    return descale ? static_cast<double>(descale[b * p.heads_kv + kv_head]) : 1.0;
}

// Query rows per work item: enough work per item to outweigh decoding its kv head's K and V.
constexpr int64_t kRowsPerItem = 64;
// Below this many multiply-adds the reference runs on the calling thread alone (most tests' shapes).
constexpr double kParallelWork = 2e7;

struct ReferenceItem {
    int64_t b, h, first_row, end_row;
};

// Each thread's buffers: the item's K and V decoded (descales applied: the doubles the loops
// below used to form per multiply), its scores and query row.
struct ReferenceScratch {
    std::vector<double> keys, values, scores, q_row;
};

// Rows [first_row, end_row) of (sequence b, query head h). Every row reads the same decoded values
// and sums in the same order whichever thread runs it, so the output does not depend on threads.
void reference_rows(const AttnProblem& p, const ReferenceItem& item, ReferenceScratch& s, ReferenceOutput& out) {
    const int64_t b = item.b, h = item.h;
    const int64_t sq = p.len_q(b), sk = p.len_k(b);
    const int64_t dqk = p.head_dim_qk, dv = p.head_dim_v;
    const auto mask = static_cast<numerics::MaskKind>(p.mask);
    const int64_t hk = p.kv_head(h);
    const double qd = descale_of(p.q_descale, p, b, hk);
    const double kd = descale_of(p.k_descale, p, b, hk);
    const double vd = descale_of(p.v_descale, p, b, hk);
    s.keys.resize(static_cast<size_t>(sk * dqk));
    s.values.resize(static_cast<size_t>(sk * dv));
    std::vector<float> value_row(static_cast<size_t>(dv));
    for (int64_t j = 0; j < sk; ++j) {
        const int64_t k_off = key_offset(p, p.k, b, j, hk);
        // INT8 q/k: per-token and per-64-key-block descales instead of the per-head ones.
        const double kd_key = p.int8_qk() ? static_cast<double>(p.k_block_descale(b, hk, j)) : kd;
        for (int64_t d = 0; d < dqk; ++d)
            s.keys[static_cast<size_t>(j * dqk + d)] = load_as_float(p.k.data, p.k.dtype, k_off + d) * kd_key;
        load_v_row(p, b, j, hk, value_row.data());
        for (int64_t d = 0; d < dv; ++d) s.values[static_cast<size_t>(j * dv + d)] = value_row[static_cast<size_t>(d)] * vd;
    }
    s.q_row.resize(static_cast<size_t>(dqk));
    for (int64_t i = item.first_row; i < item.end_row; ++i) {
        const int64_t q_off = AttnProblem::offset(p.q, p.first_q(b), b, i, h);
        const double qd_row = p.int8_qk() ? static_cast<double>(p.q_token_descale(b, h, i)) : qd;
        for (int64_t d = 0; d < dqk; ++d) s.q_row[d] = load_as_float(p.q.data, p.q.dtype, q_off + d) * qd_row;
        s.scores.assign(static_cast<size_t>(sk), 0.0);
        double max_score = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < sk; ++j) {
            if (!numerics::key_visible(i, j, sq, sk, mask, p.window_left, p.window_right)) continue;
            const double* key = &s.keys[static_cast<size_t>(j * dqk)];
            double dot = 0.0;
            for (int64_t d = 0; d < dqk; ++d) dot += s.q_row[d] * key[d];
            s.scores[j] = dot * static_cast<double>(p.softmax_scale);
            if (p.key_bias) s.scores[j] += static_cast<double>(p.key_bias[p.key_bias_index(b, h, j)]);
            if (s.scores[j] > max_score) max_score = s.scores[j];
        }
        // The sink joins the denominator only (softmax over [scores..., sink], its column
        // dropped): a row that sees no key but a finite sink gets O = 0, lse = the sink; a
        // NaN or +inf sink makes the row NaN, as such a score does.
        const double sink = p.sinks ? static_cast<double>(p.sinks[h]) : -std::numeric_limits<double>::infinity();
        const int64_t row = p.varlen() ? p.first_q(b) + i : b * p.seqlen_q + i;
        double* o_row = &out.o[static_cast<size_t>((row * p.heads_q + h) * dv)];
        const size_t lse_at = static_cast<size_t>(p.lse_index(b, h, i));
        if (std::isnan(sink) || sink == std::numeric_limits<double>::infinity()) {
            for (int64_t d = 0; d < dv; ++d) o_row[d] = std::numeric_limits<double>::quiet_NaN();
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
            const double w = std::exp(s.scores[j] - shift);
            sum += w;
            const double* value = &s.values[static_cast<size_t>(j * dv)];
            for (int64_t d = 0; d < dv; ++d) o_row[d] += w * value[d];
        }
        for (int64_t d = 0; d < dv; ++d) o_row[d] /= sum;
        out.lse[lse_at] = shift + std::log(sum);
    }
}

}  // namespace

ReferenceOutput attention_reference_fp64(const AttnProblem& p) {
    ReferenceOutput out;
    const int64_t rows = p.total_q();
    out.o.assign(static_cast<size_t>(rows * p.heads_q * p.head_dim_v), 0.0);
    out.lse.assign(static_cast<size_t>(rows * p.heads_q), -std::numeric_limits<double>::infinity());
    std::vector<ReferenceItem> items;
    double work = 0.0;
    for (int64_t b = 0; b < p.batch; ++b) {
        const int64_t sq = p.len_q(b);
        work += static_cast<double>(sq) * static_cast<double>(p.len_k(b)) * static_cast<double>(p.heads_q) *
                static_cast<double>(p.head_dim_qk + p.head_dim_v);
        for (int64_t h = 0; h < p.heads_q; ++h)
            for (int64_t i = 0; i < sq; i += kRowsPerItem) items.push_back({b, h, i, std::min(sq, i + kRowsPerItem)});
    }
    if (work < kParallelWork) {
        ReferenceScratch scratch;
        for (const ReferenceItem& item : items) reference_rows(p, item, scratch, out);
        return out;
    }
    WorkerPool pool(0);
    std::vector<ReferenceScratch> scratch(static_cast<size_t>(pool.slot_count(static_cast<int64_t>(items.size()))));
    pool.parallel_for(static_cast<int64_t>(items.size()), [&](int64_t index, int slot) {
        reference_rows(p, items[static_cast<size_t>(index)], scratch[static_cast<size_t>(slot)], out);
    });
    return out;
}

}  // namespace cpu
}  // namespace zyfa
