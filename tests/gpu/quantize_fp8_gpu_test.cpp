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
// Exits 77 (skipped) without a CUDA device, like every gpu-tier test.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/half_types.h"
#include "gpu_session.hpp"

namespace {

using namespace zyfa_gpu_test;

struct QuantShape {
    const char* label;
    zyfa_dtype in_dtype;
    zyfa_dtype out_dtype;
    bool hadamard;
    int64_t batch, seqlen, heads, head_dim;
    bool smooth = false;               // ZYFA_QUANT_SMOOTH, with a per-channel bias in the input
    bool constant_slice = false;       // smooth: slice 0's rows all equal
    std::vector<int32_t> cu_seqlens;  // empty: fixed length
    int64_t in_pad = 0;               // extra elements after each head's row (padded strides)
    int64_t out_pad = 0;
    uint32_t seed = 1;
};

enum class Special { None, ZeroAndTinySlices, NaNInSlice1, InfInSlice1 };

size_t elem_size(zyfa_dtype d) { return d == ZYFA_DTYPE_FP32 ? 4 : d == ZYFA_DTYPE_FP8_E4M3FN || d == ZYFA_DTYPE_FP8_E4M3FNUZ ? 1 : 2; }

// Host side of one problem: input bytes, CPU and GPU outputs, strides.
struct QuantCase {
    QuantShape shape;
    zyfa_quant_params params;
    zyfa_tensor in, out;
    std::vector<uint8_t> in_bytes;
    std::vector<uint8_t> out_cpu, out_gpu;
    std::vector<float> descale_cpu, descale_gpu;
    std::vector<float> mean_cpu, mean_gpu;  // [batch, heads, head_dim] when smoothing
    int64_t rows = 0;  // packed rows when varlen, seqlen otherwise

    static constexpr uint8_t kOutSentinel = 0xA5;
    static constexpr float kDescaleSentinel = 12345.0f;

    QuantCase(const QuantShape& s, Special special) : shape(s) {
        zyfa_quant_params_init(&params, sizeof(params));
        params.flags = (s.hadamard ? ZYFA_QUANT_HADAMARD : 0u) | (s.smooth ? ZYFA_QUANT_SMOOTH : 0u);
        params.batch = s.batch;
        params.seqlen = s.seqlen;
        params.heads = s.heads;
        params.head_dim = s.head_dim;
        const bool varlen = !s.cu_seqlens.empty();
        rows = varlen ? s.cu_seqlens.back() : s.seqlen;
        in = layout(s.in_dtype, s.in_pad, varlen);
        out = layout(s.out_dtype, s.out_pad, varlen);
        const int64_t in_elems = varlen ? rows * in.stride_seq : s.batch * in.stride_batch;
        const int64_t out_elems = varlen ? rows * out.stride_seq : s.batch * out.stride_batch;
        in_bytes.assign(static_cast<size_t>(in_elems) * elem_size(s.in_dtype), 0);
        out_cpu.assign(static_cast<size_t>(out_elems), kOutSentinel);
        out_gpu = out_cpu;
        descale_cpu.assign(static_cast<size_t>(s.batch * s.heads), kDescaleSentinel);
        descale_gpu = descale_cpu;
        if (s.smooth) mean_cpu.assign(static_cast<size_t>(s.batch * s.heads * s.head_dim), kDescaleSentinel);
        mean_gpu = mean_cpu;
        fill(special);
    }

    zyfa_tensor layout(zyfa_dtype dtype, int64_t pad, bool varlen) const {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof(t));
        t.dtype = dtype;
        t.stride_head = shape.head_dim + pad;
        t.stride_seq = shape.heads * t.stride_head;
        t.stride_batch = varlen ? 0 : shape.seqlen * t.stride_seq;
        return t;
    }

    int64_t first(int64_t b) const { return shape.cu_seqlens.empty() ? 0 : shape.cu_seqlens[static_cast<size_t>(b)]; }
    int64_t len(int64_t b) const {
        return shape.cu_seqlens.empty() ? shape.seqlen
                                        : shape.cu_seqlens[static_cast<size_t>(b + 1)] - shape.cu_seqlens[static_cast<size_t>(b)];
    }
    int64_t in_index(int64_t b, int64_t s, int64_t h, int64_t d) const {
        return b * in.stride_batch + (first(b) + s) * in.stride_seq + h * in.stride_head + d;
    }

    void store(int64_t index, float x) {
        uint8_t* p = in_bytes.data() + static_cast<size_t>(index) * elem_size(shape.in_dtype);
        if (shape.in_dtype == ZYFA_DTYPE_FP32) {
            std::memcpy(p, &x, 4);
        } else {
            const uint16_t h = shape.in_dtype == ZYFA_DTYPE_BF16 ? zyfa::numerics::float_to_bf16(x)
                                                                 : zyfa::numerics::float_to_fp16(x);
            std::memcpy(p, &h, 2);
        }
    }

    // Gaussian values with a few outlier channels (what the rotation is for), a per-slice scale
    // spanning several binades, some signed zeros; optional special slices.
    void fill(Special special) {
        std::mt19937 rng(shape.seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::uniform_int_distribution<int> pick(0, 63);
        const bool fp32 = shape.in_dtype == ZYFA_DTYPE_FP32;
        for (int64_t b = 0; b < shape.batch; ++b) {
            for (int64_t h = 0; h < shape.heads; ++h) {
                const int64_t slice = b * shape.heads + h;
                float slice_scale = std::ldexp(1.0f, static_cast<int>(slice % 7) - 3);
                bool zero_slice = false;
                if (special == Special::ZeroAndTinySlices) {
                    if (slice == 0) zero_slice = true;
                    // fp32 reaches the pre-shift path (amax < 2^-100) and subnormals; 16-bit
                    // inputs their own subnormal range.
                    if (slice == 1) slice_scale = fp32 ? 0x1p-120f : shape.in_dtype == ZYFA_DTYPE_FP16 ? 0x1p-20f : 0x1p-125f;
                }
                for (int64_t s = 0; s < len(b); ++s) {
                    for (int64_t d = 0; d < shape.head_dim; ++d) {
                        float x = normal(rng) * slice_scale;
                        if (d % 37 == 5) x *= 20.0f;  // outlier channels
                        if (pick(rng) == 0) x = pick(rng) < 32 ? 0.0f : -0.0f;
                        if (zero_slice) x = (d + s) % 2 ? 0.0f : -0.0f;
                        // Smoothing: keys' shared per-channel offset, several sigma.
                        if (shape.smooth) x += slice_scale * 6.0f * static_cast<float>(1 + d % 5) * ((d & 1) ? -1.0f : 1.0f);
                        if (shape.constant_slice && slice == 0) x = 0.25f * static_cast<float>(d % 9) - 1.0f;
                        store(in_index(b, s, h, d), x);
                    }
                }
            }
        }
        if ((special == Special::NaNInSlice1 || special == Special::InfInSlice1) && len(0) > 0 && shape.heads > 1) {
            const int64_t s = len(0) - 1;
            store(in_index(0, s, 1, shape.head_dim - 1), special == Special::NaNInSlice1 ? NAN : -INFINITY);
        }
    }

    zyfa_status run_cpu() {
        zyfa_tensor t_in = in, t_out = out;
        t_in.data = in_bytes.data();
        t_out.data = out_cpu.data();
        zyfa_quant_params p = params;
        if (!shape.cu_seqlens.empty()) p.cu_seqlens = shape.cu_seqlens.data();
        if (shape.smooth) p.smooth_mean = mean_cpu.data();
        return zyfa_quantize_fp8(session().cpu, &p, &t_in, &t_out, descale_cpu.data(), nullptr);
    }
};

// The case's buffers on the device; `run` launches on the session stream and downloads.
struct DeviceQuant {
    DeviceBuffer in, out, descale, cu, mean;
    zyfa_quant_params params;
    zyfa_tensor t_in, t_out;

    explicit DeviceQuant(QuantCase& c) {
        GpuRuntime& rt = *session().runtime;
        in = DeviceBuffer(rt, c.in_bytes.data(), c.in_bytes.size());
        out = DeviceBuffer(rt, c.out_gpu.data(), c.out_gpu.size());
        descale = DeviceBuffer(rt, c.descale_gpu.data(), bytes_of(c.descale_gpu));
        params = c.params;
        if (!c.shape.cu_seqlens.empty()) {
            cu = DeviceBuffer(rt, c.shape.cu_seqlens.data(), bytes_of(c.shape.cu_seqlens));
            params.cu_seqlens = static_cast<const int32_t*>(cu.data());
        }
        if (c.shape.smooth) {
            mean = DeviceBuffer(rt, c.mean_gpu.data(), bytes_of(c.mean_gpu));
            params.smooth_mean = static_cast<float*>(mean.data());
        }
        t_in = c.in;
        t_out = c.out;
        t_in.data = in.data();
        t_out.data = out.data();
    }
    zyfa_status launch(StreamHandle stream) {
        return zyfa_quantize_fp8(session().cuda, &params, &t_in, &t_out, static_cast<float*>(descale.data()), stream);
    }
    void download(QuantCase& c) {
        out.download(c.out_gpu.data());
        descale.download(c.descale_gpu.data());
        if (c.shape.smooth) mean.download(c.mean_gpu.data());
    }
    bool guards_intact() const {
        return in.guard_intact() && out.guard_intact() && descale.guard_intact() && (mean.size() == 0 || mean.guard_intact());
    }
};

struct Comparison {
    int64_t code_mismatches = 0;
    int64_t first_code_mismatch = -1;
    int64_t descale_mismatches = 0;
    int64_t mean_mismatches = 0;
};

Comparison compare(const QuantCase& c, int64_t skip_slice = -1) {
    Comparison r;
    for (size_t i = 0; i < c.out_cpu.size(); ++i) {
        if (c.out_cpu[i] != c.out_gpu[i]) {
            if (r.first_code_mismatch < 0) r.first_code_mismatch = static_cast<int64_t>(i);
            ++r.code_mismatches;
        }
    }
    for (size_t i = 0; i < c.descale_cpu.size(); ++i) {
        if (static_cast<int64_t>(i) == skip_slice) continue;
        if (std::memcmp(&c.descale_cpu[i], &c.descale_gpu[i], sizeof(float)) != 0) ++r.descale_mismatches;
    }
    const size_t per_slice = static_cast<size_t>(c.shape.head_dim);
    for (size_t i = 0; i < c.mean_cpu.size(); ++i) {
        if (skip_slice >= 0 && i / per_slice == static_cast<size_t>(skip_slice)) continue;
        if (std::memcmp(&c.mean_cpu[i], &c.mean_gpu[i], sizeof(float)) != 0) ++r.mean_mismatches;
    }
    return r;
}

void print_result(const QuantCase& c, const Comparison& r) {
    std::printf("  %-44s codes %lld/%zu differ, descales %lld/%zu differ", c.shape.label,
                static_cast<long long>(r.code_mismatches), c.out_cpu.size(), static_cast<long long>(r.descale_mismatches),
                c.descale_cpu.size());
    if (r.first_code_mismatch >= 0) {
        const size_t i = static_cast<size_t>(r.first_code_mismatch);
        std::printf(" (first at byte %zu: cpu 0x%02x gpu 0x%02x)", i, c.out_cpu[i], c.out_gpu[i]);
    }
    if (!c.mean_cpu.empty()) std::printf(", means %lld/%zu differ", static_cast<long long>(r.mean_mismatches), c.mean_cpu.size());
    std::printf("\n");
}

// One case: CPU and GPU from the same bytes, bitwise equal codes (padding included) and descales.
void check_bitwise(const QuantShape& shape, Special special = Special::None) {
    guarded([&] {
        QuantCase c(shape, special);
        const zyfa_status cpu = c.run_cpu();
        if (cpu != ZYFA_SUCCESS) {
            std::printf("  %s: CPU backend: %s: %s\n", shape.label, zyfa_status_string(cpu), zyfa_last_error_message());
            fail();
        }
        DeviceQuant d(c);
        const zyfa_status st = d.launch(session().stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("  %s: zyfa_quantize_fp8(CUDA): %s: %s\n", shape.label, zyfa_status_string(st),
                        zyfa_last_error_message());
            fail();
        }
        session().runtime->synchronize_stream(session().stream);
        d.download(c);
        const Comparison r = compare(c);
        print_result(c, r);
        assert_true(d.guards_intact());
        assert_int_equal(r.code_mismatches, 0);
        assert_int_equal(r.descale_mismatches, 0);
        assert_int_equal(r.mean_mismatches, 0);
        if (shape.constant_slice) assert_true(c.descale_gpu[0] == 1.0f);  // nothing left after the mean
        if (special == Special::ZeroAndTinySlices) {
            assert_true(c.descale_gpu[0] == 1.0f);  // the all-zero slice
            assert_true(c.descale_gpu[1] < 0x1p-100f / 448.0f || shape.in_dtype != ZYFA_DTYPE_FP32);
        }
    });
}

QuantShape shape(const char* label, zyfa_dtype in, zyfa_dtype out, bool hadamard, int64_t batch, int64_t seqlen,
                 int64_t heads, int64_t head_dim) {
    QuantShape s;
    s.label = label;
    s.in_dtype = in;
    s.out_dtype = out;
    s.hadamard = hadamard;
    s.batch = batch;
    s.seqlen = seqlen;
    s.heads = heads;
    s.head_dim = head_dim;
    return s;
}

constexpr zyfa_dtype kFn = ZYFA_DTYPE_FP8_E4M3FN;
constexpr zyfa_dtype kFnuz = ZYFA_DTYPE_FP8_E4M3FNUZ;

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
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixed_length_d128),
        cmocka_unit_test(fixed_length_d192_padded),
        cmocka_unit_test(varlen_with_empty_sequence),
        cmocka_unit_test(other_head_dims),
        cmocka_unit_test(smoothing_fixed_length),
        cmocka_unit_test(smoothing_lengths_and_varlen),
        cmocka_unit_test(zero_tiny_subnormal_and_signed_zero_slices),
        cmocka_unit_test(non_finite_input_poisons_only_its_slice),
        cmocka_unit_test(graph_capture_and_replay),
        cmocka_unit_test(timing_of_a_large_call),
    };
    const int failed = small ? cmocka_run_group_tests(small_tests, nullptr, nullptr)
                             : cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
