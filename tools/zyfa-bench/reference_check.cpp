#include "reference_check.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "core/errors.hpp"
#include "core/problem.hpp"
#include "core/validate.hpp"
#include "cpu/attention_reference.hpp"
#include "cpu/tensor_access.hpp"

namespace zyfa_bench {
namespace {

// Reference work per reference thread and case (in the units of reference_heads) that keeps the
// default run (three cases, seqlen 2048: one head per thread, ~0.6 s each) under 30 s on
// 2 cores even when they are shared (measured: 29 s with the load average near 3).
constexpr double kReferenceBudgetPerThread = 0.6e9;

void* element_pointer(const zyfa::TensorView& t, int64_t elements) {
    return static_cast<uint8_t*>(t.data) + elements * static_cast<int64_t>(zyfa::cpu::dtype_size(t.dtype));
}

// The problem restricted to query head h (and its kv head), with [batch]-sized descales.
struct HeadProblem {
    zyfa::AttnProblem problem;
    std::vector<float> q_descale, k_descale, v_descale;
    std::vector<float> q_token, k_block;  // the INT8 Q/K mode's, for one head
};

// One head's rows ([batch, 1, per_head]) of an INT8 descale laid out [batch, heads, per_head].
void restrict_rows(const float* full, int64_t batch, int64_t heads, int64_t head, int64_t per_head,
                   std::vector<float>& out, const float*& target) {
    if (full == nullptr) {
        target = nullptr;
        return;
    }
    out.resize(static_cast<size_t>(batch * per_head));
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < per_head; ++i)
            out[static_cast<size_t>(b * per_head + i)] = full[(b * heads + head) * per_head + i];
    target = out.data();
}

void restrict_descale(const float* full, const zyfa::AttnProblem& p, int64_t kv_head, std::vector<float>& out,
                      const float*& target) {
    if (full == nullptr) {
        target = nullptr;
        return;
    }
    out.resize(static_cast<size_t>(p.batch));
    for (int64_t b = 0; b < p.batch; ++b) out[static_cast<size_t>(b)] = full[b * p.heads_kv + kv_head];
    target = out.data();
}

void make_head_problem(const zyfa::AttnProblem& full, int64_t h, HeadProblem& head) {
    const int64_t kv = full.kv_head(h);
    head.problem = full;
    zyfa::AttnProblem& p = head.problem;
    p.heads_q = 1;
    p.heads_kv = 1;
    p.q.data = element_pointer(full.q, h * full.q.stride_head);
    p.k.data = element_pointer(full.k, kv * full.k.stride_head);
    p.v.data = element_pointer(full.v, kv * full.v.stride_head);
    p.o.data = nullptr;  // the reference returns its output; nothing is written through views
    p.lse = nullptr;
    restrict_descale(full.q_descale, full, kv, head.q_descale, p.q_descale);
    restrict_descale(full.k_descale, full, kv, head.k_descale, p.k_descale);
    restrict_descale(full.v_descale, full, kv, head.v_descale, p.v_descale);
    restrict_rows(full.q_descale_per_token, full.batch, full.heads_q, h, full.seqlen_q, head.q_token,
                  p.q_descale_per_token);
    restrict_rows(full.k_descale_per_block, full.batch, full.heads_kv, kv, full.int8_key_blocks(), head.k_block,
                  p.k_descale_per_block);
}

}  // namespace

int reference_threads(int threads) {
    return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::vector<int64_t> reference_heads(const BenchOptions& options, int64_t visible_pairs_per_head,
                                     const Activations& activations) {
    const double budget = kReferenceBudgetPerThread * reference_threads(options.threads);
    double mask_tests = 0.0;  // the reference tests every (query, key) pair of a sequence
    for (size_t b = 0; b < activations.lengths_q.size(); ++b)
        mask_tests += static_cast<double>(activations.lengths_q[b]) * static_cast<double>(activations.lengths_k[b]);
    const double per_head =
        static_cast<double>(visible_pairs_per_head) * static_cast<double>(options.head_dim_qk + options.head_dim_v) +
        4.0 * mask_tests;
    int64_t count = options.heads_q;
    if (per_head * static_cast<double>(count) > budget) {
        count = std::max<int64_t>(1, static_cast<int64_t>(budget / per_head));
    }
    std::vector<int64_t> heads;
    for (int64_t i = 0; i < count; ++i) heads.push_back(i * options.heads_q / count);
    return heads;
}

ReferenceCheck check_against_reference(const CaseBuffers& buffers, const std::vector<int64_t>& heads, int threads) {
    // The same normalisation the library applied (strides, resolved scale and softmax); the
    // reference reads the CPU-side buffers, so validate as for the CPU backend.
    const zyfa::AttnProblem full =
        zyfa::validate_attn(&buffers.params, &buffers.q.view, &buffers.k.view, &buffers.v.view, &buffers.o.view,
                            ZYFA_BACKEND_CPU);

    std::vector<HeadProblem> problems(heads.size());
    for (size_t i = 0; i < heads.size(); ++i) make_head_problem(full, heads[i], problems[i]);
    std::vector<zyfa::cpu::ReferenceOutput> outputs(heads.size());

    const int workers = std::max(1, std::min<int>(reference_threads(threads), static_cast<int>(heads.size())));
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (int w = 0; w < workers; ++w) {
        pool.emplace_back([&] {
            for (size_t i = next++; i < problems.size(); i = next++)
                outputs[i] = zyfa::cpu::attention_reference_fp64(problems[i].problem);
        });
    }
    for (std::thread& t : pool) t.join();

    ReferenceCheck check;
    check.heads = heads;
    double err2 = 0.0, ref2 = 0.0;
    const int64_t rows = full.total_q();
    for (size_t i = 0; i < heads.size(); ++i) {
        for (int64_t row = 0; row < rows; ++row) {
            // Dense (or packed) layout: row * stride_seq reaches [b, s] for both.
            const int64_t base = row * full.o.stride_seq + heads[i] * full.o.stride_head;
            for (int64_t d = 0; d < full.head_dim_v; ++d) {
                const double ref = outputs[i].o[static_cast<size_t>(row * full.head_dim_v + d)];
                const double got = zyfa::cpu::load_as_float(full.o.data, full.o.dtype, base + d);
                err2 += (got - ref) * (got - ref);
                ref2 += ref * ref;
                const double diff = std::fabs(got - ref);
                // A NaN in O must show, not vanish in a max.
                if (std::isnan(diff) || std::isnan(check.max_abs)) check.max_abs = NAN;
                else check.max_abs = std::max(check.max_abs, diff);
            }
        }
    }
    check.relative_rms = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    return check;
}

}  // namespace zyfa_bench
