// zyfa_attn_merge's HIP kernel (kernels/amd/attention_merge.hip) end to end on the emulator:
// libzyfa.so's HIP backend with ZYFA_HIP_LIBRARY pointing at the HIP stand-in, against the CPU
// backend on the same parts (tests/gpu/merge_gpu_check.hpp: the fp64-derived bound, the special
// rows exactly, guard bands, 65 parts NOT_SUPPORTED, host parts INVALID_ARGUMENT). Small shapes:
// every workgroup is emulated. The target is chosen by ZYFA_EMU_ARCH (gfx950 or gfx942).
#include <cstdlib>
#include <string>

#include "emu/emulated_hip_session.hpp"
#include "gpu/merge_gpu_check.hpp"

using namespace zyfa_gpu_test;

namespace {

void test_merge_vs_cpu(void**) {
    MergeGpuShape s;
    s.batch = 1;
    s.seqlen_q = 6;
    s.heads = 2;
    s.head_dim = 64;
    s.parts = 4;
    check_merge_case(s, "fp32/bf16/fp16 parts, d64");
    MergeGpuShape wide = s;
    wide.head_dim = 320;  // three elements per thread for some threads
    wide.out_dtype = ZYFA_DTYPE_BF16;
    check_merge_case(wide, "d320, bf16 output");
    MergeGpuShape packed = s;
    packed.batch = 3;
    packed.lengths = {3, 0, 4};
    packed.out_dtype = ZYFA_DTYPE_FP16;
    check_merge_case(packed, "packed 3, 0, 4, fp16 output");
}

void test_merge_refusals(void**) { check_merge_refusals(); }

}  // namespace

int main() {
    const int status = open_emulated_hip_session("amd_merge");
    if (status != 0) return status;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_vs_cpu),
        cmocka_unit_test(test_merge_refusals),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
