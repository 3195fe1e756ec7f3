// Which kernel the NVIDIA launch plan picks, without a GPU: the CUDA backend runs over the test
// double of libcuda.so.1 (tests/gpu_host/fake_cuda_driver.c, one device of compute capability
// FAKE_CUDA_CC, 9.0 unless set), loaded through ZYFA_CUDA_LIBRARY, which CTest sets.
// zyfa_attn_kernel_name reads no tensor data.
//   sm_90: every mode and head dim (64, 128, 192/128, 256) on the warp-specialised kernel of its
//     dims, also on a context of the tests' cp.async seam (tests/support/cuda_context.hpp); an O
//     whose base or strides are odd on the mma.sync kernel of its dims (the ws kernels store O in
//     pairs);
//   the environment variables that once chose kernels (ZYFA_NVIDIA_WS, ZYFA_NVIDIA_WGMMA,
//     ZYFA_NVIDIA_TMA; removed 2026-12-02) change nothing;
//   sm_80: the mma.sync kernels for 16-bit inputs at head dims 64, 128 and 192/128, and
//     NOT_SUPPORTED for FP8 and head dim 256, naming the reason;
//   paged K/V: the ws_paged kernels at head dims 128/128, NOT_SUPPORTED elsewhere.
#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu/kernel_registry.hpp"
#include "numerics/cmocka_cpp.hpp"
#include "support/cuda_context.hpp"
#include "zyfa.h"

namespace {

struct Mode {
    zyfa_dtype dtype;
    zyfa_softmax softmax;
    const char* name;
    const char* kernel;  // the mode's part of a kernel name: zyfa_attn_fwd[_ws]_<kernel>_<dims>
};
constexpr Mode kModes[] = {{ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT, "bf16", "bf16"},
                           {ZYFA_DTYPE_FP16, ZYFA_SOFTMAX_EXACT, "fp16", "fp16"},
                           {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_EXACT, "e4m3fn-exact", "e4m3_exact"},
                           {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, "e4m3fn-lean", "e4m3_lean"}};

// A CUDA context of the public API on the double's device.
zyfa_context* public_context() {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
    const zyfa_status st = zyfa_context_create(&opts, &ctx);
    if (st != ZYFA_SUCCESS) std::printf("zyfa_context_create: %s\n", zyfa_last_error_message());
    assert_int_equal(st, ZYFA_SUCCESS);
    return ctx;
}

// How O is laid out: contiguous [batch, seq, head, dim], or with an odd base or odd strides.
enum class OutLayout { Aligned, OddBase, OddStrides };

struct Problem {
    zyfa_attn_params p;
    zyfa_tensor qk, v, o;
};

Problem problem_for(const Mode& m, int64_t head_dim_qk, int64_t head_dim_v, OutLayout layout) {
    Problem r;
    zyfa_attn_params_init(&r.p, sizeof r.p);
    r.p.mask = ZYFA_MASK_CAUSAL;
    r.p.softmax = m.softmax;
    r.p.batch = 1;
    r.p.seqlen_q = r.p.seqlen_k = 256;
    r.p.heads_q = r.p.heads_kv = 2;
    r.p.head_dim_qk = head_dim_qk;
    r.p.head_dim_v = head_dim_v;
    // Placeholders, never read, inside the fake driver's device window; Q and K with head_dim_qk
    // columns, V and O with head_dim_v. O lies apart from the inputs: outputs may not overlap them.
    auto tensor = [&](zyfa_dtype dtype, int64_t dim, uintptr_t address) {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof t);
        t.data = reinterpret_cast<void*>(address);
        t.dtype = dtype;
        t.stride_head = dim;
        t.stride_seq = 2 * dim;
        t.stride_batch = 256 * 2 * dim;
        return t;
    };
    r.qk = tensor(m.dtype, head_dim_qk, uintptr_t{1} << 20);
    r.v = tensor(m.dtype, head_dim_v, uintptr_t{1} << 20);
    r.o = tensor(ZYFA_DTYPE_BF16, head_dim_v, uintptr_t{4} << 20);
    if (layout == OutLayout::OddBase) r.o.data = reinterpret_cast<void*>((uintptr_t{4} << 20) + 2);  // one element in
    if (layout == OutLayout::OddStrides) {
        r.o.stride_head = head_dim_v + 1;
        r.o.stride_seq = 2 * (head_dim_v + 1) + 1;
        r.o.stride_batch = 256 * r.o.stride_seq;
    }
    return r;
}

// The kernel name, or "" after printing the library's message.
std::string kernel_for(zyfa_context* ctx, const Problem& r) {
    const char* name = zyfa_attn_kernel_name(ctx, &r.p, &r.qk, &r.qk, &r.v, &r.o);
    return name ? name : "";
}

// Head dims the warp-specialised kernels serve, with the dims suffix of their kernel names.
struct Dims {
    int64_t qk, v;
    const char* suffix;
};
constexpr Dims kDims[] = {{128, 128, "_d128"}, {192, 128, "_d192_128"}, {64, 64, "_d64"}, {256, 256, "_d256"}};

// Every mode and head dim on ctx: the warp-specialised kernel of its dims, and for an O whose base
// or strides are odd the mma.sync kernel of its dims.
void expect_every_problem_on_ws(zyfa_context* ctx, const char* what) {
    for (const Mode& m : kModes) {
        for (const Dims& d : kDims) {
            for (OutLayout layout : {OutLayout::Aligned, OutLayout::OddBase, OutLayout::OddStrides}) {
                const std::string name = kernel_for(ctx, problem_for(m, d.qk, d.v, layout));
                const bool aligned = layout == OutLayout::Aligned;
                const std::string expected =
                    std::string(aligned ? "zyfa_attn_fwd_ws_" : "zyfa_attn_fwd_") + m.kernel + d.suffix;
                std::printf("  %s: %-13s hd%lld/%lld O %-11s -> %s\n", what, m.name, static_cast<long long>(d.qk),
                            static_cast<long long>(d.v),
                            aligned ? "aligned" : layout == OutLayout::OddBase ? "odd base" : "odd strides",
                            name.empty() ? zyfa_last_error_message() : name.c_str());
                assert_string_equal(name.c_str(), expected.c_str());
            }
        }
    }
}

void test_sm90_runs_every_problem_on_ws(void**) {
    zyfa_context* ctx = public_context();
    expect_every_problem_on_ws(ctx, "default");
    zyfa_context_destroy(ctx);
}

void test_cp_async_seam_plans_the_same_kernels(void**) {
    std::string error;
    zyfa_context* ctx = zyfa_test::cuda_context_with(zyfa::cuda::CudaKernelChoice::CpAsync, &error);
    if (!ctx) fail_msg("the cp.async seam: %s", error.c_str());
    expect_every_problem_on_ws(ctx, "cp.async seam");
    zyfa_context_destroy(ctx);
}

// The variables the NVIDIA backend read until 2026-12-02, set to their old "off" values when the
// context is created and while it plans: nothing reads them.
void test_removed_variables_change_nothing(void**) {
    setenv("ZYFA_NVIDIA_WS", "0", 1);
    setenv("ZYFA_NVIDIA_WGMMA", "0", 1);
    setenv("ZYFA_NVIDIA_TMA", "0", 1);
    zyfa_context* ctx = public_context();
    expect_every_problem_on_ws(ctx, "ZYFA_NVIDIA_WS=0 ZYFA_NVIDIA_WGMMA=0 ZYFA_NVIDIA_TMA=0");
    zyfa_context_destroy(ctx);
    unsetenv("ZYFA_NVIDIA_WS");
    unsetenv("ZYFA_NVIDIA_WGMMA");
    unsetenv("ZYFA_NVIDIA_TMA");
}

// Paged K/V (params.block_table): the ws_paged kernel at head dims 128/128 in every mode, on the
// library's context and the cp.async seam; other head dims and a misaligned O are NOT_SUPPORTED,
// naming the paged kernels' limits.
void expect_paged_plans(zyfa_context* ctx, const char* what) {
    for (const Mode& m : kModes) {
        for (const Dims& d : kDims) {
            for (OutLayout layout : {OutLayout::Aligned, OutLayout::OddStrides}) {
                Problem r = problem_for(m, d.qk, d.v, layout);
                // Pools of 16 pages of 16 rows (2 heads), a table of 16 entries per sequence.
                r.p.block_table = reinterpret_cast<const int32_t*>(uintptr_t{6} << 20);
                r.p.block_table_stride = 16;
                r.p.num_pages = 16;
                r.p.page_size = 16;
                r.qk.stride_batch = 16 * r.qk.stride_seq;
                r.v.stride_batch = 16 * r.v.stride_seq;
                const std::string name = kernel_for(ctx, r);
                std::printf("  %s paged: %-13s hd%lld/%lld O %-11s -> %s\n", what, m.name, static_cast<long long>(d.qk),
                            static_cast<long long>(d.v), layout == OutLayout::Aligned ? "aligned" : "odd strides",
                            name.empty() ? zyfa_last_error_message() : name.c_str());
                if (d.qk == 128 && d.v == 128 && layout == OutLayout::Aligned) {
                    const std::string expected = std::string("zyfa_attn_fwd_ws_paged_") + m.kernel + d.suffix;
                    assert_string_equal(name.c_str(), expected.c_str());
                } else {
                    assert_true(name.empty());
                    assert_int_equal(zyfa_attn_supported(ctx, &r.p, &r.qk, &r.qk, &r.v, &r.o), ZYFA_ERROR_NOT_SUPPORTED);
                    assert_non_null(std::strstr(zyfa_last_error_message(), "paged kernels need sm_90a, head dims 128/128"));
                }
            }
        }
    }
}

void test_sm90_paged_runs_ws_paged(void**) {
    zyfa_context* ctx = public_context();
    expect_paged_plans(ctx, "default");
    zyfa_context_destroy(ctx);
    std::string error;
    ctx = zyfa_test::cuda_context_with(zyfa::cuda::CudaKernelChoice::CpAsync, &error);
    if (!ctx) fail_msg("the cp.async seam: %s", error.c_str());
    expect_paged_plans(ctx, "cp.async seam");
    zyfa_context_destroy(ctx);
}

// An sm_80 device: the mma.sync kernels, 16-bit only, up to head dim 192.
void test_sm80_runs_mma_sync_for_16_bit(void**) {
    if (!zyfa::gpu::KernelRegistry::embedded().has_arch("nvidia", "sm_80")) {
        std::printf("  this build embeds no sm_80 cubins (ZYFA_CUDA_ARCHS): nothing to plan there\n");
        return;
    }
    setenv("FAKE_CUDA_CC", "80", 1);
    zyfa_context* ctx = public_context();
    unsetenv("FAKE_CUDA_CC");
    for (const Mode& m : kModes) {
        for (const Dims& d : kDims) {
            const Problem r = problem_for(m, d.qk, d.v, OutLayout::OddStrides);
            const std::string name = kernel_for(ctx, r);
            std::printf("  sm_80: %-13s hd%lld/%lld -> %s\n", m.name, static_cast<long long>(d.qk),
                        static_cast<long long>(d.v), name.empty() ? zyfa_last_error_message() : name.c_str());
            const bool fp8 = m.dtype == ZYFA_DTYPE_FP8_E4M3FN;
            if (fp8 || d.qk == 256) {
                assert_true(name.empty());
                assert_int_equal(zyfa_attn_supported(ctx, &r.p, &r.qk, &r.qk, &r.v, &r.o), ZYFA_ERROR_NOT_SUPPORTED);
                assert_non_null(std::strstr(zyfa_last_error_message(), "e4m3 needs sm_90a, head dim 256 needs"));
            } else {
                const std::string expected = std::string("zyfa_attn_fwd_") + m.kernel + d.suffix;
                assert_string_equal(name.c_str(), expected.c_str());
            }
        }
    }
    zyfa_context_destroy(ctx);
}

// The INT8 Q/K mode (q, k INT8, v e4m3fn): the warp-specialised i8e4m3 kernel of its dims at head
// dims 64 and 128, NOT_SUPPORTED naming the reason at the others, for an O whose pairs are
// misaligned (no mma.sync INT8 kernel) and for an e4m3fnuz v.
void test_int8_qk_dispatch(void**) {
    zyfa_context* ctx = public_context();
    for (zyfa_softmax softmax : {ZYFA_SOFTMAX_EXACT, ZYFA_SOFTMAX_LEAN}) {
        const Mode m{ZYFA_DTYPE_INT8, softmax, "int8qk", softmax == ZYFA_SOFTMAX_LEAN ? "i8e4m3_lean" : "i8e4m3_exact"};
        for (const Dims& d : kDims) {
            for (OutLayout layout : {OutLayout::Aligned, OutLayout::OddStrides}) {
                Problem r = problem_for(m, d.qk, d.v, layout);
                r.v.dtype = ZYFA_DTYPE_FP8_E4M3FN;
                const std::string name = kernel_for(ctx, r);
                std::printf("  int8qk %s hd%lld/%lld O %s -> %s\n", softmax == ZYFA_SOFTMAX_LEAN ? "lean " : "exact",
                            static_cast<long long>(d.qk), static_cast<long long>(d.v),
                            layout == OutLayout::Aligned ? "aligned" : "odd strides",
                            name.empty() ? zyfa_last_error_message() : name.c_str());
                if (layout == OutLayout::Aligned && (d.qk == 64 || d.qk == 128) && d.qk == d.v) {
                    assert_string_equal(name.c_str(), (std::string("zyfa_attn_fwd_ws_") + m.kernel + d.suffix).c_str());
                } else {
                    assert_true(name.empty());
                    assert_int_equal(zyfa_attn_supported(ctx, &r.p, &r.qk, &r.qk, &r.v, &r.o), ZYFA_ERROR_NOT_SUPPORTED);
                    assert_non_null(std::strstr(zyfa_last_error_message(), "INT8"));
                }
                if (layout != OutLayout::Aligned || (d.qk != 64 && d.qk != 128) || d.qk != d.v) continue;
                // Sinks: the same kernel (its epilogue folds them in, sm90/mainloop.cuh).
                Problem sinked = r;
                sinked.p.sinks = reinterpret_cast<const float*>(uintptr_t{7} << 20);
                assert_string_equal(kernel_for(ctx, sinked).c_str(), name.c_str());
                // Paged K/V: no paged INT8 kernels, NOT_SUPPORTED naming the combination.
                Problem paged = r;
                paged.p.block_table = reinterpret_cast<const int32_t*>(uintptr_t{6} << 20);
                paged.p.block_table_stride = 16;
                paged.p.num_pages = 16;
                paged.p.page_size = 16;
                paged.qk.stride_batch = 16 * paged.qk.stride_seq;
                paged.v.stride_batch = 16 * paged.v.stride_seq;
                assert_true(kernel_for(ctx, paged).empty());
                assert_int_equal(zyfa_attn_supported(ctx, &paged.p, &paged.qk, &paged.qk, &paged.v, &paged.o),
                                 ZYFA_ERROR_NOT_SUPPORTED);
                assert_non_null(std::strstr(zyfa_last_error_message(), "no paged INT8 kernels"));
            }
        }
    }
    zyfa_context_destroy(ctx);
}

}  // namespace

int main(void) {
    if (!std::getenv("ZYFA_CUDA_LIBRARY")) {
        std::printf("SKIP: ZYFA_CUDA_LIBRARY (the fake driver) is not set\n");
        return 77;
    }
    if (!zyfa::gpu::KernelRegistry::embedded().has_arch("nvidia", "sm_90a")) {
        std::printf("SKIP: this build embeds no sm_90a cubins (ZYFA_CUDA_ARCHS)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sm90_runs_every_problem_on_ws),
        cmocka_unit_test(test_cp_async_seam_plans_the_same_kernels),
        cmocka_unit_test(test_removed_variables_change_nothing),
        cmocka_unit_test(test_sm80_runs_mma_sync_for_16_bit),
        cmocka_unit_test(test_sm90_paged_runs_ws_paged),
        cmocka_unit_test(test_int8_qk_dispatch),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
