// Rows that see no key and rows that see a non-finite score (include/zyfa.h, kernels/common/row_max.h)
// on every NVIDIA kernel:
//   1. seqlen_k = 0 (K and V without rows, their data NULL or not) and varlen batches whose key
//      sequences are all or partly empty: every row without a key gets O = 0 and lse = -inf over
//      the sentinel GpuCase fills them with, as on the CPU backend;
//   2. a NaN in one query row, an infinite element (FP8, which has no infinity: a NaN) in one key
//      that the causal rows at and after it see, a NaN q_descale of one (batch, kv head), and (BF16)
//      one scaled score that overflows fp32: exactly the rows that see it get O = NaN and lse = NaN,
//      as on the CPU backend; every other row is bitwise the same kernel's result without the edit,
//      and within gpu_check.hpp's bounds of the CPU backend's.
// Each case runs for every mode and head dim on the default context (on sm_90a the
// warp-specialised kernels, copying with the tensor memory accelerator where the problem allows)
// and on a context of the tests' cp.async seam (tests/support/cuda_context.hpp: the same kernels'
// cp.async producer on dense problems too). A problem the device has no kernel for (sm_80: FP8,
// head dim 256) is skipped with a line; on sm_90 every one must run.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "empty_keys_check.hpp"
#include "exact_score_inputs.hpp"
#include "support/attention_modes.hpp"
#include "support/cuda_context.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

struct NamedContext {
    const char* name;
    zyfa_context* ctx;
};
std::vector<NamedContext> g_contexts;  // the session's context first

bool is_hopper() {
    const auto& device = session().runtime->device();
    return device.compute_major == 9 && device.compute_minor == 0;
}

// The kernel `ctx` runs `shape` with, or null (after a line saying why) when the device has none;
// on sm_90 every problem of this file has one.
const char* kernel_or_skip(zyfa_context* ctx, const char* ctx_name, const CaseShape& shape, const std::string& label) {
    GpuCase probe(*session().runtime, shape);
    const zyfa_status st = zyfa_attn_supported(ctx, &probe.params, &probe.tq, &probe.tk, &probe.tv, &probe.to);
    if (st == ZYFA_SUCCESS) return zyfa_attn_kernel_name(ctx, &probe.params, &probe.tq, &probe.tk, &probe.tv, &probe.to);
    std::printf("  %-44s [%s] skipped: %s: %s\n", label.c_str(), ctx_name, zyfa_status_string(st),
                zyfa_last_error_message());
    if (is_hopper() || st != ZYFA_ERROR_NOT_SUPPORTED) fail();
    return nullptr;
}

// Every mode at every head dim of the kernels, the case's shape applied last.
template <class Body>
void for_each_mode_and_dims(const std::function<void(CaseShape&)>& shape_of, Body body) {
    for (const DtypeMode& m : nvidia_modes()) {
        for (const auto& d : kKernelHeadDims) {
            CaseShape s = mode_shape(m);
            s.head_dim_qk = d[0];
            s.head_dim_v = d[1];
            shape_of(s);
            body(s, std::string(m.name) + " " + head_dims_label(d[0], d[1]));
        }
    }
}

// ---- 1. rows without keys -------------------------------------------------------------------------

void run_empty_keys(const std::string& what, const std::function<void(CaseShape&)>& shape_of, bool null_kv) {
    for_each_mode_and_dims(shape_of, [&](const CaseShape& s, const std::string& mode) {
        const std::string label = what + " " + mode;
        for (const NamedContext& c : g_contexts) {
            const char* kernel = kernel_or_skip(c.ctx, c.name, s, label);
            if (!kernel) continue;
            guarded([&] { check_empty_keys_case(c.ctx, s, label + " [" + c.name + "] " + kernel, null_kv); });
        }
    });
}

void test_seqlen_k_zero(void**) {
    for (zyfa_mask mask : {ZYFA_MASK_CAUSAL, ZYFA_MASK_NONE, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT}) {
        for (bool null_kv : {false, true}) {
            const std::string what = std::string("sk=0 mask ") + std::to_string(mask) + (null_kv ? " k,v NULL" : "");
            run_empty_keys(what, [mask](CaseShape& s) {
                s.mask = mask;
                s.batch = 2;
                s.seqlen_q = 200;  // two query tiles
                s.seqlen_k = 0;
                s.heads_q = 4;
                s.heads_kv = 2;
            }, null_kv);
        }
    }
}

void test_varlen_all_key_sequences_empty(void**) {
    for (int32_t longest : {0, 64}) {  // seqlen_k: the longest key sequence, or a larger bound
        for (bool null_kv : {false, true}) {
            if (null_kv && longest > 0) continue;  // a bound > 0 gives K and V rows to point at
            const std::string what = "varlen q{100,1,130} k{0,0,0} seqlen_k=" + std::to_string(longest) +
                                     (null_kv ? " k,v NULL" : "");
            run_empty_keys(what, [longest](CaseShape& s) {
                s.batch = 3;
                s.lengths_q = {100, 1, 130};
                s.lengths_k = {0, 0, 0};
                s.seqlen_q = 130;
                s.seqlen_k = longest;
            }, null_kv);
        }
    }
}

void test_varlen_some_key_sequences_empty(void**) {
    for (zyfa_mask mask : {ZYFA_MASK_CAUSAL, ZYFA_MASK_NONE}) {
        run_empty_keys("varlen q{100,70,129,5} k{0,300,0,64} mask " + std::to_string(mask), [mask](CaseShape& s) {
            s.mask = mask;
            s.batch = 4;
            s.lengths_q = {100, 70, 129, 5};
            s.lengths_k = {0, 300, 0, 64};
            s.seqlen_q = 129;
            s.seqlen_k = 300;
            s.heads_q = 4;
            s.heads_kv = 2;
        }, false);
    }
}

// ---- 2. non-finite scores ---------------------------------------------------------------------------

// Element [b, s, h, d] of a dense [batch, seqlen, heads, dim] tensor (AttentionCase's layout).
int64_t dense_index(int64_t b, int64_t s, int64_t h, int64_t d, int64_t seqlen, int64_t heads, int64_t dim) {
    return ((b * seqlen + s) * heads + h) * dim + d;
}
void set_q(AttentionCase& c, int64_t b, int64_t i, int64_t h, int64_t d, float value) {
    const CaseShape& s = c.shape;
    zyfa::cpu::store_from_float(c.q.data(), s.dtype, dense_index(b, i, h, d, s.seqlen_q, s.heads_q, s.head_dim_qk),
                                value);
}
void set_k(AttentionCase& c, int64_t b, int64_t j, int64_t hk, int64_t d, float value) {
    const CaseShape& s = c.shape;
    zyfa::cpu::store_from_float(c.k.data(), s.dtype, dense_index(b, j, hk, d, s.seqlen_k, s.heads_kv, s.head_dim_qk),
                                value);
}
int64_t kv_head(const CaseShape& s, int64_t h) { return h / (s.heads_q / s.heads_kv); }

constexpr float kNaN = __builtin_nanf("");
constexpr float kInf = __builtin_huge_valf();

bool bits_equal(const void* a, const void* b, size_t bytes) { return std::memcmp(a, b, bytes) == 0; }

// `base` then `poison` applied to the inputs; `poisoned` says which rows see the poison.
struct NonFiniteCase {
    std::string what;
    std::function<void(CaseShape&)> shape_of;
    GpuCase::Edit base, poison;
    std::function<bool(const CaseShape&, const RowId&)> poisoned;
};

void check_nonfinite_on(zyfa_context* ctx, const CaseShape& shape, const NonFiniteCase& nc, const AttentionCase& cpu,
                        const std::string& label) {
    Session& s = session();
    GpuCase clean(*s.runtime, shape, nc.base);
    GpuCase got(*s.runtime, shape, [&nc](AttentionCase& c) {
        if (nc.base) nc.base(c);
        nc.poison(c);
    });
    for (GpuCase* g : {&clean, &got}) {
        const zyfa_status st = g->run(ctx, *s.runtime, s.stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("  %s: zyfa_attn_fwd(CUDA) failed: %s: %s\n", label.c_str(), zyfa_status_string(st),
                        zyfa_last_error_message());
            fail();
        }
    }
    const size_t elem = zyfa::cpu::dtype_size(shape.out_dtype);
    const int64_t dv = shape.head_dim_v;
    int64_t nan_rows = 0, bad_nan_rows = 0, changed_rows = 0;
    RowsVsCpu others;
    for (const RowId& r : rows_of(cpu)) {
        const int64_t o = o_offset(cpu, r), l = lse_offset(cpu, r);
        if (nc.poisoned(shape, r)) {
            ++nan_rows;
            bool all_nan = true;
            for (int64_t d = 0; d < dv; ++d) all_nan = all_nan && std::isnan(got.host.out(o + d)) && std::isnan(cpu.out(o + d));
            if (shape.with_lse) all_nan = all_nan && std::isnan(got.host.lse[l]) && std::isnan(cpu.lse[l]);
            if (!all_nan) ++bad_nan_rows;
            continue;
        }
        bool same = bits_equal(&got.host.o[o * elem], &clean.host.o[o * elem], dv * elem);
        if (shape.with_lse) same = same && bits_equal(&got.host.lse[l], &clean.host.lse[l], sizeof(float));
        if (!same) ++changed_rows;
        others.add(got, cpu, o, l);
    }
    const double rel_rms = others.rel_rms();
    const double o_tol = o_tolerance_on(ctx, got);
    const double lse_tol = lse_tolerance_on(ctx, got);
    const bool guards = clean.guards_intact() && got.guards_intact();
    std::printf("  %-72s NaN rows %lld (not all NaN %lld) | other rows: changed %lld, vs cpu rel_rms %.2e "
                "(tol %.0e) lse %.1e (tol %.0e) infinities %lld%s\n",
                label.c_str(), static_cast<long long>(nan_rows), static_cast<long long>(bad_nan_rows),
                static_cast<long long>(changed_rows), rel_rms, o_tol, others.lse_max_abs, lse_tol,
                static_cast<long long>(others.lse_mismatched_infinities), guards ? "" : "  OUTPUT GUARD BAND OVERWRITTEN");
    assert_true(guards);
    assert_int_equal(bad_nan_rows, 0);
    assert_int_equal(changed_rows, 0);
    assert_true(rel_rms <= o_tol);
    assert_true(others.lse_max_abs <= lse_tol);
    assert_int_equal(others.lse_mismatched_infinities, 0);
}

// The input dtypes a case applies to.
bool any_dtype(zyfa_dtype) { return true; }
bool fp8_dtype(zyfa_dtype d) { return zyfa::cpu::dtype_is_fp8(d); }
bool sixteen_bit_dtype(zyfa_dtype d) { return !zyfa::cpu::dtype_is_fp8(d); }
bool bf16_dtype(zyfa_dtype d) { return d == ZYFA_DTYPE_BF16; }

void run_nonfinite(const NonFiniteCase& nc, bool (*applies)(zyfa_dtype)) {
    for_each_mode_and_dims(nc.shape_of, [&](const CaseShape& s, const std::string& mode) {
        if (!applies(s.dtype)) return;
        const std::string label = nc.what + " " + mode;
        guarded([&] {
            for (const NamedContext& c : g_contexts) {
                const char* kernel = kernel_or_skip(c.ctx, c.name, s, label);
                if (!kernel) continue;
                AttentionCase cpu(s);  // the numerics model of this context's kernel
                if (nc.base) nc.base(cpu);
                nc.poison(cpu);
                cpu.params.key_block = key_block_of_kernel(kernel, s);
                run_on_cpu(cpu);
                check_nonfinite_on(c.ctx, s, nc, cpu, label + " [" + c.name + "] " + kernel);
            }
        });
    });
}

// Causal, batch 2, 200 rows (two query tiles, four key blocks), GQA 4:2.
void causal_200(CaseShape& s) {
    s.batch = 2;
    s.seqlen_q = s.seqlen_k = 200;
    s.heads_q = 4;
    s.heads_kv = 2;
}

void test_nan_in_one_query_row(void**) {
    run_nonfinite({"nan q[b1,150,h1]", causal_200, {},
                   [](AttentionCase& c) { set_q(c, 1, 150, 1, 3, kNaN); },
                   [](const CaseShape&, const RowId& r) { return r.b == 1 && r.h == 1 && r.i == 150; }},
                  any_dtype);
    // A row that sees no key stays O = 0, lse = -inf whatever its query holds.
    run_nonfinite({"nan q of a row without keys (br 300x100)",
                   [](CaseShape& s) {
                       causal_200(s);
                       s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
                       s.seqlen_q = 300;
                       s.seqlen_k = 100;
                   },
                   {}, [](AttentionCase& c) { set_q(c, 0, 10, 2, 0, kNaN); },
                   [](const CaseShape&, const RowId&) { return false; }},
                  any_dtype);
}

void test_infinite_key_seen_by_later_rows(void**) {
    // 16-bit: k[b0, key 70, kv head 1, 0] = +inf and every query's element 0 = 1, so that score is
    // +inf for every row of query heads 2 and 3 that sees key 70 (causal: rows 70..199).
    run_nonfinite({"+inf k[b0,70,hk1]", causal_200,
                   [](AttentionCase& c) {
                       const CaseShape& s = c.shape;
                       for (int64_t b = 0; b < s.batch; ++b)
                           for (int64_t i = 0; i < s.seqlen_q; ++i)
                               for (int64_t h = 0; h < s.heads_q; ++h) set_q(c, b, i, h, 0, 1.0f);
                   },
                   [](AttentionCase& c) { set_k(c, 0, 70, 1, 0, kInf); },
                   [](const CaseShape& s, const RowId& r) { return r.b == 0 && kv_head(s, r.h) == 1 && r.i >= 70; }},
                  sixteen_bit_dtype);
    // e4m3fn has no infinity: a NaN element instead (every score with key 70 is NaN).
    run_nonfinite({"nan k[b0,70,hk1]", causal_200, {}, [](AttentionCase& c) { set_k(c, 0, 70, 1, 5, kNaN); },
                   [](const CaseShape& s, const RowId& r) { return r.b == 0 && kv_head(s, r.h) == 1 && r.i >= 70; }},
                  fp8_dtype);
}

void test_nan_q_descale(void**) {
    run_nonfinite({"nan q_descale[b1,hk0]", causal_200, {},
                   [](AttentionCase& c) { c.q_descale[1 * c.shape.heads_kv + 0] = kNaN; },
                   [](const CaseShape& s, const RowId& r) { return r.b == 1 && kv_head(s, r.h) == 0; }},
                  fp8_dtype);
}

void test_scaled_score_overflows(void**) {
    // Integer Q and K (exact scores), element 0 zero but key 70's 2^56 (kv head 1) and, with the
    // poison, row 150's 2^56 (query head 2): that one score is 2^112, finite, and times
    // softmax_scale 2^16 * log2 e it overflows to +inf. The others stay small integers.
    constexpr float kBig = 72057594037927936.0f;  // 2^56, exact in BF16
    run_nonfinite({"scaled score overflow q[b0,150,h2].k[b0,70,hk1]", causal_200,
                   [](AttentionCase& c) {
                       integer_qk(c, 11);
                       const CaseShape& s = c.shape;
                       for (int64_t b = 0; b < s.batch; ++b) {
                           for (int64_t i = 0; i < s.seqlen_q; ++i)
                               for (int64_t h = 0; h < s.heads_q; ++h) set_q(c, b, i, h, 0, 0.0f);
                           for (int64_t j = 0; j < s.seqlen_k; ++j)
                               for (int64_t h = 0; h < s.heads_kv; ++h) set_k(c, b, j, h, 0, 0.0f);
                       }
                       set_k(c, 0, 70, 1, 0, kBig);
                       c.params.softmax_scale = 65536.0f;
                   },
                   [](AttentionCase& c) { set_q(c, 0, 150, 2, 0, kBig); },
                   [](const CaseShape&, const RowId& r) { return r.b == 0 && r.h == 2 && r.i == 150; }},
                  bf16_dtype);
}

}  // namespace

int main(void) {
    if (const int rc = open_session_or_skip("gpu_nonfinite_and_empty_keys")) return rc;
    g_contexts.push_back({"default", session().cuda});
    std::string error;
    zyfa_context* cp_async = zyfa_test::cuda_context_with(zyfa::cuda::CudaKernelChoice::CpAsync, &error);
    if (!cp_async) {
        std::printf("FAIL gpu_nonfinite_and_empty_keys: the cp.async seam's context: %s\n", error.c_str());
        return 1;
    }
    g_contexts.push_back({"cp.async", cp_async});
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seqlen_k_zero),
        cmocka_unit_test(test_varlen_all_key_sequences_empty),
        cmocka_unit_test(test_varlen_some_key_sequences_empty),
        cmocka_unit_test(test_nan_in_one_query_row),
        cmocka_unit_test(test_infinite_key_seen_by_later_rows),
        cmocka_unit_test(test_nan_q_descale),
        cmocka_unit_test(test_scaled_score_overflows),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    for (size_t i = 1; i < g_contexts.size(); ++i) zyfa_context_destroy(g_contexts[i].ctx);
    close_session();
    return failed;
}
