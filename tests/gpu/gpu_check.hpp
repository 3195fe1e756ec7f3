// One GPU case checked two ways: against the CPU backend (the same numerics model, so a tight
// tolerance) and against the fp64 reference (the tolerances of tests/cpu/reference_check.hpp).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include "cpu/reference_check.hpp"
#include "gpu_session.hpp"

namespace zyfa_gpu_test {

// Relative RMS of O_gpu - O_cpu (over the RMS of O_cpu) allowed on random inputs.
//
// The kernels and the CPU model run the same blocked algorithm with the same fp32 operations in
// the same places (64-key blocks from the sequence start, the same scale folding, P rounded as
// the model rounds it, the same Lean P codes, block exponents and rounded row sum). What differs:
// the order of the sums inside the tensor-core MMAs (S = Q K^T over head_dim, P.V over a block),
// and exp2 / log2 / reciprocal implementations that may differ by an ulp. That moves S and the
// accumulators by about 1e-6 relative, and reaches O in two ways:
//   - directly: ~1e-6 relative, invisible at these bounds;
//   - through a P element lying within that noise of a rounding boundary of P's format, which
//     then rounds the other way and moves by one step: bf16 2^-8, fp16 2^-11, an e4m3 code up to
//     2^-3, a Lean P code 2^(1/8) - 1 = 9%. O's relative change is about step * sqrt(rate).
// FP16 3e-4 and BF16 1e-3 allow such flips on about 1% of P elements. FP8 1e-2 allows them on
// about 1% of elements even with an FP8 tensor-core adder narrower than fp32 (reported for Hopper
// FP8 MMAs); it is still 6-8x under the fp64 tolerances (1/16, 0.085), and the exact-score test
// (p_code_agreement_test.cpp) holds the P codes themselves to zero mismatches.
// The output dtype adds its own flips: a 1e-6 difference before rounding to bf16 (fp16) changes
// a small fraction of elements by one output ulp.
inline double o_tolerance_vs_cpu(zyfa_dtype in, zyfa_dtype out) {
    double tol;
    switch (in) {
        case ZYFA_DTYPE_FP16: tol = 3e-4; break;
        case ZYFA_DTYPE_BF16: tol = 1e-3; break;
        default: tol = 1e-2; break;
    }
    if (out == ZYFA_DTYPE_BF16) tol += 5e-4;
    if (out == ZYFA_DTYPE_FP16) tol += 1e-4;
    return tol;
}

// Largest |lse_gpu - lse_cpu|. EXACT sums unrounded fp32 probabilities: only the score noise
// (at most ~1e-4 relative with a narrow FP8 adder) reaches lse: 1e-3. LEAN sums the rounded
// codes: one flipped code holding a fraction f of the row sum moves lse by ln(1 + 0.09 f); 0.05
// allows a flip of a code holding half the row (a very peaked row).
inline double lse_tolerance_vs_cpu(zyfa_softmax softmax) { return softmax == ZYFA_SOFTMAX_LEAN ? 0.05 : 1e-3; }

struct CpuDiff {
    double rel_rms = 0.0;
    double max_abs = 0.0;
    int64_t bitwise_equal = 0;  // O elements with identical bits
    int64_t elements = 0;
    double lse_max_abs = 0.0;
    int64_t lse_mismatched_infinities = 0;
};

inline CpuDiff compare_with_cpu(const AttentionCase& gpu, const AttentionCase& cpu) {
    CpuDiff d;
    const size_t elem = zyfa::cpu::dtype_size(cpu.shape.out_dtype);
    d.elements = static_cast<int64_t>(cpu.o.size() / elem);
    double err2 = 0.0, ref2 = 0.0;
    for (int64_t i = 0; i < d.elements; ++i) {
        const double a = gpu.out(i), b = cpu.out(i);
        const double diff = a - b;
        err2 += diff * diff;
        ref2 += b * b;
        d.max_abs = std::isnan(diff) ? INFINITY : std::fmax(d.max_abs, std::fabs(diff));
        if (std::memcmp(&gpu.o[static_cast<size_t>(i) * elem], &cpu.o[static_cast<size_t>(i) * elem], elem) == 0)
            ++d.bitwise_equal;
    }
    if (std::isnan(err2)) err2 = INFINITY;
    d.rel_rms = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    if (cpu.shape.with_lse) {
        for (size_t i = 0; i < cpu.lse.size(); ++i) {
            const double a = gpu.lse[i], b = cpu.lse[i];
            if (std::isinf(a) || std::isinf(b) || std::isnan(a)) {
                if (!(a == b)) ++d.lse_mismatched_infinities;
                continue;
            }
            d.lse_max_abs = std::fmax(d.lse_max_abs, std::fabs(a - b));
        }
    }
    return d;
}

// The resolved softmax mode of a shape (AUTO: LEAN for FP8, EXACT otherwise).
inline zyfa_softmax resolved_softmax(const CaseShape& s) {
    if (s.softmax != ZYFA_SOFTMAX_AUTO) return s.softmax;
    return zyfa::cpu::dtype_is_fp8(s.dtype) ? ZYFA_SOFTMAX_LEAN : ZYFA_SOFTMAX_EXACT;
}

// Runs `shape` on the GPU and on the CPU backend, compares the GPU with both the CPU and the fp64
// reference, prints one line of figures, and fails the current CMocka test when a bound is
// exceeded, an output guard band was written, or an element was left unwritten (the sentinel
// shows as a large error or a NaN).
inline void check_gpu_case_unguarded(const CaseShape& shape, const std::string& label, const GpuCase::Edit& edit) {
    Session& s = session();
    GpuCase gpu(*s.runtime, shape, edit);
    const zyfa_status st = gpu.run(s.cuda, *s.runtime, s.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  %-48s zyfa_attn_fwd(CUDA) failed: %s: %s\n", label.c_str(), zyfa_status_string(st),
                    zyfa_last_error_message());
        fail();
    }
    AttentionCase cpu(shape);
    if (edit) edit(cpu);
    run_on_cpu(cpu);

    const zyfa::AttnProblem problem = zyfa::validate_attn(&cpu.params, &cpu.tq, &cpu.tk, &cpu.tv, &cpu.to, ZYFA_BACKEND_CPU);
    const auto ref = zyfa::cpu::attention_reference_fp64(problem);
    const zyfa_test::ErrorStats vs_ref = zyfa_test::compare(gpu.host, ref);
    const zyfa_test::ErrorStats cpu_vs_ref = zyfa_test::compare(cpu, ref);
    const CpuDiff vs_cpu = compare_with_cpu(gpu.host, cpu);

    const zyfa_softmax mode = resolved_softmax(shape);
    const double ref_tol = zyfa_test::o_tolerance(shape.dtype, mode, shape.out_dtype);
    const double ref_lse_tol = zyfa_test::lse_tolerance(mode);
    const double cpu_tol = o_tolerance_vs_cpu(shape.dtype, shape.out_dtype);
    const double cpu_lse_tol = lse_tolerance_vs_cpu(mode);
    const bool guards = gpu.guards_intact();
    std::printf("  %-48s vs fp64: rel_rms %.2e (cpu %.2e, tol %.1e) lse %.1e | vs cpu: rel_rms %.2e (tol %.0e) "
                "max_abs %.1e bitwise %lld/%lld lse %.1e (tol %.0e)%s\n",
                label.c_str(), vs_ref.rel_rms, cpu_vs_ref.rel_rms, ref_tol, vs_ref.lse_max_abs, vs_cpu.rel_rms, cpu_tol,
                vs_cpu.max_abs, static_cast<long long>(vs_cpu.bitwise_equal), static_cast<long long>(vs_cpu.elements),
                vs_cpu.lse_max_abs, cpu_lse_tol, guards ? "" : "  OUTPUT GUARD BAND OVERWRITTEN");
    assert_true(guards);
    assert_true(vs_ref.rel_rms <= ref_tol);
    assert_true(vs_ref.lse_max_abs <= ref_lse_tol);
    assert_int_equal(vs_ref.lse_mismatched_infinities, 0);
    assert_true(vs_cpu.rel_rms <= cpu_tol);
    assert_true(vs_cpu.lse_max_abs <= cpu_lse_tol);
    assert_int_equal(vs_cpu.lse_mismatched_infinities, 0);
}

inline void check_gpu_case(const CaseShape& shape, const std::string& label, const GpuCase::Edit& edit = {}) {
    guarded([&] { check_gpu_case_unguarded(shape, label, edit); });
}

}  // namespace zyfa_gpu_test
