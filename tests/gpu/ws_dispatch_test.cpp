// Which kernel the NVIDIA launch plan picks for head dims 64, 128, 192/128 and 256 on an sm_90 device under
// each ZYFA_NVIDIA_WS / ZYFA_NVIDIA_WGMMA setting, without a GPU: the CUDA backend runs over the
// test double of libcuda.so.1 (tests/gpu_host/fake_cuda_driver.c, one compute-capability-9.0
// device), loaded through ZYFA_CUDA_LIBRARY, which CTest sets. zyfa_attn_kernel_name reads no
// tensor data.
//   unset / 3: every mode on the warp-specialised kernels; 2: 16-bit inputs and FP8 LEAN;
//   1: 16-bit only; 0: none; ZYFA_NVIDIA_WGMMA=0: the mma.sync kernels.
// Each head dim gets its own kernel (the dims suffix of the name).
#include <cstdlib>
#include <cstring>
#include <string>

#include "numerics/cmocka_cpp.hpp"
#include "zyfa.h"

namespace {

struct Mode {
    zyfa_dtype dtype;
    zyfa_softmax softmax;
    const char* name;
};
constexpr Mode kModes[] = {{ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT, "bf16"},
                           {ZYFA_DTYPE_FP16, ZYFA_SOFTMAX_EXACT, "fp16"},
                           {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_EXACT, "e4m3fn-exact"},
                           {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, "e4m3fn-lean"}};

// A CUDA context created with the given variables (null: unset).
zyfa_context* context_with(const char* ws, const char* wgmma) {
    if (ws) {
        setenv("ZYFA_NVIDIA_WS", ws, 1);
    } else {
        unsetenv("ZYFA_NVIDIA_WS");
    }
    if (wgmma) {
        setenv("ZYFA_NVIDIA_WGMMA", wgmma, 1);
    } else {
        unsetenv("ZYFA_NVIDIA_WGMMA");
    }
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
    const zyfa_status st = zyfa_context_create(&opts, &ctx);
    if (st != ZYFA_SUCCESS) std::printf("zyfa_context_create: %s\n", zyfa_last_error_message());
    assert_int_equal(st, ZYFA_SUCCESS);
    unsetenv("ZYFA_NVIDIA_WS");
    unsetenv("ZYFA_NVIDIA_WGMMA");
    return ctx;
}

std::string kernel_for(zyfa_context* ctx, const Mode& m, int64_t head_dim_qk, int64_t head_dim_v) {
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL;
    p.softmax = m.softmax;
    p.batch = 1;
    p.seqlen_q = p.seqlen_k = 256;
    p.heads_q = p.heads_kv = 2;
    p.head_dim_qk = head_dim_qk;
    p.head_dim_v = head_dim_v;
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
    const zyfa_tensor qk = tensor(m.dtype, head_dim_qk, uintptr_t{1} << 20), v = tensor(m.dtype, head_dim_v, uintptr_t{1} << 20);
    const zyfa_tensor o = tensor(ZYFA_DTYPE_BF16, head_dim_v, uintptr_t{4} << 20);
    const char* name = zyfa_attn_kernel_name(ctx, &p, &qk, &qk, &v, &o);
    if (!name) {
        std::printf("  %s hd%lld/%lld: %s\n", m.name, static_cast<long long>(head_dim_qk),
                    static_cast<long long>(head_dim_v), zyfa_last_error_message());
    }
    assert_non_null(name);
    return name;
}

// Head dims the warp-specialised kernels serve, with the dims suffix of their kernel names.
struct WsDims {
    int64_t qk, v;
    const char* suffix;
};
constexpr WsDims kWsDims[] = {{128, 128, "_d128"}, {192, 128, "_d192_128"}, {64, 64, "_d64"}, {256, 256, "_d256"}};

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_ws(const std::string& name) { return name.find("_ws_") != std::string::npos; }

void check_setting(const char* ws, const char* wgmma, bool bits16_ws, bool lean_ws, bool exact_ws) {
    zyfa_context* ctx = context_with(ws, wgmma);
    for (const Mode& m : kModes) {
        const bool fp8 = m.dtype == ZYFA_DTYPE_FP8_E4M3FN;
        const bool expected = !fp8 ? bits16_ws : m.softmax == ZYFA_SOFTMAX_LEAN ? lean_ws : exact_ws;
        for (const WsDims& d : kWsDims) {
            const std::string name = kernel_for(ctx, m, d.qk, d.v);
            std::printf("  ZYFA_NVIDIA_WS=%s ZYFA_NVIDIA_WGMMA=%s %-13s hd%lld/%lld -> %s\n", ws ? ws : "(unset)",
                        wgmma ? wgmma : "(unset)", m.name, static_cast<long long>(d.qk), static_cast<long long>(d.v),
                        name.c_str());
            assert_true(is_ws(name) == expected);
            assert_true(ends_with(name, d.suffix));  // the kernel built for these dims, never another's
        }
    }
    zyfa_context_destroy(ctx);
}

void test_default_puts_every_mode_on_ws(void**) {
    check_setting(nullptr, nullptr, true, true, true);
    check_setting("2", nullptr, true, true, false);
}

void test_ws_1_keeps_fp8_off_ws(void**) { check_setting("1", nullptr, true, false, false); }

void test_ws_3_adds_fp8_exact(void**) { check_setting("3", nullptr, true, true, true); }

void test_ws_0_and_wgmma_0_keep_older_kernels(void**) {
    check_setting("0", nullptr, false, false, false);
    check_setting("3", "0", false, false, false);
}

}  // namespace

int main(void) {
    if (!std::getenv("ZYFA_CUDA_LIBRARY")) {
        std::printf("SKIP: ZYFA_CUDA_LIBRARY (the fake driver) is not set\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_puts_every_mode_on_ws),
        cmocka_unit_test(test_ws_1_keeps_fp8_off_ws),
        cmocka_unit_test(test_ws_3_adds_fp8_exact),
        cmocka_unit_test(test_ws_0_and_wgmma_0_keep_older_kernels),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
