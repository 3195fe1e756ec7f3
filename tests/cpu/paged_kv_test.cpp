// Paged K/V on the CPU backend (include/zyfa.h, params.block_table): the same keys read through a
// block table from page pools give the contiguous call's O and lse bit for bit, at page sizes 1
// to 256, with packed (varlen) queries and per-sequence key counts, GQA, every input dtype and
// softmax mode, bottom-right causal chunks and both key-block sizes; the fp64 reference reads the
// pools the same way; malformed paged requests are INVALID_ARGUMENT naming the field and write
// nothing.
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "reference_check.hpp"
#include "support/attention_modes.hpp"
#include "support/paged_case.hpp"

using namespace zyfa_test;

namespace {

zyfa_context* g_ctx = nullptr;

// A chunk of queries against a longer cache (bottom-right causal), GQA 4/2, several key blocks.
CaseShape chunk_shape(const DtypeMode& m) {
    CaseShape s = mode_shape(m);
    s.seqlen_q = 70;
    s.seqlen_k = 300;
    s.heads_q = 4;
    s.heads_kv = 2;
    s.batch = 2;
    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    return s;
}

// Packed queries, each sequence with its own key count (seqused_k), one of them with no key.
CaseShape varlen_shape(const DtypeMode& m) {
    CaseShape s = mode_shape(m);
    s.batch = 4;
    s.lengths_q = {33, 1, 64, 5};
    s.lengths_k = {200, 17, 64, 0};
    s.seqlen_q = 64;
    s.seqlen_k = 200;
    s.heads_q = 6;
    s.heads_kv = 2;
    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    return s;
}

bool same_bits(const AttentionCase& a, const AttentionCase& b) {
    return a.o == b.o && std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0;
}

// Runs the case contiguous and paged (into a second copy of its outputs): bitwise equal.
void expect_paged_equals_contiguous(const CaseShape& s, const PagedLayout& layout, const std::string& label) {
    AttentionCase contiguous(s), paged_out(s);
    assert_int_equal(contiguous.run(g_ctx), ZYFA_SUCCESS);
    PagedKv paged(contiguous, layout);
    paged.params.lse = paged_out.lse.data();
    const zyfa_status st = zyfa_attn_fwd(g_ctx, &paged.params, &contiguous.tq, &paged.tk, &paged.tv, &paged_out.to, nullptr);
    if (st != ZYFA_SUCCESS) std::printf("  %s: %s\n", label.c_str(), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_SUCCESS);
    const bool equal = same_bits(contiguous, paged_out);
    std::printf("  %-40s page %3d: paged %s contiguous\n", label.c_str(), layout.page_size,
                equal ? "==" : "DIFFERS FROM");
    assert_true(equal);
}

const int32_t kPageSizes[] = {1, 3, 16, 64, 256};

void test_paged_equals_contiguous_every_mode(void**) {
    for (const DtypeMode& m : all_modes()) {
        for (int32_t ps : kPageSizes) {
            PagedLayout layout;
            layout.page_size = ps;
            expect_paged_equals_contiguous(chunk_shape(m), layout, std::string("chunk ") + m.name);
        }
    }
}

void test_paged_varlen_queries_and_seqused(void**) {
    for (const DtypeMode& m : all_modes()) {
        for (int32_t ps : {1, 16, 128}) {
            PagedLayout layout;
            layout.page_size = ps;
            layout.row_padding = 16;  // pools with their own row stride
            expect_paged_equals_contiguous(varlen_shape(m), layout, std::string("varlen ") + m.name);
        }
    }
}

// Paged K/V with attention sinks, every mode (the INT8 Q/K mode included: INT8 + paged + sinks):
// still the contiguous call's bits, and the sinks change the result.
void test_paged_with_sinks_every_mode(void**) {
    for (const DtypeMode& m : all_modes()) {
        CaseShape s = chunk_shape(m);
        s.sinks = {0.5f, -1.0f, 3.0f, -std::numeric_limits<float>::infinity()};  // heads_q = 4
        PagedLayout layout;
        layout.page_size = 16;
        expect_paged_equals_contiguous(s, layout, std::string("sinks ") + m.name);
        AttentionCase with_sinks(s), without(chunk_shape(m));
        assert_int_equal(with_sinks.run(g_ctx), ZYFA_SUCCESS);
        assert_int_equal(without.run(g_ctx), ZYFA_SUCCESS);
        assert_false(with_sinks.o == without.o);
    }
}

// Both key-block sizes (LEAN's block scales follow them), top-left causal, no mask, and a window.
void test_paged_key_blocks_and_masks(void**) {
    for (const DtypeMode& m : {kE4m3fnLean, kBf16}) {
        for (int32_t key_block : {64, 128}) {
            for (zyfa_mask mask : {ZYFA_MASK_NONE, ZYFA_MASK_CAUSAL, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT}) {
                CaseShape s = chunk_shape(m);
                s.key_block = key_block;
                s.mask = mask;
                s.window_left = mask == ZYFA_MASK_CAUSAL ? 100 : -1;
                PagedLayout layout;
                layout.page_size = 32;
                expect_paged_equals_contiguous(
                    s, layout, std::string(m.name) + " bk" + std::to_string(key_block) + " mask " + std::to_string(mask));
            }
        }
    }
}

// The fp64 reference reads the same pools: the paged call is within the contiguous bounds of it.
void test_paged_reference(void**) {
    for (const DtypeMode& m : {kE4m3fnLean, kE4m3fnExact, kBf16, kInt8qkExact, kInt8qkLean}) {
        CaseShape s = varlen_shape(m);
        if (m.dtype == ZYFA_DTYPE_INT8) s.sinks = {0.5f, -1.0f, 2.0f, 0.0f, -3.0f, 1.0f};  // INT8 + paged + sinks
        AttentionCase c(s);
        PagedLayout layout;
        layout.page_size = 16;
        PagedKv paged(c, layout);
        assert_int_equal(zyfa_attn_fwd(g_ctx, &paged.params, &c.tq, &paged.tk, &paged.tv, &c.to, nullptr), ZYFA_SUCCESS);
        const zyfa::AttnProblem problem =
            zyfa::validate_attn(&paged.params, &c.tq, &paged.tk, &paged.tv, &c.to, ZYFA_BACKEND_CPU);
        assert_true(problem.paged());
        const ErrorStats e = compare(c, zyfa::cpu::attention_reference_fp64(problem));
        std::printf("  paged %-16s vs fp64: rel_rms %.2e (tol %.1e)\n", m.name, e.rel_rms,
                    o_tolerance(s.dtype, problem.softmax, s.out_dtype));
        assert_true(e.rel_rms <= o_tolerance(s.dtype, problem.softmax, s.out_dtype));
        assert_int_equal(e.lse_mismatched_infinities, 0);
    }
}

// Each malformed paged request: INVALID_ARGUMENT, the message names the field, nothing written.
void test_paged_invalid(void**) {
    const CaseShape s = varlen_shape(kE4m3fnLean);
    struct Bad {
        const char* field;
        void (*spoil)(PagedKv&);
    };
    const Bad bads[] = {
        {"params.page_size", [](PagedKv& p) { p.params.page_size = 0; }},
        {"params.page_size", [](PagedKv& p) { p.params.page_size = 257; }},
        {"params.block_table_stride", [](PagedKv& p) { p.params.block_table_stride = 1; }},
        {"params.num_pages", [](PagedKv& p) { p.params.num_pages = 0; }},
        {"params.num_pages", [](PagedKv& p) { p.params.num_pages = -1; }},
        {"params.seqused_k[1]", [](PagedKv& p) { p.seqused_k[1] = 201; }},
        {"params.seqused_k[2]", [](PagedKv& p) { p.seqused_k[2] = -1; }},
        {"params.block_table[0", [](PagedKv& p) { p.block_table[3] = static_cast<int32_t>(p.num_pages); }},
        {"params.block_table[2", [](PagedKv& p) { p.block_table[2 * p.block_table_stride] = -1; }},
        {"params.cu_seqlens_k", [](PagedKv& p) { p.params.cu_seqlens_k = p.params.cu_seqlens_q; }},
        {"params.block_table", [](PagedKv& p) { p.params.block_table = reinterpret_cast<const int32_t*>(
                                                   reinterpret_cast<const char*>(p.block_table.data()) + 2); }},
        {"k.stride_batch = 16 makes pages overlap", [](PagedKv& p) { p.tk.stride_batch = 16; }},
    };
    for (const Bad& bad : bads) {
        AttentionCase c(s);
        PagedKv paged(c, PagedLayout{});
        bad.spoil(paged);
        const zyfa_status st = zyfa_attn_fwd(g_ctx, &paged.params, &c.tq, &paged.tk, &paged.tv, &c.to, nullptr);
        std::printf("  %-28s -> %s: %s\n", bad.field, zyfa_status_string(st), zyfa_last_error_message());
        assert_int_equal(st, ZYFA_ERROR_INVALID_ARGUMENT);
        assert_non_null(std::strstr(zyfa_last_error_message(), bad.field));
        for (uint8_t byte : c.o) assert_int_equal(byte, 0xA5);  // the sentinel: nothing written
    }
    // Contiguous requests with a paged field set.
    AttentionCase c(chunk_shape(kBf16));
    int32_t used[2] = {300, 300};
    c.params.seqused_k = used;
    assert_int_equal(c.run(g_ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(zyfa_last_error_message(), "params.seqused_k"));
    c.params.seqused_k = nullptr;
    c.params.page_size = 16;
    assert_int_equal(c.run(g_ctx), ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(zyfa_last_error_message(), "params.page_size"));
    c.params.page_size = 0;
    // A struct of 0.1.3's size never reads the paged fields, whatever its memory holds there.
    c.params.page_size = 16;
    c.params.struct_size = static_cast<uint32_t>(offsetof(zyfa_attn_params, sinks));
    assert_int_equal(c.run(g_ctx), ZYFA_SUCCESS);
}

}  // namespace

int main() {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU;
    if (zyfa_context_create(&opts, &g_ctx) != ZYFA_SUCCESS) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paged_equals_contiguous_every_mode),
        cmocka_unit_test(test_paged_varlen_queries_and_seqused),
        cmocka_unit_test(test_paged_with_sinks_every_mode),
        cmocka_unit_test(test_paged_key_blocks_and_masks),
        cmocka_unit_test(test_paged_reference),
        cmocka_unit_test(test_paged_invalid),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    zyfa_context_destroy(g_ctx);
    return failed;
}
