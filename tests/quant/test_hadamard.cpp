// The normalised Hadamard rotation of kernels/common/hadamard.h against its definition
// (H_n[i][j] = (-1)^popcount(i & j) / sqrt(n), block-diagonal of H_64 for other multiples of 64).
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
// cmocka 1.1 declares its functions without extern "C".
extern "C" {
#include <cmocka.h>
}

#include <cmath>
#include <vector>

#include "common/hadamard.h"
#include "quant_test_util.hpp"

using zyfa::numerics::fwht_inplace;
using zyfa::numerics::hadamard_block_size;
using zyfa::numerics::hadamard_normaliser;
using zyfa::numerics::hadamard_rotate_row;

namespace {

const int64_t kPowerOfTwoDims[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};

// The definition, in fp64: y = H_blockdiag x.
std::vector<double> rotate_by_definition(const std::vector<float>& x) {
    const int64_t n = static_cast<int64_t>(x.size());
    const int64_t block = hadamard_block_size(n);
    std::vector<double> y(x.size(), 0.0);
    for (int64_t start = 0; start < n; start += block) {
        for (int64_t i = 0; i < block; ++i) {
            double sum = 0.0;
            for (int64_t j = 0; j < block; ++j) {
                const double sign = (__builtin_popcountll(static_cast<unsigned long long>(i & j)) & 1) ? -1.0 : 1.0;
                sum += sign * x[static_cast<size_t>(start + j)];
            }
            y[static_cast<size_t>(start + i)] = sum / std::sqrt(static_cast<double>(block));
        }
    }
    return y;
}

std::vector<float> random_row(int64_t n, uint64_t seed) {
    quant_test::NormalRng rng(seed);
    std::vector<float> row(static_cast<size_t>(n));
    for (float& v : row) v = rng.normal();
    return row;
}

double norm(const std::vector<float>& x) {
    double s = 0.0;
    for (float v : x) s += static_cast<double>(v) * v;
    return std::sqrt(s);
}

void test_supported_head_dims(void** state) {
    (void)state;
    for (int64_t n : kPowerOfTwoDims) assert_int_equal(hadamard_block_size(n), n);
    // Multiples of 64 that are not powers of two: blocks of 64 (MLA's 192 among them).
    const int64_t multiples[] = {192, 320, 384, 448, 576};
    for (int64_t n : multiples) assert_int_equal(hadamard_block_size(n), 64);
    // Everything else is unsupported.
    const int64_t unsupported[] = {0, -64, 3, 6, 48, 80, 96, 100, 160, 200};
    for (int64_t n : unsupported) {
        assert_int_equal(hadamard_block_size(n), 0);
        std::vector<float> row(n > 0 ? static_cast<size_t>(n) : 1, 1.0f);
        if (n > 0) {
            assert_false(hadamard_rotate_row(row.data(), n));
            for (float v : row) assert_true(v == 1.0f);  // untouched
        }
    }
}

void test_normaliser_is_one_over_sqrt_n(void** state) {
    (void)state;
    for (int64_t n : kPowerOfTwoDims) {
        const double exact = 1.0 / std::sqrt(static_cast<double>(n));
        const float got = hadamard_normaliser(n);
        // Rounded once to fp32: within half an fp32 ulp (2^-24 relative).
        assert_true(std::fabs(got - exact) <= exact * 0x1p-24);
        // Powers of four have an exact normaliser.
        if ((__builtin_ctzll(static_cast<unsigned long long>(n)) & 1) == 0) assert_true(got == exact);
    }
}

void test_one_hot_gives_plus_minus_one_over_sqrt_n(void** state) {
    (void)state;
    for (int64_t n : kPowerOfTwoDims) {
        const float expected = hadamard_normaliser(n);
        for (int64_t hot = 0; hot < n; hot += (n > 16 ? 7 : 1)) {
            std::vector<float> row(static_cast<size_t>(n), 0.0f);
            row[static_cast<size_t>(hot)] = 1.0f;
            assert_true(hadamard_rotate_row(row.data(), n));
            for (int64_t i = 0; i < n; ++i) {
                // One-hot: the butterflies only add 0, so each entry is exactly +-1 times the normaliser,
                // with the Sylvester sign (-1)^popcount(i & hot).
                const float sign = (__builtin_popcountll(static_cast<unsigned long long>(i & hot)) & 1) ? -1.0f : 1.0f;
                assert_true(row[static_cast<size_t>(i)] == sign * expected);
            }
        }
    }
}

void test_matches_definition(void** state) {
    (void)state;
    const int64_t dims[] = {2, 8, 64, 128, 192, 256, 320};
    for (int64_t n : dims) {
        std::vector<float> row = random_row(n, 1000 + static_cast<uint64_t>(n));
        const std::vector<double> expected = rotate_by_definition(row);
        const double scale = norm(row);
        assert_true(hadamard_rotate_row(row.data(), n));
        for (size_t i = 0; i < row.size(); ++i) {
            // Each output passes log2(n) fp32 additions and one multiply; on random rows the rounding
            // errors are a few 2^-24 of the row norm, so 16 * 2^-24 * ||x|| has a wide margin (only
            // errors all aligned, never seen on random data, would grow like sqrt(n) * 2^-24 * ||x||).
            assert_true(std::fabs(row[i] - expected[i]) <= 16.0 * 0x1p-24 * scale);
        }
    }
}

void test_rotating_twice_gives_back_the_input(void** state) {
    (void)state;
    const int64_t dims[] = {1, 4, 64, 128, 192, 256, 384};
    for (int64_t n : dims) {
        const std::vector<float> original = random_row(n, 77 + static_cast<uint64_t>(n));
        std::vector<float> row = original;
        assert_true(hadamard_rotate_row(row.data(), n));
        // Orthogonal: the norm is preserved (fp32 rounding only, 1e-5 relative is ample).
        assert_true(std::fabs(norm(row) - norm(original)) <= 1e-5 * norm(original));
        assert_true(hadamard_rotate_row(row.data(), n));
        // H/sqrt(n) is symmetric and orthogonal, hence its own inverse; two fp32 passes err by a few ulps
        // of the row norm (see test_matches_definition), 32 * 2^-24 * ||x|| covers both.
        for (size_t i = 0; i < row.size(); ++i) {
            assert_true(std::fabs(row[i] - original[i]) <= 32.0 * 0x1p-24 * norm(original));
        }
    }
}

void test_q_k_dot_products_unchanged(void** state) {
    (void)state;
    const int64_t dims[] = {64, 128, 192, 256};
    for (int64_t n : dims) {
        for (int pair = 0; pair < 8; ++pair) {
            std::vector<float> q = random_row(n, 5000 + static_cast<uint64_t>(pair) * 31 + static_cast<uint64_t>(n));
            std::vector<float> k = random_row(n, 9000 + static_cast<uint64_t>(pair) * 37 + static_cast<uint64_t>(n));
            double before = 0.0;
            for (size_t i = 0; i < q.size(); ++i) before += static_cast<double>(q[i]) * k[i];
            assert_true(hadamard_rotate_row(q.data(), n));
            assert_true(hadamard_rotate_row(k.data(), n));
            double after = 0.0;
            for (size_t i = 0; i < q.size(); ++i) after += static_cast<double>(q[i]) * k[i];
            // Each rotated element is off by <= 16 * 2^-24 of its row norm (test_matches_definition), so
            // ||dq|| <= 16 * 2^-24 * sqrt(n) * ||q|| and the dot product moves by at most twice that
            // times ||q|| ||k|| (rounding of the fp64 sums here is negligible).
            const double bound = 2.0 * 16.0 * 0x1p-24 * std::sqrt(static_cast<double>(n)) * norm(q) * norm(k);
            assert_true(std::fabs(after - before) <= bound);
        }
    }
}

void test_block_diagonal_192(void** state) {
    (void)state;
    const int64_t n = 192;
    // A one-hot in channel 70 (second block) spreads over channels 64..127 only, as +-1/8.
    std::vector<float> row(static_cast<size_t>(n), 0.0f);
    row[70] = 1.0f;
    assert_true(hadamard_rotate_row(row.data(), n));
    for (int64_t i = 0; i < n; ++i) {
        const float v = row[static_cast<size_t>(i)];
        if (i >= 64 && i < 128) {
            const float sign = (__builtin_popcountll(static_cast<unsigned long long>((i - 64) & (70 - 64))) & 1) ? -1.0f : 1.0f;
            assert_true(v == sign * 0.125f);
        } else {
            assert_true(v == 0.0f);
        }
    }
    // Each block equals a 64-point transform of that block alone.
    std::vector<float> x = random_row(n, 4242);
    std::vector<float> blockwise = x;
    for (int64_t start = 0; start < n; start += 64) fwht_inplace(blockwise.data() + start, 64, hadamard_normaliser(64));
    assert_true(hadamard_rotate_row(x.data(), n));
    for (size_t i = 0; i < x.size(); ++i) assert_true(x[i] == blockwise[i]);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supported_head_dims),
        cmocka_unit_test(test_normaliser_is_one_over_sqrt_n),
        cmocka_unit_test(test_one_hot_gives_plus_minus_one_over_sqrt_n),
        cmocka_unit_test(test_matches_definition),
        cmocka_unit_test(test_rotating_twice_gives_back_the_input),
        cmocka_unit_test(test_q_k_dot_products_unchanged),
        cmocka_unit_test(test_block_diagonal_192),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
