// zyfa_attn_merge on the CPU backend through the public API:
//  - the merge against an fp64 merge of the same parts (any number of parts, mixed dtypes and
//    strides, lse far apart and -inf), with the fp32 bound derived below;
//  - split keys merged against the unsplit zyfa_attn_fwd, EXACT and LEAN, mask NONE and
//    bottom-right causal chunks: with a shared row maximum to fp32 rounding, and for any split
//    within the bounds of tests/support/merge_split_case.hpp against fp64 attention;
//  - the result does not depend on the number of threads.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "core/validate.hpp"
#include "cpu/attention_reference.hpp"
#include "numerics/cmocka_cpp.hpp"
#include "support/merge_split_case.hpp"

using namespace zyfa_test;

namespace {

zyfa_context* make_cpu_context(int threads) {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU;
    opts.num_threads = threads;
    zyfa_context* ctx = nullptr;
    assert_int_equal(zyfa_context_create(&opts, &ctx), ZYFA_SUCCESS);
    return ctx;
}

void expect_success(zyfa_status st, const char* what) {
    if (st != ZYFA_SUCCESS) {
        std::printf("%s: %s: %s\n", what, zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
}

// --- The merge alone against fp64 ---------------------------------------------------------------

// n parts of [batch, seq, heads, dim] with random values in [-1, 1), lse in [-40, 40] with one
// part in seven -inf per row; part i % 3 == 1 is BF16, i % 3 == 2 head-major fp32.
// Bound (u = 2^-24): each weight w_i = exp2((lse_i - M) log2e) carries (|lse_i - M| + 2) 2u
// relative error (the difference, the product, exp2f), and w (|d| + 2) <= 2 for d = M - lse_i >= 0
// since (d + 2) e^-d <= 2; the n products and sums of acc and of the weight sum add n u each,
// relative to sum w |O_i|; the reciprocal 1 / sum and the product by it 2u. All over sum w >= 1, so
//   |O - O_ref| <= (4 n + 4 n + 3) u max|O_i| <= (8 n + 4) u max|O_i|,
//   |lse - lse_ref| <= |M| u + (2 n + 4) u (the weight sum's relative error, then log2f's ulp).
void merge_matches_fp64(void**) {
    constexpr int64_t batch = 2, seq = 5, heads = 3, dim = 128;
    const int64_t parts = 70;  // more than a GPU call takes: the CPU has no limit
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f), lse_dist(-40.0f, 40.0f);
    const int64_t elems = batch * seq * heads * dim, rows = batch * heads * seq;
    std::vector<std::vector<float>> data32(parts), lse(parts);
    std::vector<std::vector<uint16_t>> data16(parts);
    std::vector<zyfa_tensor> views(parts);
    std::vector<const float*> lse_ptrs(parts);
    std::vector<std::vector<double>> decoded(parts, std::vector<double>(elems));  // [b, s, h, d] order
    for (int64_t i = 0; i < parts; ++i) {
        lse[i].resize(rows);
        for (auto& x : lse[i]) x = (rng() % 7 == 0) ? -std::numeric_limits<float>::infinity() : lse_dist(rng);
        lse_ptrs[i] = lse[i].data();
        std::vector<float> logical(elems);
        for (auto& x : logical) x = value(rng);
        if (i % 3 == 1) {
            data16[i].resize(elems);
            for (int64_t e = 0; e < elems; ++e) {
                data16[i][e] = zyfa::numerics::float_to_bf16(logical[e]);
                decoded[i][e] = zyfa::numerics::bf16_to_float(data16[i][e]);
            }
            views[i] = contiguous_view(data16[i].data(), ZYFA_DTYPE_BF16, seq, heads, dim);
        } else if (i % 3 == 2) {
            data32[i].resize(elems);  // head-major [b, h, s, d]
            for (int64_t b = 0; b < batch; ++b)
                for (int64_t s = 0; s < seq; ++s)
                    for (int64_t h = 0; h < heads; ++h)
                        for (int64_t d = 0; d < dim; ++d) {
                            const int64_t logical_at = ((b * seq + s) * heads + h) * dim + d;
                            data32[i][((b * heads + h) * seq + s) * dim + d] = logical[logical_at];
                            decoded[i][logical_at] = logical[logical_at];
                        }
            views[i] = contiguous_view(data32[i].data(), ZYFA_DTYPE_FP32, seq, heads, dim);
            views[i].stride_batch = heads * seq * dim;
            views[i].stride_head = seq * dim;
            views[i].stride_seq = dim;
        } else {
            data32[i] = logical;
            for (int64_t e = 0; e < elems; ++e) decoded[i][e] = logical[e];
            views[i] = contiguous_view(data32[i].data(), ZYFA_DTYPE_FP32, seq, heads, dim);
        }
    }
    // One row with every part -inf: O = 0, lse = -inf.
    for (int64_t i = 0; i < parts; ++i) lse[i][4] = -std::numeric_limits<float>::infinity();

    std::vector<float> o(elems), out_lse(rows);
    zyfa_merge_params p;
    zyfa_merge_params_init(&p, sizeof p);
    p.num_parts = static_cast<int32_t>(parts);
    p.batch = batch;
    p.seqlen_q = seq;
    p.heads = heads;
    p.head_dim_v = dim;
    p.lse = out_lse.data();
    const zyfa_tensor to = contiguous_view(o.data(), ZYFA_DTYPE_FP32, seq, heads, dim);
    zyfa_context* ctx = make_cpu_context(2);
    expect_success(zyfa_attn_merge(ctx, &p, views.data(), lse_ptrs.data(), &to, nullptr), "zyfa_attn_merge");

    const double u = std::ldexp(1.0, -24);
    const double o_bound = (8.0 * parts + 4.0) * u;  // max |O_i| <= 1
    double worst_o = 0.0, worst_lse = 0.0, worst_lse_bound = 0.0;
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t s = 0; s < seq; ++s) {
                const int64_t r = (b * heads + h) * seq + s;
                double m = -INFINITY;
                for (int64_t i = 0; i < parts; ++i) m = std::fmax(m, lse[i][r]);
                if (std::isinf(m)) {
                    assert_true(std::isinf(out_lse[r]) && out_lse[r] < 0);
                    for (int64_t d = 0; d < dim; ++d) assert_true(o[((b * seq + s) * heads + h) * dim + d] == 0.0f);
                    continue;
                }
                double sum = 0.0;
                for (int64_t i = 0; i < parts; ++i)
                    if (!std::isinf(lse[i][r])) sum += std::exp(lse[i][r] - m);
                const double lse_bound = (std::fabs(m) + 2.0 * parts + 4.0) * u;
                const double lse_err = std::fabs(out_lse[r] - (m + std::log(sum)));
                worst_lse = std::fmax(worst_lse, lse_err);
                worst_lse_bound = std::fmax(worst_lse_bound, lse_bound);
                if (lse_err > lse_bound) {
                    std::printf("row %lld: lse %.9g, fp64 %.9g (bound %.3g)\n", (long long)r, out_lse[r], m + std::log(sum),
                                lse_bound);
                    fail();
                }
                for (int64_t d = 0; d < dim; ++d) {
                    const int64_t at = ((b * seq + s) * heads + h) * dim + d;
                    double acc = 0.0;
                    for (int64_t i = 0; i < parts; ++i)
                        if (!std::isinf(lse[i][r])) acc += std::exp(lse[i][r] - m) * decoded[i][at];
                    const double err = std::fabs(o[at] - acc / sum);
                    worst_o = std::fmax(worst_o, err);
                    assert_true(err <= o_bound);
                }
            }
    std::printf("  merge of %lld parts vs fp64: max |O err| %.2e (bound %.2e), max |lse err| %.2e (bound <= %.2e)\n",
                (long long)parts, worst_o, o_bound, worst_lse, worst_lse_bound);
    zyfa_context_destroy(ctx);
}

// --- Split keys, merged, against the unsplit call -----------------------------------------------

struct SplitRun {
    std::vector<float> o_full, lse_full, o_merged, lse_merged;
    std::vector<std::vector<float>> o_parts, lse_parts;
};

SplitRun run_split(zyfa_context* ctx, const MergeSplitShape& s, MergeSplitInputs& in) {
    assert_true(split_is_valid(s));
    SplitRun r;
    r.o_full.resize(s.o_elems());
    r.lse_full.resize(s.lse_elems());
    AttnRequest full = split_request(s, in.q.data(), in.k.data(), in.v.data(), r.o_full.data(), r.lse_full.data(), 0,
                                     s.seqlen_k);
    expect_success(zyfa_attn_fwd(ctx, &full.params, &full.q, &full.k, &full.v, &full.o, nullptr), "unsplit");
    r.o_parts.assign(s.parts(), std::vector<float>(s.o_elems()));
    r.lse_parts.assign(s.parts(), std::vector<float>(s.lse_elems()));
    std::vector<float*> part_o, part_lse;
    for (int64_t p = 0; p < s.parts(); ++p) {
        AttnRequest part = split_request(s, in.q.data(), in.k.data(), in.v.data(), r.o_parts[p].data(),
                                         r.lse_parts[p].data(), s.cuts[p], s.cuts[p + 1]);
        expect_success(zyfa_attn_fwd(ctx, &part.params, &part.q, &part.k, &part.v, &part.o, nullptr), "part");
        part_o.push_back(r.o_parts[p].data());
        part_lse.push_back(r.lse_parts[p].data());
    }
    r.o_merged.resize(s.o_elems());
    r.lse_merged.resize(s.lse_elems());
    MergeRequest m = merge_request(s, part_o, part_lse, r.o_merged.data(), r.lse_merged.data());
    expect_success(zyfa_attn_merge(ctx, &m.params, m.part_o.data(), m.part_lse.data(), &m.o, nullptr), "merge");
    return r;
}

const char* mode_name(zyfa_softmax softmax) { return softmax == ZYFA_SOFTMAX_LEAN ? "LEAN" : "EXACT"; }
const char* mask_name(zyfa_mask mask) { return mask == ZYFA_MASK_NONE ? "none" : "bottom-right causal"; }

double max_abs(const std::vector<float>& x) {
    double m = 0.0;
    for (float v : x)
        if (std::isfinite(v)) m = std::fmax(m, std::fabs(v));
    return m;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0.0;
    for (size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(static_cast<double>(a[i]) - b[i]));
    return m;
}

// Peak key at every part's start, cuts on 64-key blocks: merged = unsplit to fp32 rounding.
void shared_row_max_split_is_unsplit(void**) {
    zyfa_context* ctx = make_cpu_context(2);
    for (zyfa_softmax softmax : {ZYFA_SOFTMAX_EXACT, ZYFA_SOFTMAX_LEAN})
        for (zyfa_mask mask : {ZYFA_MASK_NONE, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT}) {
            MergeSplitShape s;
            s.softmax = softmax;
            s.mask = mask;
            s.shared_row_max = true;
            s.cuts = {0, 128, 192, 320};
            MergeSplitInputs in(s);
            const SplitRun r = run_split(ctx, s, in);
            double lse_mag = max_abs(r.lse_full);
            for (const auto& l : r.lse_parts) lse_mag = std::fmax(lse_mag, max_abs(l));
            const int64_t blocks = s.seqlen_k / s.key_block;
            const double o_bound = shared_max_o_bound(lse_mag, s.parts(), blocks, in.max_abs_v());
            const double lse_bound = shared_max_lse_bound(lse_mag, s.parts(), blocks);
            const double o_err = max_diff(r.o_merged, r.o_full), lse_err = max_diff(r.lse_merged, r.lse_full);
            std::printf("  shared row max, %s, mask %s: |O merged - unsplit| %.2e (bound %.2e), |lse| %.2e (bound %.2e)\n",
                        mode_name(softmax), mask_name(mask), o_err, o_bound, lse_err, lse_bound);
            assert_true(o_err <= o_bound);
            assert_true(lse_err <= lse_bound);
        }
    zyfa_context_destroy(ctx);
}

// Any split (here one cut off the key blocks too): merged and unsplit each within the fp64 bounds,
// and within the sum of the two of each other.
void any_split_within_the_bounds(void**) {
    zyfa_context* ctx = make_cpu_context(2);
    for (zyfa_softmax softmax : {ZYFA_SOFTMAX_EXACT, ZYFA_SOFTMAX_LEAN})
        for (zyfa_mask mask : {ZYFA_MASK_NONE, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT}) {
            MergeSplitShape s;
            s.softmax = softmax;
            s.mask = mask;
            s.seed = 5;
            s.cuts = {0, 100, 192, 273, 320};
            MergeSplitInputs in(s);
            const SplitRun r = run_split(ctx, s, in);

            AttnRequest full = split_request(s, in.q.data(), in.k.data(), in.v.data(), nullptr, nullptr, 0, s.seqlen_k);
            full.o.data = const_cast<float*>(r.o_full.data());
            const zyfa::AttnProblem problem =
                zyfa::validate_attn(&full.params, &full.q, &full.k, &full.v, &full.o, ZYFA_BACKEND_CPU);
            const zyfa::cpu::ReferenceOutput ref = zyfa::cpu::attention_reference_fp64(problem);

            const double o_bound = reference_o_bound(softmax, s.seqlen_k, in.max_abs_v());
            double merged_o = 0.0, full_o = 0.0, merged_lse_lo = 0.0, merged_lse_hi = 0.0, full_lse_lo = 0.0,
                   full_lse_hi = 0.0;
            for (size_t i = 0; i < ref.o.size(); ++i) {
                merged_o = std::fmax(merged_o, std::fabs(r.o_merged[i] - ref.o[i]));
                full_o = std::fmax(full_o, std::fabs(r.o_full[i] - ref.o[i]));
            }
            for (size_t i = 0; i < ref.lse.size(); ++i) {
                merged_lse_lo = std::fmin(merged_lse_lo, r.lse_merged[i] - ref.lse[i]);
                merged_lse_hi = std::fmax(merged_lse_hi, r.lse_merged[i] - ref.lse[i]);
                full_lse_lo = std::fmin(full_lse_lo, r.lse_full[i] - ref.lse[i]);
                full_lse_hi = std::fmax(full_lse_hi, r.lse_full[i] - ref.lse[i]);
            }
            const double lo = softmax == ZYFA_SOFTMAX_LEAN ? kLeanLseLow - 1e-4 : -1e-4;
            const double hi = softmax == ZYFA_SOFTMAX_LEAN ? kLeanLseHigh + 1e-4 : 1e-4;
            const double between = max_diff(r.o_merged, r.o_full);
            std::printf("  split %s, mask %s: |O - fp64| merged %.2e, unsplit %.2e (bound %.2e); |merged - unsplit| %.2e "
                        "(bound %.2e); lse - fp64 merged [%.2e, %.2e], unsplit [%.2e, %.2e] (bound [%.1e, %.1e])\n",
                        mode_name(softmax), mask_name(mask), merged_o, full_o, o_bound, between, 2 * o_bound,
                        merged_lse_lo, merged_lse_hi, full_lse_lo, full_lse_hi, lo, hi);
            assert_true(merged_o <= o_bound);
            assert_true(full_o <= o_bound);
            assert_true(between <= 2 * o_bound);
            assert_true(merged_lse_lo >= lo && merged_lse_hi <= hi);
            assert_true(full_lse_lo >= lo && full_lse_hi <= hi);
            assert_true(max_diff(r.lse_merged, r.lse_full) <= hi - lo);
        }
    zyfa_context_destroy(ctx);
}

// The merge writes each row from its own parts in a fixed order: 1 and 3 threads agree bit for bit.
void threads_do_not_change_bits(void**) {
    MergeSplitShape s;
    s.softmax = ZYFA_SOFTMAX_LEAN;
    s.seed = 9;
    MergeSplitInputs in(s);
    zyfa_context* one = make_cpu_context(1);
    zyfa_context* three = make_cpu_context(3);
    const SplitRun a = run_split(one, s, in);
    const SplitRun b = run_split(three, s, in);
    assert_memory_equal(a.o_merged.data(), b.o_merged.data(), a.o_merged.size() * sizeof(float));
    assert_memory_equal(a.lse_merged.data(), b.lse_merged.data(), a.lse_merged.size() * sizeof(float));
    zyfa_context_destroy(one);
    zyfa_context_destroy(three);
}

}  // namespace

int main() {
    const CMUnitTest tests[] = {
        cmocka_unit_test(merge_matches_fp64),
        cmocka_unit_test(shared_row_max_split_is_unsplit),
        cmocka_unit_test(any_split_within_the_bounds),
        cmocka_unit_test(threads_do_not_change_bits),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
