// zyfa_attn_merge on a GPU context (CUDA on a device, HIP on the emulator's stand-in) against the
// CPU backend: the same merge request on device and host buffers. The GPU kernel runs the CPU's
// maths (kernels/common/attn_merge.h, attn_merge_row.h) in the same order; only exp2 / log2 may
// round differently (a few ulp), so each result is held to the fp64 bound of
// tests/cpu/attention_merge_test.cpp ((8 n + 4) u max|O_i| for O, (|M| + 2 n + 4) u for lse), and
// the special rows (-inf parts, all -inf, NaN and +inf lse, a NaN in an O) must match exactly.
// Also: more parts than a GPU call takes is NOT_SUPPORTED; a host pointer is INVALID_ARGUMENT;
// no byte past an output (guard bands).
#pragma once

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/half_types.h"
#include "gpu_session.hpp"

namespace zyfa_gpu_test {

struct MergeGpuShape {
    int64_t batch = 2, seqlen_q = 9, heads = 3, head_dim = 128;
    int64_t parts = 5;
    std::vector<int32_t> lengths;  // non-empty: packed sequences of these lengths
    zyfa_dtype out_dtype = ZYFA_DTYPE_FP32;
    uint64_t seed = 3;
};

// Host parts: part i % 3 == 0 fp32, 1 bf16, 2 fp16 (values in [-1, 1)), each [rows, heads, dim]
// packed or [batch, seq, heads, dim]; lse in [-30, 30], every 6th entry -inf; row 1 of head 0 all
// -inf, row 2 a NaN lse, row 3 a +inf lse, row 4 a NaN in part 0's O (finite lse).
struct MergeGpuCase {
    MergeGpuShape shape;
    int64_t rows = 0, elems = 0, lse_count = 0;
    std::vector<std::vector<uint8_t>> part_bytes;
    std::vector<zyfa_dtype> part_dtype;
    std::vector<std::vector<float>> part_lse;
    std::vector<int32_t> cu;

    explicit MergeGpuCase(const MergeGpuShape& s) : shape(s) {
        rows = s.batch * s.seqlen_q;
        if (!s.lengths.empty()) {
            cu.push_back(0);
            for (int32_t l : s.lengths) cu.push_back(cu.back() + l);
            rows = cu.back();
        }
        elems = rows * s.heads * s.head_dim;
        lse_count = rows * s.heads;
        std::mt19937_64 rng(s.seed);
        std::uniform_real_distribution<float> value(-1.0f, 1.0f), lse(-30.0f, 30.0f);
        for (int64_t i = 0; i < s.parts; ++i) {
            const zyfa_dtype dtype = i % 3 == 0 ? ZYFA_DTYPE_FP32 : i % 3 == 1 ? ZYFA_DTYPE_BF16 : ZYFA_DTYPE_FP16;
            part_dtype.push_back(dtype);
            std::vector<uint8_t> bytes(static_cast<size_t>(elems) * (dtype == ZYFA_DTYPE_FP32 ? 4 : 2));
            for (int64_t e = 0; e < elems; ++e) {
                const float x = value(rng);
                if (dtype == ZYFA_DTYPE_FP32) std::memcpy(&bytes[e * 4], &x, 4);
                const uint16_t h = dtype == ZYFA_DTYPE_BF16 ? zyfa::numerics::float_to_bf16(x) : zyfa::numerics::float_to_fp16(x);
                if (dtype != ZYFA_DTYPE_FP32) std::memcpy(&bytes[e * 2], &h, 2);
            }
            std::vector<float> l(static_cast<size_t>(lse_count));
            for (int64_t r = 0; r < lse_count; ++r) l[r] = (rng() % 6 == 0) ? -std::numeric_limits<float>::infinity() : lse(rng);
            part_bytes.push_back(std::move(bytes));
            part_lse.push_back(std::move(l));
        }
        // Special rows, at lse index 1..4 (head 0, rows 1..4): see above.
        if (rows < 5) throw std::invalid_argument("MergeGpuCase needs at least 5 rows");
        for (int64_t i = 0; i < s.parts; ++i) part_lse[i][1] = -std::numeric_limits<float>::infinity();
        part_lse[s.parts - 1][2] = std::nanf("");
        part_lse[0][3] = std::numeric_limits<float>::infinity();
        part_lse[0][4] = 0.5f;
        if (part_dtype[0] == ZYFA_DTYPE_FP32) {
            const float nan = std::nanf("");
            // lse index 4 of head 0 is row 4: element (row 4, head 0, the last d <= 7) of [rows, heads, dim].
            const int64_t d = s.head_dim > 7 ? 7 : s.head_dim - 1;
            std::memcpy(&part_bytes[0][((4 * s.heads + 0) * s.head_dim + d) * 4], &nan, 4);
        }
    }

    zyfa_tensor view(void* data, zyfa_dtype dtype) const {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof t);
        t.data = data;
        t.dtype = dtype;
        t.stride_head = shape.head_dim;
        t.stride_seq = shape.heads * shape.head_dim;
        t.stride_batch = shape.seqlen_q * shape.heads * shape.head_dim;
        return t;
    }

    zyfa_merge_params params(float* lse_out, const int32_t* cu_ptr) const {
        zyfa_merge_params p;
        zyfa_merge_params_init(&p, sizeof p);
        p.num_parts = static_cast<int32_t>(shape.parts);
        p.batch = shape.batch;
        p.seqlen_q = shape.seqlen_q;
        p.heads = shape.heads;
        p.head_dim_v = shape.head_dim;
        p.cu_seqlens_q = shape.lengths.empty() ? nullptr : cu_ptr;
        p.lse = lse_out;
        return p;
    }

    size_t out_bytes() const { return static_cast<size_t>(elems) * (shape.out_dtype == ZYFA_DTYPE_FP32 ? 4 : 2); }
};

inline float decode_output(const std::vector<uint8_t>& bytes, zyfa_dtype dtype, int64_t index) {
    if (dtype == ZYFA_DTYPE_FP32) {
        float x;
        std::memcpy(&x, &bytes[index * 4], 4);
        return x;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[index * 2], 2);
    return dtype == ZYFA_DTYPE_BF16 ? zyfa::numerics::bf16_to_float(h) : zyfa::numerics::fp16_to_float(h);
}

// Runs the case on the session's GPU context and on its CPU context; checks as described above.
inline void check_merge_case(const MergeGpuShape& shape, const std::string& label) {
    Session& s = session();
    GpuRuntime& rt = *s.runtime;
    const MergeGpuCase c(shape);

    // CPU.
    std::vector<zyfa_tensor> cpu_views;
    std::vector<const float*> cpu_lse;
    for (int64_t i = 0; i < shape.parts; ++i) {
        cpu_views.push_back(c.view(const_cast<uint8_t*>(c.part_bytes[i].data()), c.part_dtype[i]));
        cpu_lse.push_back(c.part_lse[i].data());
    }
    std::vector<uint8_t> cpu_o(c.out_bytes());
    std::vector<float> cpu_out_lse(static_cast<size_t>(c.lse_count));
    const zyfa_merge_params cpu_p = c.params(cpu_out_lse.data(), c.cu.data());
    const zyfa_tensor cpu_to = c.view(cpu_o.data(), shape.out_dtype);
    zyfa_status st = zyfa_attn_merge(s.cpu, &cpu_p, cpu_views.data(), cpu_lse.data(), &cpu_to, nullptr);
    if (st != ZYFA_SUCCESS) {
        std::printf("%s: CPU merge: %s\n", label.c_str(), zyfa_last_error_message());
        fail();
    }

    // GPU: the same request on device copies.
    std::vector<DeviceBuffer> d_parts, d_lse;
    std::vector<zyfa_tensor> gpu_views;
    std::vector<const float*> gpu_lse;
    for (int64_t i = 0; i < shape.parts; ++i) {
        d_parts.emplace_back(rt, c.part_bytes[i].data(), c.part_bytes[i].size());
        d_lse.emplace_back(rt, c.part_lse[i].data(), bytes_of(c.part_lse[i]));
    }
    for (int64_t i = 0; i < shape.parts; ++i) {
        gpu_views.push_back(c.view(d_parts[i].data(), c.part_dtype[i]));
        gpu_lse.push_back(static_cast<const float*>(d_lse[i].data()));
    }
    DeviceBuffer d_o(rt, c.out_bytes()), d_out_lse(rt, static_cast<size_t>(c.lse_count) * 4);
    DeviceBuffer d_cu(rt, c.cu.empty() ? 4 : bytes_of(c.cu));
    if (!c.cu.empty()) d_cu.upload(c.cu.data());
    const zyfa_merge_params gpu_p =
        c.params(static_cast<float*>(d_out_lse.data()), static_cast<const int32_t*>(d_cu.data()));
    const zyfa_tensor gpu_to = c.view(d_o.data(), shape.out_dtype);
    st = zyfa_attn_merge(s.cuda, &gpu_p, gpu_views.data(), gpu_lse.data(), &gpu_to, s.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("%s: GPU merge: %s: %s\n", label.c_str(), zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
    rt.synchronize_stream(s.stream);
    std::vector<uint8_t> gpu_o(c.out_bytes());
    std::vector<float> gpu_out_lse(static_cast<size_t>(c.lse_count));
    d_o.download(gpu_o.data());
    d_out_lse.download(gpu_out_lse.data());
    assert_true(d_o.guard_intact());
    assert_true(d_out_lse.guard_intact());

    const double u = std::ldexp(1.0, -24);
    const double out_half_ulp = shape.out_dtype == ZYFA_DTYPE_BF16 ? 1.0 / 256 : shape.out_dtype == ZYFA_DTYPE_FP16 ? 1.0 / 1024 : 0.0;
    // Both within (8n + 4) u of fp64, so within twice that of each other; a 16-bit output may round
    // the two to neighbouring values: one ulp of |O| <= 1 (2 half ulps).
    const double o_bound = 2.0 * (8.0 * shape.parts + 4.0) * u + out_half_ulp;
    double worst_o = 0.0, worst_lse = 0.0;
    for (int64_t r = 0; r < c.lse_count; ++r) {
        const float a = gpu_out_lse[r], b = cpu_out_lse[r];
        if (std::isnan(b) || std::isinf(b)) {
            if (!(std::isnan(a) == std::isnan(b) && (std::isnan(b) || a == b))) {
                std::printf("%s: lse[%lld] GPU %g, CPU %g\n", label.c_str(), (long long)r, a, b);
                fail();
            }
            continue;
        }
        double m = -INFINITY;
        for (int64_t i = 0; i < shape.parts; ++i) m = std::fmax(m, c.part_lse[i][r]);
        const double lse_bound = 2.0 * (std::fabs(m) + 2.0 * shape.parts + 4.0) * u;
        worst_lse = std::fmax(worst_lse, std::fabs(a - b));
        if (std::fabs(a - b) > lse_bound) {
            std::printf("%s: lse[%lld] GPU %.9g, CPU %.9g (bound %.3g)\n", label.c_str(), (long long)r, a, b, lse_bound);
            fail();
        }
    }
    for (int64_t e = 0; e < c.elems; ++e) {
        const float a = decode_output(gpu_o, shape.out_dtype, e), b = decode_output(cpu_o, shape.out_dtype, e);
        if (std::isnan(b) || std::isnan(a)) {
            if (std::isnan(a) != std::isnan(b)) {
                std::printf("%s: o[%lld] GPU %g, CPU %g\n", label.c_str(), (long long)e, a, b);
                fail();
            }
            continue;
        }
        worst_o = std::fmax(worst_o, std::fabs(a - b));
        if (std::fabs(a - b) > o_bound) {
            std::printf("%s: o[%lld] GPU %.9g, CPU %.9g (bound %.3g)\n", label.c_str(), (long long)e, a, b, o_bound);
            fail();
        }
    }
    std::printf("  %-40s GPU vs CPU: max |dO| %.2e (bound %.2e), max |dlse| %.2e\n", label.c_str(), worst_o, o_bound,
                worst_lse);
}

// More parts than one GPU call takes: NOT_SUPPORTED naming params.num_parts (the CPU takes any);
// a host part on a GPU context: INVALID_ARGUMENT naming it.
inline void check_merge_refusals() {
    Session& s = session();
    GpuRuntime& rt = *s.runtime;
    MergeGpuShape shape;
    shape.parts = 65;
    shape.batch = 1;
    shape.seqlen_q = 5;
    const MergeGpuCase c(shape);
    std::vector<DeviceBuffer> d_parts, d_lse;
    std::vector<zyfa_tensor> views;
    std::vector<const float*> lse;
    for (int64_t i = 0; i < shape.parts; ++i) {
        d_parts.emplace_back(rt, c.part_bytes[i].data(), c.part_bytes[i].size());
        d_lse.emplace_back(rt, c.part_lse[i].data(), bytes_of(c.part_lse[i]));
    }
    for (int64_t i = 0; i < shape.parts; ++i) {
        views.push_back(c.view(d_parts[i].data(), c.part_dtype[i]));
        lse.push_back(static_cast<const float*>(d_lse[i].data()));
    }
    DeviceBuffer d_o(rt, c.out_bytes());
    const zyfa_tensor to = c.view(d_o.data(), shape.out_dtype);
    zyfa_merge_params p = c.params(nullptr, nullptr);
    assert_int_equal(zyfa_attn_merge(s.cuda, &p, views.data(), lse.data(), &to, s.stream), ZYFA_ERROR_NOT_SUPPORTED);
    assert_non_null(std::strstr(zyfa_last_error_message(), "params.num_parts = 65"));
    p.num_parts = 64;  // the most one call takes
    assert_int_equal(zyfa_attn_merge(s.cuda, &p, views.data(), lse.data(), &to, s.stream), ZYFA_SUCCESS);
    rt.synchronize_stream(s.stream);

    std::vector<uint8_t> host_part(c.part_bytes[1]);
    views[1].data = host_part.data();
    p.num_parts = 3;
    assert_int_equal(zyfa_attn_merge(s.cuda, &p, views.data(), lse.data(), &to, s.stream), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(zyfa_last_error_message(), "part_o[1].data"));
}

}  // namespace zyfa_gpu_test
