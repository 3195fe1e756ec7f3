// The AMD path end to end on the emulator: libzyfa.so's HIP backend (public API, dispatch, kernel
// arguments, embedded gfx950/gfx942 code objects) with ZYFA_HIP_LIBRARY pointing at the HIP
// stand-in (tools/amdgpu-emu/hip_standin), compared with the CPU backend and the fp64 reference
// by tests/gpu/gpu_check.hpp (its tolerances and their reasons: MFMA accumulation order differs
// from the CPU model's, everything else follows the model). Small shapes keep the tier within
// CI time. The target is chosen by ZYFA_EMU_ARCH (gfx950 or gfx942), set per CTest test.
//
// The kernels under test are the HIP C++ ones (kernels/amd/attention_fwd_variant.hip). The library
// plans problems the generated assembly kernels take on them (gfx950: FP8 and BF16; gfx942 since
// 2026-12-04: BF16 d128; tested by asm_end_to_end_test.cpp), so the context on both archs is the
// seam's AmdKernelChoice::HipCpp (tests/support/hip_context.hpp); main checks that an FP8 LEAN
// problem is planned on the HIP C++ kernel.
//
// Bitwise where the CPU model fixes the result (test_bitwise_*): with the scores made exact
// (small integers in Q and K: every product and every partial sum is an integer far below 2^24,
// so the MFMA's summation order cannot change S) the kernel and the model perform the same fp32
// operations on the same values from S on. The model is run with the AMD catalogue's conversion
// (v_cvt_i32_f32 truncates: FloatToIntRounding::TowardZero and the catalogue's lean_centre), not
// the CPU backend's default. One-hot V (key j has a 1 in dimension j) makes O[i][j] = P[i][j] * c
// with c one constant per row, so O shows every P value.
//
// The INT8 Q/K mode (test_int8_*): q and k of random codes over the whole int8 range with
// per-token and per-64-key-block descales, v in the arch's FP8 format (gfx950 e4m3fn, gfx942
// e4m3fnuz). Its scores are exact int32 whatever the codes (the int8 MFMA sums exactly), so the
// bitwise tests need no integer inputs: only one-hot V.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/attention_mask.h"
#include "cpu/attention_blocked.hpp"
#include "core/validate.hpp"
#include "gpu/exact_score_inputs.hpp"
#include "gpu/gpu_check.hpp"
#include "hip/attention_launch_plan.hpp"
#include "hip/hip_runtime.hpp"
#include "edge_case_checks.hpp"
#include "model_comparison.hpp"
#include "support/attention_modes.hpp"
#include "support/hip_context.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;
using namespace zyfa_emu_test;

namespace {

bool g_gfx942 = false;

// BF16 EXACT, and FP8 LEAN and EXACT in the target's FP8 format.
const DtypeMode& fp8_lean() { return g_gfx942 ? kE4m3fnuzLean : kE4m3fnLean; }
const DtypeMode& fp8_exact() { return g_gfx942 ? kE4m3fnuzExact : kE4m3fnExact; }
// The INT8 Q/K mode's v (and P) format: the one the arch's FP8 instruction reads.
zyfa_dtype int8_v_dtype() { return g_gfx942 ? ZYFA_DTYPE_FP8_E4M3FNUZ : ZYFA_DTYPE_FP8_E4M3FN; }

// INT8 LEAN and EXACT at head dims 64 and 128 (the AMD INT8 kernels'), against the CPU backend
// and the fp64 reference with gpu_check.hpp's FP8 bounds.
void for_int8_modes(const char* what, void (*shape_of)(CaseShape&)) {
    for (int64_t d : {64, 128}) {
        for_each_mode({kInt8qkLean, kInt8qkExact}, std::string(what) + " hd" + std::to_string(d),
                      [shape_of, d](CaseShape& s) {
                          s.head_dim_qk = s.head_dim_v = d;
                          s.v_dtype_int8 = int8_v_dtype();
                          shape_of(s);
                      },
                      [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
    }
}

void for_modes(const char* what, void (*shape_of)(CaseShape&)) {
    for_each_mode({kBf16, fp8_lean(), fp8_exact()}, what,
                  [shape_of](CaseShape& s) {
                      s.head_dim_qk = s.head_dim_v = 128;
                      shape_of(s);
                  },
                  [](const CaseShape& s, const std::string& label) { check_gpu_case(s, label); });
}

void test_masks(void**) {
    for_modes("causal s=150", [](CaseShape& s) { s.seqlen_q = s.seqlen_k = 150; });
    for_modes("none sq=37 sk=100", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = 37;
        s.seqlen_k = 100;
    });
    for_modes("causal bottom-right sq=40 sk=130", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 40;
        s.seqlen_k = 130;
    });
}

void test_windows(void**) {
    for_modes("causal window 17 s=140", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 140;
        s.window_left = 17;
    });
    for_modes("window (8,3) s=90", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = s.seqlen_k = 90;
        s.window_left = 8;
        s.window_right = 3;
    });
}

void test_gqa_varlen(void**) {
    for_modes("gqa 4:1 s=70", [](CaseShape& s) {
        s.heads_q = 4;
        s.heads_kv = 1;
        s.seqlen_q = s.seqlen_k = 70;
    });
    for_modes("varlen causal-br (5,0,64,1)", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.batch = 4;
        s.heads_q = 4;
        s.heads_kv = 2;
        s.lengths_q = {5, 0, 64, 1};
        s.lengths_k = {20, 3, 70, 66};
        s.seqlen_q = 64;
        s.seqlen_k = 70;
    });
}

void test_head_dims_lse_descales(void**) {
    for_modes("hd 192/128 s=96", [](CaseShape& s) {
        s.head_dim_qk = 192;
        s.seqlen_q = s.seqlen_k = 96;
    });
    for_modes("no lse, batch 2 s=50", [](CaseShape& s) {
        s.with_lse = false;
        s.batch = 2;
        s.seqlen_q = s.seqlen_k = 50;
    });
}

// Host memory on the HIP context (the stand-in's device memory is only what hipMalloc gave) is
// refused before anything runs; without the check the emulator finds an out-of-bounds read.
void test_host_pointers_refused(void**) {
    CaseShape s = mode_shape(fp8_lean());
    s.head_dim_qk = s.head_dim_v = 128;
    s.seqlen_q = s.seqlen_k = 16;
    Session& session_ = session();
    GpuCase gpu(*session_.runtime, s);
    void* const q_device = gpu.tq.data;
    gpu.tq.data = gpu.host.q.data();
    assert_int_equal(gpu.launch(session_.cuda, session_.stream), ZYFA_ERROR_INVALID_ARGUMENT);
    const std::string message = zyfa_last_error_message();
    std::printf("  host q: %s\n", message.c_str());
    assert_true(message.find("q.data = 0x") != std::string::npos);
    assert_true(message.find("is host memory; this context is HIP device 0") != std::string::npos);
    gpu.tq.data = q_device;
    gpu.params.k_descale = gpu.host.k_descale.data();
    assert_int_equal(gpu.launch(session_.cuda, session_.stream), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_true(std::string(zyfa_last_error_message()).find("params.k_descale = 0x") != std::string::npos);
}

// ------------------------------------------------------------------ the INT8 Q/K mode

void test_int8_masks_gqa(void**) {
    for_int8_modes("int8 causal s=150 gqa 4:2", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 150;
        s.heads_q = 4;
        s.heads_kv = 2;
    });
    for_int8_modes("int8 none sq=37 sk=100", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = 37;
        s.seqlen_k = 100;
    });
    for_int8_modes("int8 window (8,3) s=90, bf16 out", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = s.seqlen_k = 90;
        s.window_left = 8;
        s.window_right = 3;
        s.out_dtype = ZYFA_DTYPE_BF16;
    });
}

// Packed sequences (with an empty one) and sinks: the per-token descales are indexed by the row
// within its sequence, the per-block ones by the key within its sequence.
void test_int8_varlen_sinks(void**) {
    for_int8_modes("int8 varlen causal-br (5,0,64,1) sinks", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.batch = 4;
        s.heads_q = 4;
        s.heads_kv = 2;
        s.lengths_q = {5, 0, 64, 1};
        s.lengths_k = {20, 3, 130, 66};
        s.seqlen_q = 64;
        s.seqlen_k = 130;
        s.sinks = {0.5f, -2.0f, 3.0f, 30.0f};
    });
}


// ------------------------------------------------------------------ no key, non-finite scores

// seqlen_k = 0 and packed key sequences that are all empty (K and V NULL): O = +0, lse = -inf
// over the sentinel; some empty key sequences among others: as the CPU backend.
void test_no_key_rows(void**) {
    for (const DtypeMode& m : {kBf16, fp8_lean()}) {
        CaseShape s = mode_shape(m);
        s.head_dim_qk = s.head_dim_v = 128;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 70;
        s.seqlen_k = 0;
        assert_true(check_no_key_rows(session().cuda, s, std::string("seqlen_k=0 sq=70 ") + m.name));
        s.mask = ZYFA_MASK_NONE;
        s.batch = 2;
        s.lengths_q = {5, 40};
        s.lengths_k = {0, 0};
        s.seqlen_q = 40;
        assert_true(check_no_key_rows(session().cuda, s, std::string("varlen k(0,0) q(5,40) ") + m.name));
    }
    for_modes("varlen q(33,7,20) k(0,50,0)", [](CaseShape& s) {
        s.batch = 3;
        s.lengths_q = {33, 7, 20};
        s.lengths_k = {0, 50, 0};
        s.seqlen_q = 33;
        s.seqlen_k = 50;
    });
}

// NaN in one q row and +inf (FP8: the NaN code) in one k row under a causal mask: the q row and
// the rows that see the k row are NaN in O and lse; the others are the CPU backend's.
void test_non_finite_rows(void**) {
    for (const DtypeMode& m : {kBf16, fp8_lean()}) {
        CaseShape s = mode_shape(m);
        s.head_dim_qk = s.head_dim_v = 128;
        s.heads_q = 4;
        s.heads_kv = 2;
        s.seqlen_q = s.seqlen_k = 100;  // 2 key blocks
        NonFinite nf;
        nf.q_row = 37;
        nf.q_head = 0;
        nf.k_row = 70;
        nf.k_head = 1;
        check_non_finite(session().cuda, s, nf, std::string("causal s=100 NaN q row, +inf k row ") + m.name);
    }
}

// ------------------------------------------------------------------ attention sinks

// Sinks below, near and above the rows' maxima (common/attention_sink.h), against the CPU backend
// and the fp64 reference; rows without keys get O = 0 and lse = the sink.
void test_sinks(void**) {
    for_modes("sinks causal s=150 gqa 4:2", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 150;
        s.heads_q = 4;
        s.heads_kv = 2;
        s.sinks = {0.5f, -2.0f, 3.0f, 30.0f};
    });
    for_modes("sinks causal-br sq=60 sk=40 (20 rows see only the sink)", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 60;
        s.seqlen_k = 40;
        s.sinks = {1.5f, -INFINITY};
    });
    for_modes("sinks varlen q(33,7,20) k(0,50,0)", [](CaseShape& s) {
        s.batch = 3;
        s.lengths_q = {33, 7, 20};
        s.lengths_k = {0, 50, 0};
        s.seqlen_q = 33;
        s.seqlen_k = 50;
        s.sinks = {-1.0f, 2.5f};
    });
}

// Sinks of -inf are no sinks: the same bits as sinks NULL (the fold leaves m and l as they are).
void test_minus_inf_sinks_bitwise(void**) {
    for (const DtypeMode& m : {kBf16, fp8_lean()}) {
        CaseShape s = mode_shape(m);
        s.head_dim_qk = s.head_dim_v = 128;
        s.seqlen_q = s.seqlen_k = 150;
        s.heads_q = 4;
        s.heads_kv = 2;
        Session& session_ = session();
        GpuCase none(*session_.runtime, s);
        assert_int_equal(none.run(session_.cuda, *session_.runtime, session_.stream), ZYFA_SUCCESS);
        s.sinks.assign(4, -INFINITY);
        GpuCase minus_inf(*session_.runtime, s);
        assert_int_equal(minus_inf.run(session_.cuda, *session_.runtime, session_.stream), ZYFA_SUCCESS);
        const bool same = none.host.o == minus_inf.host.o &&
                          std::memcmp(none.host.lse.data(), minus_inf.host.lse.data(), 4 * none.host.lse.size()) == 0;
        std::printf("  sinks -inf vs none causal s=150 %-13s %s\n", m.name, same ? "bitwise equal" : "DIFFERENT");
        assert_true(same);
    }
}

// Sinks of NaN, +inf, -inf, 1e30 (far above every score) and finite ones, with rows that see no
// key: the kernel's O and lse against the CPU model bit for bit where the model's are NaN, -inf or
// 0, and within the model tolerances elsewhere.
void test_sink_edges(void**) {
    for (const DtypeMode& m : {kBf16, fp8_lean()}) {
        CaseShape s = mode_shape(m);
        s.head_dim_qk = s.head_dim_v = 128;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 60;
        s.seqlen_k = 40;
        s.heads_q = s.heads_kv = 6;
        s.sinks = {1.5f, -INFINITY, NAN, INFINITY, 1e30f, -3.0f};
        // Exact scores and one-hot V (as the bitwise tests): the kernel's m and l are the model's.
        const GpuCase::Edit edit = [](AttentionCase& c) {
            integer_qk(c, 17);
            one_hot_v(c);
        };
        Session& session_ = session();
        GpuCase gpu(*session_.runtime, s, edit);
        assert_int_equal(gpu.run(session_.cuda, *session_.runtime, session_.stream), ZYFA_SUCCESS);
        AttentionCase model(s);
        edit(model);
        run_amd_model(model);
        int64_t nan_rows = 0, sink_only_rows = 0, mismatches = 0;
        double max_rel = 0.0;
        for (int64_t h = 0; h < s.heads_q; ++h)
            for (int64_t i = 0; i < s.seqlen_q; ++i) {
                const size_t at = static_cast<size_t>(h * s.seqlen_q + i);
                const float lg = gpu.host.lse[at], lm = model.lse[at];
                nan_rows += std::isnan(lm);
                sink_only_rows += i < 20 && std::isfinite(lm);
                if (std::isnan(lm) || std::isinf(lm)) {
                    mismatches += !(std::isnan(lm) ? std::isnan(lg) : lg == lm);
                } else {
                    max_rel = std::max(max_rel, std::fabs(double(lg) - lm) / std::max(1.0, std::fabs(double(lm))));
                }
                for (int64_t x = 0; x < s.head_dim_v; ++x) {
                    const int64_t e = (i * s.heads_q + h) * s.head_dim_v + x;
                    const float og = gpu.host.out(e), om = model.out(e);
                    if (std::isnan(om) || om == 0.0f) {
                        mismatches += !(std::isnan(om) ? std::isnan(og) : bits_of(og) == bits_of(om));
                    } else {
                        max_rel = std::max(max_rel, std::fabs(double(og) - om) / std::max(1e-2, std::fabs(double(om))));
                    }
                }
            }
        std::printf("  sinks {1.5, -inf, NaN, +inf, 1e30, -3} causal-br 60x40 %-13s NaN rows %lld, sink-only rows %lld, "
                    "mismatches %lld, max rel %.1e\n",
                    m.name, (long long)nan_rows, (long long)sink_only_rows, (long long)mismatches, max_rel);
        assert_int_equal(nan_rows, 2 * s.seqlen_q);       // the NaN and +inf heads, every row
        assert_int_equal(sink_only_rows, 20 * 3);          // heads 1.5, 1e30, -3: lse = the sink
        assert_int_equal(mismatches, 0);
        assert_true(max_rel <= 2e-2);
    }
}

// ------------------------------------------------------------------ bitwise against the model

struct BitwiseShape {
    const char* what;
    zyfa_mask mask;
    int64_t seqlen_q, seqlen_k, head_dim_qk;
    int32_t window_left, window_right;
};

// Per-key biases of shape s (zyfa_attn_params.key_bias's layouts), of about the scores' spread.
std::vector<float> some_key_biases(const CaseShape& s) {
    int64_t keys = s.batch * s.seqlen_k;
    if (!s.lengths_k.empty()) {
        keys = 0;
        for (int32_t n : s.lengths_k) keys += n;
    }
    std::vector<float> b(static_cast<size_t>(keys * s.heads_q));
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25f * static_cast<float>(static_cast<int64_t>((i * 7919) % 23) - 11);
    return b;
}

// descales false: none (INT8 only: codes of about +-2 then, so that scores stay of a few units).
// key_bias: a per-key bias (common/key_bias.h) in every row's scores.
void run_bitwise(const BitwiseShape& b, const DtypeMode& m, bool sinks = false, bool descales = true,
                 bool key_bias = false) {
    // FP8 with descales (INT8: per token and per 64-key block): their folding order is part of the model.
    CaseShape s = mode_shape(m);
    const bool int8 = m.dtype == ZYFA_DTYPE_INT8;
    if (!descales) {
        s.descales = false;
        s.input_scale = 1.0f / 16;
    }
    s.v_dtype_int8 = int8_v_dtype();
    s.out_dtype = ZYFA_DTYPE_FP32;
    s.mask = b.mask;
    s.batch = 2;
    s.heads_q = 4;
    s.heads_kv = 2;
    s.seqlen_q = b.seqlen_q;
    s.seqlen_k = b.seqlen_k;
    s.head_dim_qk = b.head_dim_qk;
    s.head_dim_v = b.head_dim_qk == 64 ? 64 : 128;
    s.window_left = b.window_left;
    s.window_right = b.window_right;
    s.seed = 5;
    // Below, near and above the rows' maxima: the fold (common/attention_sink.h) is FMAs only, the
    // same bits on the GPU and the CPU from the same m and l.
    if (sinks) s.sinks = {-3.0f, 0.75f, 6.0f, 40.0f};
    if (key_bias) s.key_bias = some_key_biases(s);
    const GpuCase::Edit edit = [int8](AttentionCase& c) {
        if (!int8) integer_qk(c, 17);  // INT8 scores are exact int32 whatever the codes
        one_hot_v(c);
    };
    Session& session_ = session();
    GpuCase gpu(*session_.runtime, s, edit);
    const zyfa_status st = gpu.run(session_.cuda, *session_.runtime, session_.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  %s %s: zyfa_attn_fwd(HIP) failed: %s\n", b.what, m.name, zyfa_last_error_message());
        fail();
    }
    AttentionCase model(s);
    edit(model);
    run_amd_model(model);
    const BitwiseReport r = compare_bitwise(gpu.host, model);
    const bool lean = m.softmax == ZYFA_SOFTMAX_LEAN;
    const bool one_block = s.seqlen_k <= 64;
    std::printf("  exact S, one-hot V%s%s%s %-34s %-13s O bitwise %lld/%lld  P mismatches %lld/%lld  masked %lld (non-zero %lld)"
                "  lse: -inf rows %lld/%lld (mismatch %lld) max rel %.1e\n",
                sinks ? ", sinks" : "", key_bias ? ", key bias" : "", descales ? "" : ", no descales", b.what, m.name, (long long)r.bitwise_equal, (long long)r.elements, (long long)r.p_mismatched,
                (long long)r.p_compared, (long long)r.masked, (long long)r.masked_not_zero, (long long)r.empty_rows,
                (long long)r.rows, (long long)r.lse_infinity_mismatch, r.lse_max_rel);
    assert_true(r.p_compared > 0);
    // Structure: a key the row does not see contributes exactly +0, and lse is -inf on exactly
    // the rows where the model's is.
    assert_int_equal(r.masked_not_zero, 0);
    assert_int_equal(r.lse_infinity_mismatch, 0);
    if (lean) {
        // LEAN: the same S and the same fp32 operations give the same codes, bit for bit.
        assert_int_equal(r.p_mismatched, 0);
        // One key block: m, the block exponent, l (an exact MFMA sum of codes) and v_descale / l
        // are the model's bits, so O is too. Over two blocks the rescale alpha (a polynomial on
        // the GPU, exp2f on the CPU) may differ in its last bit.
        if (one_block) {
            assert_int_equal(r.bitwise_equal, r.elements);
            assert_true(r.lse_max_rel == 0.0);  // the same m and l; v_log_f32 is modelled correctly rounded
        }
    } else {
        // EXACT rounds exp2(t) (times 2^k for FP8) to bf16 or FP8: an exp2 an ulp away from the
        // CPU's flips a value lying on a rounding boundary, with probability ~6e-5 per element
        // for bf16 (less for FP8's coarser grid); 0.5% bounds it.
        assert_true(r.p_mismatched * 200 <= r.p_compared);
    }
    // m and l agree (LEAN: bit for bit in one block); log2 and an alpha's last bit remain: 1e-5.
    assert_true(r.lse_max_rel <= 1e-5);
}

const BitwiseShape kBitwiseShapes[] = {
    {"causal s=64 gqa 2:1", ZYFA_MASK_CAUSAL, 64, 64, 128, -1, -1},
    {"none sq=37 sk=50", ZYFA_MASK_NONE, 37, 50, 128, -1, -1},
    {"causal-br sq=40 sk=30 (10 empty rows)", ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 40, 30, 128, -1, -1},
    {"window (5,2) s=60", ZYFA_MASK_NONE, 60, 60, 128, 5, 2},
    {"causal window 7 s=64", ZYFA_MASK_CAUSAL, 64, 64, 128, 7, -1},
    {"hd 192/128 causal s=48", ZYFA_MASK_CAUSAL, 48, 48, 192, -1, -1},
    {"causal s=128 (2 key blocks)", ZYFA_MASK_CAUSAL, 128, 128, 128, -1, -1},
    {"none sq=50 sk=128 (2 key blocks)", ZYFA_MASK_NONE, 50, 128, 128, -1, -1},
};

// The INT8 kernels' head dims (64, 128): masks, windows, one and two key blocks (two k descale
// blocks, so two per-block factors per row).
const BitwiseShape kInt8BitwiseShapes[] = {
    {"causal s=64 gqa 2:1", ZYFA_MASK_CAUSAL, 64, 64, 128, -1, -1},
    {"none sq=37 sk=50", ZYFA_MASK_NONE, 37, 50, 128, -1, -1},
    {"causal-br sq=40 sk=30 (10 empty rows)", ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 40, 30, 128, -1, -1},
    {"window (5,2) s=60", ZYFA_MASK_NONE, 60, 60, 128, 5, 2},
    {"hd 64 causal s=64", ZYFA_MASK_CAUSAL, 64, 64, 64, -1, -1},
    {"causal s=128 (2 key blocks)", ZYFA_MASK_CAUSAL, 128, 128, 128, -1, -1},
    {"hd 64 none sq=50 sk=128 (2 key blocks)", ZYFA_MASK_NONE, 50, 128, 64, -1, -1},
};

void test_bitwise_int8_lean(void**) {
    for (const BitwiseShape& b : kInt8BitwiseShapes) run_bitwise(b, kInt8qkLean);
    run_bitwise(kInt8BitwiseShapes[0], kInt8qkLean, true);
}

void test_bitwise_int8_exact_structure(void**) {
    for (const BitwiseShape& b : kInt8BitwiseShapes) run_bitwise(b, kInt8qkExact);
}

// No descales (all 1): the kernel reads none of the three pointers. EXACT without lse against the
// CPU backend; LEAN (and EXACT) bitwise against the AMD model, not the CPU backend's default: at
// descale 1 and small codes a unit of the integer score is 1.4 codes (scale8_log2), so the folded
// Lean P bias (common/int8_qk.h), a float near 1.2e7 whose ulp is 1, absorbs the fractional part
// of the centre, and the two conversions' centres (0.5 apart) no longer give the same codes; real
// descales make that unit ~1e-3 codes and the models agree (the tests above).
void test_int8_no_descales(void**) {
    for (int64_t d : {64, 128}) {
        CaseShape s = mode_shape(kInt8qkExact);
        s.head_dim_qk = s.head_dim_v = d;
        s.v_dtype_int8 = int8_v_dtype();
        s.descales = false;
        s.input_scale = 1.0f / 16;  // codes of about +-2: scaled scores of a few units at descale 1
        s.with_lse = false;
        s.batch = 2;
        s.seqlen_q = s.seqlen_k = 70;
        check_gpu_case(s, "int8 no descales, no lse, batch 2 s=70 hd" + std::to_string(d) + " int8qk-exact");
    }
    for (const DtypeMode& m : {kInt8qkLean, kInt8qkExact}) {
        run_bitwise(kInt8BitwiseShapes[1], m, false, false);
        run_bitwise(kInt8BitwiseShapes[4], m, false, false);
    }
}

void test_bitwise_lean(void**) {
    for (const BitwiseShape& b : kBitwiseShapes) run_bitwise(b, fp8_lean());
}

void test_bitwise_bf16_structure(void**) {
    for (const BitwiseShape& b : kBitwiseShapes) run_bitwise(b, kBf16);
}

void test_bitwise_fp8_exact_structure(void**) {
    for (const BitwiseShape& b : kBitwiseShapes) run_bitwise(b, fp8_exact());
}

void test_bitwise_sinks(void**) {
    for (const BitwiseShape& b : kBitwiseShapes) run_bitwise(b, fp8_lean(), true);
    for (const BitwiseShape& b : kBitwiseShapes) run_bitwise(b, kBf16, true);
}

// ------------------------------------------------------------------ per-key score bias

// zyfa_attn_params.key_bias on the HIP C++ kernels (the assembly ones decline it): the codes are
// the AMD model's bit for bit with exact scores, and every mode agrees with the CPU backend and the
// fp64 reference in the fixed-length, packed (its [heads_q, total_k] layout) and sink cases.
void test_bitwise_key_bias(void**) {
    for (const BitwiseShape& b : kBitwiseShapes) run_bitwise(b, fp8_lean(), false, true, true);
    run_bitwise(kBitwiseShapes[6], fp8_exact(), false, true, true);
    run_bitwise(kBitwiseShapes[6], kBf16, false, true, true);
}

void test_key_bias(void**) {
    for_modes("key bias causal s=150 gqa 4:2", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 150;
        s.heads_q = 4;
        s.heads_kv = 2;
        s.key_bias = some_key_biases(s);
    });
    for_modes("key bias varlen q(33,7,20) k(40,50,70) sinks", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.batch = 3;
        s.lengths_q = {33, 7, 20};
        s.lengths_k = {40, 50, 70};
        s.seqlen_q = 33;
        s.seqlen_k = 70;
        s.sinks = {-1.0f, 2.5f};
        s.key_bias = some_key_biases(s);
    });
    // (asm_end_to_end checks that the automatic plan puts a biased problem on the HIP C++ kernel.)
}

// An FP8 LEAN causal head-dim-128 problem without a window (one the gfx950 assembly kernels take
// under the automatic plan) must be planned on the HIP C++ kernel of this context.
bool plans_hip_cpp_fp8_lean(Session& s) {
    CaseShape shape = mode_shape(fp8_lean());
    shape.head_dim_qk = shape.head_dim_v = 128;
    shape.out_dtype = ZYFA_DTYPE_BF16;
    shape.seqlen_q = shape.seqlen_k = 70;
    GpuCase c(*s.runtime, shape);
    const char* name = zyfa_attn_kernel_name(s.cuda, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
    const std::string expected = g_gfx942 ? "zyfa_attn_fwd_e4m3fnuz_lean_d128" : "zyfa_attn_fwd_e4m3_lean_d128";
    if (name == nullptr || expected != name) {
        std::printf("FAIL amd_end_to_end: FP8 LEAN is planned on %s, not the HIP C++ kernel %s\n",
                    name ? name : zyfa_last_error_message(), expected.c_str());
        return false;
    }
    // BF16 d128 likewise (the gfx950 and gfx942 assembly kernels would take it).
    CaseShape bf16 = mode_shape(kBf16);
    bf16.head_dim_qk = bf16.head_dim_v = 128;
    bf16.out_dtype = ZYFA_DTYPE_BF16;
    bf16.seqlen_q = bf16.seqlen_k = 70;
    GpuCase b(*s.runtime, bf16);
    const char* bf16_name = zyfa_attn_kernel_name(s.cuda, &b.params, &b.tq, &b.tk, &b.tv, &b.to);
    if (bf16_name == nullptr || std::string(bf16_name) != "zyfa_attn_fwd_bf16_d128") {
        std::printf("FAIL amd_end_to_end: BF16 is planned on %s, not the HIP C++ kernel zyfa_attn_fwd_bf16_d128\n",
                    bf16_name ? bf16_name : zyfa_last_error_message());
        return false;
    }
    return true;
}

}  // namespace

int main() {
    const char* arch = std::getenv("ZYFA_EMU_ARCH");
    g_gfx942 = arch && std::string(arch) == "gfx942";
    if (!std::getenv("ZYFA_HIP_LIBRARY")) {
        std::printf("SKIP amd_end_to_end: ZYFA_HIP_LIBRARY is not set (CTest sets it to the stand-in)\n");
        return kSkipExitCode;
    }
    Session& s = session();
    // Session::cuda is the GPU context under test; here it is the HIP backend.
    {
        std::string error;
        s.cuda = hip_context_with(zyfa::hip::AmdKernelChoice::HipCpp, &error);
        if (s.cuda == nullptr) {
            std::printf("FAIL amd_end_to_end: HIP context (HIP C++ kernels) on the stand-in: %s\n", error.c_str());
            return 1;
        }
    }
    zyfa_context_options cpu_opts;
    zyfa_context_options_init(&cpu_opts, sizeof cpu_opts);
    cpu_opts.backend = ZYFA_BACKEND_CPU;
    if (zyfa_context_create(&cpu_opts, &s.cpu) != ZYFA_SUCCESS) {
        std::printf("FAIL amd_end_to_end: CPU context: %s\n", zyfa_last_error_message());
        return 1;
    }
    s.runtime = zyfa::hip::open_hip_runtime(0);
    s.stream = s.runtime->create_stream();
    std::printf("amd_end_to_end: %s on the emulator; zyfa %s, built with: %s\n", zyfa_context_device_name(s.cuda),
                zyfa_version_string(), zyfa_build_info());
    if (!plans_hip_cpp_fp8_lean(s)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_pointers_refused),
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_gqa_varlen),
        cmocka_unit_test(test_head_dims_lse_descales),
        cmocka_unit_test(test_no_key_rows),
        cmocka_unit_test(test_non_finite_rows),
        cmocka_unit_test(test_bitwise_lean),
        cmocka_unit_test(test_bitwise_bf16_structure),
        cmocka_unit_test(test_bitwise_fp8_exact_structure),
        cmocka_unit_test(test_sinks),
        cmocka_unit_test(test_minus_inf_sinks_bitwise),
        cmocka_unit_test(test_sink_edges),
        cmocka_unit_test(test_bitwise_sinks),
        cmocka_unit_test(test_key_bias),
        cmocka_unit_test(test_bitwise_key_bias),
        cmocka_unit_test(test_int8_masks_gqa),
        cmocka_unit_test(test_int8_varlen_sinks),
        cmocka_unit_test(test_int8_no_descales),
        cmocka_unit_test(test_bitwise_int8_lean),
        cmocka_unit_test(test_bitwise_int8_exact_structure),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
