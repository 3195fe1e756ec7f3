// The AMD path end to end on the emulator: libzyfa.so's HIP backend (public API, dispatch, kernel
// arguments, embedded gfx950/gfx942 code objects) with ZYFA_HIP_LIBRARY pointing at the HIP
// stand-in (tools/amdgpu-emu/hip_standin), compared with the CPU backend and the fp64 reference
// by tests/gpu/gpu_check.hpp (its tolerances and their reasons: MFMA accumulation order differs
// from the CPU model's, everything else follows the model). Small shapes keep the tier within
// CI time. The target is chosen by ZYFA_EMU_ARCH (gfx950 or gfx942), set per CTest test.
#include <cstdlib>
#include <string>

#include "gpu/gpu_check.hpp"
#include "hip/hip_runtime.hpp"

using namespace zyfa_gpu_test;

namespace {

bool g_gfx942 = false;

struct Mode {
    zyfa_dtype dtype;
    zyfa_softmax softmax;
    const char* name;
};

// BF16 EXACT and FP8 LEAN in the target's FP8 format.
void for_modes(const char* what, void (*shape_of)(CaseShape&)) {
    const Mode modes[] = {
        {ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT, "bf16"},
        {g_gfx942 ? ZYFA_DTYPE_FP8_E4M3FNUZ : ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN,
         g_gfx942 ? "e4m3fnuz-lean" : "e4m3fn-lean"},
    };
    for (const Mode& m : modes) {
        CaseShape s;
        s.dtype = m.dtype;
        s.softmax = m.softmax;
        s.descales = m.dtype != ZYFA_DTYPE_BF16;
        s.head_dim_qk = s.head_dim_v = 128;
        shape_of(s);
        check_gpu_case(s, std::string(what) + " " + m.name);
    }
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

}  // namespace

int main() {
    const char* arch = std::getenv("ZYFA_EMU_ARCH");
    g_gfx942 = arch && std::string(arch) == "gfx942";
    if (!std::getenv("ZYFA_HIP_LIBRARY")) {
        std::printf("SKIP amd_end_to_end: ZYFA_HIP_LIBRARY is not set (CTest sets it to the stand-in)\n");
        return kSkipExitCode;
    }
    Session& s = session();
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_HIP;
    // Session::cuda is the GPU context under test; here it is the HIP backend.
    if (zyfa_context_create(&opts, &s.cuda) != ZYFA_SUCCESS) {
        std::printf("FAIL amd_end_to_end: zyfa_context_create(HIP) on the stand-in: %s\n", zyfa_last_error_message());
        return 1;
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masks),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_gqa_varlen),
        cmocka_unit_test(test_head_dims_lse_descales),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
