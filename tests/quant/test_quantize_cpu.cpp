// cpu::quantize_fp8 directly (INTERNAL): round-trip error bounds, the amax -> max code mapping,
// descales, e4m3fnuz, strided and varlen layouts, rejection of non-finite inputs without writing,
// reproducibility across thread counts, the Hadamard rotation's effect on the error, and K
// smoothing (ZYFA_QUANT_SMOOTH): its means against fp64, the round trip of x - mean alone and
// with the rotation, and what it buys on keys with a shared bias.
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
// cmocka 1.1 declares its functions without extern "C".
extern "C" {
#include <cmocka.h>
}

#include <cmath>
#include <cstring>
#include <vector>

#include "common/fp8_e4m3.h"
#include "common/hadamard.h"
#include "core/errors.hpp"
#include "core/problem.hpp"
#include "cpu/quantize_fp8.hpp"
#include "cpu/tensor_access.hpp"
#include "cpu/worker_pool.hpp"
#include "quant_test_util.hpp"

using zyfa::QuantProblem;
using zyfa::cpu::WorkerPool;
namespace numerics = zyfa::numerics;

namespace {

constexpr uint8_t kSentinel = 0xA5;       // a code the quantiser never writes outside its rows
constexpr float kDescaleSentinel = -7.0f;  // never a valid descale

// A [batch, seq, heads, head_dim] input (fixed or packed varlen) with padding between heads, so that
// the strides are not the dense ones, plus the output buffers the quantiser fills.
struct QuantCase {
    int64_t batch = 1, seqlen = 1, heads = 1, head_dim = 64;
    zyfa_dtype in_dtype = ZYFA_DTYPE_FP32;
    zyfa_dtype out_dtype = ZYFA_DTYPE_FP8_E4M3FN;
    bool hadamard = false;
    bool smooth = false;
    std::vector<int32_t> cu_seqlens;  // empty = fixed length
    int64_t head_pad = 3;             // extra elements after each head's dims

    int64_t rows() const { return cu_seqlens.empty() ? batch * seqlen : cu_seqlens.back(); }
    int64_t stride_head() const { return head_dim + head_pad; }
    int64_t stride_seq() const { return heads * stride_head(); }
    int64_t stride_batch() const { return cu_seqlens.empty() ? seqlen * stride_seq() : 0; }
    int64_t elements() const { return rows() * stride_seq(); }
    // Packed row of (b, s): b * seqlen + s, or cu_seqlens[b] + s.
    int64_t row(int64_t b, int64_t s) const { return cu_seqlens.empty() ? b * seqlen + s : cu_seqlens[b] + s; }
    int64_t len(int64_t b) const { return cu_seqlens.empty() ? seqlen : cu_seqlens[b + 1] - cu_seqlens[b]; }
    int64_t index(int64_t row, int64_t h, int64_t d) const { return row * stride_seq() + h * stride_head() + d; }
    numerics::Fp8Format format() const { return zyfa::cpu::fp8_format_of(out_dtype); }
};

struct QuantRun {
    QuantCase shape;
    std::vector<uint8_t> input_bytes;
    std::vector<float> input;  // the stored input decoded to fp32, by element index (what the quantiser reads)
    std::vector<uint8_t> codes;
    std::vector<float> descale;
    std::vector<float> mean;  // [batch, heads, head_dim], written only when smoothing

    explicit QuantRun(const QuantCase& c)
        : shape(c),
          input_bytes(static_cast<size_t>(c.elements()) * zyfa::cpu::dtype_size(c.in_dtype), 0),
          input(static_cast<size_t>(c.elements()), 0.0f),
          codes(static_cast<size_t>(c.elements()), kSentinel),
          descale(static_cast<size_t>(c.batch * c.heads), kDescaleSentinel),
          mean(static_cast<size_t>(c.batch * c.heads * c.head_dim), kDescaleSentinel) {}

    void set(int64_t row, int64_t h, int64_t d, float value) {
        const int64_t i = shape.index(row, h, d);
        zyfa::cpu::store_from_float(input_bytes.data(), shape.in_dtype, i, value);
        input[static_cast<size_t>(i)] = zyfa::cpu::load_as_float(input_bytes.data(), shape.in_dtype, i);
    }
    void fill_normal(uint64_t seed, float sigma = 1.0f) {
        quant_test::NormalRng rng(seed);
        for (int64_t r = 0; r < shape.rows(); ++r)
            for (int64_t h = 0; h < shape.heads; ++h)
                for (int64_t d = 0; d < shape.head_dim; ++d) set(r, h, d, sigma * rng.normal());
    }
    float in(int64_t row, int64_t h, int64_t d) const { return input[static_cast<size_t>(shape.index(row, h, d))]; }
    uint8_t code(int64_t row, int64_t h, int64_t d) const { return codes[static_cast<size_t>(shape.index(row, h, d))]; }
    double decoded(int64_t row, int64_t h, int64_t d, int64_t b) const {
        return static_cast<double>(numerics::fp8_decode(code(row, h, d), shape.format())) *
               descale[static_cast<size_t>(b * shape.heads + h)];
    }
    float mean_of(int64_t b, int64_t h, int64_t d) const {
        return mean[static_cast<size_t>((b * shape.heads + h) * shape.head_dim + d)];
    }

    QuantProblem problem() {
        QuantProblem p;
        p.hadamard = shape.hadamard;
        p.smooth = shape.smooth;
        p.smooth_mean = shape.smooth ? mean.data() : nullptr;
        p.batch = shape.batch;
        p.seqlen = shape.seqlen;
        p.heads = shape.heads;
        p.head_dim = shape.head_dim;
        p.cu_seqlens = shape.cu_seqlens.empty() ? nullptr : shape.cu_seqlens.data();
        p.in = zyfa::TensorView{input_bytes.data(), shape.in_dtype, shape.stride_batch(), shape.stride_seq(),
                                shape.stride_head()};
        p.out = zyfa::TensorView{codes.data(), shape.out_dtype, shape.stride_batch(), shape.stride_seq(),
                                 shape.stride_head()};
        p.descale = descale.data();
        return p;
    }
    void run(int threads = 2) {
        WorkerPool pool(threads);
        zyfa::cpu::quantize_fp8(problem(), pool);
    }
    // Runs and returns the status of the zyfa::Error thrown, or ZYFA_SUCCESS.
    zyfa_status run_status() {
        try {
            run();
        } catch (const zyfa::Error& e) {
            return e.status();
        }
        return ZYFA_SUCCESS;
    }

    // amax of the (b, h) slice of the stored input, in fp64.
    double slice_amax(int64_t b, int64_t h) const {
        double amax = 0.0;
        for (int64_t s = 0; s < shape.len(b); ++s)
            for (int64_t d = 0; d < shape.head_dim; ++d)
                amax = std::fmax(amax, std::fabs(static_cast<double>(in(shape.row(b, s), h, d))));
        return amax;
    }
};

// Every element of every slice: |decoded * descale - x| within half an e4m3 quantum at x's scaled
// magnitude, times the descale; the relative RMS error is small.
void check_round_trip(const QuantRun& run) {
    const QuantCase& c = run.shape;
    const int bias = numerics::fp8_bias(c.format());
    const double fp8_max = numerics::fp8_max(c.format());
    std::vector<double> approx, exact;
    for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t h = 0; h < c.heads; ++h) {
            const double amax = run.slice_amax(b, h);
            const double descale = run.descale[static_cast<size_t>(b * c.heads + h)];
            for (int64_t s = 0; s < c.len(b); ++s) {
                for (int64_t d = 0; d < c.head_dim; ++d) {
                    const int64_t r = c.row(b, s);
                    const double x = run.in(r, h, d);
                    const double got = run.decoded(r, h, d, b);
                    const double scaled = std::fabs(x) * fp8_max / amax;
                    // fp32 rounding of x * scale and of the descale adds a few 2^-24 of |x|: 1e-6 |x| covers it.
                    const double bound = quant_test::e4m3_half_quantum(scaled, bias) * descale + 1e-6 * std::fabs(x);
                    assert_true(std::fabs(got - x) <= bound);
                    approx.push_back(got);
                    exact.push_back(x);
                }
            }
        }
    }
    // 3 mantissa bits: the relative rounding error of a normal e4m3 value is uniform in at most
    // +-2^-4, RMS about 2^-4/sqrt(3) = 3.6% at worst; normal data sit near 2.5-3%. 0.04 allows that.
    assert_true(quant_test::relative_rms(approx, exact) < 0.04);
}

void test_round_trip_fp32_to_e4m3fn(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 2, c.seqlen = 37, c.heads = 3, c.head_dim = 128;
    QuantRun run(c);
    run.fill_normal(11);
    run.run();
    check_round_trip(run);
}

void test_round_trip_bf16_and_fp16(void** state) {
    (void)state;
    const zyfa_dtype dtypes[] = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16};
    for (zyfa_dtype dtype : dtypes) {
        QuantCase c;
        c.batch = 1, c.seqlen = 50, c.heads = 4, c.head_dim = 64, c.in_dtype = dtype;
        QuantRun run(c);
        run.fill_normal(12 + static_cast<uint64_t>(dtype), 0.3f);
        run.run();
        check_round_trip(run);
    }
}

void test_round_trip_e4m3fnuz(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 2, c.seqlen = 20, c.heads = 2, c.head_dim = 64, c.out_dtype = ZYFA_DTYPE_FP8_E4M3FNUZ;
    QuantRun run(c);
    run.fill_normal(13);
    run.set(3, 1, 5, -0.0f);  // a negative zero must become 0x00: fnuz's 0x80 is NaN
    run.run();
    check_round_trip(run);
    for (int64_t r = 0; r < c.rows(); ++r)
        for (int64_t h = 0; h < c.heads; ++h)
            for (int64_t d = 0; d < c.head_dim; ++d) assert_int_not_equal(run.code(r, h, d), 0x80);
    assert_int_equal(run.code(3, 1, 5), 0x00);
}

// The largest magnitude of each slice becomes exactly +-max code, and descale = amax / fp8_max in fp32.
void test_amax_element_maps_to_max_code(void** state) {
    (void)state;
    const zyfa_dtype formats[] = {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_FP8_E4M3FNUZ};
    for (zyfa_dtype out : formats) {
        QuantCase c;
        c.batch = 2, c.seqlen = 9, c.heads = 3, c.head_dim = 32, c.out_dtype = out;
        QuantRun run(c);
        run.fill_normal(14);
        // Slice (1, 2) peaks at a negative value; slice (0, 0) at an awkward non-power-of-two magnitude.
        run.set(c.row(1, 4), 2, 7, -1234.5f);
        run.set(c.row(0, 8), 0, 31, 3.14159f);
        run.run();
        const numerics::Fp8Format f = c.format();
        const uint8_t max_code = numerics::fp8_max_code(f);
        for (int64_t b = 0; b < c.batch; ++b) {
            for (int64_t h = 0; h < c.heads; ++h) {
                const float amax = static_cast<float>(run.slice_amax(b, h));
                assert_true(run.descale[static_cast<size_t>(b * c.heads + h)] == amax / numerics::fp8_max(f));
                int at_max = 0;
                for (int64_t s = 0; s < c.len(b); ++s) {
                    for (int64_t d = 0; d < c.head_dim; ++d) {
                        const float x = run.in(c.row(b, s), h, d);
                        if (std::fabs(x) != amax) continue;
                        ++at_max;
                        assert_int_equal(run.code(c.row(b, s), h, d), (x < 0 ? 0x80 : 0x00) | max_code);
                    }
                }
                assert_true(at_max >= 1);
            }
        }
    }
}

void test_all_zero_slice_gets_descale_one(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 1, c.seqlen = 6, c.heads = 2, c.head_dim = 16;
    QuantRun run(c);
    run.fill_normal(15);
    for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t d = 0; d < c.head_dim; ++d) run.set(s, 1, d, (d & 1) ? -0.0f : 0.0f);
    run.run();
    assert_true(run.descale[1] == 1.0f);
    assert_true(run.descale[0] != 1.0f && run.descale[0] > 0.0f);
    for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t d = 0; d < c.head_dim; ++d) assert_true(numerics::fp8_decode(run.code(s, 1, d), c.format()) == 0.0f);
}

// Packed sequences of lengths 5, 0, 7, 0: rows land where cu_seqlens says, empty sequences get
// descale 1, padding between heads is never written.
void test_varlen_with_empty_sequences(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 4, c.seqlen = 7, c.heads = 2, c.head_dim = 64;
    c.cu_seqlens = {0, 5, 5, 12, 12};
    c.in_dtype = ZYFA_DTYPE_BF16;
    QuantRun run(c);
    run.fill_normal(16);
    // Make the sequences' scales differ a lot, so that a row read from the wrong sequence shows.
    for (int64_t s = 0; s < 7; ++s)
        for (int64_t d = 0; d < c.head_dim; ++d) run.set(c.row(2, s), 0, d, 100.0f * run.in(c.row(2, s), 0, d));
    run.run();
    check_round_trip(run);
    assert_true(run.descale[1 * 2 + 0] == 1.0f && run.descale[1 * 2 + 1] == 1.0f);
    assert_true(run.descale[3 * 2 + 0] == 1.0f && run.descale[3 * 2 + 1] == 1.0f);
    assert_true(run.descale[2 * 2 + 0] > 50.0f * run.descale[0 * 2 + 0]);
    for (int64_t r = 0; r < c.rows(); ++r)
        for (int64_t h = 0; h < c.heads; ++h)
            for (int64_t d = c.head_dim; d < c.stride_head(); ++d) assert_int_equal(run.code(r, h, d), kSentinel);
}

// The slice amax is over every row and dim: changing one element of one row rescales its whole
// slice and nothing else.
void test_amax_spans_the_whole_slice(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 2, c.seqlen = 16, c.heads = 2, c.head_dim = 32;
    QuantRun base(c);
    base.fill_normal(17);
    QuantRun bumped = base;
    bumped.set(c.row(1, 15), 0, 0, 1000.0f);
    base.run();
    bumped.run();
    for (int64_t i = 0; i < 4; ++i) {
        if (i == 1 * 2 + 0) assert_true(bumped.descale[2] == 1000.0f / 448.0f);
        else assert_true(bumped.descale[static_cast<size_t>(i)] == base.descale[static_cast<size_t>(i)]);
    }
}

void test_non_finite_input_is_rejected_and_nothing_written(void** state) {
    (void)state;
    const float bad_values[] = {NAN, INFINITY, -INFINITY};
    const zyfa_dtype dtypes[] = {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16};
    for (zyfa_dtype dtype : dtypes) {
        for (float bad : bad_values) {
            QuantCase c;
            c.batch = 3, c.seqlen = 8, c.heads = 2, c.head_dim = 64, c.in_dtype = dtype;
            QuantRun run(c);
            run.fill_normal(18);
            run.set(c.row(2, 7), 1, 63, bad);  // the very last slice: earlier ones must not be written either
            assert_int_equal(run.run_status(), ZYFA_ERROR_INVALID_ARGUMENT);
            for (uint8_t code : run.codes) assert_int_equal(code, kSentinel);
            for (float d : run.descale) assert_true(d == kDescaleSentinel);
        }
    }
}

void test_hadamard_overflow_is_rejected(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 1, c.seqlen = 2, c.heads = 1, c.head_dim = 64, c.hadamard = true;
    QuantRun run(c);
    run.fill_normal(19);
    // Finite, but their sum in the first butterfly is not representable in fp32.
    run.set(1, 0, 0, 3.0e38f);
    run.set(1, 0, 1, 3.0e38f);
    assert_int_equal(run.run_status(), ZYFA_ERROR_INVALID_ARGUMENT);
    for (uint8_t code : run.codes) assert_int_equal(code, kSentinel);
    assert_true(run.descale[0] == kDescaleSentinel);
}

void test_tiny_amax_still_reaches_max_code(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 1, c.seqlen = 4, c.heads = 1, c.head_dim = 16;
    QuantRun run(c);
    // fp8_max / amax overflows fp32 for amax below ~1.3e-36; the quantiser must still scale exactly.
    for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t d = 0; d < c.head_dim; ++d) run.set(s, 0, d, 1e-37f * static_cast<float>(d - 8) / 8.0f);
    run.run();
    assert_int_equal(run.code(0, 0, 0), 0x80 | numerics::fp8_max_code(c.format()));  // -1e-37 is the amax
    for (int64_t d = 0; d < c.head_dim; ++d) assert_false(numerics::fp8_is_nan(run.code(1, 0, d), c.format()));
    assert_true(run.descale[0] > 0.0f && std::isfinite(run.descale[0]));
}

void test_bitwise_reproducible_across_thread_counts(void** state) {
    (void)state;
    for (bool smooth : {false, true}) {
        QuantCase c;
        c.batch = 3, c.seqlen = 33, c.heads = 5, c.head_dim = 128, c.hadamard = true, c.smooth = smooth;
        QuantRun one(c);
        one.fill_normal(20);
        QuantRun many = one;
        one.run(1);
        many.run(4);
        assert_memory_equal(one.codes.data(), many.codes.data(), one.codes.size());
        assert_memory_equal(one.descale.data(), many.descale.data(), one.descale.size() * sizeof(float));
        assert_memory_equal(one.mean.data(), many.mean.data(), one.mean.size() * sizeof(float));
    }
}

// ---- K smoothing (ZYFA_QUANT_SMOOTH) ------------------------------------------------------------

// A per-(head, channel) offset shared by every row, as real keys carry: scale * (1 + (d % 5)) with
// the sign of (-1)^(d + h).
void add_channel_bias(QuantRun& run, float scale) {
    const QuantCase& c = run.shape;
    for (int64_t r = 0; r < c.rows(); ++r)
        for (int64_t h = 0; h < c.heads; ++h)
            for (int64_t d = 0; d < c.head_dim; ++d) {
                const float bias = scale * static_cast<float>(1 + d % 5) * (((d + h) & 1) ? -1.0f : 1.0f);
                run.set(r, h, d, run.in(r, h, d) + bias);
            }
}

// Reconstruction in the original basis: H (decoded * descale), H being its own inverse, plus the
// subtracted mean when smoothing, in fp64.
std::vector<double> reconstruct_row(const QuantRun& run, int64_t b, int64_t r, int64_t h) {
    const int64_t n = run.shape.head_dim;
    std::vector<double> y(static_cast<size_t>(n));
    for (int64_t d = 0; d < n; ++d) y[static_cast<size_t>(d)] = run.decoded(r, h, d, b);
    std::vector<double> x = y;
    if (run.shape.hadamard) {
        const int64_t block = numerics::hadamard_block_size(n);
        x.assign(static_cast<size_t>(n), 0.0);
        for (int64_t start = 0; start < n; start += block)
            for (int64_t i = 0; i < block; ++i)
                for (int64_t j = 0; j < block; ++j) {
                    const double sign = (__builtin_popcountll(static_cast<unsigned long long>(i & j)) & 1) ? -1.0 : 1.0;
                    x[static_cast<size_t>(start + i)] += sign * y[static_cast<size_t>(start + j)] / std::sqrt(static_cast<double>(block));
                }
    }
    if (run.shape.smooth)
        for (int64_t d = 0; d < n; ++d) x[static_cast<size_t>(d)] += run.mean_of(b, h, d);
    return x;
}

// One row's squared reconstruction error and squared norm, in fp64.
struct RowError {
    double err2 = 0.0, norm2 = 0.0;
};
RowError row_error(const QuantRun& run, int64_t b, int64_t r, int64_t h) {
    const std::vector<double> x_hat = reconstruct_row(run, b, r, h);
    RowError e;
    for (int64_t d = 0; d < run.shape.head_dim; ++d) {
        const double x = run.in(r, h, d);
        const double diff = x_hat[static_cast<size_t>(d)] - x;
        e.err2 += diff * diff;
        e.norm2 += x * x;
    }
    return e;
}

// With the rotation, each row's reconstruction error (a norm, which the rotation preserves) stays
// within the e4m3 bound of the rotated values; 128 and the block-diagonal 192; without and with
// K smoothing first (then the mean is added back after the inverse rotation).
void test_hadamard_round_trip(void** state) {
    (void)state;
    const int64_t dims[] = {128, 192};
    for (bool smooth : {false, true})
    for (int64_t n : dims) {
        QuantCase c;
        c.batch = 2, c.seqlen = 10, c.heads = 2, c.head_dim = n, c.hadamard = true, c.smooth = smooth;
        QuantRun run(c);
        run.fill_normal(21 + static_cast<uint64_t>(n));
        if (smooth) add_channel_bias(run, 3.0f);
        run.run();
        const int bias = numerics::fp8_bias(c.format());
        for (int64_t b = 0; b < c.batch; ++b) {
            for (int64_t h = 0; h < c.heads; ++h) {
                const double descale = run.descale[static_cast<size_t>(b * c.heads + h)];
                for (int64_t s = 0; s < c.seqlen; ++s) {
                    const int64_t r = c.row(b, s);
                    const RowError e = row_error(run, b, r, h);
                    double bound2 = 0.0;
                    for (int64_t d = 0; d < n; ++d) {
                        // The code's own magnitude, nudged up by 2^-20 relative, picks the binade of the
                        // rotated value (it may have rounded up into the next one: then this over-estimates).
                        const double scaled = std::fabs(numerics::fp8_decode(run.code(r, h, d), c.format())) * (1.0 + 0x1p-20);
                        const double q = quant_test::e4m3_half_quantum(scaled, bias) * descale;
                        bound2 += q * q;
                    }
                    // fp32 rotation and scaling add a few 2^-24 of the row norm: 1e-5 * ||x|| covers them.
                    assert_true(std::sqrt(e.err2) <= std::sqrt(bound2) + 1e-5 * std::sqrt(e.norm2));
                }
            }
        }
    }
}

// Mean over rows of each row's relative RMS reconstruction error. Attention consumes every token's
// vector through dot products, so the error relative to that token's own norm is what matters.
double mean_row_relative_error(const QuantRun& run) {
    const QuantCase& c = run.shape;
    double total = 0.0;
    int64_t count = 0;
    for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t h = 0; h < c.heads; ++h)
            for (int64_t s = 0; s < c.len(b); ++s) {
                const RowError e = row_error(run, b, c.row(b, s), h);
                total += std::sqrt(e.err2 / e.norm2);
                ++count;
            }
    return total / static_cast<double>(count);
}

// Outlier-heavy input, like LLM activations with "massive activation" tokens: normal(0, 1) except
// two tokens per head whose channels 3 and 70 hold +1e5 and -1e5. Without the rotation the per-head
// amax is 1e5, so the ordinary tokens scale to ~0.0045, deep in the e4m3 subnormals (quantum 2^-9),
// and keep ~2 significant bits. The rotation spreads each outlier over 128 channels (amax about
// 2e5 / sqrt(128)), which puts the ordinary tokens back into the normal range. (Where no value is
// pushed towards the subnormals the rotation buys a floating-point format little: its relative
// precision does not depend on the scale.)
void test_hadamard_reduces_error_on_outliers(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 1, c.seqlen = 256, c.heads = 2, c.head_dim = 128, c.in_dtype = ZYFA_DTYPE_BF16;
    QuantRun plain(c);
    plain.fill_normal(22);
    const int64_t outlier_tokens[] = {0, 97};
    const int64_t outlier_channels[] = {3, 70};
    for (int64_t h = 0; h < c.heads; ++h)
        for (int64_t t : outlier_tokens)
            for (int64_t ch : outlier_channels) plain.set(t, h, ch, (ch == 3 ? 1.0e5f : -1.0e5f));
    QuantRun rotated = plain;
    rotated.shape.hadamard = true;
    plain.run();
    rotated.run();
    const double plain_error = mean_row_relative_error(plain);
    const double rotated_error = mean_row_relative_error(rotated);
    print_message("mean row relative error: without Hadamard %.4f, with %.4f\n", plain_error, rotated_error);
    // The rotation must at least halve it on this input (it is many times smaller, see above).
    assert_true(rotated_error < 0.5 * plain_error);
    // And it stays a sane FP8 error: each row within ~3 mantissa bits.
    assert_true(rotated_error < 0.06);
}

// Every mean against the fp64 mean of the stored inputs: within half an fp32 ulp plus the fp64
// rounding of either sum (a few 2^-53 of sum |x| per row; 2^-48 of mean |x| is far above it and
// far below what an fp32 accumulation would err, ~rows * 2^-24). Empty sequences get exactly 0.
void test_smooth_mean_matches_fp64(void** state) {
    (void)state;
    for (int varlen = 0; varlen < 2; ++varlen) {
        QuantCase c;
        // fp32 inputs: sums of bf16 values would often be exact in fp32 too and hide a wrong accumulator.
        c.batch = 4, c.seqlen = 301, c.heads = 3, c.head_dim = 64, c.smooth = true;
        if (varlen) c.cu_seqlens = {0, 301, 301, 420, 421};  // lengths 301, 0, 119, 1
        QuantRun run(c);
        run.fill_normal(40);
        add_channel_bias(run, 2.5f);
        run.run();
        for (int64_t b = 0; b < c.batch; ++b)
            for (int64_t h = 0; h < c.heads; ++h)
                for (int64_t d = 0; d < c.head_dim; ++d) {
                    double sum = 0.0, sum_abs = 0.0;
                    for (int64_t s = 0; s < c.len(b); ++s) {
                        sum += run.in(c.row(b, s), h, d);
                        sum_abs += std::fabs(run.in(c.row(b, s), h, d));
                    }
                    const float got = run.mean_of(b, h, d);
                    if (c.len(b) == 0) {
                        assert_true(got == 0.0f && !std::signbit(got));
                        continue;
                    }
                    const double want = sum / static_cast<double>(c.len(b));
                    const double bound = 0x1p-24 * std::fabs(want) + 0x1p-48 * sum_abs / static_cast<double>(c.len(b));
                    assert_true(std::fabs(static_cast<double>(got) - want) <= bound);
                }
    }
}

// The codes hold x - mean: every element dequantises to fl(x - mean) within half an e4m3 quantum at
// its scaled magnitude (times the descale), descale = amax(x - mean) / fp8_max exactly, and adding
// the mean back gives x within that bound plus the fp32 rounding of the subtraction.
void test_smooth_round_trip(void** state) {
    (void)state;
    const zyfa_dtype formats[] = {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_FP8_E4M3FNUZ};
    for (zyfa_dtype out : formats) {
        QuantCase c;
        c.batch = 2, c.seqlen = 29, c.heads = 2, c.head_dim = 96, c.smooth = true, c.out_dtype = out;
        QuantRun run(c);
        run.fill_normal(41);
        add_channel_bias(run, 4.0f);
        run.run();
        const int bias = numerics::fp8_bias(c.format());
        const double fp8_max = numerics::fp8_max(c.format());
        for (int64_t b = 0; b < c.batch; ++b) {
            for (int64_t h = 0; h < c.heads; ++h) {
                float amax = 0.0f;
                for (int64_t s = 0; s < c.len(b); ++s)
                    for (int64_t d = 0; d < c.head_dim; ++d)
                        amax = std::fmax(amax, std::fabs(run.in(c.row(b, s), h, d) - run.mean_of(b, h, d)));
                const double descale = run.descale[static_cast<size_t>(b * c.heads + h)];
                assert_true(static_cast<float>(descale) == amax / static_cast<float>(fp8_max));
                for (int64_t s = 0; s < c.len(b); ++s) {
                    for (int64_t d = 0; d < c.head_dim; ++d) {
                        const int64_t r = c.row(b, s);
                        const float x = run.in(r, h, d);
                        const float y = x - run.mean_of(b, h, d);  // what the quantiser encodes
                        const double got = run.decoded(r, h, d, b);
                        const double scaled = std::fabs(static_cast<double>(y)) * fp8_max / amax;
                        const double bound = quant_test::e4m3_half_quantum(scaled, bias) * descale + 1e-6 * std::fabs(y);
                        assert_true(std::fabs(got - y) <= bound);
                        const double back = got + run.mean_of(b, h, d);
                        assert_true(std::fabs(back - x) <= bound + 0x1p-23 * std::fabs(y));
                    }
                }
            }
        }
    }
}

// What smoothing is for: keys whose channels carry an offset shared by every token (4-20 sigma
// here). Without it the slice's amax is the offset's and each element keeps e4m3's 2^-4 of the
// offset; with it only the token-dependent part is quantised. The RMS reconstruction error of K
// (what q.k sees, the mean included) must drop by more than 3x (it drops ~10x).
void test_smooth_cuts_error_on_biased_keys(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 1, c.seqlen = 128, c.heads = 2, c.head_dim = 128, c.in_dtype = ZYFA_DTYPE_BF16;
    QuantRun plain(c);
    plain.fill_normal(42);
    add_channel_bias(plain, 4.0f);
    QuantRun smoothed = plain;
    smoothed.shape.smooth = true;
    plain.run();
    smoothed.run();
    auto rms_error = [&](const QuantRun& run) {
        double err2 = 0.0;
        int64_t count = 0;
        for (int64_t h = 0; h < c.heads; ++h)
            for (int64_t s = 0; s < c.seqlen; ++s) {
                err2 += row_error(run, 0, s, h).err2;
                count += c.head_dim;
            }
        return std::sqrt(err2 / static_cast<double>(count));
    };
    const double plain_error = rms_error(plain), smoothed_error = rms_error(smoothed);
    print_message("RMS reconstruction error of biased K: plain %.4f, smoothed %.4f\n", plain_error, smoothed_error);
    assert_true(smoothed_error < plain_error / 3.0);
}

// A slice whose rows are all equal: the mean is that row exactly, nothing is left to quantise
// (codes 0, descale 1), and the reconstruction is exact.
void test_smooth_constant_slice(void** state) {
    (void)state;
    QuantCase c;
    c.batch = 1, c.seqlen = 23, c.heads = 2, c.head_dim = 32, c.smooth = true, c.hadamard = true;
    QuantRun run(c);
    run.fill_normal(43);
    for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t d = 0; d < c.head_dim; ++d) run.set(s, 1, d, 0.37f * static_cast<float>(d) - 3.0f);
    run.run();
    assert_true(run.descale[1] == 1.0f);
    for (int64_t d = 0; d < c.head_dim; ++d) assert_true(run.mean_of(0, 1, d) == run.in(0, 1, d));
    for (int64_t s = 0; s < c.seqlen; ++s)
        for (int64_t d = 0; d < c.head_dim; ++d) assert_int_equal(run.code(s, 1, d), 0);
    assert_true(run.descale[0] != 1.0f);  // the other slice is ordinary
}

// A non-finite input, or a subtraction that overflows fp32, is INVALID_ARGUMENT with nothing
// written: codes, descales and means keep their sentinels.
void test_smooth_rejections_write_nothing(void** state) {
    (void)state;
    for (int which = 0; which < 2; ++which) {
        QuantCase c;
        c.batch = 2, c.seqlen = 3, c.heads = 2, c.head_dim = 64, c.smooth = true;
        QuantRun run(c);
        run.fill_normal(44);
        if (which == 0) {
            run.set(c.row(1, 2), 1, 9, NAN);
        } else {
            // mean = (3e38 + 3e38 - 3.4e38) / 3 ~ 8.7e37, and -3.4e38 - 8.7e37 is beyond fp32.
            run.set(c.row(1, 0), 1, 9, 3.0e38f);
            run.set(c.row(1, 1), 1, 9, 3.0e38f);
            run.set(c.row(1, 2), 1, 9, -3.4e38f);
        }
        assert_int_equal(run.run_status(), ZYFA_ERROR_INVALID_ARGUMENT);
        for (uint8_t code : run.codes) assert_int_equal(code, kSentinel);
        for (float d : run.descale) assert_true(d == kDescaleSentinel);
        for (float m : run.mean) assert_true(m == kDescaleSentinel);
    }
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_fp32_to_e4m3fn),
        cmocka_unit_test(test_round_trip_bf16_and_fp16),
        cmocka_unit_test(test_round_trip_e4m3fnuz),
        cmocka_unit_test(test_amax_element_maps_to_max_code),
        cmocka_unit_test(test_all_zero_slice_gets_descale_one),
        cmocka_unit_test(test_varlen_with_empty_sequences),
        cmocka_unit_test(test_amax_spans_the_whole_slice),
        cmocka_unit_test(test_non_finite_input_is_rejected_and_nothing_written),
        cmocka_unit_test(test_hadamard_overflow_is_rejected),
        cmocka_unit_test(test_tiny_amax_still_reaches_max_code),
        cmocka_unit_test(test_bitwise_reproducible_across_thread_counts),
        cmocka_unit_test(test_hadamard_round_trip),
        cmocka_unit_test(test_hadamard_reduces_error_on_outliers),
        cmocka_unit_test(test_smooth_mean_matches_fp64),
        cmocka_unit_test(test_smooth_round_trip),
        cmocka_unit_test(test_smooth_cuts_error_on_biased_keys),
        cmocka_unit_test(test_smooth_constant_slice),
        cmocka_unit_test(test_smooth_rejections_write_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
