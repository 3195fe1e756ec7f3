// A few small launches for compute-sanitizer (memcheck, racecheck: run_compute_sanitizer.sh):
// one per kernel family and edge (partial tiles, varlen with empty and length-1 sequences, GQA,
// windows, 192/128, 256, every input dtype), small enough that racecheck's instrumentation stays
// within seconds. Each result is still checked against the CPU backend and the fp64 reference.
// On sm_90a it also runs the warp-specialised kernels' cp.async producer on a dense problem (a
// context of the tests' seam, tests/support/cuda_context.hpp) and a launch into an O whose base is
// one element off (the plan's mma.sync fallback, which stores one element at a time: memcheck
// reports a misaligned paired store if a ws kernel got it). And zyfa_attn_merge's kernel on packed
// rows with an empty sequence and a head dim that leaves some threads of a row idle. And the paged
// FP8 kernels at page 16, whose producer copies with warp 0 and transposes V with warps 1-3
// (sm90/producer.cuh), so that racecheck sees their staging buffers reused. And FP8 V in the
// transposed layout, whose producer bulk-copies whole blocks and completes the tail block itself.
#include <string>

#include "empty_keys_check.hpp"
#include "merge_gpu_check.hpp"
#include "paged_gpu_check.hpp"
#include "support/attention_modes.hpp"
#include "support/cuda_context.hpp"
#include "v_transposed_gpu_check.hpp"

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

    // The 16-bit warp-specialised kernels step 128 keys: 400 keys are 4 blocks for the last query
    // tile, so hd128's three-stage ring wraps (one P buffer) and hd64's too (two P buffers); 16-bit
    // 192/128 has two stages with K's and V's halves freed apart (WsTileShape::kSeparateEmpty),
    // which 600 keys (5 blocks) wrap twice, past where a parity wait could alias.
    CaseShape bf16_ring = bf16;
    bf16_ring.seqlen_q = bf16_ring.seqlen_k = 400;
    check_gpu_case(bf16_ring, "bf16 causal hd128 s=400");
    CaseShape fp16_64 = bf16_ring;
    fp16_64.dtype = fp16_64.out_dtype = ZYFA_DTYPE_FP16;
    fp16_64.head_dim_qk = fp16_64.head_dim_v = 64;
    check_gpu_case(fp16_64, "fp16 causal hd64 s=400");
    CaseShape bf16_192 = bf16;
    bf16_192.mask = ZYFA_MASK_NONE;
    bf16_192.seqlen_q = 130;
    bf16_192.seqlen_k = 600;
    bf16_192.head_dim_qk = 192;
    check_gpu_case(bf16_192, "bf16 none 130x600 hd192/128");
    // 16-bit hd256: two stages of 64 keys, halves freed apart; 400 keys wrap the ring three times.
    CaseShape bf16_256 = bf16;
    bf16_256.seqlen_q = bf16_256.seqlen_k = 400;
    bf16_256.head_dim_qk = bf16_256.head_dim_v = 256;
    check_gpu_case(bf16_256, "bf16 causal hd256 s=400");

    CaseShape lean = mode_shape(kE4m3fnLean);  // with descales
    lean.batch = 3;
    lean.lengths_q = {1, 0, 70};
    lean.lengths_k = {1, 5, 70};
    lean.seqlen_q = lean.seqlen_k = 70;
    lean.heads_q = 4;
    lean.heads_kv = 2;
    check_gpu_case(lean, "e4m3fn-lean varlen {1,0,70} gqa 4/2 hd64");

    // hd128 FP8 LEAN runs the sm_90a warp-specialised kernel: 300 keys wrap its three-stage K/V
    // ring (producer copies, V transpose, mbarriers) so racecheck sees reuse.
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

    CaseShape exact = mode_shape(kE4m3fnExact);  // with descales; the ws kernel on sm_90a
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

    // No keys: seqlen_k = 0 with K and V NULL (memcheck would see a read through them), FP8 LEAN,
    // BF16 and FP8 EXACT; then varlen with empty key sequences beside non-empty ones.
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

bool is_hopper() {
    const auto& device = session().runtime->device();
    return device.compute_major == 9 && device.compute_minor == 0;
}

// sm_90a: paged FP8 at page 16, 130 queries against 650 cached keys (bottom-right causal): six
// 128-key blocks, so the three stages and three staging buffers are each reused, and the last
// block ends inside a page (warp 0's cp.async tail). Bitwise against the contiguous call.
void test_paged_fp8_producer(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no warp-specialised paged kernels\n");
        return;
    }
    for (const zyfa_test::DtypeMode& m : {kE4m3fnLean, kE4m3fnExact}) {
        CaseShape s = mode_shape(m);  // with descales
        s.seqlen_q = 130;
        s.seqlen_k = 1000;
        s.heads_q = 2;
        s.heads_kv = 1;
        s.head_dim_qk = s.head_dim_v = 128;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        expect_paged_equals_contiguous(s, 16, std::string("paged page 16 ") + m.name, "ws_paged");
    }
}

// sm_90a: FP8 V in the transposed layout, 130 queries against 1,000 keys (bottom-right causal):
// eight 128-key blocks, so the ring of two or three stages wraps at least twice before the last
// block, which ends inside a 16-key group (the tail that every producer thread writes), NaN padding.
// At 650 keys the tail's stage had been used once before and a wrong wait went unseen.
void test_v_transposed_producer(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no warp-specialised kernels\n");
        return;
    }
    for (const zyfa_test::DtypeMode& m : {kE4m3fnLean, kE4m3fnExact}) {
        CaseShape s = mode_shape(m);
        s.seqlen_q = 130;
        s.seqlen_k = 1000;
        s.heads_q = 2;
        s.heads_kv = 1;
        s.head_dim_qk = s.head_dim_v = 128;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        VTransposedLayout nan_padding;
        nan_padding.padding_byte = 0xFF;
        expect_transposed_equals_row_major(s, nan_padding, std::string("v transposed ") + m.name);
    }
}

// sm_90a: the cp.async producer on problems the tensor maps would take (the ring wraps), FP8 LEAN
// (V transposed by the producer) and BF16 (V used as it lands).
void test_cp_async_producer(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no warp-specialised kernels\n");
        return;
    }
    std::string error;
    zyfa_context* cp_async = cuda_context_with(zyfa::cuda::CudaKernelChoice::CpAsync, &error);
    if (!cp_async) {
        std::printf("  the cp.async seam's context: %s\n", error.c_str());
        fail();
    }
    Session& s = session();
    zyfa_context* const saved = s.cuda;
    s.cuda = cp_async;
    check_gpu_case(causal_lean_gqa_2_1(300, 128), "cp.async e4m3fn-lean causal s=300 gqa 2/1 hd128");
    CaseShape bf16;
    bf16.dtype = ZYFA_DTYPE_BF16;
    bf16.out_dtype = ZYFA_DTYPE_BF16;
    bf16.seqlen_q = bf16.seqlen_k = 400;
    bf16.head_dim_qk = bf16.head_dim_v = 128;
    check_gpu_case(bf16, "cp.async bf16 causal hd128 s=400");
    bf16.head_dim_qk = bf16.head_dim_v = 256;  // two stages, K's and V's halves freed apart
    check_gpu_case(bf16, "cp.async bf16 causal hd256 s=400");
    s.cuda = saved;
    zyfa_context_destroy(cp_async);
}

// sm_90a: O one element past an aligned address, so the ws kernels' pairs would be misaligned and
// the plan runs the mma.sync kernel (memcheck fails a misaligned 8-byte fp32 or 4-byte bf16 store).
void test_unpaired_output(void**) {
    if (!is_hopper()) {
        std::printf("  not sm_90a: no warp-specialised kernels\n");
        return;
    }
    Session& s = session();
    for (zyfa_dtype out : {ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16}) {
        guarded([&] {
            CaseShape shape = causal_lean_gqa_2_1(130, 128);
            shape.out_dtype = out;
            GpuCase c(*s.runtime, shape);
            const size_t elem = zyfa::cpu::dtype_size(out);
            DeviceBuffer shifted(*s.runtime, c.host.o.size() + elem);
            c.to.data = static_cast<uint8_t*>(shifted.data()) + elem;
            const zyfa_status st = c.launch(s.cuda, s.stream);
            if (st != ZYFA_SUCCESS) {
                std::printf("  zyfa_attn_fwd into O + 1 element: %s: %s\n", zyfa_status_string(st),
                            zyfa_last_error_message());
                fail();
            }
            s.runtime->synchronize_stream(s.stream);
            std::printf("  e4m3fn-lean causal s=130 hd128 out %d into O + 1 element: %s\n", static_cast<int>(out),
                        shifted.guard_intact() ? "ran" : "GUARD BAND OVERWRITTEN");
            assert_true(shifted.guard_intact());
        });
    }
}

}  // namespace

void test_merge(void**) {
    MergeGpuShape s;
    s.batch = 3;
    s.lengths = {4, 0, 7};
    s.head_dim = 129;
    s.out_dtype = ZYFA_DTYPE_BF16;
    check_merge_case(s, "merge packed 4, 0, 7 d129");
}

int main(void) {
    if (const int rc = open_session_or_skip("gpu_sanitizer_case")) return rc;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_small_cases), cmocka_unit_test(test_cp_async_producer),
                                       cmocka_unit_test(test_paged_fp8_producer),
                                       cmocka_unit_test(test_v_transposed_producer),
                                       cmocka_unit_test(test_unpaired_output), cmocka_unit_test(test_merge)};
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
