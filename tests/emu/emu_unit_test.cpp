// The emulator's own tests (label emu): one hand-written kernel per instruction family checked
// against values computed here, MFMA forms against a plain matrix product with the operand
// layouts of gfx950-notes.md section 2, and kernels with deliberate faults that must be caught.
#include <cmath>
#include <cstdio>
#include <cstring>
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
    const uint32_t want[30] = {
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
        c + d, c - d};
    for (int k = 0; k < 30; ++k) check_u32("scalar", k, 0, out[k], want[k]);
}

// ------------------------------------------------------------------ VALU

void test_vector(void**) {
    auto object = emu_test::load("vector.gfx950.hsaco");
    std::vector<uint32_t> A(64), B(64), C(64), out(64 * 49, 0);
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
        const uint32_t want[49] = {
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
            (c << 2) + a, (a * b) & 0xffff, bits(float(b)), !(fa >= fb) ? 1u : 0u, bits(1.0f / fb), bits(fa / fb)};
        for (int k = 0; k < 49; ++k) check_u32("vector", k, l, out[64 * k + l], want[k]);
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
    // K index of element e in lane group g (gfx950-notes.md 2.3).
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
}

void test_mfma_gfx942(void**) {
    auto object = emu_test::load("mfma.gfx942.hsaco");
    const MfmaCase cases[] = {
        {"mfma_32x32x8bf16_1k", 32, 32, 8, false, false, false, 0, 0},
        {"mfma_32x32x16_fp8_fp8", 32, 32, 16, true, false, false, 0, 0},
        {"mfma_16x16x32_fp8_fp8", 16, 16, 32, true, false, false, 0, 0},
    };
    for (const MfmaCase& c : cases) run_mfma_case(*object, c, true);
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

// ------------------------------------------------------------------ cycle model

double cycle_busy(const zyfa::emu::CodeObject& object, const char* kernel) {
    zyfa::emu::LaunchConfig config;
    config.block[0] = 128;
    config.kernarg.assign(64, 0);
    config.threads = 1;
    std::vector<std::vector<uint64_t>> traces;
    config.trace = &traces;
    zyfa::emu::run_kernel(object, *object.find_kernel(kernel), config);
    assert_int_equal(traces.size(), 2);
    const zyfa::emu::CycleEstimate e = zyfa::emu::estimate_mfma_busy(object, traces[0], traces[1], {});
    std::printf("  cycle model %-18s trips %d (measured %d), %.1f cycles/trip, MFMA busy %.3f\n", kernel, e.iterations,
                e.window_iterations, e.cycles_per_iteration, e.mfma_busy_fraction);
    assert_true(e.loop_found);
    assert_int_equal(e.window_iterations, 6);  // 8 trips, the first and the last left out
    return e.mfma_busy_fraction;
}

void test_cycle_model(void**) {
    auto object = emu_test::load("cycle.gfx950.hsaco");
    // Two waves each issuing 64 pipe cycles per trip with 3 cycles of other work: the pipe never idles.
    assert_true(cycle_busy(*object, "cycle_mfma_bound") >= 0.99);
    // 2 x 32 busy cycles in a 132-cycle trip.
    const double nop_bound = cycle_busy(*object, "cycle_nop_bound");
    assert_true(nop_bound > 64.0 / 134 && nop_bound < 64.0 / 130);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar),       cmocka_unit_test(test_vector),      cmocka_unit_test(test_lanes_memory),
        cmocka_unit_test(test_mfma_gfx950),  cmocka_unit_test(test_mfma_gfx942), cmocka_unit_test(test_faults),
        cmocka_unit_test(test_cycle_model),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
