// The warp-specialised sm_90a kernels (kernels/nvidia/attention_fwd_ws.cuh) on the H200, head
// dims 128, 192/128 (MLA: Q and K 192, V 128), 64 and 256:
//   1. the launch plan picks them for every mode (16-bit, FP8 EXACT and LEAN) and head dim, the
//      kernel of its dims;
//   2. every mask, windows, GQA/MQA, varlen, lse, descales and output dtypes on sequences long
//      enough that the three-stage K/V ring wraps many times (every mbarrier phase is used), each
//      checked against the CPU model and the fp64 reference (gpu_check.hpp's tolerances); each
//      case first checks that it runs the warp-specialised kernel of its dims;
//   3. the cp.async producer (a context of the tests' seam, tests/support/cuda_context.hpp: no
//      tensor maps) on dense problems the maps would take: bitwise the default context's output
//      (ws_tma_maps.hpp: the copy path does not change results), and within the same bounds;
//   4. O with an odd base or odd strides, which the ws kernels' paired stores cannot take: the plan's
//      mma.sync kernel of the same dims, against the CPU model and fp64, nothing written between
//      O's elements;
//   5. the e4m3 wgmma's narrow adder, measured: the same inputs through the warp-specialised
//      kernel and through the CPU model of the same kernel (fp32 sums, the same key block) against
//      fp64, with the bound stated beside the assertion.
// The INT8 Q/K kernels have their own program (int8_qk_gpu_test.cpp), so a short lease reaches them.
// Exits 77 (skipped) without a CUDA device; on devices that are not sm_90 (no warp-specialised
// kernels) parts 1, 3, 4 and 5 print a line and pass.
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_check.hpp"
#include "support/attention_modes.hpp"
#include "support/cuda_context.hpp"
#include "ws_kernel_names.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

constexpr WsDims kWsDims[] = {{128, 128, "_d128"}, {192, 128, "_d192_128"}, {64, 64, "_d64"}, {256, 256, "_d256"}};

CaseShape with_dims(const DtypeMode& m, const WsDims& d) {
    CaseShape s = mode_shape(m);
    s.head_dim_qk = d.qk;
    s.head_dim_v = d.v;
    return s;
}

bool is_ws(const std::string& name) { return name.find("_ws_") != std::string::npos; }

void test_plan_picks_ws_kernels(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no warp-specialised kernels to pick\n");
        return;
    }
    for (const DtypeMode& m : nvidia_modes()) {
        for (const WsDims& d : kWsDims) {
            const std::string name = kernel_name_of(session().cuda, with_dims(m, d));
            std::printf("  %-13s hd%lld/%lld -> %s\n", m.name, static_cast<long long>(d.qk),
                        static_cast<long long>(d.v), name.c_str());
            assert_true(is_ws(name));
            assert_true(ends_with(name, d.suffix));
        }
    }
}

// Every mode at head dims 128, 192/128, 64 and 256 on the session's context. On sm_90a each case
// first checks that the plan gives it the warp-specialised kernel of its dims (so a dispatch
// change cannot turn these into tests of another kernel).
template <class ShapeOf>
void run_for_all_modes(const std::string& what, ShapeOf shape_of) {
    const bool hopper = is_hopper();
    for (const WsDims& d : kWsDims) {
        const std::string label = what + " hd" + std::to_string(d.qk) + "/" + std::to_string(d.v);
        for_each_mode(nvidia_modes(), label, [&](CaseShape& s) {
            s.head_dim_qk = d.qk;
            s.head_dim_v = d.v;
            shape_of(s);
        }, [&d, hopper](const CaseShape& s, const std::string& case_label) {
            if (hopper) {
                const std::string name = kernel_name_of(session().cuda, s);
                if (!is_ws(name) || !ends_with(name, d.suffix)) {
                    std::printf("  %s: runs %s\n", case_label.c_str(), name.c_str());
                    fail();
                }
            }
            check_gpu_case(s, case_label);
        });
    }
}

void test_long_causal(void**) {
    // 16 key blocks per late tile (8 at 128-key steps): the ring of 3 stages (2 for 16-bit 192/128
    // and 256) wraps at least twice; batch 2, tiles of 128 rows.
    run_for_all_modes("ws causal b2 s=1000", [](CaseShape& s) {
        s.batch = 2;
        s.seqlen_q = s.seqlen_k = 1000;
    });
}

void test_no_mask_and_bottom_right(void**) {
    run_for_all_modes("ws none 200x1500", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = 200;
        s.seqlen_k = 1500;
    });
    run_for_all_modes("ws causal bottom-right 300x1100", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 300;
        s.seqlen_k = 1100;
    });
    run_for_all_modes("ws causal 777x300 (rows without keys)", [](CaseShape& s) {
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.seqlen_q = 777;
        s.seqlen_k = 300;
    });
}

void test_windows(void**) {
    run_for_all_modes("ws window 200,50 s=900", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.seqlen_q = s.seqlen_k = 900;
        s.window_left = 200;
        s.window_right = 50;
    });
    run_for_all_modes("ws causal window 70,-1 s=640", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 640;
        s.window_left = 70;
    });
}

void test_gqa_and_mqa(void**) {
    run_for_all_modes("ws gqa 8:2 s=500", [](CaseShape& s) {
        s.heads_q = 8;
        s.heads_kv = 2;
        s.seqlen_q = s.seqlen_k = 500;
    });
    run_for_all_modes("ws mqa 6:1 s=260", [](CaseShape& s) {
        s.heads_q = 6;
        s.heads_kv = 1;
        s.seqlen_q = s.seqlen_k = 260;
    });
}

void test_varlen(void**) {
    run_for_all_modes("ws varlen causal q{1,700,0,129,64}", [](CaseShape& s) {
        s.batch = 5;
        s.lengths_q = {1, 700, 0, 129, 64};
        s.lengths_k = {1, 700, 0, 129, 64};
        s.seqlen_q = s.seqlen_k = 700;
    });
    run_for_all_modes("ws varlen none q{300,5} k{900,70}", [](CaseShape& s) {
        s.mask = ZYFA_MASK_NONE;
        s.batch = 2;
        s.lengths_q = {300, 5};
        s.lengths_k = {900, 70};
        s.seqlen_q = 300;
        s.seqlen_k = 900;
    });
}

void test_outputs_lse_descales(void**) {
    for (zyfa_dtype out : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
        run_for_all_modes("ws out " + std::to_string(out) + " s=333", [out](CaseShape& s) {
            s.out_dtype = out;
            s.seqlen_q = s.seqlen_k = 333;
        });
    }
    run_for_all_modes("ws no lse, no descales s=450", [](CaseShape& s) {
        s.with_lse = false;
        s.descales = false;
        s.seqlen_q = s.seqlen_k = 450;
    });
    run_for_all_modes("ws peaked rows (input x2) s=400", [](CaseShape& s) {
        s.seqlen_q = s.seqlen_k = 400;
        s.input_scale = 2.0f;
    });
}

// A negative score scale (softmax_scale below zero here; a negative descale acts the same): the
// kernels take it as |c| on the scores of -Q (nvidia/sm90/mainloop.cuh), flipping Q's sign bits in
// registers (head dims up to 128, 16-bit 192/128) or in shared memory (FP8 192/128, 256). The CPU
// model multiplies each score by the signed c: both must agree as for a positive scale.
void test_negative_scale(void**) {
    for (const WsDims& d : kWsDims) {
        const std::string label = "ws softmax_scale -0.09 s=333 hd" + std::to_string(d.qk) + "/" + std::to_string(d.v);
        for_each_mode(nvidia_modes(), label, [&](CaseShape& s) {
            s.head_dim_qk = d.qk;
            s.head_dim_v = d.v;
            s.seqlen_q = s.seqlen_k = 333;
        }, [](const CaseShape& s, const std::string& case_label) {
            check_gpu_case(s, case_label, [](AttentionCase& c) { c.params.softmax_scale = -0.09f; });
        });
    }
}

// ---- 3. the cp.async producer --------------------------------------------------------------------

// The tests' seam (tests/support/cuda_context.hpp): the same kernels, never a tensor map. Null
// off sm_90a.
zyfa_context* g_cp_async = nullptr;

// One case through the session's context (tensor maps: these dense problems take them) and
// through g_cp_async: bitwise the same O and lse (the copy path moves the same bytes into the same
// shared-memory layout, with the same zero fill), and the cp.async run within the bounds against
// the CPU model and fp64 (check_gpu_case on that context).
void check_cp_async_case(const CaseShape& shape, const std::string& label) {
    Session& s = session();
    guarded([&] {
        GpuCase tma(*s.runtime, shape), cp_async(*s.runtime, shape);
        assert_int_equal(tma.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
        assert_int_equal(cp_async.run(g_cp_async, *s.runtime, s.stream), ZYFA_SUCCESS);
        const std::string name = kernel_name_of(g_cp_async, shape);
        const bool same_o = tma.host.o == cp_async.host.o;
        const bool same_lse = std::memcmp(tma.host.lse.data(), cp_async.host.lse.data(), bytes_of(tma.host.lse)) == 0;
        std::printf("  %-48s %s: cp.async %s TMA (O %s, lse %s)\n", label.c_str(), name.c_str(),
                    same_o && same_lse ? "==" : "!=", same_o ? "bitwise equal" : "DIFFERS",
                    same_lse ? "bitwise equal" : "DIFFERS");
        assert_true(is_ws(name));
        assert_true(same_o);
        assert_true(same_lse);
    });
    zyfa_context* const saved = s.cuda;
    s.cuda = g_cp_async;
    check_gpu_case(shape, label + " (cp.async)");
    s.cuda = saved;
}

void test_cp_async_producer(void**) {
    if (!g_cp_async) {
        std::printf("  not sm_90a: no warp-specialised kernels\n");
        return;
    }
    for (const WsDims& d : kWsDims) {
        const std::string dims = " hd" + std::to_string(d.qk) + "/" + std::to_string(d.v);
        for_each_mode(nvidia_modes(), "cp.async causal gqa 8:2 s=500" + dims, [&d](CaseShape& s) {
            s.head_dim_qk = d.qk;
            s.head_dim_v = d.v;
            s.heads_q = 8;
            s.heads_kv = 2;
            s.seqlen_q = s.seqlen_k = 500;
        }, check_cp_async_case);
        for_each_mode(nvidia_modes(), "cp.async window 200,50 fp16 out s=900" + dims, [&d](CaseShape& s) {
            s.head_dim_qk = d.qk;
            s.head_dim_v = d.v;
            s.mask = ZYFA_MASK_NONE;
            s.seqlen_q = s.seqlen_k = 900;
            s.window_left = 200;
            s.window_right = 50;
            s.out_dtype = ZYFA_DTYPE_FP16;
        }, check_cp_async_case);
    }
}

// ---- 4. O with an odd base or odd strides ---------------------------------------------------------

// The shape's O written into a padded buffer: element (b, i, h, j) of a fixed-length O at
// offset + b * stride_batch + i * stride_seq + h * stride_head + j (elements). `odd_strides`: odd
// head and sequence strides, else the contiguous ones; `offset` odd or 0. The plan gives such an O
// to the mma.sync kernel (the ws kernels store O in aligned pairs); its values, gathered, are
// checked against the CPU model of that kernel and fp64 with gpu_check.hpp's bounds, and every
// element between them must keep the 0xA5 sentinel.
void check_misaligned_output(const CaseShape& shape, bool odd_strides, int64_t offset, const std::string& label) {
    Session& s = session();
    guarded([&] {
        GpuCase c(*s.runtime, shape);
        const size_t elem = zyfa::cpu::dtype_size(shape.out_dtype);
        const int64_t dv = shape.head_dim_v, heads = shape.heads_q;
        const int64_t stride_head = odd_strides ? dv + 1 : dv;
        const int64_t stride_seq = odd_strides ? heads * stride_head + 1 : heads * stride_head;
        const int64_t stride_batch = shape.seqlen_q * stride_seq;
        const size_t elements = static_cast<size_t>(offset + shape.batch * stride_batch);
        const std::vector<uint8_t> sentinel(elements * elem, 0xA5);
        DeviceBuffer padded(*s.runtime, sentinel.data(), sentinel.size());
        c.to.data = static_cast<uint8_t*>(padded.data()) + offset * static_cast<int64_t>(elem);
        c.to.stride_head = stride_head;
        c.to.stride_seq = stride_seq;
        c.to.stride_batch = stride_batch;
        const char* name = zyfa_attn_kernel_name(s.cuda, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
        assert_non_null(name);
        const zyfa_status st = c.launch(s.cuda, s.stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("  %s: zyfa_attn_fwd: %s: %s\n", label.c_str(), zyfa_status_string(st), zyfa_last_error_message());
            fail();
        }
        s.runtime->synchronize_stream(s.stream);
        std::vector<uint8_t> out(sentinel.size());
        padded.download(out.data());
        c.download();  // lse (and the contiguous O buffer, unused here)
        std::vector<bool> is_o(elements, false);
        for (int64_t b = 0; b < shape.batch; ++b)
            for (int64_t i = 0; i < shape.seqlen_q; ++i)
                for (int64_t h = 0; h < heads; ++h)
                    for (int64_t j = 0; j < dv; ++j) {
                        const size_t at = static_cast<size_t>(offset + b * stride_batch + i * stride_seq + h * stride_head + j);
                        const size_t to = static_cast<size_t>(((b * shape.seqlen_q + i) * heads + h) * dv + j);
                        is_o[at] = true;
                        std::memcpy(&c.host.o[to * elem], &out[at * elem], elem);
                    }
        int64_t overwritten = 0;
        for (size_t e = 0; e < elements; ++e) {
            if (is_o[e]) continue;
            for (size_t byte = 0; byte < elem; ++byte) overwritten += out[e * elem + byte] != 0xA5;
        }
        AttentionCase cpu(shape);
        run_on_cpu_as(cpu, s.cuda, c);  // the key block of the kernel that ran
        const zyfa::AttnProblem problem = zyfa::validate_attn(&cpu.params, &cpu.tq, &cpu.tk, &cpu.tv, &cpu.to, ZYFA_BACKEND_CPU);
        const auto ref = zyfa::cpu::attention_reference_fp64(problem);
        const ErrorStats vs_ref = compare(c.host, ref);
        const CpuDiff vs_cpu = compare_with_cpu(c.host, cpu);
        const zyfa_softmax mode = resolved_softmax(shape);
        std::printf("  %-52s %s: vs fp64 rel_rms %.2e lse %.1e | vs cpu rel_rms %.2e lse %.1e | %lld padding bytes "
                    "written%s\n",
                    label.c_str(), name, vs_ref.rel_rms, vs_ref.lse_max_abs, vs_cpu.rel_rms, vs_cpu.lse_max_abs,
                    static_cast<long long>(overwritten), padded.guard_intact() ? "" : "  GUARD BAND OVERWRITTEN");
        assert_false(is_ws(name));
        assert_int_equal(overwritten, 0);
        assert_true(padded.guard_intact());
        assert_true(vs_ref.rel_rms <= zyfa_test::o_tolerance(shape.dtype, mode, shape.out_dtype));
        assert_true(vs_ref.lse_max_abs <= lse_tolerance(mode));
        assert_int_equal(vs_ref.lse_mismatched_infinities, 0);
        assert_true(vs_cpu.rel_rms <= o_tolerance_vs_cpu(shape.dtype, shape.out_dtype));
        assert_true(vs_cpu.lse_max_abs <= lse_tolerance_vs_cpu(mode));
        assert_int_equal(vs_cpu.lse_mismatched_infinities, 0);
    });
}

void test_misaligned_output(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no warp-specialised kernels\n");
        return;
    }
    for (const WsDims& d : kWsDims) {
        for (const DtypeMode& m : nvidia_modes()) {
            for (zyfa_dtype out : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16}) {
                CaseShape s = with_dims(m, d);
                s.batch = 2;
                s.seqlen_q = s.seqlen_k = 300;
                s.out_dtype = out;
                const std::string label = std::string(m.name) + " hd" + std::to_string(d.qk) + "/" +
                                          std::to_string(d.v) + " out " + std::to_string(out);
                check_misaligned_output(s, false, 1, label + " base +1 element");
                check_misaligned_output(s, true, 0, label + " odd strides");
                // The mma.sync kernel's epilogue folds attention sinks as the ws kernels' does.
                CaseShape with_sinks = s;
                for (int64_t h = 0; h < s.heads_q; ++h) with_sinks.sinks.push_back(h % 2 ? 2.5f : -1.0f);
                check_misaligned_output(with_sinks, true, 0, label + " odd strides, sinks");
            }
        }
    }
}

// ---- 5. the e4m3 wgmma's adder ----------------------------------------------------------------

struct Measured {
    ErrorStats vs_ref;
    ErrorStats cpu_vs_ref;  // the CPU model of the same kernel (its key block), fp32 sums
    CpuDiff vs_cpu;
};

Measured measure(zyfa_context* ctx, const CaseShape& shape) {
    Session& s = session();
    GpuCase gpu(*s.runtime, shape);
    const zyfa_status st = gpu.run(ctx, *s.runtime, s.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  zyfa_attn_fwd(CUDA) failed: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
    AttentionCase cpu(shape);
    run_on_cpu_as(cpu, ctx, gpu);
    const zyfa::AttnProblem problem = zyfa::validate_attn(&cpu.params, &cpu.tq, &cpu.tk, &cpu.tv, &cpu.to, ZYFA_BACKEND_CPU);
    const auto ref = zyfa::cpu::attention_reference_fp64(problem);
    return Measured{compare(gpu.host, ref), compare(cpu, ref), compare_with_cpu(gpu.host, cpu)};
}

// The e4m3 wgmma adds products (and O's running sum) with fewer bits than fp32. Against the CPU
// model of the same kernel on the same inputs (fp32 sums, the kernel's key block:
// run_on_cpu_as), both against fp64:
//   LEAN: O's error is dominated by Lean P's own rounding (RMS ~3% per probability); the narrow
//   adder's ~1e-3 relative noise adds in quadrature, so the O error may grow by at most 10% over
//   the model's (measured on the H200 against the fp32-sum kernels that existed until 2026-12-02:
//   see docs/hopper-kernel-notes.md), and the lse stays within the LEAN fp64 bound.
//   EXACT: the same 10% on O. lse moves with the row maximum of the scores, which the narrow
//   adder moves by ~1e-3 relative: measured on the H200 (2026-11-29) 6.2e-4 at s=256 and 4.0e-3
//   at s=2048 against fp64 (a kernel with fp32 sums: 1.7e-6), so the bound is 1e-2.
//   Head dims 192/128 and 256 sum 1.5x and 2x the products per score. Measured (H200,
//   2026-11-29, s=2048): 192/128 3.5e-3 (within 1e-2), 256 1.13e-2, 2.8x head dim 128's and not
//   the ~1.4x a random walk would give, so head dim 256's EXACT lse bound is 2e-2 (the mma.sync
//   kernel with fp32 sums: 2.4e-6). O's ratio held at every head dim (256: 1.008).
// Until 2026-12-02 the comparison ran a GPU kernel with fp32 sums (the FP16-widened wgmma kernel,
// the mma.sync kernels); neither runs on sm_90a any more, and the CPU model is what they matched.
void test_fp8_wgmma_adder_vs_fp32_model(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no warp-specialised kernels to measure\n");
        return;
    }
    zyfa_context* ws = session().cuda;
    for (const WsDims& d : kWsDims) {
        for (const DtypeMode& m : {kE4m3fnLean, kE4m3fnExact}) {
            for (int64_t seqlen : {256, 2048}) {
                CaseShape s = with_dims(m, d);
                s.seqlen_q = s.seqlen_k = seqlen;
                s.heads_q = s.heads_kv = 4;
                s.seed = 7 + static_cast<uint64_t>(seqlen);
                const std::string ws_name = kernel_name_of(ws, s);
                assert_true(is_ws(ws_name) && ends_with(ws_name, d.suffix));
                const Measured a = measure(ws, s);
                const double ratio = a.vs_ref.rel_rms / a.cpu_vs_ref.rel_rms;
                std::printf("  %-13s hd%lld/%lld causal s=%5lld vs fp64: ws rel_rms %.4e lse %.2e | cpu model "
                            "rel_rms %.4e lse %.2e | ratio %.4f | ws vs cpu rel_rms %.2e lse %.2e\n",
                            m.name, static_cast<long long>(d.qk), static_cast<long long>(d.v),
                            static_cast<long long>(seqlen), a.vs_ref.rel_rms, a.vs_ref.lse_max_abs,
                            a.cpu_vs_ref.rel_rms, a.cpu_vs_ref.lse_max_abs, ratio, a.vs_cpu.rel_rms,
                            a.vs_cpu.lse_max_abs);
                assert_true(ratio <= 1.10);
                assert_int_equal(a.vs_ref.lse_mismatched_infinities, 0);
                if (m.softmax == ZYFA_SOFTMAX_LEAN) {
                    assert_true(a.vs_ref.lse_max_abs <= lse_tolerance(ZYFA_SOFTMAX_LEAN));
                } else {
                    assert_true(a.vs_ref.lse_max_abs <= (d.qk == 256 ? 2e-2 : 1e-2));
                }
            }
        }
    }
}

}  // namespace

// Usage: gpu_ws_kernel [--part K/N]: with --part, only the test functions whose index i (in the
// list below) has i % N == K - 1, so that CTest can run the N parts side by side (the whole list
// takes over 200 s on one H200); every function belongs to exactly one part.
int main(int argc, char** argv) {
    int part = 0, parts = 1;
    if (argc == 3 && std::strcmp(argv[1], "--part") == 0 && std::sscanf(argv[2], "%d/%d", &part, &parts) == 2 &&
        parts >= 1 && part >= 1 && part <= parts) {
        --part;
    } else if (argc != 1) {
        std::printf("usage: gpu_ws_kernel [--part K/N] (1 <= K <= N)\n");
        return 2;
    }
    if (const int rc = open_session_or_skip("gpu_ws_kernel")) return rc;
    if (is_hopper()) {
        std::string error;
        g_cp_async = zyfa_test::cuda_context_with(zyfa::cuda::CudaKernelChoice::CpAsync, &error);
        if (!g_cp_async) {
            std::printf("FAIL gpu_ws_kernel: the cp.async seam's context: %s\n", error.c_str());
            return 1;
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_picks_ws_kernels),
        cmocka_unit_test(test_long_causal),
        cmocka_unit_test(test_no_mask_and_bottom_right),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_gqa_and_mqa),
        cmocka_unit_test(test_varlen),
        cmocka_unit_test(test_outputs_lse_descales),
        cmocka_unit_test(test_negative_scale),
        cmocka_unit_test(test_cp_async_producer),
        cmocka_unit_test(test_misaligned_output),
        cmocka_unit_test(test_fp8_wgmma_adder_vs_fp32_model),
    };
    std::vector<CMUnitTest> selected;
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); ++i)
        if (static_cast<int>(i % static_cast<size_t>(parts)) == part) selected.push_back(tests[i]);
    const int failed = _cmocka_run_group_tests("gpu_ws_kernel", selected.data(), selected.size(), nullptr, nullptr);
    zyfa_context_destroy(g_cp_async);
    close_session();
    return failed;
}
