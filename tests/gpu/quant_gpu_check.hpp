// zyfa_quantize_fp8 (and zyfa_quantize_int8: out_dtype INT8 with scale_rows 1 or 64) on a GPU context (CUDA on a device, HIP on the emulator's stand-in) against the
// CPU backend (src/cpu/quantize_fp8.cpp, the spec): the same request on device and host buffers,
// codes, descales and K-smoothing means bitwise equal, every byte the call must not write (padding,
// guard bands) left at its sentinel. Used by tests/gpu/quantize_fp8_gpu_test.cpp (CUDA) and
// tests/emu/amd_quantize_test.cpp (HIP on the emulator).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/half_types.h"
#include "gpu_session.hpp"

namespace zyfa_gpu_test {

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
    int32_t scale_rows = 0;  // zyfa_quantize_int8 (out_dtype INT8): 1 or 64
    int64_t query_heads = 0;  // > 0: ZYFA_QUANT_KEY_BIAS with this many query heads
};

// HugeSlice1: slice 1 scaled by 2^110 (fp32 / bf16 input): an amax far above 2^64, where the HIP
// finish kernel divides a scaled amax (kernels/amd/quantize_fp8.hip).
enum class Special { None, ZeroAndTinySlices, NaNInSlice1, InfInSlice1, HugeSlice1 };

inline size_t elem_size(zyfa_dtype d) {
    return d == ZYFA_DTYPE_FP32 ? 4 : d == ZYFA_DTYPE_FP8_E4M3FN || d == ZYFA_DTYPE_FP8_E4M3FNUZ || d == ZYFA_DTYPE_INT8 ? 1 : 2;
}

// Descales per (batch, head): 1 (FP8), or ceil(seqlen / scale_rows) (INT8).
inline int64_t scale_groups(const QuantShape& s) { return s.scale_rows == 0 ? 1 : (s.seqlen + s.scale_rows - 1) / s.scale_rows; }

// zyfa_quantize_int8 for INT8 outputs, zyfa_quantize_fp8 otherwise.
inline zyfa_status quantize(zyfa_context* ctx, const zyfa_quant_params* p, const zyfa_tensor* in, const zyfa_tensor* out,
                            float* descale, void* stream) {
    return out->dtype == ZYFA_DTYPE_INT8 ? zyfa_quantize_int8(ctx, p, in, out, descale, stream)
                                         : zyfa_quantize_fp8(ctx, p, in, out, descale, stream);
}

// Host side of one problem: input bytes, CPU and GPU outputs, strides.
struct QuantCase {
    QuantShape shape;
    zyfa_quant_params params;
    zyfa_tensor in, out;
    std::vector<uint8_t> in_bytes;
    std::vector<uint8_t> out_cpu, out_gpu;
    std::vector<float> descale_cpu, descale_gpu;
    std::vector<float> mean_cpu, mean_gpu;  // [batch, heads, head_dim] when smoothing
    std::vector<float> query_mean;               // [batch, query_heads, head_dim] with the key bias
    std::vector<float> bias_cpu, bias_gpu;       // its key bias, [batch, query_heads, seqlen] or packed
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
        params.scale_rows = s.scale_rows;
        const bool varlen = !s.cu_seqlens.empty();
        rows = varlen ? s.cu_seqlens.back() : s.seqlen;
        in = layout(s.in_dtype, s.in_pad, varlen);
        out = layout(s.out_dtype, s.out_pad, varlen);
        const int64_t in_elems = varlen ? rows * in.stride_seq : s.batch * in.stride_batch;
        const int64_t out_elems = varlen ? rows * out.stride_seq : s.batch * out.stride_batch;
        in_bytes.assign(static_cast<size_t>(in_elems) * elem_size(s.in_dtype), 0);
        out_cpu.assign(static_cast<size_t>(out_elems), kOutSentinel);
        out_gpu = out_cpu;
        descale_cpu.assign(static_cast<size_t>(s.batch * s.heads * scale_groups(s)), kDescaleSentinel);
        descale_gpu = descale_cpu;
        if (s.smooth) mean_cpu.assign(static_cast<size_t>(s.batch * s.heads * s.head_dim), kDescaleSentinel);
        mean_gpu = mean_cpu;
        if (s.query_heads > 0) {
            params.flags |= ZYFA_QUANT_KEY_BIAS;
            params.query_heads = s.query_heads;
            params.key_bias_scale = 0.0f;  // 1/sqrt(head_dim)
            std::mt19937 rng(s.seed + 1000u);
            std::normal_distribution<float> normal(0.0f, 2.0f);
            query_mean.resize(static_cast<size_t>(s.batch * s.query_heads * s.head_dim));
            for (float& x : query_mean) x = normal(rng);
            bias_cpu.assign(static_cast<size_t>(s.query_heads * (varlen ? rows : s.batch * s.seqlen)), kDescaleSentinel);
            bias_gpu = bias_cpu;
        }
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
                if (special == Special::HugeSlice1 && slice == 1) slice_scale = 0x1p110f;
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
        if (shape.query_heads > 0) {
            p.query_mean = query_mean.data();
            p.key_bias = bias_cpu.data();
        }
        return quantize(session().cpu, &p, &t_in, &t_out, descale_cpu.data(), nullptr);
    }
};

// The case's buffers on the device; `run` launches on the session stream and downloads.
struct DeviceQuant {
    DeviceBuffer in, out, descale, cu, mean, query_mean, bias;
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
        if (c.shape.query_heads > 0) {
            query_mean = DeviceBuffer(rt, c.query_mean.data(), bytes_of(c.query_mean));
            bias = DeviceBuffer(rt, c.bias_gpu.data(), bytes_of(c.bias_gpu));
            params.query_mean = static_cast<const float*>(query_mean.data());
            params.key_bias = static_cast<float*>(bias.data());
        }
        t_in = c.in;
        t_out = c.out;
        t_in.data = in.data();
        t_out.data = out.data();
    }
    zyfa_status launch(StreamHandle stream) {
        return quantize(session().cuda, &params, &t_in, &t_out, static_cast<float*>(descale.data()), stream);
    }
    void download(QuantCase& c) {
        out.download(c.out_gpu.data());
        descale.download(c.descale_gpu.data());
        if (c.shape.smooth) mean.download(c.mean_gpu.data());
        if (c.shape.query_heads > 0) bias.download(c.bias_gpu.data());
    }
    bool guards_intact() const {
        return in.guard_intact() && out.guard_intact() && descale.guard_intact() && (mean.size() == 0 || mean.guard_intact()) &&
               (bias.size() == 0 || bias.guard_intact());
    }
};

struct Comparison {
    int64_t code_mismatches = 0;
    int64_t first_code_mismatch = -1;
    int64_t descale_mismatches = 0;
    int64_t mean_mismatches = 0;
    int64_t bias_mismatches = 0;  // entries of the key bias (unwritten padding included)
};

inline Comparison compare(const QuantCase& c, int64_t skip_slice = -1) {
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
    for (size_t i = 0; i < c.bias_cpu.size(); ++i)
        if (std::memcmp(&c.bias_cpu[i], &c.bias_gpu[i], sizeof(float)) != 0) ++r.bias_mismatches;
    return r;
}

inline void print_result(const QuantCase& c, const Comparison& r) {
    std::printf("  %-44s codes %lld/%zu differ, descales %lld/%zu differ", c.shape.label,
                static_cast<long long>(r.code_mismatches), c.out_cpu.size(), static_cast<long long>(r.descale_mismatches),
                c.descale_cpu.size());
    if (r.first_code_mismatch >= 0) {
        const size_t i = static_cast<size_t>(r.first_code_mismatch);
        std::printf(" (first at byte %zu: cpu 0x%02x gpu 0x%02x)", i, c.out_cpu[i], c.out_gpu[i]);
    }
    if (!c.mean_cpu.empty()) std::printf(", means %lld/%zu differ", static_cast<long long>(r.mean_mismatches), c.mean_cpu.size());
    if (!c.bias_cpu.empty()) std::printf(", key biases %lld/%zu differ", static_cast<long long>(r.bias_mismatches), c.bias_cpu.size());
    std::printf("\n");
}

// One case: CPU and GPU from the same bytes, bitwise equal codes (padding included) and descales.
inline void check_bitwise(const QuantShape& shape, Special special = Special::None) {
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
            std::printf("  %s: zyfa_quantize_fp8(GPU): %s: %s\n", shape.label, zyfa_status_string(st),
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
        assert_int_equal(r.bias_mismatches, 0);
        if (shape.query_heads > 0) assert_true(c.bias_gpu[0] != QuantCase::kDescaleSentinel);  // written
        if (shape.constant_slice) assert_true(c.descale_gpu[0] == 1.0f);  // nothing left after the mean
        if (special == Special::ZeroAndTinySlices && shape.scale_rows == 0) {
            assert_true(c.descale_gpu[0] == 1.0f);  // the all-zero slice
            assert_true(c.descale_gpu[1] < 0x1p-100f / 448.0f || shape.in_dtype != ZYFA_DTYPE_FP32);
        }
    });
}

inline QuantShape shape(const char* label, zyfa_dtype in, zyfa_dtype out, bool hadamard, int64_t batch, int64_t seqlen,
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

}  // namespace zyfa_gpu_test
