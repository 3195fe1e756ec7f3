// The parameters of the numerics model: key block sizes, the conversion's rounding, the NAIVE
// baseline and LEAN's ablations, run through cpu::attention_blocked directly.
#include <cmath>
#include <cstring>

#include "cpu/attention_blocked.hpp"
#include "reference_check.hpp"

using namespace zyfa_test;
using zyfa::cpu::NumericsModel;
using zyfa::cpu::SoftmaxScheme;

namespace {

struct ModelRun {
    std::vector<uint8_t> o;
    ErrorStats error;
};

ModelRun run_model(AttentionCase& c, const NumericsModel& model) {
    const zyfa::AttnProblem problem = zyfa::validate_attn(&c.params, &c.tq, &c.tk, &c.tv, &c.to, ZYFA_BACKEND_CPU);
    zyfa::cpu::WorkerPool pool(2);
    zyfa::cpu::attention_blocked(problem, model, pool);
    ModelRun run;
    run.o = c.o;
    run.error = compare(c, zyfa::cpu::attention_reference_fp64(problem));
    return run;
}

NumericsModel lean() {
    NumericsModel m;
    m.scheme = SoftmaxScheme::Lean;
    return m;
}

CaseShape fp8_case() {
    CaseShape s;
    s.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    s.softmax = ZYFA_SOFTMAX_LEAN;
    s.seqlen_q = s.seqlen_k = 257;
    s.head_dim_qk = s.head_dim_v = 128;
    return s;
}

void test_key_block_sizes_stay_accurate(void**) {
    for (int block : {16, 32, 64, 128, 256}) {
        AttentionCase c(fp8_case());
        NumericsModel m = lean();
        m.key_block = block;
        const ModelRun r = run_model(c, m);
        std::printf("  key_block %3d: rel_rms %.3e\n", block, r.error.rel_rms);
        assert_true(r.error.rel_rms <= o_tolerance(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, ZYFA_DTYPE_FP32));
    }
}

void test_key_block_changes_the_bits(void**) {
    // Block boundaries decide LEAN's block scales, so a model with another block size is a
    // different kernel: the model must be told the GPU kernel's block to reproduce it.
    AttentionCase a(fp8_case()), b(fp8_case());
    NumericsModel m64 = lean(), m128 = lean();
    m128.key_block = 128;
    assert_true(std::memcmp(run_model(a, m64).o.data(), run_model(b, m128).o.data(), a.o.size()) != 0);
}

void test_truncating_conversion_matches_rounding(void**) {
    // AMD truncates, NVIDIA rounds: with c + 0.5 the truncating model gives the same bits.
    AttentionCase a(fp8_case()), b(fp8_case());
    NumericsModel rne = lean(), trunc = lean();
    trunc.rounding = zyfa::numerics::FloatToIntRounding::TowardZero;
    trunc.lean_centre = zyfa::numerics::lean_p_centre_for(trunc.rounding);
    assert_memory_equal(run_model(a, rne).o.data(), run_model(b, trunc).o.data(), a.o.size());
}

// An attention sink: key 0 scores far above the rest (q all 1.0; key 0 all `sink_value`; other
// keys N(0, 0.25^2), so their scores are ~N(0, 0.25^2) against the sink's hd * sink_value / sqrt(hd)).
CaseShape sink_case() {
    CaseShape s = fp8_case();
    s.mask = ZYFA_MASK_NONE;
    s.seqlen_q = 64;
    s.seqlen_k = 2048;
    s.input_scale = 0.25f;
    return s;
}

void make_sink(AttentionCase& c, float sink_value, float v_shift) {
    const auto f = zyfa::numerics::Fp8Format::E4M3FN;
    for (size_t i = 0; i < c.q.size(); ++i) c.q[i] = zyfa::numerics::fp8_encode(1.0f, f);
    for (int64_t h = 0; h < c.shape.heads_kv; ++h)
        for (int64_t d = 0; d < c.shape.head_dim_qk; ++d)
            c.k[h * c.shape.head_dim_qk + d] = zyfa::numerics::fp8_encode(sink_value, f);
    for (size_t i = 0; i < c.v.size(); ++i)
        c.v[i] = zyfa::numerics::fp8_encode(zyfa::numerics::fp8_decode(c.v[i], f) + v_shift, f);
}

// With sink value 0.75 the sink's score is 8.5 (12.2 in log2) above the rest: 2047 keys each near
// 2^-12 of the maximum, together ~50% of the mass. NAIVE rounds 2^-12 to zero (e4m3's smallest
// subnormal is 2^-9) yet counts it in the denominator, so with V of non-zero mean its O is far
// off; EXACT (x 2^8) and LEAN (block scaled) keep those probabilities.
void test_lean_beats_naive_on_a_sink(void**) {
    AttentionCase a(sink_case()), b(sink_case()), e(sink_case());
    make_sink(a, 0.75f, 1.0f);
    make_sink(b, 0.75f, 1.0f);
    make_sink(e, 0.75f, 1.0f);
    NumericsModel naive;
    naive.scheme = SoftmaxScheme::Naive;
    NumericsModel exact;
    exact.scheme = SoftmaxScheme::Exact;
    const double err_naive = run_model(a, naive).error.rel_rms;
    const ModelRun run_exact = run_model(e, exact), run_lean = run_model(b, lean());
    const double err_exact = run_exact.error.rel_rms, err_lean = run_lean.error.rel_rms;
    std::printf("  sink: NAIVE %.3e  EXACT %.3e  LEAN %.3e; max |lse - exact lse|: EXACT %.2e, LEAN %.2e\n",
                err_naive, err_exact, err_lean, run_exact.error.lse_max_abs, run_lean.error.lse_max_abs);
    assert_true(run_lean.error.lse_max_abs < 0.0845);  // the bound of test_lean_lse_reaches_its_bound
    assert_true(err_naive > 0.1);
    assert_true(err_lean < 0.1 * err_naive);
    assert_true(err_exact < 0.1 * err_naive);
}

// Sink value 1.0: the rest sit near 2^-16 of the maximum, below what 2^8 scaling keeps normal in
// e4m3 (2^-14); only LEAN's per-block scaling keeps them.
void test_ablations_change_the_result(void**) {
    AttentionCase full(sink_case()), no_scale(sink_case()), no_rowsum(sink_case());
    make_sink(full, 1.0f, 1.0f);
    make_sink(no_scale, 1.0f, 1.0f);
    make_sink(no_rowsum, 1.0f, 1.0f);
    NumericsModel m_no_scale = lean(), m_no_rowsum = lean();
    m_no_scale.block_scaling = false;
    m_no_rowsum.rounded_row_sum = false;
    const ModelRun r_full = run_model(full, lean());
    const ModelRun r_no_scale = run_model(no_scale, m_no_scale);
    const ModelRun r_no_rowsum = run_model(no_rowsum, m_no_rowsum);
    std::printf("  sink LEAN %.3e, without block scaling %.3e, without rounded row sum %.3e\n",
                r_full.error.rel_rms, r_no_scale.error.rel_rms, r_no_rowsum.error.rel_rms);
    assert_true(std::memcmp(r_full.o.data(), r_no_scale.o.data(), r_full.o.size()) != 0);
    assert_true(std::memcmp(r_full.o.data(), r_no_rowsum.o.data(), r_full.o.size()) != 0);
    assert_true(r_full.error.rel_rms < r_no_scale.error.rel_rms);
}

// LEAN's lse is the log of its rounded row sum, the decoded Lean P codes times their block scales.
// Each normal code reads back 0.9195x to 1.0635x the exact probability (the linear-mantissa law,
// c and the code's rounding together; worst at x = -0.879 and -0.504 in log2 below the block's
// scale point, periodic per octave), so LEAN lse - exact lse lies in [ln 0.9195, ln 1.0635] =
// [-0.0840, +0.0616], plus a few 1e-3 at most from probabilities more than 2^15 below their
// block's maximum (subnormal codes, or flushed). Rows whose keys, all but the maximum, sit where
// the code rounds worst reach the ends: the documented figures (docs/api.md, lse) are these.
void test_lean_lse_reaches_its_bound(void**) {
    const struct {
        double x;           // log2 of every non-maximum key's probability relative to the maximum
        double lo, hi;      // where lse - exact lse must land
    } rows[] = {{-0.88, -0.0840, -0.080}, {-0.503, 0.058, 0.0616}};
    for (const auto& row : rows) {
        CaseShape s = fp8_case();
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = 1;
        s.seqlen_k = 2048;
        s.heads_q = s.heads_kv = 1;
        s.head_dim_qk = s.head_dim_v = 16;
        AttentionCase c(s);
        const auto f = zyfa::numerics::Fp8Format::E4M3FN;
        const float key = -0.875f;  // exact in e4m3; softmax_scale maps it to x
        std::fill(c.q.begin(), c.q.end(), uint8_t{0});
        c.q[0] = zyfa::numerics::fp8_encode(1.0f, f);  // q = e_0: the score is k[0] times the scale
        std::fill(c.k.begin(), c.k.end(), uint8_t{0});  // key 0 scores 0: the maximum
        for (int64_t j = 1; j < s.seqlen_k; ++j) c.k[static_cast<size_t>(j * s.head_dim_qk)] = zyfa::numerics::fp8_encode(key, f);
        c.params.softmax_scale = static_cast<float>(row.x / key * std::log(2.0));
        const ModelRun r = run_model(c, lean());
        const zyfa::AttnProblem problem = zyfa::validate_attn(&c.params, &c.tq, &c.tk, &c.tv, &c.to, ZYFA_BACKEND_CPU);
        const double exact = zyfa::cpu::attention_reference_fp64(problem).lse[0];
        const double diff = static_cast<double>(c.lse[0]) - exact;
        std::printf("  keys at x = %+.3f: LEAN lse - exact lse = %+.5f\n", row.x, diff);
        assert_true(diff >= row.lo && diff <= row.hi);
        assert_true(r.error.rel_rms < 0.1);  // O is normalised by the same sum: still accurate
    }
}

}  // namespace

// The two studies of where LEAN's error comes from (NumericsModel::lean_exact_p_from,
// lean_fractional_block_exponent; docs/accuracy.md): their defaults, and a threshold above every
// probability (t <= 0), leave LEAN's bits alone; on Gaussian scores, where LEAN's only loss is the
// Lean P law (1.19x EXACT), replacing every code by exp2 + RNE removes that loss; each block's
// maximum on a power of two changes the bits and stays within LEAN's tolerance.
void test_lean_error_studies(void**) {
    AttentionCase base(fp8_case()), above(fp8_case()), all_exact(fp8_case()), exact_case(fp8_case()),
        fractional(fp8_case());
    NumericsModel m_above = lean(), m_all_exact = lean(), m_fractional = lean(), exact;
    m_above.lean_exact_p_from = 0.5f;
    m_all_exact.lean_exact_p_from = -INFINITY;
    m_fractional.lean_fractional_block_exponent = true;
    exact.scheme = SoftmaxScheme::Exact;
    const ModelRun r_lean = run_model(base, lean()), r_above = run_model(above, m_above);
    const ModelRun r_all = run_model(all_exact, m_all_exact), r_exact = run_model(exact_case, exact);
    const ModelRun r_fractional = run_model(fractional, m_fractional);
    std::printf("  gaussian: LEAN %.3e, LEAN with exp2+RNE codes %.3e, EXACT %.3e, fractional block exponent %.3e\n",
                r_lean.error.rel_rms, r_all.error.rel_rms, r_exact.error.rel_rms, r_fractional.error.rel_rms);
    assert_memory_equal(r_lean.o.data(), r_above.o.data(), r_lean.o.size());
    assert_true(r_all.error.rel_rms < r_lean.error.rel_rms);
    assert_true(r_all.error.rel_rms < 1.05 * r_exact.error.rel_rms);
    assert_true(std::memcmp(r_lean.o.data(), r_fractional.o.data(), r_lean.o.size()) != 0);
    assert_true(r_fractional.error.rel_rms <= o_tolerance(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, ZYFA_DTYPE_FP32));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_block_sizes_stay_accurate),
        cmocka_unit_test(test_key_block_changes_the_bits),
        cmocka_unit_test(test_truncating_conversion_matches_rounding),
        cmocka_unit_test(test_lean_beats_naive_on_a_sink),
        cmocka_unit_test(test_lean_lse_reaches_its_bound),
        cmocka_unit_test(test_ablations_change_the_result),
        cmocka_unit_test(test_lean_error_studies),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
