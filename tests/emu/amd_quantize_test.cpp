// zyfa_quantize_fp8's HIP kernels (kernels/amd/quantize_fp8.hip) end to end on the emulator:
// libzyfa.so's HIP backend with ZYFA_HIP_LIBRARY pointing at the HIP stand-in, against the CPU
// backend on the same bytes (tests/gpu/quant_gpu_check.hpp): codes (padding included), descales
// and K-smoothing means bitwise equal, guard bands intact. Shapes: fixed length and varlen (with
// an empty sequence), with and without the Hadamard rotation and K smoothing, head dims that are
// not powers of two (80 plain, 192 and 320 in 64-blocks) and the largest block (1024), padded
// strides, all-zero, tiny and huge slices, fp32 / bf16 / fp16 input, the arch's own FP8 format
// (gfx950 e4m3fn, gfx942 e4m3fnuz) and the other one; and a NaN or an infinity affecting only its
// slice; refusals (host pointer, Hadamard block over 1024, head dim 96 with the rotation) write
// nothing. Small shapes: every workgroup is emulated. The target is chosen by ZYFA_EMU_ARCH (gfx950
// or gfx942).
// zyfa_quantize_int8 (kernel zyfa_quantize_int8_groups) the same way: per-token (scale_rows 1) and
// per-64-row (64) descales bitwise, trailing descales of short packed sequences left unwritten as
// the CPU leaves them, with the rotation, smoothing, zero, tiny and huge groups.
#include <cstdlib>
#include <cstring>
#include <string>

#include "emu/emulated_hip_session.hpp"
#include "gpu/quant_gpu_check.hpp"

using namespace zyfa_gpu_test;

namespace {

// The FP8 format the attention kernels of the emulated arch read.
zyfa_dtype native_format() {
    const char* arch = std::getenv("ZYFA_EMU_ARCH");
    return arch != nullptr && std::strcmp(arch, "gfx942") == 0 ? kFnuz : kFn;
}
zyfa_dtype other_format() { return native_format() == kFn ? kFnuz : kFn; }

void fixed_length(void**) {
    const zyfa_dtype fp8 = native_format();
    // 70 rows: a full 64-row encode block and a partial one; 8 row groups, the last round partial.
    check_bitwise(shape("fp32 d64 hadamard", ZYFA_DTYPE_FP32, fp8, true, 1, 70, 2, 64));
    check_bitwise(shape("bf16 d64 plain", ZYFA_DTYPE_BF16, fp8, false, 2, 11, 2, 64));
    check_bitwise(shape("fp16 d80 plain (not a power of two)", ZYFA_DTYPE_FP16, fp8, false, 1, 9, 3, 80));
    check_bitwise(shape("bf16 d320 hadamard (5 blocks of 64)", ZYFA_DTYPE_BF16, other_format(), true, 1, 5, 2, 320));
    check_bitwise(shape("fp32 d16 hadamard", ZYFA_DTYPE_FP32, other_format(), true, 1, 9, 2, 16));
}

void padded_strides(void**) {
    for (bool hadamard : {false, true}) {
        QuantShape s = shape(hadamard ? "fp16 d192 hadamard padded" : "fp32 d192 plain padded",
                             hadamard ? ZYFA_DTYPE_FP16 : ZYFA_DTYPE_FP32, native_format(), hadamard, 2, 7, 2, 192);
        s.in_pad = 8;
        s.out_pad = 32;  // GPU backends need FP8 strides in multiples of 16 elements
        s.seed = hadamard ? 17u : 18u;
        check_bitwise(s);
    }
}

void varlen_with_empty_sequence(void**) {
    for (bool hadamard : {false, true}) {
        QuantShape s = shape(hadamard ? "varlen bf16 d128 hadamard" : "varlen bf16 d128 plain", ZYFA_DTYPE_BF16,
                             native_format(), hadamard, 4, 67, 2, 128);
        s.cu_seqlens = {0, 5, 5, 72, 75};  // lengths 5, 0, 67, 3
        s.seed = hadamard ? 31u : 32u;
        check_bitwise(s);
    }
}

// Not bf16 here: its tiny slice (amax about 2^-120) has a subnormal descale, a division whose
// v_div_fmas runs with VCC set, which the emulator refuses (docs/emulator.md); hardware computes it.
void zero_tiny_huge_and_subnormal_slices(void**) {
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP16}) {
        QuantShape s = shape("zero/tiny slices hadamard", in, native_format(), true, 1, 6, 3, 64);
        s.seed = 55u + static_cast<uint32_t>(in);
        check_bitwise(s, Special::ZeroAndTinySlices);
    }
    for (zyfa_dtype in : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16}) {
        QuantShape s = shape("huge slice 1 (amax ~2^115) hadamard", in, other_format(), true, 1, 6, 3, 64);
        s.seed = 57u + static_cast<uint32_t>(in);
        check_bitwise(s, Special::HugeSlice1);
    }
}

// More rows: several 64-row encode blocks (the amax workgroup loops over all 300), the largest
// Hadamard block, and smoothing lengths that leave lanes empty or unequal.
void longer_rows_and_largest_block(void**) {
    check_bitwise(shape("bf16 d128 hadamard 300 rows", ZYFA_DTYPE_BF16, native_format(), true, 2, 300, 2, 128));
    check_bitwise(shape("fp32 d1024 hadamard (largest block)", ZYFA_DTYPE_FP32, native_format(), true, 1, 10, 2, 1024));
    for (int64_t seqlen : {1, 7, 8, 9, 130}) {
        QuantShape s = shape("smooth fp32 d48", ZYFA_DTYPE_FP32, native_format(), false, 1, seqlen, 2, 48);
        s.smooth = true;
        s.seed = static_cast<uint32_t>(300 + seqlen);
        check_bitwise(s);
    }
}

// ZYFA_QUANT_KEY_BIAS (launch 5): Q smoothing's per-key bias (common/key_bias.h) bitwise the CPU's,
// under GQA (3 query heads per K head), with and without K smoothing and the rotation, packed
// sequences (an empty one) in the [query_heads, total] layout.
void key_bias(void**) {
    QuantShape s = shape("key bias smooth+hadamard fp32 d64 gqa 6:2", ZYFA_DTYPE_FP32, native_format(), true, 2, 70, 2, 64);
    s.smooth = true;
    s.query_heads = 6;
    check_bitwise(s);
    QuantShape p = shape("key bias plain bf16 d128", ZYFA_DTYPE_BF16, native_format(), false, 1, 9, 2, 128);
    p.query_heads = 2;
    check_bitwise(p);
    QuantShape v = shape("key bias varlen fp16 d64 smooth", ZYFA_DTYPE_FP16, native_format(), false, 3, 10, 2, 64);
    v.cu_seqlens = {0, 4, 4, 14};
    v.smooth = true;
    v.query_heads = 4;
    check_bitwise(v);
}

// K smoothing: the fp64 lane sums and the division of common/smooth_mean.h, then the rotation.
void smoothing(void**) {
    QuantShape s = shape("smooth fp32 d96", ZYFA_DTYPE_FP32, native_format(), false, 1, 11, 2, 96);
    s.smooth = true;
    check_bitwise(s);
    QuantShape h = shape("smooth+hadamard bf16 d128", ZYFA_DTYPE_BF16, native_format(), true, 1, 9, 2, 128);
    h.smooth = true;
    h.seed = 201;
    check_bitwise(h);
    QuantShape v = shape("smooth varlen fp16 d64 hadamard", ZYFA_DTYPE_FP16, other_format(), true, 3, 10, 2, 64);
    v.smooth = true;
    v.cu_seqlens = {0, 3, 3, 13};  // lengths 3, 0 (mean 0), 10
    v.seed = 202;
    check_bitwise(v);
    QuantShape c = shape("smooth constant slice 0", ZYFA_DTYPE_FP32, native_format(), true, 1, 5, 2, 64);
    c.smooth = true;
    c.constant_slice = true;
    check_bitwise(c);
}

// The GPU does not check for non-finite input (that would need a synchronisation): the call
// succeeds and only the NaN's slice is affected, its descale NaN.
void nan_poisons_only_its_slice(void**) {
    guarded([&] {
        QuantShape s = shape("NaN in slice 1", ZYFA_DTYPE_BF16, native_format(), true, 1, 6, 3, 64);
        QuantCase bad(s, Special::NaNInSlice1);
        QuantCase clean(s, Special::None);
        assert_int_equal(bad.run_cpu(), ZYFA_ERROR_INVALID_ARGUMENT);
        assert_int_equal(clean.run_cpu(), ZYFA_SUCCESS);
        DeviceQuant d(bad);
        assert_int_equal(d.launch(session().stream), ZYFA_SUCCESS);
        session().runtime->synchronize_stream(session().stream);
        d.download(bad);
        bad.out_cpu = clean.out_cpu;
        bad.descale_cpu = clean.descale_cpu;
        for (int64_t r = 0; r < s.seqlen; ++r) {  // slice 1's codes are NaN codes: not compared
            for (int64_t dd = 0; dd < s.head_dim; ++dd) {
                const size_t i = static_cast<size_t>(r * bad.out.stride_seq + 1 * bad.out.stride_head + dd);
                bad.out_gpu[i] = bad.out_cpu[i];
            }
        }
        const Comparison r = compare(bad, 1);
        print_result(bad, r);
        assert_int_equal(r.code_mismatches, 0);
        assert_int_equal(r.descale_mismatches, 0);
        assert_true(std::isnan(bad.descale_gpu[1]));
    });
}

// An infinity: the call succeeds, its slice's descale is +inf, every other slice as the CPU's.
void inf_gives_an_infinite_descale(void**) {
    guarded([&] {
        QuantShape s = shape("-inf in slice 1", ZYFA_DTYPE_FP32, native_format(), false, 1, 6, 3, 64);
        QuantCase bad(s, Special::InfInSlice1);
        QuantCase clean(s, Special::None);
        assert_int_equal(bad.run_cpu(), ZYFA_ERROR_INVALID_ARGUMENT);
        assert_int_equal(clean.run_cpu(), ZYFA_SUCCESS);
        DeviceQuant d(bad);
        assert_int_equal(d.launch(session().stream), ZYFA_SUCCESS);
        session().runtime->synchronize_stream(session().stream);
        d.download(bad);
        bad.out_cpu = clean.out_cpu;
        bad.descale_cpu = clean.descale_cpu;
        for (int64_t r = 0; r < s.seqlen; ++r) {
            for (int64_t dd = 0; dd < s.head_dim; ++dd) {
                const size_t i = static_cast<size_t>(r * bad.out.stride_seq + 1 * bad.out.stride_head + dd);
                bad.out_gpu[i] = bad.out_cpu[i];
            }
        }
        const Comparison r = compare(bad, 1);
        print_result(bad, r);
        assert_int_equal(r.code_mismatches, 0);
        assert_int_equal(r.descale_mismatches, 0);
        assert_true(std::isinf(bad.descale_gpu[1]) && bad.descale_gpu[1] > 0.0f);
    });
}

// Refusals before any launch, nothing written: a host pointer (INVALID_ARGUMENT naming it), a
// Hadamard block beyond the GPU kernels' 1024 (NOT_SUPPORTED), and the rotation on a head dim it
// does not cover (NOT_SUPPORTED, as on every backend).
void refusals_write_nothing(void**) {
    guarded([&] {
        QuantShape s = shape("refusals", ZYFA_DTYPE_FP32, native_format(), true, 1, 4, 2, 64);
        QuantCase c(s, Special::None);
        DeviceQuant d(c);
        std::vector<float> host_descale(2, 7.0f);
        assert_int_equal(zyfa_quantize_fp8(session().cuda, &d.params, &d.t_in, &d.t_out, host_descale.data(), session().stream),
                         ZYFA_ERROR_INVALID_ARGUMENT);
        assert_non_null(std::strstr(zyfa_last_error_message(), "descale"));
        assert_true(host_descale[0] == 7.0f && host_descale[1] == 7.0f);
        d.download(c);
        for (uint8_t code : c.out_gpu) assert_int_equal(code, QuantCase::kOutSentinel);
        assert_true(c.descale_gpu[0] == QuantCase::kDescaleSentinel);
    });
    guarded([&] {
        QuantShape s = shape("hadamard 2048", ZYFA_DTYPE_BF16, native_format(), true, 1, 1, 1, 2048);
        QuantCase c(s, Special::None);
        DeviceQuant d(c);
        assert_int_equal(d.launch(session().stream), ZYFA_ERROR_NOT_SUPPORTED);
        assert_non_null(std::strstr(zyfa_last_error_message(), "1024"));
        QuantShape odd = shape("hadamard 96", ZYFA_DTYPE_BF16, native_format(), true, 1, 2, 1, 96);
        QuantCase o(odd, Special::None);
        DeviceQuant od(o);
        assert_int_equal(od.launch(session().stream), ZYFA_ERROR_NOT_SUPPORTED);
        od.download(o);
        for (uint8_t code : o.out_gpu) assert_int_equal(code, QuantCase::kOutSentinel);
        assert_true(o.descale_gpu[0] == QuantCase::kDescaleSentinel);
    });
}

// The INT8 quantiser: one scale per row (Q) or per 64 rows (K) of each (sequence, head).
QuantShape int8_shape(const char* label, zyfa_dtype in, bool hadamard, int32_t scale_rows, int64_t batch,
                      int64_t seqlen, int64_t heads, int64_t head_dim) {
    QuantShape s = shape(label, in, ZYFA_DTYPE_INT8, hadamard, batch, seqlen, heads, head_dim);
    s.scale_rows = scale_rows;
    return s;
}

void int8_per_token_and_per_block(void**) {
    // 70 rows: a full 64-row block and a partial one (a partial K group of 6 rows).
    for (int32_t rows : {1, 64}) {
        check_bitwise(int8_shape(rows == 1 ? "int8 per token fp32 d64 hadamard" : "int8 per 64 fp32 d64 hadamard",
                                 ZYFA_DTYPE_FP32, true, rows, 1, 70, 2, 64));
        QuantShape p = int8_shape(rows == 1 ? "int8 per token bf16 d128 padded" : "int8 per 64 bf16 d128 padded",
                                  ZYFA_DTYPE_BF16, false, rows, 2, 130, 2, 128);
        p.in_pad = 8;
        p.out_pad = 16;
        p.seed = 40u + static_cast<uint32_t>(rows);
        check_bitwise(p);
        QuantShape v = int8_shape(rows == 1 ? "int8 per token varlen fp16 d80" : "int8 per 64 varlen fp16 d80",
                                  ZYFA_DTYPE_FP16, false, rows, 4, 67, 2, 80);
        v.cu_seqlens = {0, 5, 5, 72, 75};  // lengths 5, 0, 67, 3: trailing descales not written
        v.seed = 50u + static_cast<uint32_t>(rows);
        check_bitwise(v);
        QuantShape m = int8_shape(rows == 1 ? "int8 per token smooth+hadamard bf16" : "int8 per 64 smooth+hadamard bf16",
                                  ZYFA_DTYPE_BF16, true, rows, 1, 80, 2, 128);
        m.smooth = true;
        m.seed = 60u + static_cast<uint32_t>(rows);
        check_bitwise(m);
    }
}

void int8_zero_tiny_huge_groups(void**) {
    for (int32_t rows : {1, 64}) {
        QuantShape z = int8_shape("int8 zero/tiny slices fp32 hadamard", ZYFA_DTYPE_FP32, true, rows, 1, 6, 3, 64);
        z.seed = 70u + static_cast<uint32_t>(rows);
        check_bitwise(z, Special::ZeroAndTinySlices);
        QuantShape h = int8_shape("int8 huge slice 1 fp32", ZYFA_DTYPE_FP32, false, rows, 1, 6, 3, 64);
        h.seed = 80u + static_cast<uint32_t>(rows);
        check_bitwise(h, Special::HugeSlice1);
    }
}

}  // namespace

int main() {
    const int status = open_emulated_hip_session("amd_quantize");
    if (status != 0) return status;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_length),
        cmocka_unit_test(padded_strides),
        cmocka_unit_test(varlen_with_empty_sequence),
        cmocka_unit_test(zero_tiny_huge_and_subnormal_slices),
        cmocka_unit_test(longer_rows_and_largest_block),
        cmocka_unit_test(smoothing),
        cmocka_unit_test(key_bias),
        cmocka_unit_test(nan_poisons_only_its_slice),
        cmocka_unit_test(inf_gives_an_infinite_descale),
        cmocka_unit_test(refusals_write_nothing),
        cmocka_unit_test(int8_per_token_and_per_block),
        cmocka_unit_test(int8_zero_tiny_huge_groups),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
