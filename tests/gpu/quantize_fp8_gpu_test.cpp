// zyfa_quantize_fp8 on the CUDA backend against the CPU backend (src/cpu/quantize_fp8.cpp, the
// spec): codes and descales must be bitwise identical, for FP32/BF16/FP16 inputs, with and
// without the Hadamard rotation (one block: head dims 64..1024; 64-blocks: 192), fixed length
// and varlen (with an empty sequence), e4m3fn and e4m3fnuz, padded strides, all-zero and tiny
// slices (the pre-shift path), subnormal and signed-zero inputs. With K smoothing
// (ZYFA_QUANT_SMOOTH) the means are bitwise identical too (common/smooth_mean.h fixes the order
// of every fp64 addition; the GPU's warp w is lane w, so no bound is needed, only equality), on
// biased inputs, alone and with the rotation, fixed length and varlen, constant slices (nothing
// left after the mean: codes 0, descale 1), and sequences of 1 to 4,000 rows (a lane with no
// row, lanes of unequal length). Every output byte the call must not write (padding, guard bands)
// is checked to keep its sentinel. Also: the documented GPU behaviour on non-finite input (NaN /
// +inf descale, no error), graph capture, and one timing.
// zyfa_quantize_int8 (test_int8, kernel zyfa_quantize_int8_groups): per-token (scale_rows 1) and
// per-64-row (64) codes and descales bitwise against the CPU backend, fixed length (a partial last
// 64-row group), varlen with an empty sequence (trailing descales left unwritten, as on the CPU),
// padded strides, the rotation, smoothing, and zero, tiny and huge slices.
// Exits 77 (skipped) without a CUDA device, like every gpu-tier test. The case and comparison
// code is quant_gpu_check.hpp, shared with the HIP emulator test (tests/emu/amd_quantize_test.cpp).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "quant_gpu_check.hpp"

namespace {

using namespace zyfa_gpu_test;

void fixed_length_d128(void**) {
    // seqlen 300: four full 64-row blocks and a partial one.
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
        for (bool hadamard : {false, true}) {
            for (zyfa_dtype out : {kFn, kFnuz}) {
                QuantShape s = shape("", in, out, hadamard, 2, 300, 3, 128);
                const std::string label = std::string(in == ZYFA_DTYPE_FP32 ? "fp32" : in == ZYFA_DTYPE_BF16 ? "bf16" : "fp16") +
                                          " d128 " + (hadamard ? "hadamard " : "plain ") + (out == kFn ? "e4m3fn" : "e4m3fnuz");
                s.label = label.c_str();
                s.seed = static_cast<uint32_t>(in * 10 + out + (hadamard ? 100 : 0));
                check_bitwise(s);
            }
        }
    }
}

void fixed_length_d192_padded(void**) {
    // 192 = three 64-blocks of the rotation; padded strides on both sides.
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
        for (bool hadamard : {false, true}) {
            QuantShape s = shape(hadamard ? "d192 hadamard padded" : "d192 plain padded", in, hadamard ? kFn : kFnuz,
                                 hadamard, 3, 77, 2, 192);
            s.in_pad = 8;
            s.out_pad = 32;  // GPU backends need FP8 strides in multiples of 16 elements
            s.seed = static_cast<uint32_t>(7 + in);
            check_bitwise(s);
        }
    }
}

void varlen_with_empty_sequence(void**) {
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
        for (int64_t head_dim : {128, 192}) {
            QuantShape s = shape(head_dim == 128 ? "varlen d128 hadamard e4m3fn" : "varlen d192 hadamard e4m3fnuz", in,
                                 head_dim == 128 ? kFn : kFnuz, true, 4, 195, 3, head_dim);
            s.cu_seqlens = {0, 5, 5, 200, 333};  // lengths 5, 0, 195, 133
            s.seed = static_cast<uint32_t>(31 + in + head_dim);
            check_bitwise(s);
            s.hadamard = false;
            s.label = "varlen plain";
            check_bitwise(s);
        }
    }
}

void other_head_dims(void**) {
    check_bitwise(shape("fp32 d64 hadamard", ZYFA_DTYPE_FP32, kFn, true, 1, 130, 4, 64));
    check_bitwise(shape("bf16 d256 hadamard", ZYFA_DTYPE_BF16, kFnuz, true, 2, 65, 2, 256));
    check_bitwise(shape("fp32 d1024 hadamard (largest GPU block)", ZYFA_DTYPE_FP32, kFn, true, 1, 40, 2, 1024));
    check_bitwise(shape("fp16 d320 hadamard (5 blocks of 64)", ZYFA_DTYPE_FP16, kFn, true, 1, 33, 2, 320));
    check_bitwise(shape("bf16 d80 plain", ZYFA_DTYPE_BF16, kFn, false, 2, 50, 3, 80));
    // The smallest head dims a GPU FP8 output allows (its strides are multiples of 16 elements).
    check_bitwise(shape("fp32 d16 hadamard", ZYFA_DTYPE_FP32, kFn, true, 1, 9, 2, 16));
    check_bitwise(shape("fp32 d48 plain", ZYFA_DTYPE_FP32, kFnuz, false, 1, 7, 5, 48));
}

QuantShape smoothed(QuantShape s) {
    s.smooth = true;
    return s;
}

// K smoothing: means, codes and descales bitwise equal to the CPU backend's.
void smoothing_fixed_length(void**) {
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
        for (bool hadamard : {false, true}) {
            QuantShape s = smoothed(shape(hadamard ? "smooth+hadamard d128" : "smooth d128", in, hadamard ? kFn : kFnuz,
                                          hadamard, 2, 300, 3, 128));
            s.seed = static_cast<uint32_t>(200 + in + (hadamard ? 10 : 0));
            check_bitwise(s);
        }
        QuantShape padded = smoothed(shape("smooth+hadamard d192 padded", in, kFn, true, 3, 77, 2, 192));
        padded.in_pad = 8;
        padded.out_pad = 32;
        check_bitwise(padded);
        QuantShape constant = smoothed(shape("smooth constant slice 0", in, kFn, true, 2, 50, 2, 64));
        constant.constant_slice = true;
        check_bitwise(constant);
    }
}

// Lengths 1 (lanes 1..7 empty), 7, 8, 9 (lanes of unequal length), 4,000 (each warp 500 rows) and
// varlen with an empty sequence (mean 0); head dims that leave a partial 32-channel block.
void smoothing_lengths_and_varlen(void**) {
    for (int64_t seqlen : {1, 7, 8, 9, 4000}) {
        QuantShape s = smoothed(shape("smooth fp32 d96", ZYFA_DTYPE_FP32, kFn, false, 1, seqlen, 2, 96));
        s.seed = static_cast<uint32_t>(300 + seqlen);
        check_bitwise(s);
    }
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16}) {
        QuantShape s = smoothed(shape("smooth varlen d128 hadamard", in, kFn, true, 4, 195, 3, 128));
        s.cu_seqlens = {0, 5, 5, 200, 333};  // lengths 5, 0, 195, 133
        s.seed = static_cast<uint32_t>(400 + in);
        check_bitwise(s);
        s.hadamard = false;
        s.head_dim = 80;
        s.label = "smooth varlen d80";
        check_bitwise(s);
    }
    check_bitwise(smoothed(shape("smooth fp16 d16 hadamard", ZYFA_DTYPE_FP16, kFnuz, true, 2, 33, 2, 16)));
}

// ZYFA_QUANT_KEY_BIAS: Q smoothing's per-key bias (common/key_bias.h) bitwise the CPU's, under GQA
// (3 and 2 query heads per K head), with and without K smoothing and the rotation, more keys than
// one block of threads, packed sequences (an empty one) in the [query_heads, total] layout.
void key_bias(void**) {
    QuantShape s = smoothed(shape("key bias smooth+hadamard bf16 d128 gqa 6:2", ZYFA_DTYPE_BF16, kFn, true, 2, 300, 2, 128));
    s.query_heads = 6;
    check_bitwise(s);
    QuantShape p = shape("key bias plain fp32 d64", ZYFA_DTYPE_FP32, kFn, false, 1, 9, 2, 64);
    p.query_heads = 4;
    check_bitwise(p);
    QuantShape v = smoothed(shape("key bias varlen fp16 d64 smooth", ZYFA_DTYPE_FP16, kFn, false, 3, 300, 2, 64));
    v.cu_seqlens = {0, 40, 40, 340};
    v.query_heads = 4;
    check_bitwise(v);
}

void zero_tiny_subnormal_and_signed_zero_slices(void**) {
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
        for (bool hadamard : {false, true}) {
            for (zyfa_dtype out : {kFn, kFnuz}) {
                QuantShape s = shape(hadamard ? "zero/tiny slices hadamard" : "zero/tiny slices plain", in, out, hadamard,
                                     2, 70, 3, 128);
                s.seed = static_cast<uint32_t>(55 + in + out);
                check_bitwise(s, Special::ZeroAndTinySlices);
            }
        }
    }
}

// The CPU backend rejects NaN/inf input with INVALID_ARGUMENT, writing nothing; the GPU cannot
// check without synchronising, so the documented behaviour is: the call succeeds, the affected
// slice's descale is NaN (a NaN anywhere in it) or +inf (an infinity), every other slice is
// exactly what the CPU gives for the input without the bad element.
void non_finite_input_poisons_only_its_slice(void**) {
    for (int smooth = 0; smooth < 2; ++smooth)
    for (Special special : {Special::NaNInSlice1, Special::InfInSlice1}) {
        guarded([&] {
            QuantShape s = shape(special == Special::NaNInSlice1 ? (smooth ? "NaN in slice 1, smooth" : "NaN in slice 1")
                                                                 : (smooth ? "-inf in slice 1, smooth" : "-inf in slice 1"),
                                 ZYFA_DTYPE_BF16, kFn, true, 2, 70, 3, 128);
            s.smooth = smooth != 0;
            QuantCase bad(s, special);
            QuantCase clean(s, Special::None);
            assert_int_equal(bad.run_cpu(), ZYFA_ERROR_INVALID_ARGUMENT);
            assert_int_equal(clean.run_cpu(), ZYFA_SUCCESS);
            DeviceQuant d(bad);
            assert_int_equal(d.launch(session().stream), ZYFA_SUCCESS);
            session().runtime->synchronize_stream(session().stream);
            d.download(bad);
            bad.out_cpu = clean.out_cpu;
            bad.descale_cpu = clean.descale_cpu;
            bad.mean_cpu = clean.mean_cpu;  // slice 1's means (NaN or inf in one channel) are skipped
            // Codes of slice 1 (b 0, h 1) are excluded: NaN codes or zeros there.
            for (int64_t r = 0; r < bad.rows && r < s.seqlen; ++r) {
                for (int64_t dd = 0; dd < s.head_dim; ++dd) {
                    const size_t i = static_cast<size_t>(r * bad.out.stride_seq + 1 * bad.out.stride_head + dd);
                    bad.out_gpu[i] = bad.out_cpu[i];
                }
            }
            const Comparison r = compare(bad, 1);
            print_result(bad, r);
            std::printf("    slice 1 descale on the GPU: %g\n", static_cast<double>(bad.descale_gpu[1]));
            assert_int_equal(r.code_mismatches, 0);
            assert_int_equal(r.descale_mismatches, 0);
            assert_int_equal(r.mean_mismatches, 0);
            if (special == Special::NaNInSlice1 || smooth) {
                // Smoothing: x - mean is NaN for the infinite element too (inf - inf), so NaN.
                assert_true(std::isnan(bad.descale_gpu[1]));
            } else {
                assert_true(std::isinf(bad.descale_gpu[1]) && bad.descale_gpu[1] > 0.0f);
            }
        });
    }
}

// Captured in a graph and replayed: same bits (the four launches need nothing but the stream).
void graph_capture_and_replay(void**) {
    guarded([&] {
        QuantShape s = shape("graph replay bf16 d128 hadamard smooth", ZYFA_DTYPE_BF16, kFn, true, 2, 200, 4, 128);
        s.smooth = true;  // the five launches replay as well
        QuantCase c(s, Special::None);
        assert_int_equal(c.run_cpu(), ZYFA_SUCCESS);
        DeviceQuant d(c);
        GpuRuntime& rt = *session().runtime;
        rt.begin_capture(session().stream);
        const zyfa_status st = d.launch(session().stream);
        void* graph = rt.end_capture(session().stream);
        assert_int_equal(st, ZYFA_SUCCESS);
        void* exec = rt.instantiate_graph(graph);
        for (int replay = 0; replay < 3; ++replay) rt.launch_graph(exec, session().stream);
        rt.synchronize_stream(session().stream);
        rt.destroy_graph_exec(exec);
        rt.destroy_graph(graph);
        d.download(c);
        const Comparison r = compare(c);
        print_result(c, r);
        assert_int_equal(r.code_mismatches, 0);
        assert_int_equal(r.descale_mismatches, 0);
        assert_int_equal(r.mean_mismatches, 0);
    });
}

// A prefill-sized call, timed (printed, not asserted: a figure for docs, not a gate), without
// and with K smoothing (one more pass over the input).
void timing_of_a_large_call(void**) {
    for (int smooth = 0; smooth < 2; ++smooth)
    guarded([&] {
        QuantShape s = shape(smooth ? "bf16 d128 hadamard+smooth 4x4096x32" : "bf16 d128 hadamard 4x4096x32",
                             ZYFA_DTYPE_BF16, kFn, true, 4, 4096, 32, 128);
        s.smooth = smooth != 0;
        QuantCase c(s, Special::None);
        DeviceQuant d(c);
        GpuRuntime& rt = *session().runtime;
        assert_int_equal(d.launch(session().stream), ZYFA_SUCCESS);  // warm-up
        void* start = rt.create_event();
        void* end = rt.create_event();
        constexpr int kRepeats = 20;
        rt.record_event(start, session().stream);
        for (int i = 0; i < kRepeats; ++i) assert_int_equal(d.launch(session().stream), ZYFA_SUCCESS);
        rt.record_event(end, session().stream);
        const double us = 1000.0 * rt.elapsed_ms(start, end) / kRepeats;
        rt.destroy_event(start);
        rt.destroy_event(end);
        const double bytes = static_cast<double>(c.in_bytes.size() + c.out_gpu.size());
        std::printf("  %-44s %.1f us per call, %.0f GB/s of input + codes\n", s.label, us, bytes / (us * 1e3));
        assert_true(us > 0.0);
        d.download(c);
        assert_int_equal(c.run_cpu(), ZYFA_SUCCESS);
        const Comparison r = compare(c);
        assert_int_equal(r.code_mismatches, 0);
        assert_int_equal(r.descale_mismatches, 0);
        assert_int_equal(r.mean_mismatches, 0);
    });
}

QuantShape int8_shape(const char* label, zyfa_dtype in, bool hadamard, int32_t scale_rows, int64_t batch,
                      int64_t seqlen, int64_t heads, int64_t head_dim) {
    QuantShape s = shape(label, in, ZYFA_DTYPE_INT8, hadamard, batch, seqlen, heads, head_dim);
    s.scale_rows = scale_rows;
    return s;
}

void test_int8(void**) {
    for (int32_t rows : {1, 64}) {
        const std::string per = rows == 1 ? "int8 per token " : "int8 per 64 ";
        for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
            for (bool hadamard : {false, true}) {
                const std::string label = per + (in == ZYFA_DTYPE_FP32 ? "fp32" : in == ZYFA_DTYPE_BF16 ? "bf16" : "fp16") +
                                          " d128 s=300 " + (hadamard ? "hadamard" : "plain");
                QuantShape s = int8_shape(label.c_str(), in, hadamard, rows, 2, 300, 3, 128);
                s.seed = static_cast<uint32_t>(500 + in * 10 + rows + (hadamard ? 100 : 0));
                check_bitwise(s);
            }
        }
        const std::string padded = per + "d192 padded";
        QuantShape p = int8_shape(padded.c_str(), ZYFA_DTYPE_BF16, true, rows, 3, 77, 2, 192);
        p.in_pad = 8;
        p.out_pad = 16;
        p.seed = 600u + static_cast<uint32_t>(rows);
        check_bitwise(p);
        const std::string varlen = per + "varlen d128 hadamard (an empty sequence)";
        QuantShape v = int8_shape(varlen.c_str(), ZYFA_DTYPE_FP16, true, rows, 4, 195, 3, 128);
        v.cu_seqlens = {0, 130, 130, 325, 330};  // lengths 130, 0, 195, 5
        v.seed = 700u + static_cast<uint32_t>(rows);
        check_bitwise(v);
        const std::string smooth = per + "smooth+hadamard d64";
        QuantShape m = int8_shape(smooth.c_str(), ZYFA_DTYPE_FP32, true, rows, 2, 150, 2, 64);
        m.smooth = true;
        m.seed = 800u + static_cast<uint32_t>(rows);
        check_bitwise(m);
        const std::string zero = per + "zero/tiny slices";
        QuantShape z = int8_shape(zero.c_str(), ZYFA_DTYPE_FP32, true, rows, 1, 70, 3, 64);
        z.seed = 900u + static_cast<uint32_t>(rows);
        check_bitwise(z, Special::ZeroAndTinySlices);
        const std::string huge = per + "huge slice";
        QuantShape h = int8_shape(huge.c_str(), ZYFA_DTYPE_BF16, false, rows, 1, 70, 3, 64);
        h.seed = 950u + static_cast<uint32_t>(rows);
        check_bitwise(h, Special::HugeSlice1);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const int opened = open_session_or_skip("gpu_quantize_fp8");
    if (opened != 0) return opened;
    // "small": the cases compute-sanitizer can run in seconds (no timing, no 4096-row problem).
    const bool small = argc > 1 && std::strcmp(argv[1], "small") == 0;
    const struct CMUnitTest small_tests[] = {
        cmocka_unit_test(varlen_with_empty_sequence),
        cmocka_unit_test(other_head_dims),
        cmocka_unit_test(smoothing_lengths_and_varlen),
        cmocka_unit_test(key_bias),
        cmocka_unit_test(test_int8),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_length_d128),
        cmocka_unit_test(fixed_length_d192_padded),
        cmocka_unit_test(varlen_with_empty_sequence),
        cmocka_unit_test(other_head_dims),
        cmocka_unit_test(smoothing_fixed_length),
        cmocka_unit_test(smoothing_lengths_and_varlen),
        cmocka_unit_test(key_bias),
        cmocka_unit_test(zero_tiny_subnormal_and_signed_zero_slices),
        cmocka_unit_test(non_finite_input_poisons_only_its_slice),
        cmocka_unit_test(graph_capture_and_replay),
        cmocka_unit_test(timing_of_a_large_call),
        cmocka_unit_test(test_int8),
    };
    const int failed = small ? cmocka_run_group_tests(small_tests, nullptr, nullptr)
                             : cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
