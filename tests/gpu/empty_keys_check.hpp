// The rows of a case and where their outputs lie, and the check of a case whose rows may see no
// key (seqlen_k = 0, empty key sequences): those rows must read O = 0 and lse = -inf (written over
// GpuCase's sentinel) on the GPU and the CPU backend alike, the other rows agree with the CPU
// backend within gpu_check.hpp's bounds. Shared by nonfinite_and_empty_keys_test.cpp and the
// compute-sanitizer program (sanitizer_case.cpp), whose memcheck sees any read through NULL K/V.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/attention_mask.h"
#include "gpu_check.hpp"

namespace zyfa_gpu_test {

// Query row i of sequence b, query head h.
struct RowId {
    int64_t b, h, i;
};

inline int64_t case_len_q(const AttentionCase& c, int64_t b) {
    return c.cu_q.empty() ? c.shape.seqlen_q : c.cu_q[b + 1] - c.cu_q[b];
}
inline int64_t case_len_k(const AttentionCase& c, int64_t b) {
    return c.cu_k.empty() ? c.shape.seqlen_k : c.cu_k[b + 1] - c.cu_k[b];
}

inline std::vector<RowId> rows_of(const AttentionCase& c) {
    std::vector<RowId> rows;
    for (int64_t b = 0; b < c.shape.batch; ++b)
        for (int64_t h = 0; h < c.shape.heads_q; ++h)
            for (int64_t i = 0; i < case_len_q(c, b); ++i) rows.push_back({b, h, i});
    return rows;
}

// O[b, i, h, 0] in elements, and lse[b, h, i] (docs/api.md), in AttentionCase's layouts.
inline int64_t o_offset(const AttentionCase& c, const RowId& r) {
    const CaseShape& s = c.shape;
    const int64_t packed_row = c.cu_q.empty() ? r.b * s.seqlen_q + r.i : c.cu_q[r.b] + r.i;
    return (packed_row * s.heads_q + r.h) * s.head_dim_v;
}
inline int64_t lse_offset(const AttentionCase& c, const RowId& r) {
    const CaseShape& s = c.shape;
    if (c.cu_q.empty()) return (r.b * s.heads_q + r.h) * s.seqlen_q + r.i;
    return r.h * c.cu_q.back() + c.cu_q[r.b] + r.i;
}

inline bool row_sees_no_key(const AttentionCase& c, const RowId& r) {
    const CaseShape& s = c.shape;
    const zyfa::numerics::KeyRange keys =
        zyfa::numerics::visible_keys(r.i, case_len_q(c, r.b), case_len_k(c, r.b),
                                     static_cast<zyfa::numerics::MaskKind>(s.mask), s.window_left, s.window_right);
    return keys.begin >= keys.end;
}

// gpu_check.hpp's bounds against the CPU for the kernel `ctx` runs (those of FP8 EXACT on the
// warp-specialised kernels for it).
inline double lse_tolerance_on(zyfa_context* ctx, const GpuCase& c) {
    const CaseShape& s = c.host.shape;
    if (ws_fp8_exact_kernel(zyfa_attn_kernel_name(ctx, &c.params, &c.tq, &c.tk, &c.tv, &c.to)))
        return ws_fp8_exact_lse_bound_vs_cpu();
    return lse_tolerance_vs_cpu(resolved_softmax(s));
}
inline double o_tolerance_on(zyfa_context* ctx, const GpuCase& c) {
    const CaseShape& s = c.host.shape;
    if (ws_fp8_exact_kernel(zyfa_attn_kernel_name(ctx, &c.params, &c.tq, &c.tk, &c.tv, &c.to)))
        return ws_fp8_exact_o_bound_vs_cpu(s);
    return o_tolerance_vs_cpu(s.dtype, s.out_dtype);
}

// The rows a check compares with the CPU backend: O's relative RMS error and lse's largest
// difference, infinities and NaNs of lse required equal.
struct RowsVsCpu {
    double err2 = 0.0, ref2 = 0.0, lse_max_abs = 0.0;
    int64_t lse_mismatched_infinities = 0;

    void add(const GpuCase& gpu, const AttentionCase& cpu, int64_t o, int64_t l) {
        for (int64_t d = 0; d < cpu.shape.head_dim_v; ++d) {
            const double a = gpu.host.out(o + d), b = cpu.out(o + d);
            err2 += std::isnan(a - b) ? INFINITY : (a - b) * (a - b);
            ref2 += b * b;
        }
        if (!cpu.shape.with_lse) return;
        const double a = gpu.host.lse[l], b = cpu.lse[l];
        if (std::isinf(a) || std::isinf(b) || std::isnan(a) || std::isnan(b)) {
            if (!(a == b)) ++lse_mismatched_infinities;
        } else {
            lse_max_abs = std::fmax(lse_max_abs, std::fabs(a - b));
        }
    }
    double rel_rms() const { return ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2); }
};

// Runs `shape` on `ctx` (K and V data NULL when null_kv) and on the CPU backend, and checks it as
// the header says.
inline void check_empty_keys_case(zyfa_context* ctx, const CaseShape& shape, const std::string& label, bool null_kv) {
    Session& s = session();
    GpuCase gpu(*s.runtime, shape);
    AttentionCase cpu(shape);
    if (null_kv) gpu.tk.data = gpu.tv.data = cpu.tk.data = cpu.tv.data = nullptr;
    const zyfa_status st = gpu.run(ctx, *s.runtime, s.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  %s: zyfa_attn_fwd(CUDA) failed: %s: %s\n", label.c_str(), zyfa_status_string(st),
                    zyfa_last_error_message());
        fail();
    }
    run_on_cpu_as(cpu, ctx, gpu);
    const size_t elem = zyfa::cpu::dtype_size(shape.out_dtype);
    const int64_t dv = shape.head_dim_v;
    const std::vector<uint8_t> zeros(static_cast<size_t>(dv) * elem, 0);
    int64_t keyless_rows = 0, bad_keyless_rows = 0;
    RowsVsCpu others;
    for (const RowId& r : rows_of(cpu)) {
        const int64_t o = o_offset(cpu, r), l = lse_offset(cpu, r);
        if (row_sees_no_key(cpu, r)) {
            ++keyless_rows;
            bool ok = std::memcmp(&gpu.host.o[o * elem], zeros.data(), zeros.size()) == 0 &&
                      std::memcmp(&cpu.o[o * elem], zeros.data(), zeros.size()) == 0;
            if (shape.with_lse) ok = ok && gpu.host.lse[l] == -INFINITY && cpu.lse[l] == -INFINITY;
            if (!ok) ++bad_keyless_rows;
            continue;
        }
        others.add(gpu, cpu, o, l);
    }
    const double rel_rms = others.rel_rms();
    const double o_tol = o_tolerance_on(ctx, gpu);
    const double lse_tol = lse_tolerance_on(ctx, gpu);
    const bool guards = gpu.guards_intact();
    std::printf("  %-72s rows without keys %lld (not 0 / -inf %lld) | other rows vs cpu: rel_rms %.2e (tol %.0e) "
                "lse %.1e (tol %.0e) infinities %lld%s\n",
                label.c_str(), static_cast<long long>(keyless_rows), static_cast<long long>(bad_keyless_rows), rel_rms,
                o_tol, others.lse_max_abs, lse_tol, static_cast<long long>(others.lse_mismatched_infinities),
                guards ? "" : "  OUTPUT GUARD BAND OVERWRITTEN");
    assert_true(guards);
    assert_true(keyless_rows > 0);
    assert_int_equal(bad_keyless_rows, 0);
    assert_true(rel_rms <= o_tol);
    assert_true(others.lse_max_abs <= lse_tol);
    assert_int_equal(others.lse_mismatched_infinities, 0);
}

}  // namespace zyfa_gpu_test
