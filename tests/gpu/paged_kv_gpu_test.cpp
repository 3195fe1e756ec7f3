// Paged K/V on the CUDA backend (include/zyfa.h, params.block_table; the ws_paged kernels of
// kernels/nvidia/attention_kernel_variants.def): the same keys read through a block table from
// page pools give the contiguous kernel's O and lse bit for bit, at page sizes 1 to 256 (1 and 3:
// the cp.async gather; powers of two >= 8: one TMA copy per page piece), with tails that end inside
// a page (the pools' other rows hold NaN: tests/support/paged_case.hpp), bottom-right causal
// chunks, GQA, packed queries with per-sequence key counts, FP16, BF16 and FP8 EXACT and LEAN.
// Exits 77 (skipped) without a CUDA device.
#include <cstdio>
#include <cstring>
#include <string>

#include "gpu_session.hpp"
#include "paged_gpu_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;

namespace {

constexpr const char* kPagedKernel = "ws_paged";

CaseShape hd128(const zyfa_test::DtypeMode& m) {
    CaseShape s = zyfa_test::mode_shape(m);
    s.head_dim_qk = s.head_dim_v = 128;
    return s;
}

// A chunk of 200 queries against 1,000 cached keys (bottom-right causal): the last block of every
// tile ends inside a page for most page sizes; GQA 4/2, two sequences.
void paged_chunk_every_page_size(void**) {
    for (const zyfa_test::DtypeMode& m : zyfa_test::nvidia_modes()) {
        CaseShape s = hd128(m);
        s.batch = 2;
        s.seqlen_q = 200;
        s.seqlen_k = 1000;
        s.heads_q = 4;
        s.heads_kv = 2;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        for (int32_t ps : {1, 3, 8, 16, 32, 64, 128, 256})
            expect_paged_equals_contiguous(s, ps, std::string("chunk ") + m.name, kPagedKernel);
    }
}

// Square causal prefill (the benchmark's shape, shorter): every block whole, the TMA path alone.
void paged_square_causal(void**) {
    for (const zyfa_test::DtypeMode& m : zyfa_test::nvidia_modes()) {
        CaseShape s = hd128(m);
        s.seqlen_q = s.seqlen_k = 2048;
        s.heads_q = s.heads_kv = 2;
        for (int32_t ps : {16, 256})
            expect_paged_equals_contiguous(s, ps, std::string("square 2048 ") + m.name, kPagedKernel);
    }
}

// Packed queries, each sequence with its own key count (one with none): the cp.async gather.
void paged_varlen_seqused(void**) {
    for (const zyfa_test::DtypeMode& m : zyfa_test::nvidia_modes()) {
        CaseShape s = hd128(m);
        s.batch = 4;
        s.lengths_q = {130, 1, 64, 7};
        s.lengths_k = {700, 17, 64, 0};
        s.seqlen_q = 130;
        s.seqlen_k = 700;
        s.heads_q = 8;
        s.heads_kv = 2;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        for (int32_t ps : {1, 16, 256})
            expect_paged_equals_contiguous(s, ps, std::string("varlen ") + m.name, kPagedKernel);
    }
}

// What the CUDA backend refuses: paged at a head dim without a paged kernel is NOT_SUPPORTED.
void paged_refusals(void**) {
    Session& s = session();
    CaseShape shape = hd128(zyfa_test::kBf16);
    shape.head_dim_qk = shape.head_dim_v = 64;
    GpuCase c(*s.runtime, shape);
    PagedLayout layout;
    DevicePaged paged(*s.runtime, c, layout);
    const zyfa_status st = zyfa_attn_supported(s.cuda, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
    std::printf("  paged head dim 64: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_ERROR_NOT_SUPPORTED);
}

}  // namespace

int main() {
    const int status = open_session_or_skip("gpu_paged_kv");
    if (status != 0) return status;
    const CMUnitTest tests[] = {
        cmocka_unit_test(paged_chunk_every_page_size),
        cmocka_unit_test(paged_square_causal),
        cmocka_unit_test(paged_varlen_seqused),
        cmocka_unit_test(paged_refusals),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
