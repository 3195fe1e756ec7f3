// The host side of the AMD backend without an AMD GPU: the real library search on a machine with
// no ROCm, an override path that does not exist, and a test double of libamdhip64
// (fake_hip_runtime.cpp, through ZYFA_HIP_LIBRARY) that reports gfx950 or gfx942, so that dispatch,
// loading of the embedded code objects (the double checks their ELF header and kernel symbols)
// and kernel-argument packing run through the public C API. Nothing executes. argv[1] names the
// scenario; CTest runs each in its own process (the runtime is loaded once per process).
// On gfx950 the library's plan takes the FP8 assembly kernels where they apply; the tests that
// count or launch the HIP C++ kernels there also use a context of the HipCpp seam
// (tests/support/hip_context.hpp).
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "common/block_scale.h"
#include "common/lean_p.h"
#include "fake_hip_state.h"
#include "amd/attention_extra_args.h"
#include "hip/attention_launch_plan.hpp"
#include "hip/split_kv_plan.hpp"
#include "hip/hip_api.hpp"
#include "support/hip_context.hpp"
#include "zyfa.h"

namespace {

constexpr int kSkip = 77;

zyfa_context* create(zyfa_backend backend, zyfa_status expected, int device = 0) {
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof options);
    options.backend = backend;
    options.device = device;
    zyfa_context* ctx = nullptr;
    const zyfa_status status = zyfa_context_create(&options, &ctx);
    if (status != expected) {
        fail_msg("zyfa_context_create(backend %d): status %d, expected %d (%s)", backend, status, expected,
                 zyfa_last_error_message());
    }
    return ctx;
}

void expect_message(const char* needle) {
    const char* message = zyfa_last_error_message();
    if (std::strstr(message, needle) == nullptr) fail_msg("message \"%s\" lacks \"%s\"", message, needle);
}

// AUTO skips a HIP runtime that finds no device and lands on another backend (the CPU here).
void auto_falls_back() {
    zyfa_context* ctx = create(ZYFA_BACKEND_AUTO, ZYFA_SUCCESS);
    assert_int_not_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_HIP);
    zyfa_context_destroy(ctx);
}

void no_rocm_is_no_device(void**) {
#ifdef ZYFA_TEST_HIP_COMPILED_IN
    create(ZYFA_BACKEND_HIP, ZYFA_ERROR_NO_DEVICE);
    expect_message("libamdhip64.so");
#else
    create(ZYFA_BACKEND_HIP, ZYFA_ERROR_NOT_SUPPORTED);
    expect_message("not compiled");
#endif
    auto_falls_back();
}

void missing_override_is_no_device(void**) {
#ifdef ZYFA_TEST_HIP_COMPILED_IN
    create(ZYFA_BACKEND_HIP, ZYFA_ERROR_NO_DEVICE);
    expect_message("ZYFA_HIP_LIBRARY");
    expect_message("no-such-dir");
#endif
    auto_falls_back();
}

void arch_names_lose_their_features(void**) {
    assert_string_equal(zyfa::hip::arch_without_features("gfx950:sramecc+:xnack-").c_str(), "gfx950");
    assert_string_equal(zyfa::hip::arch_without_features("gfx942").c_str(), "gfx942");
}

// ---- over the test double (only reachable through the public API when the HIP slot exists) ---
#ifdef ZYFA_TEST_HIP_COMPILED_IN

fake_hip_state* fake() {
    // The same path as zyfa dlopens, so the same object (and record) whichever loads first.
    void* library = dlopen(std::getenv("ZYFA_HIP_LIBRARY"), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    auto accessor = reinterpret_cast<fake_hip_state* (*)()>(dlsym(library, "fake_hip_state_record"));
    return accessor != nullptr ? accessor() : nullptr;
}

// An entry point of the double that zyfa does not call, or one it does, called by the test.
template <class Function>
Function fake_entry(const char* name) {
    void* library = dlopen(std::getenv("ZYFA_HIP_LIBRARY"), RTLD_NOW | RTLD_LOCAL);
    void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
    if (symbol == nullptr) fail_msg("the HIP double has no %s", name);
    return reinterpret_cast<Function>(symbol);
}

// Memory from one of the double's allocators (hipMalloc: device memory of the current device;
// hipHostMalloc, hipMallocManaged: host memory the device reaches), freed with hipFree.
class FakeMemory {
public:
    explicit FakeMemory(size_t bytes, const char* allocator = "hipMalloc") {
        int status = 0;
        if (std::strcmp(allocator, "hipMalloc") == 0) {
            status = fake_entry<int (*)(void**, size_t)>(allocator)(&data_, bytes);
        } else {
            status = fake_entry<int (*)(void**, size_t, unsigned)>(allocator)(&data_, bytes, 0);
        }
        if (status != 0) fail_msg("%s(%zu): %d", allocator, bytes, status);
    }
    ~FakeMemory() { fake_entry<int (*)(void*)>("hipFree")(data_); }
    FakeMemory(const FakeMemory&) = delete;
    FakeMemory& operator=(const FakeMemory&) = delete;
    char* data() const { return static_cast<char*>(data_); }

private:
    void* data_ = nullptr;
};

// Device memory of the double stands in for real device memory: the double never reads it.
struct Problem {
    zyfa_attn_params params;
    zyfa_tensor q{}, k{}, v{}, o{};
    FakeMemory storage{8 << 20};  // q, k, v, o in 2 MiB slices; small arrays from 8 MiB - 64 KiB on

    Problem(zyfa_dtype in, int64_t dqk, int64_t dv) {
        zyfa_attn_params_init(&params, sizeof params);
        params.batch = 2;
        params.seqlen_q = 300;
        params.seqlen_k = 300;
        params.heads_q = 8;
        params.heads_kv = 2;
        params.head_dim_qk = dqk;
        params.head_dim_v = dv;
        params.mask = ZYFA_MASK_CAUSAL;
        char* base = storage.data();
        set(q, in, base, params.heads_q, dqk);
        set(k, in, base + (2 << 20), params.heads_kv, dqk);
        set(v, in, base + (4 << 20), params.heads_kv, dv);
        set(o, ZYFA_DTYPE_BF16, base + (6 << 20), params.heads_q, dv);
    }
    void set(zyfa_tensor& t, zyfa_dtype dtype, char* data, int64_t heads, int64_t dim) {
        t.data = data;
        t.dtype = dtype;
        t.stride_head = dim;
        t.stride_seq = heads * dim;
        t.stride_batch = params.seqlen_q * heads * dim;
    }
    // `count` values of T at `slot` KiB into the last 64 KiB of the storage (lse, descales, cu_seqlens).
    template <class T>
    T* small(int slot, const T* values, size_t count) {
        T* array = reinterpret_cast<T*>(storage.data() + (8 << 20) - (64 << 10) + (slot << 10));
        std::memcpy(array, values, count * sizeof(T));
        return array;
    }
    zyfa_status supported(zyfa_context* ctx) { return zyfa_attn_supported(ctx, &params, &q, &k, &v, &o); }
    zyfa_status run(zyfa_context* ctx, void* stream) { return zyfa_attn_fwd(ctx, &params, &q, &k, &v, &o, stream); }
};

// A HIP context whose plan keeps to the HIP C++ kernels (the seam; the public API has no switch).
zyfa_context* create_hip_cpp() {
    std::string error;
    zyfa_context* ctx = zyfa_test::hip_context_with(zyfa::hip::AmdKernelChoice::HipCpp, &error);
    if (ctx == nullptr) fail_msg("HIP context (HIP C++ kernels): %s", error.c_str());
    return ctx;
}

void gfx950_loads_every_code_object_and_unloads_them(void**) {
    fake_hip_state* state = fake();
    assert_non_null(state);
    // The library's context: the HIP C++ variants and every embedded FP8 assembly variant.
    std::set<std::string> variants;
    const auto catalogue = zyfa::hip::make_hip_attn_catalogue();
    for (const auto& spec : catalogue->kernels("gfx950")) variants.insert(spec.variant);
    assert_true(variants.size() >= 4);
    // And zyfa_attn_merge's image (kernels/amd/attention_merge.hip) and zyfa_quantize_fp8's
    // (kernels/amd/quantize_fp8.hip, five kernels).
    assert_non_null(catalogue->merge_kernel("gfx950").variant);
    variants.insert(catalogue->merge_kernel("gfx950").variant);
    assert_non_null(catalogue->quantize_kernels("gfx950").variant);
    variants.insert(catalogue->quantize_kernels("gfx950").variant);
    int loaded_before = state->modules_loaded;
    int found_before = state->functions_found;
    zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
    assert_int_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_HIP);
    assert_string_equal(zyfa_context_device_name(ctx), "gfx950");
    assert_int_equal(state->modules_loaded - loaded_before, static_cast<int>(variants.size()));
    assert_int_equal(state->images_rejected, 0);
    assert_int_equal(state->functions_missing, 0);
    assert_true(state->functions_found - found_before >= static_cast<int>(variants.size()));
    zyfa_context_destroy(ctx);
    assert_int_equal(state->modules_unloaded, state->modules_loaded);
    // HIP C++ only: nine variants (BF16 and FP8 at head dims 128 and 192/128, INT8 Q/K at 64 and
    // 128, and the paged BF16, FP8 and INT8 ones at 128; one kernel each for BF16, LEAN and EXACT
    // for FP8 and INT8), the merge kernel's image and the quantize image with its seven kernels
    // (the key bias's since 0.1.6).
    loaded_before = state->modules_loaded;
    found_before = state->functions_found;
    ctx = create_hip_cpp();
    assert_int_equal(state->modules_loaded - loaded_before, 11);
    assert_int_equal(state->images_rejected, 0);
    assert_int_equal(state->functions_missing, 0);
    assert_int_equal(state->functions_found - found_before, 23);
    zyfa_context_destroy(ctx);
    assert_int_equal(state->modules_unloaded, state->modules_loaded);
}

// The HIP C++ BF16 kernel's arguments, on the seam's HipCpp context (the library's own context
// runs this windowed problem on the gfx950 assembly kernel since 2026-12-04).
void bf16_launch_packs_the_problem(void**) {
    fake_hip_state* state = fake();
    zyfa_context* ctx = create_hip_cpp();
    Problem p(ZYFA_DTYPE_BF16, 128, 128);
    FakeMemory lse(2 * 8 * 300 * sizeof(float));
    p.params.lse = reinterpret_cast<float*>(lse.data());
    p.params.window_left = 100;
    assert_int_equal(p.supported(ctx), ZYFA_SUCCESS);
    assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), "zyfa_attn_fwd_bf16_d128");
    const int launches = state->launches;
    int stream_token = 0;
    assert_int_equal(p.run(ctx, &stream_token), ZYFA_SUCCESS);
    assert_int_equal(state->launches, launches + 1);
    const fake_hip_launch& l = state->last_launch;
    assert_string_equal(l.symbol, "zyfa_attn_fwd_bf16_d128");
    assert_int_equal(l.grid[0], 2);  // ceil(300 / 256)
    assert_int_equal(l.grid[1], 8);
    assert_int_equal(l.grid[2], 2);
    assert_int_equal(l.block[0], 512);
    assert_int_equal(l.block[1], 1);
    assert_int_equal(l.shared_bytes, 0);
    assert_ptr_equal(l.stream, &stream_token);
    const zyfa::AttnKernelArgs& a = l.args;
    assert_ptr_equal(a.q, p.q.data);
    assert_ptr_equal(a.k, p.k.data);
    assert_ptr_equal(a.v, p.v.data);
    assert_ptr_equal(a.o, p.o.data);
    assert_ptr_equal(a.lse, p.params.lse);
    assert_null(a.cu_seqlens_q);
    assert_int_equal(a.q_stride_seq, 8 * 128);
    assert_int_equal(a.k_stride_seq, 2 * 128);
    assert_int_equal(a.k_stride_batch, 300 * 2 * 128);
    assert_int_equal(a.batch, 2);
    assert_int_equal(a.heads_q, 8);
    assert_int_equal(a.heads_kv, 2);
    assert_int_equal(a.mask, ZYFA_MASK_CAUSAL);
    assert_int_equal(a.window_left, 100);
    assert_int_equal(a.window_right, -1);
    assert_int_equal(a.in_dtype, ZYFA_DTYPE_BF16);
    assert_int_equal(a.out_dtype, ZYFA_DTYPE_BF16);
    assert_int_equal(a.softmax, ZYFA_SOFTMAX_EXACT);
    assert_true(a.softmax_scale == static_cast<float>(1.0 / std::sqrt(128.0)));
    zyfa_context_destroy(ctx);
}

// BF16 on gfx950: the library's context runs the generated assembly kernel of the mask and head
// dims (when the build embeds it: kernels/amd/gfx950_fp8/prebuilt) with the same arguments as
// the HIP C++ kernel, windows included (since 2026-12-04); the HipCpp context runs the HIP C++
// kernel always (sinks, paged K/V, wide strides: tests/emu/asm_end_to_end_test.cpp).
void bf16_asm_kernel_chosen_where_it_covers_the_problem(void**) {
    struct Case {
        int64_t dqk;
        zyfa_mask mask;
        const char* asm_symbol;
        const char* hip_cpp_symbol;
    };
    const Case cases[] = {
        {128, ZYFA_MASK_CAUSAL, "zyfa_gfx950_bf16_d128_causal_tl", "zyfa_attn_fwd_bf16_d128"},
        {128, ZYFA_MASK_NONE, "zyfa_gfx950_bf16_d128_none", "zyfa_attn_fwd_bf16_d128"},
        {192, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, "zyfa_gfx950_bf16_d192_128_causal_br", "zyfa_attn_fwd_bf16_d192_128"},
    };
    fake_hip_state* state = fake();
    zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
    zyfa_context* hip_cpp = create_hip_cpp();
    const auto catalogue = zyfa::hip::make_hip_attn_catalogue();
    for (const Case& c : cases) {
        bool embedded = false;
        for (const auto& spec : catalogue->kernels("gfx950")) embedded = embedded || std::strcmp(spec.symbol, c.asm_symbol) == 0;
        Problem p(ZYFA_DTYPE_BF16, c.dqk, 128);
        p.params.mask = c.mask;
        const char* expected = embedded ? c.asm_symbol : c.hip_cpp_symbol;
        assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), expected);
        assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
        assert_string_equal(state->last_launch.symbol, expected);
        assert_int_equal(state->last_launch.args.in_dtype, ZYFA_DTYPE_BF16);
        assert_int_equal(state->last_launch.args.softmax, ZYFA_SOFTMAX_EXACT);
        assert_int_equal(state->last_launch.args.mask, c.mask);
        assert_int_equal(state->last_launch.block[0], 512);
        assert_null(state->last_launch.args.sinks);
        assert_string_equal(zyfa_attn_kernel_name(hip_cpp, &p.params, &p.q, &p.k, &p.v, &p.o), c.hip_cpp_symbol);
        // A window: the same kernel (run-time window arguments).
        p.params.window_left = 9;
        assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), expected);
        assert_string_equal(zyfa_attn_kernel_name(hip_cpp, &p.params, &p.q, &p.k, &p.v, &p.o), c.hip_cpp_symbol);
        p.params.window_left = -1;
        // FP32 output is taken too; the kernel's out_dtype field says which.
        p.o.dtype = ZYFA_DTYPE_FP32;
        assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), expected);
    }
    zyfa_context_destroy(hip_cpp);
    zyfa_context_destroy(ctx);
}

// The same arguments whichever kernel runs: on the library's context the gfx950 assembly kernel
// for this mask and head dims (when the build embeds it), on the HipCpp context the HIP C++ one.
void fp8_lean_launch_packs(zyfa_context* ctx, const char* expected_symbol) {
    fake_hip_state* state = fake();
    Problem p(ZYFA_DTYPE_FP8_E4M3FN, 192, 128);
    const int32_t cu_q_values[] = {0, 100, 300};
    const int32_t cu_k_values[] = {0, 120, 300};
    const float descale_values[4] = {0.5f, 0.5f, 0.25f, 0.25f};
    const int32_t* cu_q = p.small(0, cu_q_values, 3);
    const int32_t* cu_k = p.small(1, cu_k_values, 3);
    const float* descale = p.small(2, descale_values, 4);
    p.params.cu_seqlens_q = cu_q;
    p.params.cu_seqlens_k = cu_k;
    p.params.seqlen_q = 200;
    p.params.seqlen_k = 180;
    p.params.q_descale = p.params.k_descale = p.params.v_descale = descale;
    p.params.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    p.q.stride_batch = p.k.stride_batch = p.v.stride_batch = p.o.stride_batch = 0;
    assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
    const fake_hip_launch& l = state->last_launch;
    assert_string_equal(l.symbol, expected_symbol);
    assert_int_equal(l.grid[0], 1);  // ceil(200 / 256): the longest sequence
    assert_null(l.stream);
    const zyfa::AttnKernelArgs& a = l.args;
    assert_ptr_equal(a.cu_seqlens_q, cu_q);
    assert_ptr_equal(a.cu_seqlens_k, cu_k);
    assert_ptr_equal(a.q_descale, descale);
    assert_ptr_equal(a.v_descale, descale);
    assert_int_equal(a.head_dim_qk, 192);
    assert_int_equal(a.head_dim_v, 128);
    assert_int_equal(a.in_dtype, ZYFA_DTYPE_FP8_E4M3FN);
    assert_int_equal(a.softmax, ZYFA_SOFTMAX_LEAN);  // AUTO resolves to LEAN for FP8
    assert_int_equal(a.mask, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT);
    // v_cvt_i32_f32 truncates: the plan passes the truncating target's Lean P constant.
    assert_true(a.lean_centre ==
                zyfa::numerics::lean_p_centre_for(zyfa::numerics::FloatToIntRounding::TowardZero));
    assert_int_equal(a.max_block_exponent, zyfa::numerics::kBlockScaleMaxExponent);
    zyfa_context_destroy(ctx);
}

void fp8_lean_launch_packs_varlen_and_descales(void**) {
    const char* kAsm = "zyfa_gfx950_fp8_lean_d192_128_causal_br";
    bool asm_embedded = false;
    for (const auto& spec : zyfa::hip::make_hip_attn_catalogue()->kernels("gfx950")) {
        asm_embedded = asm_embedded || std::strcmp(spec.symbol, kAsm) == 0;
    }
    fp8_lean_launch_packs(create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS),
                          asm_embedded ? kAsm : "zyfa_attn_fwd_e4m3_lean_d192_128");
    fp8_lean_launch_packs(create_hip_cpp(), "zyfa_attn_fwd_e4m3_lean_d192_128");
}

// FP8 EXACT runs the gfx950 assembly EXACT kernel on the library's context (when the build embeds
// it) and the HIP C++ EXACT kernel on the HipCpp context, with the exact exponential's arguments.
void fp8_exact_launches(zyfa_context* ctx, const char* expected_symbol) {
    fake_hip_state* state = fake();
    Problem p(ZYFA_DTYPE_FP8_E4M3FN, 128, 128);
    p.params.softmax = ZYFA_SOFTMAX_EXACT;
    assert_int_equal(p.supported(ctx), ZYFA_SUCCESS);
    assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), expected_symbol);
    assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
    assert_string_equal(state->last_launch.symbol, expected_symbol);
    assert_int_equal(state->last_launch.args.softmax, ZYFA_SOFTMAX_EXACT);
    assert_int_equal(state->last_launch.args.in_dtype, ZYFA_DTYPE_FP8_E4M3FN);
    zyfa_context_destroy(ctx);
}

void fp8_exact_launches_its_kernel(void**) {
    const char* kAsm = "zyfa_gfx950_fp8_exact_d128_causal_tl";  // Problem's mask: ZYFA_MASK_CAUSAL
    bool asm_embedded = false;
    for (const auto& spec : zyfa::hip::make_hip_attn_catalogue()->kernels("gfx950")) {
        asm_embedded = asm_embedded || std::strcmp(spec.symbol, kAsm) == 0;
    }
    fp8_exact_launches(create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS), asm_embedded ? kAsm : "zyfa_attn_fwd_e4m3_exact_d128");
    fp8_exact_launches(create_hip_cpp(), "zyfa_attn_fwd_e4m3_exact_d128");
}

// The INT8 Q/K mode: q, k INT8 and v in the arch's FP8 format run the HIP C++ INT8 kernel of the
// head dims and softmax mode, with the per-token and per-64-key descales in the q_descale and
// k_descale slots of the kernel arguments (attention_kernel_args.h); the other FP8 format of v,
// and head dims other than 64 and 128, are NOT_SUPPORTED with the reason.
void int8_qk_launches_the_int8_kernels(void**) {
    for (const char* arch : {"gfx950", "gfx942"}) {
        setenv("FAKE_HIP_ARCH", arch, 1);
        const bool gfx950 = std::strcmp(arch, "gfx950") == 0;
        fake_hip_state* state = fake();
        zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
        const zyfa_dtype own = gfx950 ? ZYFA_DTYPE_FP8_E4M3FN : ZYFA_DTYPE_FP8_E4M3FNUZ;
        const zyfa_dtype other = gfx950 ? ZYFA_DTYPE_FP8_E4M3FNUZ : ZYFA_DTYPE_FP8_E4M3FN;
        for (int64_t d : {64, 128}) {
            for (zyfa_softmax softmax : {ZYFA_SOFTMAX_AUTO, ZYFA_SOFTMAX_EXACT}) {
                Problem p(ZYFA_DTYPE_INT8, d, d);
                p.v.dtype = own;
                p.params.softmax = softmax;
                const float ones[64] = {1.0f};
                const float* per_token = p.small(0, ones, 16);
                const float* per_block = p.small(1, ones, 16);
                const float* v_descale = p.small(2, ones, 4);
                p.params.q_descale_per_token = per_token;
                p.params.k_descale_per_block = per_block;
                p.params.v_descale = v_descale;
                const std::string symbol = std::string("zyfa_attn_fwd_") + (gfx950 ? "i8e4m3_" : "i8e4m3fnuz_") +
                                           (softmax == ZYFA_SOFTMAX_EXACT ? "exact_d" : "lean_d") + std::to_string(d);
                assert_int_equal(p.supported(ctx), ZYFA_SUCCESS);
                assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), symbol.c_str());
                const int launches = state->launches;
                assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
                assert_int_equal(state->launches, launches + 1);
                const zyfa::AttnKernelArgs& a = state->last_launch.args;
                assert_string_equal(state->last_launch.symbol, symbol.c_str());
                assert_int_equal(a.in_dtype, ZYFA_DTYPE_INT8);
                assert_int_equal(a.softmax, softmax == ZYFA_SOFTMAX_EXACT ? ZYFA_SOFTMAX_EXACT : ZYFA_SOFTMAX_LEAN);
                assert_ptr_equal(a.q_descale, per_token);
                assert_ptr_equal(a.k_descale, per_block);
                assert_ptr_equal(a.v_descale, v_descale);
            }
        }
        {
            Problem p(ZYFA_DTYPE_INT8, 128, 128);
            p.v.dtype = other;
            assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
            expect_message("with INT8 q/k on");
            expect_message("FP8 matrix unit");
        }
        {
            Problem p(ZYFA_DTYPE_INT8, 192, 128);
            p.v.dtype = own;
            assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
            expect_message("the AMD INT8 Q/K kernels support head dims 64 and 128");
        }
        zyfa_context_destroy(ctx);
        unsetenv("FAKE_HIP_ARCH");
    }
}

// zyfa_quantize_int8 enqueues one launch, zyfa_quantize_int8_groups over the 64-row grid (two with
// ZYFA_QUANT_SMOOTH: the mean first). The double records an AttnKernelArgs-sized copy of the
// parameter, larger than the quantiser's, so its arguments are checked by the CUDA double
// (tests/gpu_host) and end to end by tests/emu/amd_quantize_test.cpp, not here.
void quantize_int8_enqueues_one_launch(void**) {
    fake_hip_state* state = fake();
    zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
    Problem p(ZYFA_DTYPE_INT8, 128, 128);
    for (int32_t rows : {1, 64}) {
        zyfa_quant_params qp;
        zyfa_quant_params_init(&qp, sizeof qp);
        qp.batch = 1;
        qp.seqlen = 300;
        qp.heads = 2;
        qp.head_dim = 128;
        qp.scale_rows = rows;
        zyfa_tensor in = p.v, out = p.k;
        in.dtype = ZYFA_DTYPE_BF16;
        out.dtype = ZYFA_DTYPE_INT8;
        float* descale = reinterpret_cast<float*>(p.storage.data() + (6 << 20));
        const int launches = state->launches;
        assert_int_equal(zyfa_quantize_int8(ctx, &qp, &in, &out, descale, nullptr), ZYFA_SUCCESS);
        assert_int_equal(state->launches, launches + 1);
        assert_string_equal(state->last_launch.symbol, "zyfa_quantize_int8_groups");
        assert_int_equal(state->last_launch.grid[0], 5);  // ceil(300 / 64)
        assert_int_equal(state->last_launch.grid[1], 2);
        assert_int_equal(state->last_launch.grid[2], 1);
    }
    zyfa_context_destroy(ctx);
}

void unsupported_requests_say_why(void**) {
    zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
    {
        Problem p(ZYFA_DTYPE_FP16, 128, 128);
        assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
        expect_message("FP16");
    }
    {
        Problem p(ZYFA_DTYPE_FP8_E4M3FNUZ, 128, 128);
        assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
        expect_message("gfx950");
    }
    {
        Problem p(ZYFA_DTYPE_BF16, 64, 64);
        assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
        expect_message("head dims");
    }
    {
        Problem p(ZYFA_DTYPE_BF16, 128, 128);
        p.q.stride_seq = 8 * 128 + 4;  // 8-byte rows offsets: not 16-byte vectors
        p.q.stride_batch = 300 * p.q.stride_seq;
        assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
        expect_message("q.stride_seq");
    }
    zyfa_context_destroy(ctx);
}

// Every AMD kernel steps 64 keys: params.key_block 0 and 64 launch the same kernel, 128 is
// NOT_SUPPORTED with the reason from all three calls and launches nothing (gfx950 and gfx942).
void key_block_64_only(void**) {
    for (const char* arch : {"gfx950", "gfx942"}) {
        setenv("FAKE_HIP_ARCH", arch, 1);
        fake_hip_state* state = fake();
        zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
        const zyfa_dtype fp8 = std::strcmp(arch, "gfx950") == 0 ? ZYFA_DTYPE_FP8_E4M3FN : ZYFA_DTYPE_FP8_E4M3FNUZ;
        for (zyfa_dtype in : {ZYFA_DTYPE_BF16, fp8}) {
            for (int64_t dqk : {128, 192}) {
                Problem p(in, dqk, 128);
                const char* own = zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o);
                assert_non_null(own);
                p.params.key_block = 64;
                assert_int_equal(p.supported(ctx), ZYFA_SUCCESS);
                assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), own);
                int launches = state->launches;
                assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
                assert_int_equal(state->launches, launches + 1);
                assert_string_equal(state->last_launch.symbol, own);

                p.params.key_block = 128;
                assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
                expect_message("params.key_block = 128");
                expect_message("the AMD kernels step 64 keys (0 or 64)");
                assert_null(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o));
                expect_message("params.key_block = 128");
                launches = state->launches;
                assert_int_equal(p.run(ctx, nullptr), ZYFA_ERROR_NOT_SUPPORTED);
                expect_message("zyfa_attn_fwd: params.key_block = 128");
                assert_int_equal(state->launches, launches);

                // A value no backend takes is a malformed request, before any backend is asked.
                p.params.key_block = 96;
                assert_int_equal(p.run(ctx, nullptr), ZYFA_ERROR_INVALID_ARGUMENT);
                expect_message("params.key_block = 96");
                assert_int_equal(state->launches, launches);
            }
        }
        zyfa_context_destroy(ctx);
    }
    unsetenv("FAKE_HIP_ARCH");
}

// Split-KV on AMD (hip/split_kv_plan.hpp): the plan's pure function, zyfa_attn_fwd_workspace_size
// on a HIP context (the fake reports 256 CUs), and a decode call with that workspace: the HIP C++
// kernel (never the gfx950 assembly) over grid.x = tiles * splits with AttnExtraArgs' split
// pointing into the workspace, then zyfa_attn_merge over the parts; too small a workspace gives
// fewer splits, none below two parts' bytes.
void split_kv_plan_and_workspace(void**) {
    using zyfa::hip::choose_split_count;
    zyfa::gpu::SplitKvShape d;  // decode: 1 query, 8 query heads, 2 sequences, 4096 keys (64 blocks)
    d.batch = 2;
    d.seqlen_q = 1;
    d.seqlen_k = 4096;
    d.heads_q = 8;
    d.heads_kv = 2;
    d.head_dim_v = 128;
    // 16 workgroups on 256 CUs: ceil(512 / 16) = 32 splits, under 64 / 4 = 16 blocks-limited: 16.
    assert_int_equal(choose_split_count(d, 256, 0, -1), 16);
    assert_int_equal(choose_split_count(d, 8, 0, -1), 1);    // 16 workgroups fill 8 CUs: unsplit
    assert_int_equal(choose_split_count(d, 20, 0, -1), 3);   // ceil(40 / 16)
    assert_int_equal(choose_split_count(d, 256, 1, -1), 1);  // num_splits 1: never
    assert_int_equal(choose_split_count(d, 8, 5, -1), 5);    // requested: at most n, no heuristic
    assert_int_equal(choose_split_count(d, 8, 100, -1), 16); // at most one split per 4 blocks
    zyfa::gpu::SplitKvShape chunk = d;
    chunk.seqlen_q = 129;  // beyond a short chunk
    assert_int_equal(choose_split_count(chunk, 256, 0, -1), 1);
    assert_int_equal(choose_split_count(chunk, 256, 4, -1), 1);
    zyfa::gpu::SplitKvShape short_keys = d;
    short_keys.seqlen_k = 511;  // 8 blocks: at most 2 splits
    assert_int_equal(choose_split_count(short_keys, 256, 0, -1), 2);
    short_keys.seqlen_k = 448;  // 7 blocks: none
    assert_int_equal(choose_split_count(short_keys, 256, 0, -1), 1);
    // The workspace: as many splits as it holds.
    const int64_t two = zyfa::gpu::split_kv_workspace_bytes(d, 2), five = zyfa::gpu::split_kv_workspace_bytes(d, 5);
    assert_true(two > 0 && five > two);
    assert_int_equal(choose_split_count(d, 256, 0, five), 5);
    assert_int_equal(choose_split_count(d, 256, 0, five - 1), 4);
    assert_int_equal(choose_split_count(d, 256, 0, two - 1), 1);
    assert_int_equal(choose_split_count(d, 256, 0, 0), 1);

    // Through the C API on the fake gfx950 (library context: FP8 LEAN would take the assembly).
    for (zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN}) {
        fake_hip_state* state = fake();
        zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
        Problem p(dtype, 128, 128);
        p.params.batch = 1;  // 4096 keys of BF16 K fill a 2 MiB slice of the storage
        p.params.seqlen_q = 1;
        p.params.seqlen_k = 4096;
        p.params.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        for (zyfa_tensor* t : {&p.q, &p.o}) t->stride_batch = t->stride_seq;
        for (zyfa_tensor* t : {&p.k, &p.v}) t->stride_batch = 4096 * t->stride_seq;
        zyfa_attn_params shape = p.params;
        size_t bytes = 0;
        assert_int_equal(zyfa_attn_fwd_workspace_size(ctx, &shape, &bytes), ZYFA_SUCCESS);
        zyfa::gpu::SplitKvShape s = d;
        s.batch = 1;  // 8 workgroups on 256 CUs: 64 splits wanted, 16 allowed
        assert_int_equal(static_cast<int64_t>(bytes), zyfa::gpu::split_kv_workspace_bytes(s, 16));
        shape.seqlen_q = 300;  // not a short chunk: no workspace
        size_t none = 1;
        assert_int_equal(zyfa_attn_fwd_workspace_size(ctx, &shape, &none), ZYFA_SUCCESS);
        assert_int_equal(none, 0);
        shape.seqlen_q = 1;
        shape.key_block = 128;  // no AMD kernel steps 128 keys: never runs, so never splits
        none = 1;
        assert_int_equal(zyfa_attn_fwd_workspace_size(ctx, &shape, &none), ZYFA_SUCCESS);
        assert_int_equal(none, 0);
        // The run, with the workspace in the fake's device memory.
        FakeMemory workspace(bytes);
        p.params.workspace = workspace.data();
        p.params.workspace_bytes = bytes;
        const std::string expected_name =
            std::string(dtype == ZYFA_DTYPE_BF16 ? "zyfa_attn_fwd_bf16_d128" : "zyfa_attn_fwd_e4m3_lean_d128") +
            "+split_kv";
        assert_string_equal(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o), expected_name.c_str());
        const char* expected = dtype == ZYFA_DTYPE_BF16 ? "zyfa_attn_fwd_bf16_d128" : "zyfa_attn_fwd_e4m3_lean_d128";
        const int launches = state->launches;
        if (p.run(ctx, nullptr) != ZYFA_SUCCESS) fail_msg("split run: %s", zyfa_last_error_message());
        assert_int_equal(state->launches, launches + 2);
        const fake_hip_launch& attn = state->previous_launch;
        assert_string_equal(attn.symbol, expected);
        assert_int_equal(attn.grid[0], 16);  // one 256-query tile x 16 splits
        assert_int_equal(attn.grid[1], 8);
        assert_int_equal(attn.grid[2], 1);
        zyfa::amd::AttnExtraArgs extra;
        std::memcpy(&extra, attn.second, sizeof extra);
        const zyfa::SplitKvLayout layout = zyfa::split_kv_layout(1, 1, 8, 128, 16);
        assert_ptr_equal(extra.split.part_o, workspace.data());
        assert_ptr_equal(extra.split.part_lse, reinterpret_cast<float*>(workspace.data()) + 16 * layout.o_stride);
        assert_int_equal(extra.split.part_o_stride, layout.o_stride);
        assert_int_equal(extra.split.part_lse_stride, layout.lse_stride);
        assert_int_equal(extra.split.num_splits, 16);
        assert_null(extra.paged.block_table);
        assert_string_equal(state->last_launch.symbol, "zyfa_attn_merge");
        assert_int_equal(state->last_launch.grid[0], 1);
        assert_int_equal(state->last_launch.grid[1], 8);
        assert_int_equal(state->last_launch.grid[2], 1);
        // Room for 3 parts only: 3 splits; one byte short of two parts: unsplit, no merge.
        p.params.workspace_bytes = static_cast<uint64_t>(zyfa::gpu::split_kv_workspace_bytes(s, 3));
        assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
        assert_int_equal(state->previous_launch.grid[0], 3);
        std::memcpy(&extra, state->previous_launch.second, sizeof extra);
        assert_int_equal(extra.split.num_splits, 3);
        p.params.workspace_bytes = static_cast<uint64_t>(zyfa::gpu::split_kv_workspace_bytes(s, 2)) - 1;
        const int before = state->launches;
        assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
        assert_int_equal(state->launches, before + 1);
        assert_int_equal(state->last_launch.grid[0], 1);
        if (dtype == ZYFA_DTYPE_BF16) {
            std::memcpy(&extra, state->last_launch.second, sizeof extra);
            assert_int_equal(extra.split.num_splits, 0);
        }
        zyfa_context_destroy(ctx);
    }
}

void gfx942_runs_the_fnuz_kernels(void**) {
    setenv("FAKE_HIP_ARCH", "gfx942:sramecc+:xnack-", 1);
    fake_hip_state* state = fake();
    const int rejected = state->images_rejected;
    zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
    assert_string_equal(zyfa_context_device_name(ctx), "gfx942");
    assert_int_equal(state->images_rejected, rejected);  // the double accepts only gfx942 objects now
    // FP8 LEAN on e4m3fnuz runs the gfx942 assembly kernel (since 2026-12-04); an fp16 output,
    // which it does not write, the HIP C++ kernel.
    Problem p(ZYFA_DTYPE_FP8_E4M3FNUZ, 128, 128);
    assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
    assert_string_equal(state->last_launch.symbol, "zyfa_gfx942_fp8_lean_d128_causal_tl");
    assert_int_equal(state->last_launch.args.in_dtype, ZYFA_DTYPE_FP8_E4M3FNUZ);
    p.o.dtype = ZYFA_DTYPE_FP16;
    assert_int_equal(p.run(ctx, nullptr), ZYFA_SUCCESS);
    assert_string_equal(state->last_launch.symbol, "zyfa_attn_fwd_e4m3fnuz_lean_d128");
    assert_int_equal(state->last_launch.args.in_dtype, ZYFA_DTYPE_FP8_E4M3FNUZ);
    Problem ocp(ZYFA_DTYPE_FP8_E4M3FN, 128, 128);
    assert_int_equal(ocp.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
    expect_message("gfx942");
    zyfa_context_destroy(ctx);
    unsetenv("FAKE_HIP_ARCH");
}

void unknown_arch_gets_a_context_but_no_kernels(void**) {
    setenv("FAKE_HIP_ARCH", "gfx1100", 1);
    fake_hip_state* state = fake();
    const int loaded = state->modules_loaded;
    zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
    assert_int_equal(state->modules_loaded, loaded);
    Problem p(ZYFA_DTYPE_BF16, 128, 128);
    assert_int_equal(p.supported(ctx), ZYFA_ERROR_NOT_SUPPORTED);
    expect_message("gfx1100");
    zyfa_context_destroy(ctx);
    unsetenv("FAKE_HIP_ARCH");
}

void rejected_images_fail_creation_with_the_runtime_text(void**) {
    setenv("FAKE_HIP_REJECT_IMAGES", "1", 1);
    create(ZYFA_BACKEND_HIP, ZYFA_ERROR_DEVICE);
    expect_message("hipModuleLoadData");
    expect_message("hipErrorInvalidImage");
    unsetenv("FAKE_HIP_REJECT_IMAGES");
}

// Each pointer of a request in turn set to malloc'd host memory: INVALID_ARGUMENT naming the
// field from zyfa_attn_supported, zyfa_attn_kernel_name and zyfa_attn_fwd, and nothing launched.
// Another device's memory is refused too; pinned (hipHostMalloc) and managed memory run.
void expect_refused(zyfa_context* ctx, Problem& p, const char* field, const char* where) {
    fake_hip_state* state = fake();
    const int launches = state->launches, queries = state->pointer_queries;
    const std::string named = std::string(field) + " = 0x";
    assert_int_equal(p.supported(ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    expect_message(named.c_str());
    expect_message(where);
    assert_null(zyfa_attn_kernel_name(ctx, &p.params, &p.q, &p.k, &p.v, &p.o));
    assert_int_equal(p.run(ctx, nullptr), ZYFA_ERROR_INVALID_ARGUMENT);
    expect_message(("zyfa_attn_fwd: " + named).c_str());
    assert_int_equal(state->launches, launches);
    assert_true(state->pointer_queries > queries);
}

void expect_launched(zyfa_context* ctx, Problem& p) {
    const int launches = fake()->launches;
    if (p.run(ctx, nullptr) != ZYFA_SUCCESS) fail_msg("zyfa_attn_fwd: %s", zyfa_last_error_message());
    assert_int_equal(fake()->launches, launches + 1);
}

void host_pointers_are_refused(void**) {
    constexpr const char* kHost = "is host memory; this context is HIP device 0";
    zyfa_context* ctx = create(ZYFA_BACKEND_HIP, ZYFA_SUCCESS);
    std::vector<uint64_t> host_buffer(1 << 17);  // 1 MiB of pageable host memory
    void* host = host_buffer.data();
    const char* const tensor_fields[] = {"q.data", "k.data", "v.data", "o.data"};
    for (int t = 0; t < 4; ++t) {
        Problem p(ZYFA_DTYPE_BF16, 128, 128);
        expect_launched(ctx, p);
        zyfa_tensor* views[] = {&p.q, &p.k, &p.v, &p.o};
        views[t]->data = host;
        expect_refused(ctx, p, tensor_fields[t], kHost);
    }
    {
        Problem p(ZYFA_DTYPE_BF16, 128, 128);
        p.params.lse = static_cast<float*>(host);
        expect_refused(ctx, p, "params.lse", kHost);
    }
    // FP8 with packed sequences and descales: every small array in turn.
    const int32_t cu_values[] = {0, 100, 300};
    const float descale_values[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    const char* const small_fields[] = {"params.cu_seqlens_q", "params.cu_seqlens_k", "params.q_descale",
                                        "params.k_descale", "params.v_descale"};
    for (int f = 0; f <= 5; ++f) {
        Problem p(ZYFA_DTYPE_FP8_E4M3FN, 128, 128);
        p.params.seqlen_q = p.params.seqlen_k = 200;
        p.q.stride_batch = p.k.stride_batch = p.v.stride_batch = p.o.stride_batch = 0;
        p.params.cu_seqlens_q = f == 0 ? static_cast<const int32_t*>(host) : p.small(0, cu_values, 3);
        p.params.cu_seqlens_k = f == 1 ? static_cast<const int32_t*>(host) : p.small(1, cu_values, 3);
        p.params.q_descale = f == 2 ? static_cast<const float*>(host) : p.small(2, descale_values, 4);
        p.params.k_descale = f == 3 ? static_cast<const float*>(host) : p.small(3, descale_values, 4);
        p.params.v_descale = f == 4 ? static_cast<const float*>(host) : p.small(4, descale_values, 4);
        if (f == 5) {
            expect_launched(ctx, p);  // all on the device
        } else {
            expect_refused(ctx, p, small_fields[f], kHost);
        }
    }
    {
        // Device 1's memory (allocated while device 1 was current): not this context's.
        setenv("FAKE_HIP_DEVICES", "2", 1);
        auto set_device = fake_entry<int (*)(int)>("hipSetDevice");
        assert_int_equal(set_device(1), 0);
        FakeMemory other(1 << 20);
        assert_int_equal(set_device(0), 0);
        Problem p(ZYFA_DTYPE_BF16, 128, 128);
        p.v.data = other.data();
        expect_refused(ctx, p, "v.data", "is memory of HIP device 1; this context is HIP device 0");
        unsetenv("FAKE_HIP_DEVICES");
    }
    {
        FakeMemory pinned(2 << 20, "hipHostMalloc");
        FakeMemory managed(2 << 20, "hipMallocManaged");
        Problem p(ZYFA_DTYPE_BF16, 128, 128);
        p.q.data = pinned.data();
        p.o.data = managed.data();
        expect_launched(ctx, p);
    }
    zyfa_context_destroy(ctx);
}

void no_device_and_bad_ordinal_are_no_device(void**) {
    create(ZYFA_BACKEND_HIP, ZYFA_ERROR_NO_DEVICE, 1);
    expect_message("sees 1 device");
    setenv("FAKE_HIP_DEVICES", "0", 1);
    create(ZYFA_BACKEND_HIP, ZYFA_ERROR_NO_DEVICE);
    expect_message("hipErrorNoDevice");
    auto_falls_back();
    unsetenv("FAKE_HIP_DEVICES");
}
#endif  // ZYFA_TEST_HIP_COMPILED_IN

}  // namespace

int main(int argc, char** argv) {
    const std::string scenario = argc > 1 ? argv[1] : "";
    if (scenario == "no_rocm") {
        unsetenv("ZYFA_HIP_LIBRARY");
        for (const char* name : {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}) {
            if (void* runtime = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
                dlclose(runtime);
                std::printf("SKIP: this machine has a HIP runtime (%s); the no-ROCm path is not testable here\n", name);
                return kSkip;
            }
        }
        const struct CMUnitTest tests[] = {cmocka_unit_test(no_rocm_is_no_device),
                                           cmocka_unit_test(arch_names_lose_their_features)};
        return cmocka_run_group_tests(tests, nullptr, nullptr);
    }
    if (scenario == "missing_override") {
        const struct CMUnitTest tests[] = {cmocka_unit_test(missing_override_is_no_device)};
        return cmocka_run_group_tests(tests, nullptr, nullptr);
    }
    if (scenario == "fake_device") {
#ifndef ZYFA_TEST_HIP_COMPILED_IN
        std::printf("SKIP: the HIP backend is not compiled in (ZYFA_AMD=OFF)\n");
        return kSkip;
#else
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(gfx950_loads_every_code_object_and_unloads_them),
            cmocka_unit_test(bf16_launch_packs_the_problem),
            cmocka_unit_test(bf16_asm_kernel_chosen_where_it_covers_the_problem),
            cmocka_unit_test(fp8_lean_launch_packs_varlen_and_descales),
            cmocka_unit_test(fp8_exact_launches_its_kernel),
            cmocka_unit_test(int8_qk_launches_the_int8_kernels),
            cmocka_unit_test(quantize_int8_enqueues_one_launch),
        cmocka_unit_test(unsupported_requests_say_why),
            cmocka_unit_test(key_block_64_only),
            cmocka_unit_test(split_kv_plan_and_workspace),
            cmocka_unit_test(gfx942_runs_the_fnuz_kernels),
            cmocka_unit_test(unknown_arch_gets_a_context_but_no_kernels),
            cmocka_unit_test(rejected_images_fail_creation_with_the_runtime_text),
            cmocka_unit_test(no_device_and_bad_ordinal_are_no_device),
            cmocka_unit_test(host_pointers_are_refused),
        };
        return cmocka_run_group_tests(tests, nullptr, nullptr);
#endif
    }
    std::fprintf(stderr, "usage: amd_hip_host no_rocm|missing_override|fake_device\n");
    return 2;
}
