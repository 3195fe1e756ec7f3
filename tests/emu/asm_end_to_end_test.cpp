// The gfx950 FP8 LEAN, FP8 EXACT and BF16 assembly kernels and the gfx942 BF16, FP8 EXACT and FP8 LEAN ones (kernels/amd/gfx950_fp8, embedded
// from prebuilt/) end to end on the emulator: the public API with a HIP context on the stand-in
// (ZYFA_EMU_ARCH=gfx950, or gfx942: CTest runs both, asm_end_to_end_gfx950 / _gfx942), every
// embedded variant, random wave interleaving under several ZYFA_EMU_SEED values, the emulator's
// hazard, waitcnt, LDS-race and bounds checks on (they are always on; a fault fails the launch).
//
// ZYFA_HIP_LIBRARY is the launch recorder (launch_recorder.cpp: the stand-in plus a record of the
// kernel each launch ran), so every case also asserts that the asm kernel, not the HIP C++ one,
// actually ran; a second context, whose plan keeps to the HIP C++ kernels (AmdKernelChoice::HipCpp
// through the internal seam, tests/support/hip_context.hpp), must run the HIP C++ kernel instead.
//
// Checks:
//   - bitwise, where the CPU model fixes the result (as tests/emu/amd_end_to_end_test.cpp's
//     test_bitwise_lean): Q, K small integers (exact scores in any summation order), V one-hot
//     (O shows every P value), the model cpu::attention_blocked run as the AMD kernels convert
//     (FloatToIntRounding::TowardZero, the catalogue's lean_centre). No P code may differ; with one
//     key block O and lse are bit-identical to the model (FP8 LEAN); masked keys give exactly +0,
//     and lse is -inf on exactly the model's rows. BF16: no P value may differ either (the same
//     x = S scale_log2 - m_new, and the emulator's v_exp_f32 is the host's exp2, the CPU model's
//     exp2f: on hardware v_exp_f32 is within ~1 ulp, so a value on a bf16 rounding boundary could
//     flip there), but O and lse only within 1e-5: the row sum of the unrounded p is a tree on the
//     GPU and a sum in key order in the model (fp32 rounding, ~32 ulp at most); FP8 EXACT likewise
//     (P = e4m3fn(p 2^8): p 2^8 is exact, the conversion the model's RNE);
//   - tolerance cases on random inputs (tests/gpu/gpu_check.hpp: vs the CPU backend and the fp64
//     reference, guard bands, no element left unwritten; BF16 and FP8 EXACT with the HIP C++ BF16 /
//     FP8 EXACT kernels' bound (the mode's),
//     tools/zyfa-check/check_tolerances.hpp: S from the MFMA in its own order flips a bf16 P near a
//     rounding boundary, and O accumulates alpha O + V^T P^T in the MFMA's order): GQA, varlen with empty and length-1
//     sequences, lse or not, descales or not, seqlen_q not a multiple of 64 or 256, bottom-right
//     rows that see no key, every output dtype the kernel takes;
//   - wide strides (test_bitwise_wide_strides): K, V, Q, O rows 66-80 MiB apart in the stand-in's
//     sparse memory (63 rows of K or V stride > 4 GiB): O bitwise the compact layout's, P the model's;
//   - edge rows (edge_case_checks.hpp): seqlen_k = 0 and all-empty key sequences with K/V NULL
//     (O = +0, lse = -inf), NaN q / k rows and a NaN k descale (those rows NaN, the others as the
//     CPU backend).
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "amd/gfx950_fp8/generator/kernel_variant.hpp"
#include "common/attention_mask.h"
#include "core/validate.hpp"
#include "cpu/attention_blocked.hpp"
#include "gpu/exact_score_inputs.hpp"
#include "gpu/gpu_check.hpp"
#include "hip/attention_launch_plan.hpp"
#include "hip/hip_runtime.hpp"
#include "edge_case_checks.hpp"
#include "model_comparison.hpp"
#include "wide_stride_tensor.hpp"
#include "support/attention_modes.hpp"
#include "support/hip_context.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;
using namespace zyfa_emu_test;
namespace asm_fp8 = zyfa::gfx950_fp8;

namespace {

// Scheduling seeds of the emulator's random wave interleaving (ZYFA_EMU_SEED, read per launch).
const uint64_t kSeeds[] = {1, 2024, 99991};

// An embedded asm kernel and what the test learned about it.
struct AsmVariant {
    asm_fp8::KernelVariant variant;
    std::string symbol;
    std::string hip_cpp_symbol;         // what the plan runs without the asm kernels
    std::vector<zyfa_dtype> out_dtypes;  // output dtypes the plan sends to this kernel
};

std::vector<AsmVariant> g_variants;
std::vector<std::string> g_embedded;  // every embedded asm symbol of the arch, the paged variants too
std::string g_arch;  // ZYFA_EMU_ARCH: the stand-in's device, whose kernels are under test
zyfa_context* g_hip_cpp_ctx = nullptr;  // HIP context that plans the HIP C++ kernels only
unsigned long (*g_last_launched)(char*, unsigned long) = nullptr;

zyfa_mask mask_of(asm_fp8::VariantMask m) {
    switch (m) {
        case asm_fp8::VariantMask::None: return ZYFA_MASK_NONE;
        case asm_fp8::VariantMask::CausalTopLeft: return ZYFA_MASK_CAUSAL;
        case asm_fp8::VariantMask::CausalBottomRight: return ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    }
    return ZYFA_MASK_NONE;
}

void set_seed(uint64_t seed) { setenv("ZYFA_EMU_SEED", std::to_string(seed).c_str(), 1); }

std::string last_launched() {
    char name[256];
    g_last_launched(name, sizeof name);
    return name;
}

// The kernel the context's plan picks for `s` ("" with the reason printed when none). Device
// buffers: the plan refuses host memory it cannot reach.
std::string planned_kernel(zyfa_context* ctx, const CaseShape& s) {
    GpuCase c(*session().runtime, s);
    const char* name = zyfa_attn_kernel_name(ctx, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
    if (name == nullptr) {
        std::printf("  no kernel: %s\n", zyfa_last_error_message());
        return "";
    }
    return name;
}

bool is_bf16(const AsmVariant& v) { return v.variant.input == asm_fp8::VariantInput::Bf16; }
bool is_fp8_exact(const AsmVariant& v) { return v.variant.input == asm_fp8::VariantInput::Fp8Exact; }

// "d128_causal_tl" of zyfa_gfx950_fp8_lean_d128_causal_tl, "bf16 d128_none" of zyfa_gfx950_bf16_d128_none,
// "exact d128_none" of zyfa_gfx950_fp8_exact_d128_none.
std::string short_name(const AsmVariant& v) {
    const std::string gfx942_bf16 = "zyfa_gfx942_bf16_", gfx942_exact = "zyfa_gfx942_fp8_exact_",
                      gfx942_lean = "zyfa_gfx942_fp8_lean_";
    if (v.symbol.rfind(gfx942_bf16, 0) == 0) return "gfx942 bf16 " + v.symbol.substr(gfx942_bf16.size());
    if (v.symbol.rfind(gfx942_exact, 0) == 0) return "gfx942 exact " + v.symbol.substr(gfx942_exact.size());
    if (v.symbol.rfind(gfx942_lean, 0) == 0) return "gfx942 " + v.symbol.substr(gfx942_lean.size());
    const std::string fp8 = "zyfa_gfx950_fp8_lean_", bf16 = "zyfa_gfx950_bf16_", exact = "zyfa_gfx950_fp8_exact_";
    if (is_fp8_exact(v)) return "exact " + v.symbol.substr(exact.size());
    return is_bf16(v) ? "bf16 " + v.symbol.substr(bf16.size()) : v.symbol.substr(fp8.size());
}

// A shape of variant v (FP8 LEAN, FP8 EXACT or BF16): its mask and head dims, descales on, GQA 2:1.
CaseShape variant_shape(const AsmVariant& v) {
    const bool gfx942 = v.variant.arch == asm_fp8::VariantArch::Gfx942;  // e4m3fnuz
    CaseShape s = mode_shape(is_bf16(v)        ? kBf16
                             : is_fp8_exact(v) ? (gfx942 ? kE4m3fnuzExact : kE4m3fnExact)
                                               : (gfx942 ? kE4m3fnuzLean : kE4m3fnLean));
    s.mask = mask_of(v.variant.mask);
    s.head_dim_qk = v.variant.head_dim_qk;
    s.head_dim_v = v.variant.head_dim_v;
    s.heads_q = 4;
    s.heads_kv = 2;
    return s;
}

void expect_asm_ran(const AsmVariant& v, const std::string& label) {
    const std::string ran = last_launched();
    if (ran != v.symbol) {
        std::printf("  %s: launched %s, expected the asm kernel %s\n", label.c_str(), ran.c_str(), v.symbol.c_str());
        fail();
    }
}

// ------------------------------------------------------------------ the variants and the choice

// Every variant the generator defines for the arch is embedded, and nothing else is.
void test_every_variant_embedded(void**) {
    int missing = 0;
    for (const asm_fp8::KernelVariant& v : asm_fp8::all_variants()) {
        if (g_arch != asm_fp8::variant_arch_name(v)) continue;
        const std::string symbol = asm_fp8::variant_symbol(v);
        const bool found = std::find(g_embedded.begin(), g_embedded.end(), symbol) != g_embedded.end();
        std::printf("  %-40s %s\n", symbol.c_str(), found ? "embedded" : "MISSING from prebuilt/");
        missing += !found;
    }
    assert_int_equal(missing, 0);
}

// The plan prefers the asm kernel; an output dtype it does not take falls back
// to the HIP C++ kernel, which the HipCpp context runs on the same problem, as does a problem with a
// per-key bias; the recorder confirms which one ran. params.key_block 64 keeps the choice, 128 has
// no kernel.
void test_asm_chosen_and_launched(void**) {
    Session& session_ = session();
    for (const AsmVariant& v : g_variants) {
        CaseShape s = variant_shape(v);
        s.seqlen_q = s.seqlen_k = 70;
        assert_string_equal(planned_kernel(session_.cuda, s).c_str(), v.symbol.c_str());
        assert_string_equal(planned_kernel(g_hip_cpp_ctx, s).c_str(), v.hip_cpp_symbol.c_str());
        set_seed(kSeeds[0]);
        GpuCase on_asm(*session_.runtime, s);
        assert_int_equal(on_asm.run(session_.cuda, *session_.runtime, session_.stream), ZYFA_SUCCESS);
        expect_asm_ran(v, "asm context");
        GpuCase on_hip_cpp(*session_.runtime, s);
        assert_int_equal(on_hip_cpp.run(g_hip_cpp_ctx, *session_.runtime, session_.stream), ZYFA_SUCCESS);
        assert_string_equal(last_launched().c_str(), v.hip_cpp_symbol.c_str());
        // Both compute the same function of the inputs.
        const CpuDiff diff = compare_with_cpu(on_asm.host, on_hip_cpp.host);
        std::printf("  %-40s asm vs HIP C++: rel_rms %.2e, bitwise %lld/%lld\n", v.symbol.c_str(),
                    diff.rel_rms, (long long)diff.bitwise_equal, (long long)diff.elements);
        assert_true(diff.rel_rms <= o_tolerance_vs_cpu(s.dtype, s.out_dtype));  // both within it of the model
        // An output dtype the asm kernel does not write falls back to the HIP C++ kernel.
        for (zyfa_dtype out : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32}) {
            if (std::find(v.out_dtypes.begin(), v.out_dtypes.end(), out) != v.out_dtypes.end()) continue;
            CaseShape other = s;
            other.out_dtype = out;
            assert_string_equal(planned_kernel(session_.cuda, other).c_str(), v.hip_cpp_symbol.c_str());
        }
        // A per-key score bias (zyfa_attn_params.key_bias) is the HIP C++ kernel's alone.
        CaseShape biased = s;
        biased.key_bias.assign(static_cast<size_t>(s.batch * s.heads_q * s.seqlen_k), 0.5f);
        assert_string_equal(planned_kernel(session_.cuda, biased).c_str(), v.hip_cpp_symbol.c_str());
        // K/V row strides on both sides of the old 32-bit limit of a 64-row block's offsets take
        // the asm kernel (64-bit addresses since 2026-12-04; test_bitwise_wide_strides runs them).
        // One key: the strided view then spans one row and overlaps no output (which validation refuses).
        for (const bool v_side : {false, true}) {
            CaseShape one_key = s;
            one_key.seqlen_k = 1;
            GpuCase c(*session_.runtime, one_key);
            zyfa_tensor& t = v_side ? c.tv : c.tk;
            const int64_t elem = is_bf16(v) ? 2 : 1;  // strides are in elements, the limit in bytes
            const int64_t row_bytes = (v_side ? s.head_dim_v : s.head_dim_qk) * elem;
            const int64_t limit = (int64_t{UINT32_MAX} - row_bytes) / 63 / elem;
            for (const int64_t stride : {limit - limit % 16, limit + 16 - limit % 16}) {
                t.stride_seq = stride;
                t.stride_batch = stride * one_key.seqlen_k;
                const char* name = zyfa_attn_kernel_name(session_.cuda, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
                assert_non_null(name);
                assert_string_equal(name, v.symbol.c_str());
            }
        }
        // params.key_block: the asm kernels step 64 keys like the HIP C++ ones, so 64 is the
        // default's kernel and 128 has none on either context.
        CaseShape step = s;
        step.key_block = 64;
        assert_string_equal(planned_kernel(session_.cuda, step).c_str(), v.symbol.c_str());
        assert_string_equal(planned_kernel(g_hip_cpp_ctx, step).c_str(), v.hip_cpp_symbol.c_str());
        if (&v == &g_variants.front()) {
            GpuCase on_asm_64(*session_.runtime, step);
            assert_int_equal(on_asm_64.run(session_.cuda, *session_.runtime, session_.stream), ZYFA_SUCCESS);
            expect_asm_ran(v, "key_block 64");
            assert_true(on_asm_64.host.o == on_asm.host.o);
        }
        step.key_block = 128;
        assert_string_equal(planned_kernel(session_.cuda, step).c_str(), "");
        assert_non_null(std::strstr(zyfa_last_error_message(), "params.key_block = 128"));
        assert_string_equal(planned_kernel(g_hip_cpp_ctx, step).c_str(), "");
        // Sinks: the asm kernel folds them in (test_bitwise_sinks checks its bits).
        CaseShape sinks = s;
        sinks.sinks = {0.5f, -1.0f, 2.0f, 3.0f};
        assert_string_equal(planned_kernel(session_.cuda, sinks).c_str(), v.symbol.c_str());
        // A window: every asm kernel takes it (run time arguments; BF16 since 2026-12-04).
        s.window_left = 9;
        assert_string_equal(planned_kernel(session_.cuda, s).c_str(), v.symbol.c_str());
        s.window_left = -1;
        s.window_right = 3;
        assert_string_equal(planned_kernel(session_.cuda, s).c_str(), v.symbol.c_str());
    }
}

// ------------------------------------------------------------------ bitwise against the model

struct BitwiseShape {
    const char* what;
    int64_t seqlen_q, seqlen_k;
};

// Per mask: one key block (O bit-identical) and two (P codes identical); seqlen_k <= 128 keeps V
// one-hot over head_dim_v = 128.
std::vector<BitwiseShape> bitwise_shapes(asm_fp8::VariantMask mask) {
    switch (mask) {
        case asm_fp8::VariantMask::CausalTopLeft:
            return {{"s=64 (1 key block)", 64, 64}, {"s=128 (2 key blocks)", 128, 128}, {"sq=100 sk=128", 100, 128}};
        case asm_fp8::VariantMask::None:
            return {{"sq=37 sk=50 (1 key block)", 37, 50}, {"sq=50 sk=128 (2 key blocks)", 50, 128}};
        case asm_fp8::VariantMask::CausalBottomRight:
            return {{"sq=40 sk=30 (10 rows see no key)", 40, 30}, {"sq=100 sk=128 (2 key blocks)", 100, 128},
                    {"sq=130 sk=64 (66 rows see no key)", 130, 64}};
    }
    return {};
}

// Windows (run time window_left / window_right; FP8 and, since 2026-12-04, BF16), seqlen_k <= 128 as above. sq=300 puts the
// second workgroup's rows (256..299) at keys 84..127 (none, bottom-right): with window_left 10
// it starts at key block 64 and skips block 0. Top-left: rows past a short window see no key.
struct WindowShape {
    const char* what;
    int64_t seqlen_q, seqlen_k;
    int32_t window_left, window_right;
};

std::vector<WindowShape> window_shapes(asm_fp8::VariantMask mask) {
    switch (mask) {
        case asm_fp8::VariantMask::CausalTopLeft:
            return {{"s=128 window 20/-1", 128, 128, 20, -1}, {"sq=100 sk=128 window 70/5", 100, 128, 70, 5}};
        case asm_fp8::VariantMask::None:
            return {{"sq=300 sk=128 window 10/-1", 300, 128, 10, -1}, {"sq=50 sk=128 window 20/7", 50, 128, 20, 7},
                    {"sq=60 sk=128 window -1/0", 60, 128, -1, 0}};
        case asm_fp8::VariantMask::CausalBottomRight:
            return {{"sq=300 sk=128 window 10/-1", 300, 128, 10, -1}, {"sq=100 sk=128 window 40/2", 100, 128, 40, 2}};
    }
    return {};
}

// One bitwise case: the asm kernel on the emulator (seed for the inputs) and the CPU model on the
// same inputs, compared (the callers assert what their case must hold).
BitwiseReport run_bitwise_case(Session& session_, const AsmVariant& v, const CaseShape& s, const GpuCase::Edit& edit,
                               uint64_t seed, const char* what) {
    set_seed(seed);
    GpuCase gpu(*session_.runtime, s, edit);
    const zyfa_status st = gpu.run(session_.cuda, *session_.runtime, session_.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  %s %s seed %llu: zyfa_attn_fwd(HIP) failed: %s\n", v.symbol.c_str(), what,
                    (unsigned long long)seed, zyfa_last_error_message());
        fail();
    }
    expect_asm_ran(v, what);
    AttentionCase model(s);
    edit(model);
    run_amd_model(model);
    return compare_bitwise(gpu.host, model);
}

void test_bitwise_windows(void**) {
    Session& session_ = session();
    for (const AsmVariant& v : g_variants) {
        for (const WindowShape& b : window_shapes(v.variant.mask)) {
            CaseShape s = variant_shape(v);
            s.out_dtype = ZYFA_DTYPE_FP32;
            s.batch = 2;
            s.seqlen_q = b.seqlen_q;
            s.seqlen_k = b.seqlen_k;
            s.window_left = b.window_left;
            s.window_right = b.window_right;
            s.seed = 7;
            const GpuCase::Edit edit = [](AttentionCase& c) {
                integer_qk(c, 17);
                one_hot_v(c);
            };
            const BitwiseReport r = run_bitwise_case(session_, v, s, edit, kSeeds[1], b.what);
            std::printf("  %-38s %-30s O bitwise %lld/%lld  P mismatches %lld/%lld  masked %lld (non-zero %lld)  "
                        "lse -inf rows %lld/%lld (mismatch %lld), bits differ %lld, max rel %.1e\n",
                        v.symbol.c_str(), b.what, (long long)r.bitwise_equal, (long long)r.elements,
                        (long long)r.p_mismatched, (long long)r.p_compared, (long long)r.masked,
                        (long long)r.masked_not_zero, (long long)r.empty_rows, (long long)r.rows,
                        (long long)r.lse_infinity_mismatch, (long long)r.lse_bits_differ, r.lse_max_rel);
            assert_true(r.p_compared > 0);
            assert_int_equal(r.masked_not_zero, 0);
            assert_int_equal(r.lse_infinity_mismatch, 0);
            assert_int_equal(r.p_mismatched, 0);
            if (is_fp8_exact(v) || is_bf16(v)) assert_true(r.lse_max_rel <= 1e-5);  // the fp32 row sum's order, as above
        }
    }
}

void test_bitwise_lean(void**) {
    Session& session_ = session();
    for (const AsmVariant& v : g_variants) {
        for (const BitwiseShape& b : bitwise_shapes(v.variant.mask)) {
            for (uint64_t seed : kSeeds) {
                CaseShape s = variant_shape(v);
                s.out_dtype = ZYFA_DTYPE_FP32;
                s.batch = 2;
                s.seqlen_q = b.seqlen_q;
                s.seqlen_k = b.seqlen_k;
                s.seed = 5;
                const GpuCase::Edit edit = [](AttentionCase& c) {
                    integer_qk(c, 17);
                    one_hot_v(c);
                };
                const BitwiseReport r = run_bitwise_case(session_, v, s, edit, seed, b.what);
                const bool one_block = s.seqlen_k <= asm_fp8::kKeysPerBlock;
                std::printf("  %-38s %-34s seed %-5llu O bitwise %lld/%lld  P mismatches %lld/%lld  masked %lld "
                            "(non-zero %lld)  lse -inf rows %lld/%lld (mismatch %lld), bits differ %lld\n",
                            v.symbol.c_str(), b.what, (unsigned long long)seed, (long long)r.bitwise_equal,
                            (long long)r.elements, (long long)r.p_mismatched, (long long)r.p_compared,
                            (long long)r.masked, (long long)r.masked_not_zero, (long long)r.empty_rows,
                            (long long)r.rows, (long long)r.lse_infinity_mismatch, (long long)r.lse_bits_differ);
                assert_true(r.p_compared > 0);
                assert_int_equal(r.masked_not_zero, 0);
                assert_int_equal(r.lse_infinity_mismatch, 0);
                // The same S and the same fp32 operations give the same Lean P codes, bit for bit;
                // BF16 and FP8 EXACT: the same bf16 / e4m3fn P (see the top: the emulator's
                // v_exp_f32 is exp2f, and p 2^8 is exact).
                assert_int_equal(r.p_mismatched, 0);
                if (is_bf16(v) || is_fp8_exact(v)) {
                    // m and P agree; l differs by the order of its fp32 sum only.
                    assert_true(r.lse_max_rel <= 1e-5);
                } else if (one_block) {
                    // One key block: m, the block exponent, l (an exact MFMA sum of codes) and
                    // v_descale / l are the model's bits, so O and lse are too.
                    assert_int_equal(r.bitwise_equal, r.elements);
                    assert_int_equal(r.lse_bits_differ, 0);
                }
            }
        }
    }
}

// Attention sinks (common/attention_sink.h): below, near and above the rows' maxima (scores of
// integer_qk's inputs reach about 30), one of -inf (no sink: the row's bits without sinks), against
// the CPU model on the same inputs. The fold runs on the finished row, so whatever test_bitwise_lean
// holds without sinks holds with them: P codes the model's, and for FP8 LEAN on one key block O and
// lse bit for bit; bottom-right rows that see no key get O = 0 and lse = their sink.
void test_bitwise_sinks(void**) {
    Session& session_ = session();
    for (const AsmVariant& v : g_variants) {
        for (const BitwiseShape& b : bitwise_shapes(v.variant.mask)) {
            CaseShape s = variant_shape(v);
            s.out_dtype = ZYFA_DTYPE_FP32;
            s.batch = 2;
            s.seqlen_q = b.seqlen_q;
            s.seqlen_k = b.seqlen_k;
            s.seed = 5;
            s.sinks = {0.5f, -std::numeric_limits<float>::infinity(), 3.0f, 40.0f};
            const GpuCase::Edit edit = [](AttentionCase& c) {
                integer_qk(c, 17);
                one_hot_v(c);
            };
            const BitwiseReport r = run_bitwise_case(session_, v, s, edit, kSeeds[0], b.what);
            const bool one_block = s.seqlen_k <= asm_fp8::kKeysPerBlock;
            std::printf("  %-38s %-34s sinks: O bitwise %lld/%lld  P mismatches %lld/%lld  lse -inf rows %lld/%lld "
                        "(mismatch %lld), bits differ %lld, max rel %.1e\n",
                        v.symbol.c_str(), b.what, (long long)r.bitwise_equal, (long long)r.elements,
                        (long long)r.p_mismatched, (long long)r.p_compared, (long long)r.empty_rows, (long long)r.rows,
                        (long long)r.lse_infinity_mismatch, (long long)r.lse_bits_differ, r.lse_max_rel);
            assert_true(r.p_compared > 0);
            assert_int_equal(r.masked_not_zero, 0);
            assert_int_equal(r.lse_infinity_mismatch, 0);
            assert_int_equal(r.p_mismatched, 0);
            if (is_bf16(v) || is_fp8_exact(v)) {
                assert_true(r.lse_max_rel <= 1e-5);  // l's fp32 summation order, as without sinks
            } else if (one_block) {
                assert_int_equal(r.bitwise_equal, r.elements);
                assert_int_equal(r.lse_bits_differ, 0);
            }
        }
    }
}

// K, V, Q and O rows far apart (sparse stand-in memory, wide_stride_tensor.hpp): K rows 80 MiB and V
// rows 72 MiB apart put rows 52..63 (K) / 57..63 (V) of a 64-key block more than 4 GiB after the
// block's first row, where the old 32-bit per-lane offsets wrapped (a wrong row or a fault); the
// second key block starts 5 GiB in, the second batch 10 GiB (K) after the first. The result must be
// bitwise the same kernel's on the compact layout, and as test_bitwise_lean holds against the CPU model.
void test_bitwise_wide_strides(void**) {
    Session& session_ = session();
    for (const AsmVariant& v : g_variants) {
        CaseShape s = variant_shape(v);
        s.out_dtype = ZYFA_DTYPE_FP32;
        s.batch = 2;
        s.seqlen_q = 100;
        s.seqlen_k = 128;
        s.seed = 11;
        const GpuCase::Edit edit = [](AttentionCase& c) {
            integer_qk(c, 23);
            one_hot_v(c);
        };
        set_seed(kSeeds[0]);
        GpuCase gpu(*session_.runtime, s, edit);
        assert_int_equal(gpu.run(session_.cuda, *session_.runtime, session_.stream), ZYFA_SUCCESS);
        expect_asm_ran(v, "wide strides: compact layout");
        const std::vector<uint8_t> o_compact = gpu.host.o;

        const size_t elem = is_bf16(v) ? 2 : 1;
        const int64_t mib = int64_t{1} << 20;
        auto wide = [&](const zyfa_tensor& t, const std::vector<uint8_t>& host, int64_t rows, int64_t heads,
                        int64_t dim, size_t bytes, int64_t stride_bytes) {
            return std::make_unique<WideStrideTensor>(*session_.runtime, t, host, s.batch, rows, heads, dim, bytes,
                                                      stride_bytes / int64_t(bytes));
        };
        auto wq = wide(gpu.host.tq, gpu.host.q, s.seqlen_q, s.heads_q, s.head_dim_qk, elem, 68 * mib);
        auto wk = wide(gpu.host.tk, gpu.host.k, s.seqlen_k, s.heads_kv, s.head_dim_qk, elem, 80 * mib);
        auto wv = wide(gpu.host.tv, gpu.host.v, s.seqlen_k, s.heads_kv, s.head_dim_v, elem, 72 * mib);
        auto wo = wide(gpu.host.to, gpu.host.o, s.seqlen_q, s.heads_q, s.head_dim_v, sizeof(float), 66 * mib);
        assert_true(63 * wk->tensor.stride_seq * int64_t(elem) > int64_t{UINT32_MAX});
        assert_true(63 * wv->tensor.stride_seq * int64_t(elem) > int64_t{UINT32_MAX});
        assert_string_equal(zyfa_attn_kernel_name(session_.cuda, &gpu.params, &wq->tensor, &wk->tensor, &wv->tensor,
                                                  &wo->tensor),
                            v.symbol.c_str());
        gpu.reset_outputs(std::vector<uint8_t>(gpu.host.o.size(), AttentionCase::kOutputSentinel),
                          std::vector<float>(gpu.host.lse.size(), AttentionCase::kLseSentinel));
        const zyfa_status st = zyfa_attn_fwd(session_.cuda, &gpu.params, &wq->tensor, &wk->tensor, &wv->tensor,
                                             &wo->tensor, session_.stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("  %s wide strides: zyfa_attn_fwd(HIP) failed: %s\n", v.symbol.c_str(), zyfa_last_error_message());
            fail();
        }
        session_.runtime->synchronize_stream(session_.stream);
        expect_asm_ran(v, "wide strides");
        gpu.download();  // lse (O's compact buffer was reset and is not written)
        wo->download(gpu.host.o);
        AttentionCase model(s);
        edit(model);
        run_amd_model(model);
        const BitwiseReport r = compare_bitwise(gpu.host, model);
        const bool same_as_compact = gpu.host.o == o_compact;
        std::printf("  %-38s K/V/Q/O rows 80/72/68/66 MiB apart (%.1f GiB reserved): O %s the compact layout's, "
                    "P mismatches %lld/%lld, masked non-zero %lld, lse -inf mismatch %lld, lse max rel %.1e\n",
                    v.symbol.c_str(), double(wq->bytes() + wk->bytes() + wv->bytes() + wo->bytes()) / double(1 << 30),
                    same_as_compact ? "bitwise" : "DIFFERS FROM", (long long)r.p_mismatched, (long long)r.p_compared,
                    (long long)r.masked_not_zero, (long long)r.lse_infinity_mismatch, r.lse_max_rel);
        assert_true(same_as_compact);
        assert_true(r.p_compared > 0);
        assert_int_equal(r.p_mismatched, 0);
        assert_int_equal(r.masked_not_zero, 0);
        assert_int_equal(r.lse_infinity_mismatch, 0);
        if (is_bf16(v) || is_fp8_exact(v)) assert_true(r.lse_max_rel <= 1e-5);  // the fp32 row sum's order
    }
}

// ------------------------------------------------------------------ tolerance cases

void check_asm_case(const AsmVariant& v, const CaseShape& s, const std::string& what, uint64_t seed,
                    const GpuCase::Edit& edit = {}) {
    set_seed(seed);
    const std::string label = short_name(v) + " " + what;
    check_gpu_case(s, label, edit);
    expect_asm_ran(v, label);
}

void test_tolerance_cases(void**) {
    for (const AsmVariant& v : g_variants) {
        const bool bottom_right = v.variant.mask == asm_fp8::VariantMask::CausalBottomRight;
        CaseShape s = variant_shape(v);
        s.heads_q = 4;
        s.heads_kv = 1;
        s.seqlen_q = 300;  // two workgroups, the second partial; not a multiple of 64
        s.seqlen_k = bottom_right ? 330 : 300;
        check_asm_case(v, s, "gqa 4:1 sq=300 (2 workgroups)", kSeeds[0]);

        s = variant_shape(v);
        s.batch = 5;
        s.lengths_q = {5, 0, 1, 77, 1};
        s.lengths_k = {20, 3, 1, 70, 0};
        s.seqlen_q = 77;
        s.seqlen_k = 70;
        check_asm_case(v, s, "varlen q(5,0,1,77,1) k(20,3,1,70,0)", kSeeds[1]);

        s = variant_shape(v);
        s.batch = 2;
        s.with_lse = false;
        s.descales = false;
        s.seqlen_q = 33;
        s.seqlen_k = 97;
        check_asm_case(v, s, "no lse, no descales, batch 2 sq=33 sk=97", kSeeds[2]);

        s = variant_shape(v);
        s.seqlen_q = 90;
        s.seqlen_k = 40;  // bottom-right: the first 50 rows see no key
        check_asm_case(v, s, "sq=90 sk=40", kSeeds[0]);

        // A negative softmax_scale: the kernels negate Q instead (its sign bits; on gfx942's
        // e4m3fnuz only bytes with a magnitude, 0x80 being NaN there), so that the row max stays a
        // max of raw scores.
        s = variant_shape(v);
        s.seqlen_q = s.seqlen_k = 70;
        check_asm_case(v, s, "softmax_scale < 0", kSeeds[1],
                       [](AttentionCase& c) { c.params.softmax_scale = -c.params.softmax_scale; });

        // Long enough for the steady-state loop (the shapes above see at most 6 key blocks):
        // 24+ blocks, a ragged last block.
        s = variant_shape(v);
        s.heads_q = 2;
        s.heads_kv = 1;
        const bool top_left = v.variant.mask == asm_fp8::VariantMask::CausalTopLeft;
        s.seqlen_q = top_left ? 1100 : 256;  // top-left: the last tile sees 1,100 keys
        s.seqlen_k = top_left ? 1100 : 1531;
        check_asm_case(v, s, top_left ? "s=1100 (18 key blocks per late tile)" : "sq=256 sk=1531 (24 key blocks)",
                       kSeeds[2]);

        {
            // Windows over the steady-state loop: late tiles start past key block 0.
            s = variant_shape(v);
            s.heads_q = 2;
            s.heads_kv = 1;
            s.seqlen_q = top_left ? 1100 : 600;
            s.seqlen_k = top_left ? 1100 : 1300;
            s.window_left = 300;
            s.window_right = v.variant.mask == asm_fp8::VariantMask::None ? 40 : -1;
            check_asm_case(v, s, "window 300 (left) over 1,100-1,300 keys", kSeeds[0]);
        }

        for (zyfa_dtype out : v.out_dtypes) {
            s = variant_shape(v);
            s.out_dtype = out;
            s.seqlen_q = s.seqlen_k = 80;
            check_asm_case(v, s, std::string("out ") + zyfa::validation::dtype_name(out) + " s=80", kSeeds[1]);
        }
    }
}

// ------------------------------------------------------------------ no key, non-finite scores

// seqlen_k = 0 and packed key sequences that are all empty, K and V NULL: the asm kernel runs (no
// key block, no K/V address formed into a load) and writes O = +0, lse = -inf over the sentinel.
void test_no_key_rows(void**) {
    for (const AsmVariant& v : g_variants) {
        CaseShape s = variant_shape(v);
        s.seqlen_q = 70;
        s.seqlen_k = 0;
        set_seed(kSeeds[1]);
        assert_true(check_no_key_rows(session().cuda, s, v.symbol + " seqlen_k=0"));
        expect_asm_ran(v, "seqlen_k=0");
        s.batch = 2;
        s.lengths_q = {5, 40};
        s.lengths_k = {0, 0};
        s.seqlen_q = 40;
        assert_true(check_no_key_rows(session().cuda, s, v.symbol + " varlen k(0,0)"));
        expect_asm_ran(v, "varlen k(0,0)");
    }
}

// NaN in one q row and one k row (e4m3fn has no inf: its NaN code): those rows' readers are NaN in O
// and lse, the others are the CPU backend's. Bottom-right: a NaN k descale of one kv head, with rows
// that see no key (O = 0, lse = -inf there: the masked blocks' -inf times a NaN scale must not
// reach m), and the NaN rows of a tile whose other rows are finite.
void test_non_finite_rows(void**) {
    for (const AsmVariant& v : g_variants) {
        CaseShape s = variant_shape(v);
        NonFinite nf;
        nf.q_row = 37;
        nf.q_head = 0;
        nf.k_head = 1;
        switch (v.variant.mask) {
            case asm_fp8::VariantMask::CausalTopLeft: s.seqlen_q = s.seqlen_k = 100; nf.k_row = 70; break;
            case asm_fp8::VariantMask::CausalBottomRight: s.seqlen_q = 90; s.seqlen_k = 120; nf.k_row = 80; break;
            case asm_fp8::VariantMask::None: s.seqlen_q = 60; s.seqlen_k = 100; nf.k_row = 90; break;
        }
        set_seed(kSeeds[2]);
        check_non_finite(session().cuda, s, nf, v.symbol + " NaN q row, NaN k row");
        expect_asm_ran(v, "NaN q row, NaN k row");
        // Descales are for FP8 inputs only (the API refuses them with BF16).
        if (v.variant.mask != asm_fp8::VariantMask::CausalBottomRight || is_bf16(v)) continue;
        s.seqlen_q = 90;
        s.seqlen_k = 40;  // the first 50 rows see no key
        NonFinite descale;
        descale.nan_k_descale_head = 1;
        check_non_finite(session().cuda, s, descale, v.symbol + " NaN k descale, sq=90 sk=40");
        expect_asm_ran(v, "NaN k descale");
    }
}

// The embedded asm kernels (the catalogue's attn_fwd_asm_fp8_* entries on gfx950), each matched
// with its generator variant, the HIP C++ kernel it replaces, and the output dtypes the plan
// routes to it.
bool discover_variants() {
    const auto catalogue = zyfa::hip::make_hip_attn_catalogue(zyfa::hip::AmdKernelChoice::Automatic);
    for (const zyfa::gpu::KernelSpec& spec : catalogue->kernels(g_arch)) {
        if (std::string(spec.variant).rfind("attn_fwd_asm_fp8_", 0) != 0 &&  // LEAN and attn_fwd_asm_fp8_exact_*
            std::string(spec.variant).rfind("attn_fwd_asm_bf16_", 0) != 0)
            continue;
        AsmVariant a;
        a.symbol = spec.symbol;
        bool known = false;
        for (const asm_fp8::KernelVariant& v : asm_fp8::all_variants()) {
            if (asm_fp8::variant_symbol(v) == a.symbol && g_arch == asm_fp8::variant_arch_name(v)) {
                a.variant = v;
                known = true;
            }
        }
        if (!known) {
            std::printf("FAIL asm_end_to_end: embedded kernel %s is no variant of all_variants()\n", a.symbol.c_str());
            return false;
        }
        g_embedded.push_back(a.symbol);
        // The paged variants: bitwise their contiguous twin (checked here) on the same keys, in
        // tests/emu/amd_paged_test.cpp.
        if (a.variant.paged) continue;
        const std::string dims = a.variant.head_dim_qk == 128 ? "d128" : "d192_128";
        const bool fnuz = a.variant.arch == asm_fp8::VariantArch::Gfx942;
        a.hip_cpp_symbol = (is_bf16(a)        ? "zyfa_attn_fwd_bf16_"
                            : is_fp8_exact(a) ? (fnuz ? "zyfa_attn_fwd_e4m3fnuz_exact_" : "zyfa_attn_fwd_e4m3_exact_")
                                              : (fnuz ? "zyfa_attn_fwd_e4m3fnuz_lean_" : "zyfa_attn_fwd_e4m3_lean_")) +
                           dims;
        for (zyfa_dtype out : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32}) {
            CaseShape s = variant_shape(a);
            s.out_dtype = out;
            if (planned_kernel(session().cuda, s) == a.symbol) a.out_dtypes.push_back(out);
        }
        std::string outs;
        for (zyfa_dtype out : a.out_dtypes) outs += std::string(" ") + zyfa::validation::dtype_name(out);
        std::printf("  embedded: %s (output:%s)\n", a.symbol.c_str(), outs.c_str());
        if (std::find(a.out_dtypes.begin(), a.out_dtypes.end(), ZYFA_DTYPE_BF16) == a.out_dtypes.end()) {
            std::printf("FAIL asm_end_to_end: %s does not take BF16 output\n", a.symbol.c_str());
            return false;
        }
        g_variants.push_back(a);
    }
    return true;
}

// The library's own context (zyfa_context_create: the automatic choice) for the asm kernels; the
// seam's HipCpp context for the HIP C++ kernels they replace.
zyfa_context* asm_context() {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_HIP;
    zyfa_context* ctx = nullptr;
    if (zyfa_context_create(&opts, &ctx) != ZYFA_SUCCESS) {
        std::printf("FAIL asm_end_to_end: zyfa_context_create(HIP) on the stand-in: %s\n", zyfa_last_error_message());
        return nullptr;
    }
    return ctx;
}

zyfa_context* hip_cpp_context() {
    std::string error;
    zyfa_context* ctx = hip_context_with(zyfa::hip::AmdKernelChoice::HipCpp, &error);
    if (ctx == nullptr) {
        std::printf("FAIL asm_end_to_end: HIP context (HIP C++ kernels) on the stand-in: %s\n", error.c_str());
    }
    return ctx;
}

}  // namespace

int main() {
    const char* library = std::getenv("ZYFA_HIP_LIBRARY");
    const char* arch = std::getenv("ZYFA_EMU_ARCH");
    if (!library || !arch || (std::string(arch) != "gfx950" && std::string(arch) != "gfx942")) {
        std::printf("SKIP asm_end_to_end: needs ZYFA_HIP_LIBRARY (the launch recorder) and ZYFA_EMU_ARCH=gfx950 or "
                    "gfx942 (CTest sets both)\n");
        return kSkipExitCode;
    }
    g_arch = arch;
    Session& s = session();
    s.cuda = asm_context();  // Session::cuda is the GPU context under test: here HIP with the asm kernels
    g_hip_cpp_ctx = hip_cpp_context();
    if (!s.cuda || !g_hip_cpp_ctx) return 1;
    void* recorder = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
    g_last_launched = recorder ? reinterpret_cast<unsigned long (*)(char*, unsigned long)>(
                                     dlsym(recorder, "zyfa_test_last_launched_kernel"))
                               : nullptr;
    if (!g_last_launched) {
        std::printf("FAIL asm_end_to_end: %s is not the launch recorder (no zyfa_test_last_launched_kernel)\n", library);
        return 1;
    }
    zyfa_context_options cpu_opts;
    zyfa_context_options_init(&cpu_opts, sizeof cpu_opts);
    cpu_opts.backend = ZYFA_BACKEND_CPU;
    if (zyfa_context_create(&cpu_opts, &s.cpu) != ZYFA_SUCCESS) {
        std::printf("FAIL asm_end_to_end: CPU context: %s\n", zyfa_last_error_message());
        return 1;
    }
    s.runtime = zyfa::hip::open_hip_runtime(0);
    s.stream = s.runtime->create_stream();
    std::printf("asm_end_to_end: %s on the emulator; zyfa %s, built with: %s\n", zyfa_context_device_name(s.cuda),
                zyfa_version_string(), zyfa_build_info());
    if (!discover_variants()) return 1;
    if (g_variants.empty()) {
        close_session();
        zyfa_context_destroy(g_hip_cpp_ctx);
        std::printf("SKIP asm_end_to_end: this build embeds no %s asm kernel "
                    "(kernels/amd/gfx950_fp8/prebuilt/ holds none for it)\n", g_arch.c_str());
        return kSkipExitCode;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_variant_embedded),
        cmocka_unit_test(test_asm_chosen_and_launched),
        cmocka_unit_test(test_bitwise_lean),
        cmocka_unit_test(test_bitwise_windows),
        cmocka_unit_test(test_bitwise_sinks),
        cmocka_unit_test(test_bitwise_wide_strides),
        cmocka_unit_test(test_tolerance_cases),
        cmocka_unit_test(test_no_key_rows),
        cmocka_unit_test(test_non_finite_rows),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    zyfa_context_destroy(g_hip_cpp_ctx);
    return failed;
}
