// The emulator's own tests (label emu): one hand-written kernel per instruction family checked
// against values computed here, MFMA forms against a plain matrix product with the operand
// layouts of docs/emulator.md (ISA facts), and kernels with deliberate faults that must be caught.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cycle_model.hpp"
#include "emu_harness.hpp"

// After the emulator headers: cmocka defines a fail() macro.
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}

namespace {

using emu_test::Buffer;

uint32_t bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}
float flt(uint32_t b) {
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

void expect_ok(const std::string& error) {
    if (!error.empty()) std::fprintf(stderr, "emulator: %s\n", error.c_str());
    assert_true(error.empty());
}

void expect_fault(const std::string& error, const char* needle) {
    if (error.find(needle) == std::string::npos) {
        std::fprintf(stderr, "expected a fault containing '%s', got: '%s'\n", needle, error.c_str());
    }
    assert_true(error.find(needle) != std::string::npos);
}

void check_u32(const char* what, int k, int lane, uint32_t got, uint32_t want) {
    if (got != want) {
        std::fprintf(stderr, "%s: result %d lane %d: got 0x%08x, want 0x%08x\n", what, k, lane, got, want);
    }
    assert_int_equal(got, want);
}

// ------------------------------------------------------------------ SALU / SOPP / SMEM

void test_scalar(void**) {
    auto object = emu_test::load("scalar.gfx950.hsaco");
    const uint32_t a = 0xfffffff0u, b = 0x30u, c = 0x12345678u, d = 0x80000010u;
    uint32_t in[4] = {a, b, c, d};
    std::vector<uint32_t> out(32, 0xdeadbeefu);
    expect_ok(emu_test::run(*object, "scalar_ops", {{out.data(), out.size() * 4}, {in, sizeof in}}));
    uint32_t rev = 0;
    for (int i = 0; i < 32; ++i) rev |= ((a >> i) & 1u) << (31 - i);
    const uint64_t ab = (uint64_t(b) << 32) | a;
    const uint32_t want[32] = {
        a + b, c + 1,                        // carry of a + b is 1
        a - b, c,                            // no borrow
        a * c, uint32_t((uint64_t(a) * b) >> 32),
        uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(d)) >> 32),
        a << 5, d >> 3, uint32_t(int32_t(d) >> 3),
        a & b, a | b, a ^ b, a & ~b,
        uint32_t(std::min(int32_t(c), int32_t(d))), std::max(c, d),
        uint32_t(-int32_t(d)),
        rev, 32 + 4,                         // first set bit of b (0x30) in the high half
        int32_t(d) < int32_t(c) ? a : b,
        (a >> 4) & 0xff,
        uint32_t((ab << 40) >> 32),
        ~a, 0xffff8001u,
        uint32_t(__builtin_popcountll(ab)),
        7, 55, 0xdeadbeefu,
        c + d, c - d,
        (a << 2) + b, 1};                    // (0xfffffff0 << 2) + 0x30 carries out
    for (int k = 0; k < 32; ++k) check_u32("scalar", k, 0, out[k], want[k]);
}

// ------------------------------------------------------------------ VALU

void test_vector(void**) {
    auto object = emu_test::load("vector.gfx950.hsaco");
    std::vector<uint32_t> A(64), B(64), C(64), out(64 * 51, 0);
    for (int l = 0; l < 64; ++l) {
        A[l] = bits((l - 20) * 1.375f + 0.25f);
        B[l] = bits(0.5f + l * 0.75f);
        C[l] = bits((l * 3 - 50) * 0.125f);
    }
    expect_ok(emu_test::run(*object, "vector_ops",
                            {{out.data(), out.size() * 4}, {A.data(), 256}, {B.data(), 256}, {C.data(), 256}}));
    for (int l = 0; l < 64; ++l) {
        const uint32_t a = A[l], b = B[l], c = C[l];
        const float fa = flt(a), fb = flt(b), fc = flt(c);
        const uint32_t cvt_a = uint32_t(int32_t(std::trunc(fa)));
        const uint64_t mad = uint64_t(a) * b + (uint64_t(c) | (uint64_t(a - b) << 32));
        const uint32_t want[51] = {
            bits(fa + fb), bits(fa * fb), bits(std::fma(fa, fb, fc)), bits(std::fmax(fa, fb)), bits(std::fmin(fa, fb)),
            bits(fa - fb), bits(std::exp2(fa)), bits(std::ldexp(fa, 3)), cvt_a, uint32_t(fb),
            bits(float(int32_t(c))), bits(std::trunc(fa)), bits(std::floor(fa)), bits(-fa * std::fabs(fb)),
            bits(std::fmax(std::fmax(fa, fb), fc)), bits(std::fma(fb, fc, fa)),
            bits(fa * fc), bits(fb * fc), bits(fa + fa), bits(fb + fb),
            a + b, a - b, a * b, uint32_t((uint64_t(a) * b) >> 32), a + b + c, (a << 3) + b, (a << 4) | b,
            (a & b) | c, (a >> 4) & 0xff, uint32_t(int32_t(a << 20) >> 24), uint32_t(int32_t(a) >> 5),
            b | (a & c), (a ^ b ^ c) & 0xffff, (a >> 16) | b, (cvt_a & 0xff) << 24,
            int32_t(a) < int32_t(b) ? a : c, fa > fb ? 2u : 1u,
            a + b, c + (uint64_t(a) + b > 0xffffffffu ? 1u : 0u),
            a - b, c - (b > a ? 1u : 0u),
            uint32_t(mad), uint32_t(mad >> 32),
            (c << 2) + a, (a * b) & 0xffff, bits(float(b)), !(fa >= fb) ? 1u : 0u, bits(1.0f / fb), bits(fa / fb),
            std::max(std::max(a, b), c), std::min(std::min(a, b), c)};
        for (int k = 0; k < 51; ++k) check_u32("vector", k, l, out[64 * k + l], want[k]);
    }
}

// v_maximum3_f32 / v_minimum3_f32 (gfx950): NaN in any operand gives NaN (the running row max of
// kernels/common/row_max.h), where v_max3_f32 returns the largest non-NaN operand; -0 < +0.
void test_maximum3(void**) {
    auto object = emu_test::load("vector.gfx950.hsaco");
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float values[8] = {1.0f, 2.0f, -3.0f, nan, inf, -inf, 0.0f, -0.0f};
    std::vector<uint32_t> A(64), B(64), C(64), out(64 * 4, 0);
    for (int l = 0; l < 64; ++l) {
        A[l] = bits(values[l % 8]);
        B[l] = bits(values[(l / 8) % 8]);
        C[l] = bits(values[(3 * l + 1) % 8]);
    }
    expect_ok(emu_test::run(*object, "maximum3_ops",
                            {{out.data(), out.size() * 4}, {A.data(), 256}, {B.data(), 256}, {C.data(), 256}}));
    // Ordered with -0 < +0; NaN checked as "is NaN" (which NaN the hardware returns is unconfirmed).
    auto larger = [](float x, float y) { return x > y || (x == y && !std::signbit(x)) ? x : y; };
    auto smaller = [](float x, float y) { return x < y || (x == y && std::signbit(x)) ? x : y; };
    auto drop_nan_max = [&](float x, float y) { return std::isnan(x) ? y : std::isnan(y) ? x : larger(x, y); };
    for (int l = 0; l < 64; ++l) {
        const float a = flt(A[l]), b = flt(B[l]), c = flt(C[l]);
        const bool any_nan = std::isnan(a) || std::isnan(b) || std::isnan(c);
        const float want[4] = {any_nan ? nan : larger(larger(a, b), c), drop_nan_max(drop_nan_max(a, b), c),
                               any_nan ? nan : smaller(smaller(a, b), c),
                               std::isnan(a) || std::isnan(b) ? nan : larger(a, b)};
        for (int k = 0; k < 4; ++k) {
            const float got = flt(out[64 * k + l]);
            if (std::isnan(want[k])) {
                if (!std::isnan(got)) check_u32("maximum3 (NaN expected)", k, l, out[64 * k + l], bits(want[k]));
            } else {
                check_u32("maximum3", k, l, out[64 * k + l], bits(want[k]));
            }
        }
    }
}

// f64 VALU: add, mul, fma with a negated operand, clang's division sequence (div_scale, rcp, fma
// refinement, div_fmas, div_fixup) to the IEEE quotient, conversions, ldexp.
void test_f64(void**) {
    auto object = emu_test::load("vector.gfx950.hsaco");
    std::vector<uint32_t> A(64), B(64), C(64), out(64 * 13, 0);
    for (int l = 0; l < 64; ++l) {
        A[l] = bits((l - 20) * 1.375f + 0.1f);  // 0.1f: quotients that do not terminate
        B[l] = bits(0.3f + l * 0.75f);
        C[l] = bits((l * 3 - 50) * 0.125f);
    }
    expect_ok(emu_test::run(*object, "f64_ops",
                            {{out.data(), out.size() * 4}, {A.data(), 256}, {B.data(), 256}, {C.data(), 256}}));
    auto lo = [](double x) { uint64_t u; std::memcpy(&u, &x, 8); return uint32_t(u); };
    auto hi = [](double x) { uint64_t u; std::memcpy(&u, &x, 8); return uint32_t(u >> 32); };
    for (int l = 0; l < 64; ++l) {
        const double a = flt(A[l]), b = flt(B[l]), c = flt(C[l]);
        const double sum = a + b, product = a * c, fused = std::fma(-a, b, c), quotient = a / b;
        const uint32_t want[13] = {lo(sum), hi(sum), lo(product), hi(product), lo(fused), hi(fused),
                                   lo(quotient), hi(quotient), bits(static_cast<float>(quotient)),
                                   lo(double(l)), hi(double(l)), lo(std::ldexp(a, -3)), hi(std::ldexp(a, -3))};
        for (int k = 0; k < 13; ++k) check_u32("f64", k, l, out[64 * k + l], want[k]);
    }
}

// ------------------------------------------------------------------ lanes, EXEC, memory

void test_lanes_memory(void**) {
    auto object = emu_test::load("lanes_memory.gfx950.hsaco");
    std::vector<uint32_t> A(64), out(2 * 8192, 0);
    for (int l = 0; l < 64; ++l) A[l] = 0x01020304u * uint32_t(l + 1) + 0x9000u * uint32_t(l);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
        expect_ok(emu_test::run(*object, "lanes_memory", {{out.data(), out.size() * 4}, {A.data(), 256}}, 128, seed));
        int32_t lowest = INT32_MAX;
        for (int w = 0; w < 2; ++w) {
            for (int l = 0; l < 64; ++l) lowest = std::min(lowest, int32_t(A[l] * uint32_t(w + 1)));
        }
        for (int w = 0; w < 2; ++w) {
            for (int l = 0; l < 64; ++l) {
                const uint32_t a = A[l];
                const uint32_t want[14] = {
                    A[5], l == 9 ? A[5] : 0u, uint32_t(l), A[l ^ 32], (l & 1) ? 7u : 0u,
                    l < 32 ? uint32_t(l) : uint32_t(l - 32 + 100), l < 32 ? uint32_t(l + 32) : uint32_t(l + 100),
                    (a >> 8) & 0xff, uint32_t(int32_t(int16_t(a >> 16))), ((a & 0xffff) << 16) | 0x5678,
                    a * uint32_t(2 - w), a, a * 2, uint32_t(lowest)};
                for (int k = 0; k < 14; ++k) check_u32("lanes_memory", k, 64 * w + l, out[8192 * w + 64 * k + l], want[k]);
            }
        }
    }
}

// ------------------------------------------------------------------ MFMA layouts

// Value of an 8-bit float code (written here from the format definitions, independently of the
// emulator's decoder): e4m3 "fn" (bias 7) on gfx950, "fnuz" (bias 8) on gfx942.
double fp8_value(uint32_t code, bool fnuz) {
    const int e = (code >> 3) & 15, m = code & 7;
    const double v = e == 0 ? m * std::ldexp(1.0, (fnuz ? -9 : -8) - 1) : (8 + m) * std::ldexp(1.0, e - (fnuz ? 8 : 7) - 3);
    return (code & 0x80) ? -v : v;
}
uint32_t fp8_code(double value, bool fnuz) {
    for (uint32_t c = 0; c < 256; ++c) {
        if (fnuz && c == 0x80) continue;
        if (!fnuz && (c & 0x7f) == 0x7f) continue;
        if (fp8_value(c, fnuz) == value && !(value == 0 && c != 0)) return c;
    }
    return 0xffffffffu;
}

struct MfmaCase {
    const char* kernel;
    int m, n, k;
    bool fp8, f8f6f4, scaled;
    int scale_byte_a, scale_byte_b;
};

void run_mfma_case(const zyfa::emu::CodeObject& object, const MfmaCase& c, bool fnuz) {
    const int groups = 64 / c.m, per_lane = c.k / groups, bits_per = c.fp8 ? 8 : 16;
    std::mt19937 rng(c.m * 1000 + c.k);
    std::uniform_int_distribution<int> small(-4, 4), scale(124, 130), junk(0, 255);
    std::vector<double> a(size_t(c.m) * c.k), b(size_t(c.k) * c.n), acc(size_t(c.m) * c.n);
    for (double& x : a) x = small(rng) * 0.5;
    for (double& x : b) x = small(rng) * 0.5;
    for (double& x : acc) x = small(rng);
    const int blocks = c.scaled ? c.k / 32 : 1;
    std::vector<int> sa(size_t(c.m) * blocks, 127), sb(size_t(c.n) * blocks, 127);
    if (c.scaled) {
        for (int& s : sa) s = scale(rng);
        for (int& s : sb) s = scale(rng);
    }
    // K index of element e in lane group g (docs/emulator.md, operand layouts).
    auto kmap = [&](int g, int e) { return c.f8f6f4 ? (groups * 16) * (e / 16) + 16 * g + e % 16 : per_lane * g + e; };
    auto encode = [&](double v) -> uint32_t {
        if (c.fp8) return fp8_code(v, fnuz);
        uint32_t fb = bits(static_cast<float>(v));
        return fb >> 16;  // these bf16 values are exact
    };
    std::vector<uint32_t> a_img(64 * 8, 0), b_img(64 * 8, 0), c_img(64 * 16, 0), scales(64 * 2, 0), out(64 * 16, 0);
    for (int l = 0; l < 64; ++l) {
        for (int e = 0; e < per_lane; ++e) {
            const int k = kmap(l / c.m, e);
            const int bit = e * bits_per;
            a_img[8 * l + bit / 32] |= encode(a[size_t(l % c.m) * c.k + k]) << (bit % 32);
            b_img[8 * l + bit / 32] |= encode(b[size_t(k) * c.n + l % c.n]) << (bit % 32);
        }
        for (int v = 0; v < 16; ++v) {
            const int i = (4 * groups) * (v / 4) + 4 * (l / c.n) + v % 4, j = l % c.n;
            c_img[16 * l + v] = v < c.m * c.n / 64 ? bits(float(acc[size_t(i) * c.n + j])) : 0u;
        }
        // Scale of A row i / B column j for K block blk sits in lane i + M*blk; other bytes junk.
        uint32_t wa = 0, wb = 0;
        for (int byte = 0; byte < 4; ++byte) {
            wa |= uint32_t(junk(rng)) << (8 * byte);
            wb |= uint32_t(junk(rng)) << (8 * byte);
        }
        const int blk = l / c.m;
        if (c.scaled && blk < blocks) {
            wa = (wa & ~(0xffu << (8 * c.scale_byte_a))) | uint32_t(sa[size_t(l % c.m) * blocks + blk]) << (8 * c.scale_byte_a);
            wb = (wb & ~(0xffu << (8 * c.scale_byte_b))) | uint32_t(sb[size_t(l % c.n) * blocks + blk]) << (8 * c.scale_byte_b);
        }
        scales[2 * l] = wa;
        scales[2 * l + 1] = wb;
    }
    expect_ok(emu_test::run(object, c.kernel,
                            {{out.data(), out.size() * 4}, {a_img.data(), a_img.size() * 4},
                             {b_img.data(), b_img.size() * 4}, {scales.data(), scales.size() * 4},
                             {c_img.data(), c_img.size() * 4}}));
    for (int l = 0; l < 64; ++l) {
        for (int v = 0; v < c.m * c.n / 64; ++v) {
            const int i = (4 * groups) * (v / 4) + 4 * (l / c.n) + v % 4, j = l % c.n;
            double want = acc[size_t(i) * c.n + j];
            for (int blk = 0; blk < blocks; ++blk) {
                double part = 0;
                for (int k = blk * (c.k / blocks); k < (blk + 1) * (c.k / blocks); ++k) part += a[size_t(i) * c.k + k] * b[size_t(k) * c.n + j];
                want += part * std::ldexp(1.0, sa[size_t(i) * blocks + blk] - 127) * std::ldexp(1.0, sb[size_t(j) * blocks + blk] - 127);
            }
            // Exact: small multiples of 1/4 times powers of two, far inside f32 precision.
            if (flt(out[16 * l + v]) != float(want)) {
                std::fprintf(stderr, "%s (%s): D[%d][%d] = %g, want %g\n", c.kernel, fnuz ? "gfx942" : "gfx950", i, j,
                             double(flt(out[16 * l + v])), want);
            }
            assert_true(flt(out[16 * l + v]) == float(want));
        }
    }
}

// The integer forms: signed 8-bit A and B over their whole range (-128 included), int32 C with
// large magnitudes; D = C + A.B exactly, in int64 here. K index of byte e in lane group g:
// (K / groups) g + e, as the 8-bit fp8 forms (docs/emulator.md, operand layouts).
void run_mfma_i8_case(const zyfa::emu::CodeObject& object, const char* kernel, int m, int kdim) {
    const int groups = 64 / m, per_lane = kdim / groups;
    std::mt19937 rng(m * 7 + kdim);
    std::uniform_int_distribution<int> byte(-128, 127), big(-(1 << 30), 1 << 30);
    std::vector<int64_t> a(size_t(m) * kdim), b(size_t(kdim) * m), acc(size_t(m) * m);
    for (int64_t& x : a) x = byte(rng);
    for (int64_t& x : b) x = byte(rng);
    for (int64_t& x : acc) x = big(rng);
    std::vector<uint32_t> a_img(64 * 8, 0), b_img(64 * 8, 0), c_img(64 * 16, 0), scales(64 * 2, 0), out(64 * 16, 0);
    for (int l = 0; l < 64; ++l) {
        for (int e = 0; e < per_lane; ++e) {
            const int k = per_lane * (l / m) + e;
            a_img[8 * l + e / 4] |= (uint32_t(a[size_t(l % m) * kdim + k]) & 0xffu) << (8 * (e % 4));
            b_img[8 * l + e / 4] |= (uint32_t(b[size_t(k) * m + l % m]) & 0xffu) << (8 * (e % 4));
        }
        for (int v = 0; v < m * m / 64; ++v) {
            const int i = (4 * groups) * (v / 4) + 4 * (l / m) + v % 4, j = l % m;
            c_img[16 * l + v] = uint32_t(int32_t(acc[size_t(i) * m + j]));
        }
    }
    expect_ok(emu_test::run(object, kernel,
                            {{out.data(), out.size() * 4}, {a_img.data(), a_img.size() * 4},
                             {b_img.data(), b_img.size() * 4}, {scales.data(), scales.size() * 4},
                             {c_img.data(), c_img.size() * 4}}));
    for (int l = 0; l < 64; ++l) {
        for (int v = 0; v < m * m / 64; ++v) {
            const int i = (4 * groups) * (v / 4) + 4 * (l / m) + v % 4, j = l % m;
            int64_t want = acc[size_t(i) * m + j];
            for (int k = 0; k < kdim; ++k) want += a[size_t(i) * kdim + k] * b[size_t(k) * m + j];
            if (int32_t(out[16 * l + v]) != want) {
                std::fprintf(stderr, "%s: D[%d][%d] = %d, want %lld\n", kernel, i, j, int32_t(out[16 * l + v]),
                             (long long)want);
            }
            assert_true(int32_t(out[16 * l + v]) == want);
        }
    }
}

void test_mfma_gfx950(void**) {
    auto object = emu_test::load("mfma.gfx950.hsaco");
    const MfmaCase cases[] = {
        {"mfma_32x32x16_bf16", 32, 32, 16, false, false, false, 0, 0},
        {"mfma_16x16x32_bf16", 16, 16, 32, false, false, false, 0, 0},
        {"mfma_32x32x8bf16_1k", 32, 32, 8, false, false, false, 0, 0},
        {"mfma_32x32x16_fp8_fp8", 32, 32, 16, true, false, false, 0, 0},
        {"mfma_16x16x32_fp8_fp8", 16, 16, 32, true, false, false, 0, 0},
        {"mfma_scale_32x32x64_f8f6f4", 32, 32, 64, true, true, true, 0, 0},
        {"mfma_scale_16x16x128_f8f6f4", 16, 16, 128, true, true, true, 1, 2},
        {"mfma_32x32x64_f8f6f4_agpr", 32, 32, 64, true, true, false, 0, 0},
    };
    for (const MfmaCase& c : cases) run_mfma_case(*object, c, false);
    run_mfma_i8_case(*object, "mfma_i32_32x32x32_i8", 32, 32);
    run_mfma_i8_case(*object, "mfma_i32_16x16x64_i8", 16, 64);
    run_mfma_i8_case(*object, "mfma_i32_32x32x16_i8", 32, 16);
    run_mfma_i8_case(*object, "mfma_i32_16x16x32_i8", 16, 32);
}

void test_mfma_gfx942(void**) {
    auto object = emu_test::load("mfma.gfx942.hsaco");
    const MfmaCase cases[] = {
        {"mfma_32x32x8bf16_1k", 32, 32, 8, false, false, false, 0, 0},
        {"mfma_32x32x16_fp8_fp8", 32, 32, 16, true, false, false, 0, 0},
        {"mfma_16x16x32_fp8_fp8", 16, 16, 32, true, false, false, 0, 0},
    };
    for (const MfmaCase& c : cases) run_mfma_case(*object, c, true);
    run_mfma_i8_case(*object, "mfma_i32_32x32x16_i8", 32, 16);
    run_mfma_i8_case(*object, "mfma_i32_16x16x32_i8", 16, 32);
}

// ------------------------------------------------------------------ must-catch faults

void test_faults(void**) {
    auto object = emu_test::load("faults.gfx950.hsaco");
    std::vector<uint32_t> out(64 * 16 * 2, 0), in(64 * 16, 0x3f803f80u);
    const std::vector<Buffer> bufs = {{out.data(), 64 * 16 * 4}, {in.data(), in.size() * 4}};
    const std::vector<Buffer> small = {{out.data(), 64 * 4}, {in.data(), in.size() * 4}};
    expect_fault(emu_test::run(*object, "fault_mfma_read", bufs), "MFMA hazard: reads v16 11 wait states");
    expect_ok(emu_test::run(*object, "ok_mfma_read", bufs));
    expect_fault(emu_test::run(*object, "fault_valu_to_mfma", bufs), "after a VALU write; 2 required");
    expect_fault(emu_test::run(*object, "fault_mfma_to_mfma", bufs), "MFMA hazard: reads v16 4 wait states");
    expect_ok(emu_test::run(*object, "ok_mfma_chain", bufs));
    expect_fault(emu_test::run(*object, "fault_mfma_partial_exec", bufs), "MFMA under a partial EXEC mask");
    expect_ok(emu_test::run(*object, "ok_mfma_full_exec", bufs));
    expect_fault(emu_test::run(*object, "fault_vmcnt", bufs), "reads v3 before the s_waitcnt vmcnt");
    expect_ok(emu_test::run(*object, "ok_vmcnt", bufs));
    expect_fault(emu_test::run(*object, "fault_lgkmcnt", bufs), "reads s4 before the s_waitcnt lgkmcnt");
    expect_fault(emu_test::run(*object, "fault_oob_global", small), "out-of-bounds global write of 4 bytes at address");
    expect_fault(emu_test::run(*object, "fault_oob_lds", bufs), "out-of-bounds LDS read of 4 bytes at LDS address 0x100");
    expect_fault(emu_test::run(*object, "fault_unknown", bufs), "unknown instruction 'v_sin_f32_e32'");
    expect_fault(emu_test::run(*object, "fault_vgpr_range", bufs), "v40 is beyond the kernel's 32 arch VGPRs");
    // Barriers: every schedule of the broken kernel is caught, every schedule of the fixed one
    // passes and moves the data.
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        expect_fault(emu_test::run(*object, "fault_barrier", bufs, 128, seed), "LDS race");
        expect_fault(emu_test::run(*object, "fault_barrier_nowait", bufs, 128, seed), "was not waited for");
        std::fill(out.begin(), out.end(), 0u);
        expect_ok(emu_test::run(*object, "ok_barrier", bufs, 128, seed));
        for (int t = 64; t < 128; ++t) check_u32("ok_barrier", 0, t, out[t], uint32_t(t - 64));
    }
    expect_ok(emu_test::run(*object, "ok_barrier", bufs, 128, 1, false));
}

// ------------------------------------------------------------------ MUBUF buffer loads and stores

// Raw buffer (stride 0) rules the test expects: a dword piece at byte offset o is in range when
// o < num_records; out-of-range loads read 0 and out-of-range stores write nothing.
void run_buffer_ops(const char* file) {
    auto object = emu_test::load(file);
    std::vector<uint32_t> in(256), out(0xc000 / 4, 0xdeadbeefu);
    for (uint32_t i = 0; i < 256; ++i) in[i] = i * 2654435761u + 0x01020304u;
    uint32_t params[4] = {600, 200, 0, 0};
    const uint32_t n_in = params[0], n_out = params[1];
    expect_ok(emu_test::run(*object, "buffer_ops", {{out.data(), out.size() * 4}, {in.data(), in.size() * 4}, {params, sizeof params}}));
    auto load = [&](uint32_t offset) { return offset < n_in ? in[offset / 4] : 0u; };
    for (uint32_t l = 0; l < 64; ++l) {
        const uint32_t want[16] = {load(4 * l), load(512 + 4 * l),
                                   load(16 * l), load(16 * l + 4), load(16 * l + 8), load(16 * l + 12),
                                   (load(4 * l) >> 8) & 0xff, load(4 * l) >> 16, load(4 * l + 8), load(4 * l),
                                   load(20), load(8 * l), load(8 * l + 4),
                                   load(12 * l), load(12 * l + 4), load(12 * l + 8)};
        for (int k = 0; k < 16; ++k) check_u32(file, k, int(l), out[64 * k + l], want[k]);
    }
    const uint32_t* area_a = &out[0x8000 / 4];
    const uint32_t* area_b = &out[0x9000 / 4];
    const uint8_t* area_c = reinterpret_cast<const uint8_t*>(&out[0xa000 / 4]);
    const uint8_t* area_d = reinterpret_cast<const uint8_t*>(&out[0xb000 / 4]);
    for (uint32_t w = 0; w < 128; ++w) {
        // dword stores at 4 l (l < 64), and the dwordx2 at 256 + 8 l is wholly out of range.
        check_u32("buffer_store_dword", 0, int(w), area_a[w], (w < 64 && 4 * w < n_out) ? 1000 + w : 0xdeadbeefu);
        const uint32_t l = w / 4, k = w % 4;
        check_u32("buffer_store_dwordx4", 1, int(w), area_b[w], (l < 64 && 4 * w < n_out) ? 1000 + 100 * k + l : 0xdeadbeefu);
    }
    for (uint32_t b = 0; b < 256; ++b) {
        uint8_t want_c = 0xde - 0, want_d;
        const uint8_t fill[4] = {0xef, 0xbe, 0xad, 0xde};
        want_c = fill[b % 4];
        if (b < 128 && b < n_out) want_c = uint8_t((1000 + b / 2) >> (8 * (b % 2)));  // short stores at 2 l
        want_d = fill[b % 4];
        if (b >= 3 && b - 3 < 64 && b < n_out) want_d = uint8_t(1000 + b - 3);      // byte stores at l + 3
        check_u32("buffer_store_short", 2, int(b), area_c[b], want_c);
        check_u32("buffer_store_byte", 3, int(b), area_d[b], want_d);
    }
}

void test_buffer(void**) {
    run_buffer_ops("buffer.gfx950.hsaco");
    run_buffer_ops("buffer.gfx942.hsaco");
    auto object = emu_test::load("buffer.gfx950.hsaco");
    // The three buffers in one allocation: fault_buffer_memory reads 128 KiB past `in`, which must
    // lie outside every registered buffer whatever the heap's layout (with separate allocations,
    // `out` could sit there).
    std::vector<uint32_t> arena(0xc000 / 4 + 256 + 4, 0);
    uint32_t* out = arena.data();
    uint32_t* in = out + 0xc000 / 4;
    uint32_t* params = in + 256;
    params[0] = 1024;
    params[1] = 200;
    const std::vector<Buffer> bufs = {{out, 0xc000}, {in, 256 * 4}, {params, 4 * 4}};
    expect_fault(emu_test::run(*object, "fault_buffer_vmcnt", bufs), "reads v3 before the s_waitcnt vmcnt");
    expect_fault(emu_test::run(*object, "fault_buffer_memory", bufs), "out-of-bounds global read of 4 bytes");
    params[0] = 300;
    expect_fault(emu_test::run(*object, "fault_buffer_soffset", bufs), "buffer range check depends on soffset");
    // The same kernel with num_records past every lane's offset plus soffset is fine.
    params[0] = 1024;
    expect_ok(emu_test::run(*object, "fault_buffer_soffset", bufs));
    expect_fault(emu_test::run(*object, "fault_buffer_sgpr_hazard", bufs), "reads s36 4 wait states after a VALU wrote it; 5 required");
    expect_ok(emu_test::run(*object, "ok_buffer_sgpr_hazard", bufs));
}

// ------------------------------------------------------------------ DPP

// The lane lane l reads under each DPP control of dpp.s, -1 when out of range (gfx9 semantics as
// docs/emulator.md states them: shr moves data to higher lanes, bcast15 feeds row r from lane
// 16 r - 1, bcast31 feeds rows 2-3 from lane 31, newbcast:n gives a row its lane n).
int dpp_reference_source(int k, int l) {
    const int row = l / 16, r = l % 16;
    switch (k) {
        case 0: { const int sel[4] = {1, 0, 3, 2}; return 4 * (l / 4) + sel[l % 4]; }
        case 1: return r <= 14 ? l + 1 : -1;
        case 2: return r >= 3 ? l - 3 : -1;
        case 3: return 16 * row + (r + 12) % 16;
        case 4: return 16 * row + 15 - r;
        case 5: return 8 * (l / 8) + 7 - l % 8;
        case 6: return row >= 1 ? 16 * row - 1 : -1;
        case 7: return row >= 2 ? 31 : -1;
        case 8: return l < 63 ? l + 1 : -1;
        case 9: return l - 1;
        case 10: return (l + 1) % 64;
        case 11: return (l + 63) % 64;
        case 12: return 16 * row + 5;
        case 13: return r >= 1 ? l - 1 : -1;
        case 14: case 15: { const int sel[4] = {1, 1, 0, 0}; return 4 * (l / 4) + sel[l % 4]; }
        case 16: return r + 15 <= 15 ? l + 15 : -1;
        default: return -1;
    }
}

void run_dpp_ops(const char* file) {
    auto object = emu_test::load(file);
    std::vector<uint32_t> in(64), out(64 * 20, 0);
    for (uint32_t l = 0; l < 64; ++l) in[l] = 0x3000u + l * 0x101u;
    expect_ok(emu_test::run(*object, "dpp_ops", {{out.data(), out.size() * 4}, {in.data(), in.size() * 4}}));
    for (int k = 0; k <= 16; ++k) {
        const int row_mask = k == 6 ? 0xa : k == 7 ? 0xc : k == 16 ? 0x3 : 0xf;
        const int bank_mask = k == 13 ? 0x5 : 0xf;
        const bool bound_ctrl = k == 2 || k == 15 || k == 16;
        for (int l = 0; l < 64; ++l) {
            const bool active = k == 14 || k == 15 ? l % 2 == 0 : true;
            int source = dpp_reference_source(k, l);
            if (source >= 0 && (k == 14 || k == 15) && source % 2 != 0) source = -1;  // inactive source
            const bool enabled = active && ((row_mask >> (l / 16)) & 1) && ((bank_mask >> ((l % 16) / 4)) & 1);
            uint32_t want = 0xdead0000u | uint32_t(l);
            if (enabled && (source >= 0 || bound_ctrl)) {
                const uint32_t s0 = source >= 0 ? in[source] : 0u;
                if (k == 13) {
                    want = bits(-float(s0 & 0xffff) + float(l));
                } else if (k == 16) {
                    want = std::max(s0, uint32_t(l));
                } else {
                    want = s0;
                }
            }
            check_u32(file, k, l, out[64 * k + l], want);
        }
    }
}

void test_dpp(void**) {
    run_dpp_ops("dpp.gfx950.hsaco");
    run_dpp_ops("dpp.gfx942.hsaco");
    auto object = emu_test::load("dpp.gfx950.hsaco");
    std::vector<uint32_t> in(64, 7), out(64 * 20, 0);
    const std::vector<Buffer> bufs = {{out.data(), out.size() * 4}, {in.data(), in.size() * 4}};
    expect_fault(emu_test::run(*object, "fault_dpp_hazard", bufs), "DPP hazard: reads v4 0 wait states");
    expect_ok(emu_test::run(*object, "ok_dpp_hazard", bufs));
    for (int l = 0; l < 64; ++l) check_u32("ok_dpp_hazard", 0, l, out[l], l % 16 == 0 ? 0u : 8u);
    expect_fault(emu_test::run(*object, "fault_dpp_old_hazard", bufs), "DPP hazard: reads v3 0 wait states");
}

// ------------------------------------------------------------------ gfx940+ VALU hazards

// valu_hazards.s: each rule of check_valu_hazards (runner.cpp) one wait state short must fault;
// its twin with the required wait states must pass and compute the right values.
void run_valu_hazards(const char* file, bool gfx950) {
    auto object = emu_test::load(file);
    std::vector<uint32_t> out(64 * 8, 0);
    const std::vector<Buffer> bufs = {{out.data(), out.size() * 4}};
    struct Fault {
        const char* kernel;
        const char* needle;
    };
    const Fault faults[] = {
        {"fault_valu_sgpr_mask", "VALU read): reads s10 1 wait states after the VALU at PC"},
        {"fault_valu_vcc_carry", "VALU read): reads vcc_lo 0 wait states"},
        {"fault_valu_readlane_src", "the VGPR v_readlane/v_readfirstlane reads): reads v1 0 wait states"},
        {"fault_valu_exec_readfirstlane", "EXEC before v_readlane/v_readfirstlane/v_writelane): reads exec_lo 3 wait states"},
        {"fault_valu_writelane_select", "lane select of v_readlane/v_writelane): reads s10 3 wait states"},
        {"fault_valu_div_fmas_vcc", "VCC before v_div_fmas): reads vcc_lo 3 wait states"},
        {"fault_valu_exec_mfma", "EXEC before an MFMA): reads exec_lo 3 wait states"},
        {"fault_valu_wide_store", "overwrites v6 1 wait states after a store of more than 8 bytes"},
        {"fault_valu_sdwa_dst_sel", "uses v1 right after the VALU at PC"},
        {"fault_valu_opsel_dst", "uses v1 right after the VALU at PC"},
    };
    // The dst-sel forwarding rule is an error unless ZYFA_EMU_DST_SEL_HAZARD=warning (runner.cpp).
    setenv("ZYFA_EMU_DST_SEL_HAZARD", "warning", 1);
    expect_ok(emu_test::run(*object, "fault_valu_sdwa_dst_sel", bufs));
    expect_ok(emu_test::run(*object, "fault_valu_opsel_dst", bufs));
    unsetenv("ZYFA_EMU_DST_SEL_HAZARD");
    for (const Fault& f : faults) {
        const std::string error = emu_test::run(*object, f.kernel, bufs);
        expect_fault(error, f.needle);
        expect_fault(error, f.kernel);  // the message names the kernel (and offset, workgroup, wave)
    }
    auto each_lane = [&](const char* kernel, uint32_t (*want)(int lane, bool gfx950)) {
        std::fill(out.begin(), out.end(), 0u);
        expect_ok(emu_test::run(*object, kernel, bufs));
        for (int l = 0; l < 64; ++l) check_u32(kernel, 0, l, out[l], want(l, gfx950));
    };
    each_lane("ok_valu_sgpr_mask", [](int l, bool) { return l > 5 ? 1u : 0u; });
    each_lane("ok_valu_vcc_carry", [](int l, bool) { return uint32_t(l + (l >= 1 ? 1 : 0)); });
    each_lane("ok_valu_readlane_src", [](int, bool) { return 103u; });
    each_lane("ok_valu_exec_readfirstlane", [](int, bool) { return 210u; });  // first lane of 10..63
    each_lane("ok_valu_writelane_select", [](int l, bool) { return l == 40 ? 5u : 7u; });
    each_lane("ok_valu_div_fmas_vcc", [](int l, bool) { return bits(6.0f + float(l)); });
    each_lane("ok_valu_sdwa_dst_sel", [](int l, bool) { return (uint32_t(0x30 + l) << 16 | 0x5555u) + 1; });
    // fp8 of 1.0 and 2.0 in the high word: e4m3fn 0x38, 0x40 (gfx950); e4m3fnuz 0x40, 0x48 (gfx942).
    each_lane("ok_valu_opsel_dst", [](int, bool g950) { return g950 ? 0x40380000u : 0x48400000u; });
    // A and B hold the bf16 pairs (0, 1.0) (f32 1.0): over K = 8, four products of 1 x 1.
    each_lane("ok_valu_exec_mfma", [](int, bool) { return bits(4.0f); });
    each_lane("ok_valu_trans_to_trans", [](int l, bool) { return bits(float(l)); });  // exact: 2^l
    std::fill(out.begin(), out.end(), 0u);
    expect_ok(emu_test::run(*object, "ok_valu_wide_store", bufs));
    for (int l = 0; l < 64; ++l) {
        for (int k = 0; k < 4; ++k) check_u32("ok_valu_wide_store", k, l, out[4 * l + k], uint32_t(l + 1 + k));
        check_u32("ok_valu_wide_store", 4, l, out[256 + 2 * l], 0u);
        check_u32("ok_valu_wide_store", 5, l, out[256 + 2 * l + 1], uint32_t(l + 4));
    }
}

void test_valu_hazards(void**) {
    run_valu_hazards("valu_hazards.gfx950.hsaco", true);
    run_valu_hazards("valu_hazards.gfx942.hsaco", false);
}

// ------------------------------------------------------------------ fp8 / bf8 conversions

// 8-bit float formats, decoded here from their definitions: e4m3 (fnuz: bias 8, 0x80 NaN; fn:
// bias 7, S.1111.111 NaN) and e5m2 (fnuz: bias 16; OCP: bias 15, IEEE-like inf/NaN).
struct Format8 {
    int mbits, bias;
    bool fnuz;
};
const Format8 kE4M3Fn{3, 7, false}, kE4M3Fnuz{3, 8, true}, kE5M2{2, 15, false}, kE5M2Fnuz{2, 16, true};

bool is_nan8(uint32_t c, const Format8& f) {
    if (f.fnuz) return c == 0x80;
    if (f.mbits == 3) return (c & 0x7f) == 0x7f;
    return (c & 0x7f) > 0x7c;
}
double decode8(uint32_t c, const Format8& f) {
    const int ebits = 7 - f.mbits, e = int(c >> f.mbits) & ((1 << ebits) - 1), m = int(c) & ((1 << f.mbits) - 1);
    if (!f.fnuz && f.mbits == 2 && e == 31 && m == 0) return (c & 0x80) ? -HUGE_VAL : HUGE_VAL;
    const double v = e == 0 ? std::ldexp(m, 1 - f.bias - f.mbits) : std::ldexp((1 << f.mbits) + m, e - f.bias - f.mbits);
    return (c & 0x80) ? -v : v;
}
// The largest finite positive code.
uint32_t max_code8(const Format8& f) { return f.fnuz ? 0x7f : f.mbits == 3 ? 0x7e : 0x7b; }
// Nearest code by search, ties to the even code; beyond the largest finite value (after
// rounding) NaN for e4m3 / fnuz and inf for OCP e5m2 — the emulator's documented choice.
uint32_t encode8_reference(double x, const Format8& f) {
    const uint32_t sign = std::signbit(x) ? 0x80u : 0u;
    const uint32_t overflow = f.fnuz ? 0x80u : f.mbits == 3 ? (sign | 0x7fu) : (sign | 0x7cu);
    if (std::isnan(x)) return f.fnuz ? 0x80u : 0x7fu;
    const double a = std::fabs(x);
    const uint32_t top = max_code8(f);
    const double vmax = decode8(top, f), half_ulp = (vmax - decode8(top - 1, f)) / 2;
    if (a > vmax + half_ulp || (a == vmax + half_ulp && (top & 1))) return overflow;
    uint32_t best = 0;
    for (uint32_t c = 1; c <= top; ++c) {
        const double d = std::fabs(decode8(c, f) - a), db = std::fabs(decode8(best, f) - a);
        if (d < db || (d == db && (c & 1) == 0)) best = c;
    }
    if (best == 0) return f.fnuz ? 0u : sign;
    return sign | best;
}

void run_cvt_ops(const char* file, bool gfx950) {
    auto object = emu_test::load(file);
    const Format8 fp8 = gfx950 ? kE4M3Fn : kE4M3Fnuz, bf8 = gfx950 ? kE5M2 : kE5M2Fnuz;
    std::vector<float> a(64), b(64), scale(64);
    std::vector<uint32_t> c(64), out(64 * 13, 0);
    for (int l = 0; l < 64; ++l) {
        // Mantissas k/16 put exact ties on every 3- and 2-bit grid; exponents -9..-2 and 2..9
        // cover subnormals and overflow of both e4m3 variants (fn 448, fnuz 240).
        a[l] = float((l % 2 ? -1.0 : 1.0) * (1.0 + (l % 16) / 16.0) * std::ldexp(1.0, l < 32 ? l / 4 - 9 : l / 4 - 6));
        b[l] = float((l * 37 % 64 - 32) * 0.37);
        scale[l] = float(1.75 * std::ldexp(1.0, l % 8 - 4));  // only the exponent counts
        uint32_t word = 0;
        for (int k = 0; k < 4; ++k) {
            uint32_t code = uint32_t(l * 4 * 73 + k * 29 + 11) & 0xff;
            if (is_nan8(code, kE4M3Fn) || is_nan8(code, kE4M3Fnuz) || (code & 0x7f) >= 0x7c) code ^= 0x40;
            word |= code << (8 * k);
        }
        c[l] = word;
    }
    b[63] = std::numeric_limits<float>::infinity();
    b[62] = std::numeric_limits<float>::quiet_NaN();
    b[61] = -1e-30f;
    expect_ok(emu_test::run(*object, "cvt_ops", {{out.data(), out.size() * 4}, {a.data(), 256}, {b.data(), 256},
                                                  {c.data(), 256}, {scale.data(), 256}}));
    for (int l = 0; l < 64; ++l) {
        auto pair = [&](double x, double y, const Format8& f) { return encode8_reference(x, f) | encode8_reference(y, f) << 8; };
        const uint32_t old = 0x12345678u;
        const double s = std::ldexp(1.0, l % 8 - 4);
        auto from8 = [&](uint32_t code, const Format8& f) { return bits(float(decode8(code & 0xff, f))); };
        const uint32_t want[12] = {
            (old & 0xffff0000u) | pair(a[l], b[l], fp8),
            (old & 0xffffu) | pair(a[l], b[l], fp8) << 16,
            (old & 0xffff0000u) | pair(a[l], b[l], bf8),
            (old & 0xffffu) | pair(-a[l], std::fabs(b[l]), fp8) << 16,
            from8(c[l], fp8), from8(c[l] >> 16, fp8), from8(c[l] >> 16, fp8), from8(c[l] >> 24, fp8),
            from8(c[l], bf8),
            gfx950 ? (old & 0xffff0000u) | pair(a[l] / s, b[l] / s, fp8) : 0u,
            gfx950 ? (old & 0xffffu) | pair(a[l] / s, b[l] / s, fp8) << 16 : 0u,
            from8(c[l] >> 8, bf8)};
        for (int k = 0; k < 12; ++k) check_u32(file, k, l, out[64 * k + l], want[k]);
        // gfx950's v_cvt_pk_f16_f32: both halves rounded to nearest even (the compiler's _Float16
        // conversion as the reference), inf and NaN kept.
        if (gfx950) {
            auto half_bits = [](float x) {
                const _Float16 h = static_cast<_Float16>(x);
                uint16_t u;
                std::memcpy(&u, &h, 2);
                return uint32_t(u);
            };
            check_u32(file, 12, l, out[64 * 12 + l], half_bits(a[l]) | half_bits(b[l]) << 16);
        }
    }
    // The inputs reach every case the rule distinguishes.
    int overflow = 0, ties = 0, subnormal = 0;
    for (int l = 0; l < 64; ++l) {
        const uint32_t code = encode8_reference(a[l], fp8);
        overflow += is_nan8(code, fp8);
        subnormal += (code & 0x78) == 0 && (code & 7) != 0;
        ties += l % 2 == 1;
    }
    if (!(overflow > 0 && subnormal > 0 && ties > 0)) std::fprintf(stderr, "%s: overflow %d subnormal %d ties %d\n", file, overflow, subnormal, ties);
    assert_true(overflow > 0 && subnormal > 0 && ties > 0);
}

void test_conversions(void**) {
    run_cvt_ops("cvt.gfx950.hsaco", true);
    run_cvt_ops("cvt.gfx942.hsaco", false);
}

// ------------------------------------------------------------------ transposing LDS reads (gfx950)

void test_transpose_lds(void**) {
    auto object = emu_test::load("transpose_lds.gfx950.hsaco");
    std::vector<uint32_t> out(64 * 8, 0);
    expect_ok(emu_test::run(*object, "transpose_ops", {{out.data(), out.size() * 4}}));
    // The LDS image the kernel writes.
    std::vector<uint8_t> lds(1024);
    for (int h = 0; h < 256; ++h) {
        lds[2 * h] = uint8_t(h);
        lds[2 * h + 1] = uint8_t(h >> 8);
    }
    for (int j = 0; j < 512; ++j) lds[512 + j] = uint8_t(j);
    for (int l = 0; l < 64; ++l) {
        const int g = l / 16, t = l % 16;
        // The property the layout promises (docs/emulator.md, ISA facts; Triton's ds_read_tr layout): with
        // each lane addressing 4 (b16) / 8 (b8) consecutive rows m of one column k of a 16-row
        // block, lane t receives row m = t, columns k = 0.. in its elements.
        const uint32_t h0 = uint32_t(64 * g + t);
        check_u32("tr_b16 row t", 0, l, out[l], h0 | (h0 + 16) << 16);
        check_u32("tr_b16 row t", 1, l, out[64 + l], (h0 + 32) | (h0 + 48) << 16);
        uint32_t b8[2] = {0, 0};
        for (int e = 0; e < 8; ++e) b8[e / 4] |= uint32_t((128 * g + t + 16 * e) & 0xff) << (8 * (e % 4));
        check_u32("tr_b8 row t", 2, l, out[128 + l], b8[0]);
        check_u32("tr_b8 row t", 3, l, out[192 + l], b8[1]);
    }
    // Arbitrary aligned addresses 8 ((5 l + 3) % 64): result[t].e = loaded[4e + t/4].element(t % 4)
    // (b16) and loaded[2e + t/8].element(t % 8) (b8), lanes counted inside the 16-lane group.
    auto address = [](int l) { return 8 * ((5 * l + 3) % 64); };
    for (int l = 0; l < 64; ++l) {
        const int g = l & ~15, t = l & 15;
        uint8_t want16[8], want8[8];
        for (int e = 0; e < 4; ++e) {
            const int from = address(g + 4 * e + t / 4) + 2 * (t % 4);
            want16[2 * e] = lds[from];
            want16[2 * e + 1] = lds[from + 1];
        }
        for (int e = 0; e < 8; ++e) want8[e] = lds[512 + address(g + 2 * e + t / 8) + t % 8];
        uint32_t w16[2], w8[2];
        std::memcpy(w16, want16, 8);
        std::memcpy(w8, want8, 8);
        check_u32("tr_b16 any address", 4, l, out[256 + l], w16[0]);
        check_u32("tr_b16 any address", 5, l, out[320 + l], w16[1]);
        check_u32("tr_b8 any address", 6, l, out[384 + l], w8[0]);
        check_u32("tr_b8 any address", 7, l, out[448 + l], w8[1]);
    }
    expect_fault(emu_test::run(*object, "fault_transpose_lgkmcnt", {{out.data(), out.size() * 4}}),
                 "reads v42 before the s_waitcnt lgkmcnt");
    expect_fault(emu_test::run(*object, "fault_transpose_exec", {{out.data(), out.size() * 4}}),
                 "partly active 16-lane group");
}

// ------------------------------------------------------------------ direct-to-LDS loads

// The LDS image of one wave's 4096-byte region in lds_dma.s, under the documented rule: LDS address
// = M0 + instruction offset + lane * (4, or 16 for the 12/16-byte forms); an out-of-range buffer
// piece writes 0.
std::vector<uint32_t> lds_dma_region(const std::vector<uint32_t>& in, uint32_t num_records, bool gfx950) {
    std::vector<uint32_t> region(1024, 0);
    for (int q = 0; q < 128; ++q) region[q] = 0xffffffffu;  // the kernel's prefill
    for (uint32_t l = 0; l < 64; ++l) {
        const uint32_t offset = 16 + 4 * l;                          // buffer_load_dword offen offset:16 lds
        region[offset / 4] = offset < num_records ? in[offset / 4] : 0u;
        region[(1536 + 8 + 4 * l) / 4] = in[(8 + 4 * l) / 4];      // global_load_lds_dword offset:8
        if (gfx950) {
            for (uint32_t k = 0; k < 4; ++k) region[(512 + 16 * l) / 4 + k] = in[4 * l + k];      // x4
            for (uint32_t k = 0; k < 3; ++k) region[(2048 + 16 * l) / 4 + k] = in[3 * l + k];   // x3, 16-byte lane stride
        }
    }
    return region;
}

void run_lds_dma(const char* file, bool gfx950) {
    auto object = emu_test::load(file);
    std::vector<uint32_t> in(1024), out(2048, 0);
    for (uint32_t i = 0; i < 1024; ++i) in[i] = 0x5000000u + i * 7919u;
    uint32_t params[2] = {200, 0};
    const std::vector<Buffer> bufs = {{out.data(), out.size() * 4}, {in.data(), in.size() * 4}, {params, sizeof params}};
    const std::vector<uint32_t> region = lds_dma_region(in, params[0], gfx950);
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        std::fill(out.begin(), out.end(), 0u);
        expect_ok(emu_test::run(*object, "lds_dma_ops", bufs, 128, seed));
        for (int w = 0; w < 2; ++w) {
            for (int q = 0; q < 1024; ++q) check_u32(file, w, q, out[1024 * w + q], region[q]);
        }
    }
    expect_fault(emu_test::run(*object, "fault_dma_vmcnt", bufs, 64),
                 "before the s_waitcnt vmcnt that covers the direct-to-LDS load");
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        expect_fault(emu_test::run(*object, "fault_dma_barrier", bufs, 128, seed), "was not waited for");
    }
    expect_fault(emu_test::run(*object, "fault_dma_m0", bufs, 64), "right after an SALU write of m0");
    expect_fault(emu_test::run(*object, "fault_dma_ds_write", bufs, 64), "that a direct-to-LDS load of this wave still writes");
    expect_fault(emu_test::run(*object, "fault_dma_lds_bounds", bufs, 64), "out-of-bounds LDS write of 4 bytes");
}

void test_lds_dma(void**) {
    run_lds_dma("lds_dma.gfx950.hsaco", true);
    run_lds_dma("lds_dma.gfx942.hsaco", false);
}

// ------------------------------------------------------------------ scalar edge cases

void test_scalar_edges(void**) {
    auto object = emu_test::load("edges.gfx950.hsaco");
    std::vector<uint32_t> out(128, 0);
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        std::fill(out.begin(), out.end(), 0u);
        expect_ok(emu_test::run(*object, "edge_ops", {{out.data(), out.size() * 4}}, 128, seed));
        for (int l = 0; l < 64; ++l) check_u32("edge_ops", 0, l, out[l], 104u);  // lane 4 is the first active
    }
}

// ------------------------------------------------------------------ cycle model

zyfa::emu::CycleEstimate cycle_estimate(const zyfa::emu::CodeObject& object, const char* kernel,
                                        const zyfa::emu::CycleParams& params) {
    zyfa::emu::LaunchConfig config;
    config.block[0] = 128;
    config.kernarg.assign(64, 0);
    config.threads = 1;
    std::vector<std::vector<uint64_t>> traces;
    config.trace = &traces;
    zyfa::emu::run_kernel(object, *object.find_kernel(kernel), config);
    assert_int_equal(traces.size(), 2);
    const zyfa::emu::CycleEstimate e = zyfa::emu::estimate_mfma_busy(object, traces[0], traces[1], params);
    std::printf("  cycle model %-18s trips %d (measured %d), %.1f cycles/trip, MFMA busy %.3f\n", kernel, e.iterations,
                e.window_iterations, e.cycles_per_iteration, e.mfma_busy_fraction);
    assert_true(e.loop_found);
    assert_int_equal(e.window_iterations, 6);  // 8 trips, the first and the last left out
    return e;
}

double cycle_busy(const zyfa::emu::CodeObject& object, const char* kernel) {
    return cycle_estimate(object, kernel, {}).mfma_busy_fraction;
}

void test_cycle_model(void**) {
    auto object = emu_test::load("cycle.gfx950.hsaco");
    // Two waves each issuing 64 pipe cycles per trip with 3 cycles of other work: the pipe never idles.
    assert_true(cycle_busy(*object, "cycle_mfma_bound") >= 0.99);
    // 2 x 32 busy cycles in a 132-cycle trip.
    const double nop_bound = cycle_busy(*object, "cycle_nop_bound");
    assert_true(nop_bound > 64.0 / 134 && nop_bound < 64.0 / 130);
    // The cost classes: 128 VALU cycles per trip for the two waves (cycle.s); conversions at
    // LLVM's quarter rate would make it 176, transcendentals at one pass 96.
    const zyfa::emu::CycleEstimate classes = cycle_estimate(*object, "cycle_valu_classes", {});
    // (The window runs from one of wave 0's trip starts to another, so the other wave's offset
    // moves it by a few cycles.)
    assert_true(classes.cycles_per_iteration >= 124.0 && classes.cycles_per_iteration <= 132.0);
    assert_true(classes.mix.valu_pipe_cycles == 64.0 && classes.mix.cvt == 2.0 && classes.mix.packed_f32 == 2.0 &&
                classes.mix.trans == 2.0);
    // The packed-fp32 hold, per wave (the default) and per SIMD.
    assert_true(cycle_busy(*object, "cycle_packed_hold") >= 0.95);
    zyfa::emu::CycleParams per_simd;
    per_simd.coexec_per_simd = true;
    assert_true(cycle_estimate(*object, "cycle_packed_hold", per_simd).mfma_busy_fraction < 0.8);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar),       cmocka_unit_test(test_vector),      cmocka_unit_test(test_maximum3),      cmocka_unit_test(test_f64),      cmocka_unit_test(test_lanes_memory),
        cmocka_unit_test(test_mfma_gfx950),  cmocka_unit_test(test_mfma_gfx942), cmocka_unit_test(test_faults),
        cmocka_unit_test(test_cycle_model),  cmocka_unit_test(test_buffer),
        cmocka_unit_test(test_dpp),         cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_transpose_lds), cmocka_unit_test(test_lds_dma),
        cmocka_unit_test(test_scalar_edges),
        cmocka_unit_test(test_valu_hazards),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
