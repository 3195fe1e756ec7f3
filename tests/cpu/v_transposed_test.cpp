// FP8 V in the transposed layout on the CPU backend (include/zyfa.h, ZYFA_ATTN_V_TRANSPOSED and
// ZYFA_QUANT_V_TRANSPOSED; kernels/common/v_transposed.h): the same values read from the layout give
// the row-major call's O and lse bit for bit, in every FP8 mode (the INT8 Q/K mode's v too), with
// lengths that end inside a 16-key group, GQA, windows, bottom-right chunks, descales, sinks,
// padding keys that hold NaN and groups further apart than the kernels' layout; zyfa_quantize_fp8
// writes each code where the layout puts it, zeros in the padding, the row-major call's descales;
// malformed requests are INVALID_ARGUMENT naming the field and write nothing.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "reference_check.hpp"
#include "support/attention_modes.hpp"
#include "support/v_transposed_case.hpp"

using namespace zyfa_test;

namespace {

zyfa_context* g_ctx = nullptr;

bool same_bits(const AttentionCase& a, const AttentionCase& b) {
    return a.o == b.o && std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0;
}

// Runs the case row-major and transposed (into a second copy of its outputs): bitwise equal.
void expect_transposed_equals_row_major(const CaseShape& s, const VTransposedLayout& layout, const std::string& label) {
    AttentionCase row_major(s), transposed_out(s);
    assert_int_equal(row_major.run(g_ctx), ZYFA_SUCCESS);
    VTransposed vt(row_major, layout);
    vt.params.lse = transposed_out.lse.data();
    const zyfa_status st =
        zyfa_attn_fwd(g_ctx, &vt.params, &row_major.tq, &row_major.tk, &vt.tv, &transposed_out.to, nullptr);
    if (st != ZYFA_SUCCESS) std::printf("  %s: %s\n", label.c_str(), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_SUCCESS);
    const bool equal = same_bits(row_major, transposed_out);
    std::printf("  %-52s transposed V %s row-major\n", label.c_str(), equal ? "==" : "DIFFERS FROM");
    assert_true(equal);
}

const DtypeMode kModes[] = {kE4m3fnExact, kE4m3fnLean, kE4m3fnuzExact, kE4m3fnuzLean, kInt8qkExact, kInt8qkLean};

void test_every_fp8_mode_and_length(void**) {
    for (const DtypeMode& m : kModes) {
        for (int64_t keys : {1, 5, 16, 100, 128, 300}) {
            CaseShape s = mode_shape(m);
            s.seqlen_q = keys < 64 ? keys : 64;
            s.seqlen_k = keys;
            s.heads_q = 4;
            s.heads_kv = 2;
            s.batch = 2;
            s.descales = true;
            expect_transposed_equals_row_major(s, VTransposedLayout(),
                                               std::string(m.name) + " causal, " + std::to_string(keys) + " keys");
        }
    }
}

// Head dims 128 and 192/128, bottom-right chunks, windows, sinks, NaN padding, spaced groups.
void test_shapes_masks_and_padding(void**) {
    for (const DtypeMode& m : {kE4m3fnExact, kE4m3fnLean}) {
        CaseShape s = mode_shape(m);
        s.seqlen_q = 70;
        s.seqlen_k = 333;
        s.heads_q = 6;
        s.heads_kv = 2;
        s.head_dim_qk = 192;
        s.head_dim_v = 128;
        s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.sinks = {0.5f, -1.0f, 2.0f, -0.25f, 0.0f, 1.5f};
        VTransposedLayout nan_padding;
        nan_padding.padding_byte = 0xFF;  // NaN in e4m3fn
        expect_transposed_equals_row_major(s, nan_padding, std::string(m.name) + " 192/128 chunk, sinks, NaN padding");
        s.head_dim_qk = 128;
        s.mask = ZYFA_MASK_NONE;
        s.window_left = 40;
        s.window_right = 3;
        s.sinks.clear();
        VTransposedLayout spaced;
        spaced.group_padding = 48;
        expect_transposed_equals_row_major(s, spaced, std::string(m.name) + " 128, window, groups 48 apart");
    }
}

// zyfa_quantize_fp8 with ZYFA_QUANT_V_TRANSPOSED against the row-major call on the same input: the
// same descales, every code at its place in the layout, the padding keys 0.
void test_quantize_writes_the_layout(void**) {
    const int64_t batch = 2, seqlen = 150, heads = 3, dim = 64;
    std::vector<float> in(static_cast<size_t>(batch * seqlen * heads * dim));
    std::mt19937_64 rng(11);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (float& x : in) x = normal(rng);
    for (uint32_t extra : {0u, ZYFA_QUANT_HADAMARD}) {
        zyfa_quant_params p;
        zyfa_quant_params_init(&p, sizeof p);
        p.flags = extra;
        p.batch = batch;
        p.seqlen = seqlen;
        p.heads = heads;
        p.head_dim = dim;
        zyfa_tensor tin;
        std::memset(&tin, 0, sizeof tin);
        tin.data = in.data();
        tin.dtype = ZYFA_DTYPE_FP32;
        tin.stride_head = dim;
        tin.stride_seq = heads * dim;
        tin.stride_batch = seqlen * heads * dim;
        std::vector<uint8_t> row_major(in.size(), 0xEE);
        zyfa_tensor tout = tin;
        tout.data = row_major.data();
        tout.dtype = ZYFA_DTYPE_FP8_E4M3FN;
        std::vector<float> descale(static_cast<size_t>(batch * heads)), descale_vt(descale.size());
        assert_int_equal(zyfa_quantize_fp8(g_ctx, &p, &tin, &tout, descale.data(), nullptr), ZYFA_SUCCESS);

        const int64_t group_stride = zyfa::numerics::kVtGroupKeys * dim;
        const int64_t head_stride = zyfa::numerics::vt_groups(seqlen) * group_stride;
        std::vector<uint8_t> vt(static_cast<size_t>(batch * heads * head_stride), 0xEE);
        zyfa_tensor tvt;
        std::memset(&tvt, 0, sizeof tvt);
        tvt.data = vt.data();
        tvt.dtype = ZYFA_DTYPE_FP8_E4M3FN;
        tvt.stride_seq = group_stride;
        tvt.stride_head = head_stride;
        tvt.stride_batch = heads * head_stride;
        p.flags = extra | ZYFA_QUANT_V_TRANSPOSED;
        const zyfa_status st = zyfa_quantize_fp8(g_ctx, &p, &tin, &tvt, descale_vt.data(), nullptr);
        if (st != ZYFA_SUCCESS) std::printf("  quantize transposed: %s\n", zyfa_last_error_message());
        assert_int_equal(st, ZYFA_SUCCESS);
        assert_memory_equal(descale.data(), descale_vt.data(), descale.size() * sizeof(float));
        int64_t misplaced = 0, padding_nonzero = 0;
        for (int64_t b = 0; b < batch; ++b)
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t j = 0; j < zyfa::numerics::vt_padded_keys(seqlen); ++j)
                    for (int64_t d = 0; d < dim; ++d) {
                        const uint8_t code =
                            vt[static_cast<size_t>(b * tvt.stride_batch + h * head_stride +
                                                   zyfa::numerics::vt_offset(j, d, group_stride))];
                        if (j >= seqlen) {
                            padding_nonzero += code != 0;
                        } else {
                            misplaced += code != row_major[static_cast<size_t>(b * tin.stride_batch + j * tin.stride_seq +
                                                                               h * dim + d)];
                        }
                    }
        std::printf("  quantize %s: %lld codes misplaced, %lld padding bytes nonzero\n",
                    extra ? "Hadamard + transposed" : "transposed", static_cast<long long>(misplaced),
                    static_cast<long long>(padding_nonzero));
        assert_int_equal(misplaced, 0);
        assert_int_equal(padding_nonzero, 0);
    }
}

// The caller's errors: INVALID_ARGUMENT naming the field, nothing written.
void expect_invalid(const zyfa_attn_params& p, AttentionCase& c, const zyfa_tensor& tv, const char* field) {
    const zyfa_status st = zyfa_attn_fwd(g_ctx, &p, &c.tq, &c.tk, &tv, &c.to, nullptr);
    std::printf("  %-24s %s: %s\n", field, zyfa_status_string(st), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(zyfa_last_error_message(), field));
    for (uint8_t byte : c.o) assert_int_equal(byte, AttentionCase::kOutputSentinel);
}

void test_invalid_requests(void**) {
    CaseShape s = mode_shape(kE4m3fnLean);
    s.seqlen_k = 100;
    AttentionCase c(s);
    VTransposed vt(c);
    zyfa_attn_params p = vt.params;
    p.flags = ZYFA_ATTN_V_TRANSPOSED | 2u;
    expect_invalid(p, c, vt.tv, "params.flags");
    p = vt.params;
    zyfa_tensor narrow = vt.tv;
    narrow.stride_seq = 16 * s.head_dim_v - 16;  // groups overlap
    expect_invalid(p, c, narrow, "v.stride_seq");
    CaseShape bf = mode_shape(kBf16);
    AttentionCase c16(bf);
    zyfa_attn_params p16 = c16.params;
    p16.flags = ZYFA_ATTN_V_TRANSPOSED;
    expect_invalid(p16, c16, c16.tv, "v.dtype");
    CaseShape packed = mode_shape(kE4m3fnLean);
    packed.batch = 2;
    packed.lengths_q = {10, 20};
    packed.lengths_k = {30, 40};
    packed.seqlen_q = 20;
    packed.seqlen_k = 40;
    AttentionCase cv(packed);
    zyfa_attn_params pv = cv.params;
    pv.flags = ZYFA_ATTN_V_TRANSPOSED;
    expect_invalid(pv, cv, cv.tv, "params.cu_seqlens_k");

    // zyfa_quantize_int8 writes Q and K, never V; the layout needs fixed lengths.
    std::vector<float> in(64 * 64, 1.0f);
    std::vector<uint8_t> out(64 * 64 * 2);
    std::vector<float> descale(64);
    zyfa_quant_params q;
    zyfa_quant_params_init(&q, sizeof q);
    q.batch = 1;
    q.seqlen = 64;
    q.heads = 1;
    q.head_dim = 64;
    q.scale_rows = 1;
    q.flags = ZYFA_QUANT_V_TRANSPOSED;
    zyfa_tensor tin;
    std::memset(&tin, 0, sizeof tin);
    tin.data = in.data();
    tin.dtype = ZYFA_DTYPE_FP32;
    tin.stride_head = 64;
    tin.stride_seq = 64;
    tin.stride_batch = 64 * 64;
    zyfa_tensor tout = tin;
    tout.data = out.data();
    tout.dtype = ZYFA_DTYPE_INT8;
    zyfa_status st = zyfa_quantize_int8(g_ctx, &q, &tin, &tout, descale.data(), nullptr);
    std::printf("  quantize_int8 transposed: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_ERROR_INVALID_ARGUMENT);
    assert_non_null(std::strstr(zyfa_last_error_message(), "ZYFA_QUANT_V_TRANSPOSED"));
}

}  // namespace

int main() {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU;
    if (zyfa_context_create(&opts, &g_ctx) != ZYFA_SUCCESS) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fp8_mode_and_length),
        cmocka_unit_test(test_shapes_masks_and_padding),
        cmocka_unit_test(test_quantize_writes_the_layout),
        cmocka_unit_test(test_invalid_requests),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    zyfa_context_destroy(g_ctx);
    return failed;
}
