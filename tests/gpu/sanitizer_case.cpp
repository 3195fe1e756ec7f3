// A few small launches for compute-sanitizer (memcheck, racecheck: run_compute_sanitizer.sh):
// one per kernel family and edge (partial tiles, varlen with empty and length-1 sequences, GQA,
// windows, 192/128, 256, every input dtype), small enough that racecheck's instrumentation stays
// within seconds. Each result is still checked against the CPU backend and the fp64 reference.
#include "empty_keys_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

// FP8 LEAN, causal, 2 query heads on 1 kv head, square: the warp-specialised kernels' ring cases.
CaseShape causal_lean_gqa_2_1(int64_t seqlen, int64_t head_dim) {
    CaseShape s = mode_shape(kE4m3fnLean);
    s.seqlen_q = s.seqlen_k = seqlen;
    s.heads_q = 2;
    s.heads_kv = 1;
    s.head_dim_qk = s.head_dim_v = head_dim;
    return s;
}

void test_small_cases(void**) {
    CaseShape bf16;
    bf16.dtype = ZYFA_DTYPE_BF16;
    bf16.out_dtype = ZYFA_DTYPE_BF16;
    bf16.seqlen_q = bf16.seqlen_k = 100;
    bf16.head_dim_qk = bf16.head_dim_v = 128;
    check_gpu_case(bf16, "bf16 causal hd128 s=100");

    CaseShape lean = mode_shape(kE4m3fnLean);  // with descales
    lean.batch = 3;
    lean.lengths_q = {1, 0, 70};
    lean.lengths_k = {1, 5, 70};
    lean.seqlen_q = lean.seqlen_k = 70;
    lean.heads_q = 4;
    lean.heads_kv = 2;
    check_gpu_case(lean, "e4m3fn-lean varlen {1,0,70} gqa 4/2 hd64");

    // hd128 FP8 LEAN runs the sm_90a warp-specialised kernel by default: 300 keys wrap its
    // three-stage K/V ring (producer cp.async, V transpose, mbarriers) so racecheck sees reuse.
    check_gpu_case(causal_lean_gqa_2_1(300, 128), "e4m3fn-lean causal s=300 gqa 2/1 hd128");

    // hd192/128 FP8 LEAN runs the warp-specialised kernel of those dims by default: 400 keys are
    // 7 blocks per query tile (the last one partial), so the ring wraps twice; 130 query rows
    // make a second tile of 2 rows (Q rows past the end zero-filled).
    CaseShape lean_ws192 = mode_shape(kE4m3fnLean);
    lean_ws192.mask = ZYFA_MASK_NONE;
    lean_ws192.seqlen_q = 130;
    lean_ws192.seqlen_k = 400;
    lean_ws192.heads_q = 2;
    lean_ws192.heads_kv = 1;
    lean_ws192.head_dim_qk = 192;
    lean_ws192.head_dim_v = 128;
    check_gpu_case(lean_ws192, "e4m3fn-lean none 130x400 gqa 2/1 hd192/128");

    // hd256 FP8 LEAN: the warp-specialised kernel with V in two 128-column halves (and the 16-bit
    // case at the end: two ring stages); 200 keys are 4 blocks, so the 3-stage ring wraps.
    check_gpu_case(causal_lean_gqa_2_1(200, 256), "e4m3fn-lean causal s=200 gqa 2/1 hd256");

    CaseShape exact = mode_shape(kE4m3fnExact);  // with descales; hd192/128 EXACT: the mma.sync kernel
    exact.mask = ZYFA_MASK_NONE;
    exact.seqlen_q = 33;
    exact.seqlen_k = 100;
    exact.head_dim_qk = 192;
    exact.head_dim_v = 128;
    check_gpu_case(exact, "e4m3fn-exact none 33x100 hd192/128");

    CaseShape fp16;
    fp16.dtype = ZYFA_DTYPE_FP16;
    fp16.out_dtype = ZYFA_DTYPE_FP16;
    fp16.mask = ZYFA_MASK_NONE;
    fp16.window_left = 8;
    fp16.window_right = 3;
    fp16.seqlen_q = fp16.seqlen_k = 70;
    fp16.head_dim_qk = fp16.head_dim_v = 256;
    check_gpu_case(fp16, "fp16 window 8,3 hd256 s=70");

    // No keys: seqlen_k = 0 with K and V NULL (memcheck would see a read through them), on the
    // warp-specialised kernels (FP8 LEAN, BF16) and mma.sync (FP8 EXACT hd192/128); then varlen
    // with empty key sequences beside non-empty ones.
    const std::pair<CaseShape, const char*> keyless[] = {{mode_shape(kE4m3fnLean), "e4m3fn-lean hd64"},
                                                        {bf16, "bf16 hd128"},
                                                        {exact, "e4m3fn-exact hd192/128"}};
    for (const auto& [base, name] : keyless) {
        CaseShape none = base;
        none.mask = ZYFA_MASK_CAUSAL;
        none.seqlen_q = 130;
        none.seqlen_k = 0;
        check_empty_keys_case(session().cuda, none, std::string(name) + " seqlen_k = 0, k/v NULL", true);
    }
    CaseShape some = mode_shape(kE4m3fnLean);
    some.head_dim_qk = some.head_dim_v = 128;
    some.batch = 3;
    some.lengths_q = {70, 5, 130};
    some.lengths_k = {0, 100, 0};
    some.seqlen_q = 130;
    some.seqlen_k = 100;
    check_empty_keys_case(session().cuda, some, "e4m3fn-lean varlen q{70,5,130} k{0,100,0} hd128", false);
}

}  // namespace

int main(void) {
    if (const int rc = open_session_or_skip("gpu_sanitizer_case")) return rc;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_small_cases)};
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
