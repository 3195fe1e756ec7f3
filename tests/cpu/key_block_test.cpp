// params.key_block on the CPU backend, through the public API: 0 is the CPU's own 64 bit for bit,
// 128 is the numerics model with 128-key steps (the CUDA LEAN instance), different bits for LEAN
// wherever a row spans several key blocks, within the same fp64 bounds as 64; a caller whose
// struct_size ends before the field gets 0, whatever its memory holds there.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/attention_blocked.hpp"
#include "reference_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_test;

namespace {

zyfa_context* g_ctx = nullptr;

// Several key blocks at either size (513 = four 128-key blocks and one key), rows of every length.
CaseShape multi_block(const DtypeMode& m, int32_t key_block) {
    CaseShape s = mode_shape(m);
    s.seqlen_q = 300;
    s.seqlen_k = 513;
    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.heads_q = 4;
    s.heads_kv = 2;
    s.key_block = key_block;
    return s;
}

struct Run {
    std::vector<uint8_t> o;
    std::vector<float> lse;
    std::string kernel;
};

Run run(const CaseShape& s) {
    AttentionCase c(s);
    const char* name = zyfa_attn_kernel_name(g_ctx, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
    if (name == nullptr || c.run(g_ctx) != ZYFA_SUCCESS) {
        std::printf("  key_block %d: %s\n", s.key_block, zyfa_last_error_message());
        fail();
    }
    return Run{c.o, c.lse, name};
}

bool same_bits(const Run& a, const Run& b) {
    return a.o == b.o && a.lse.size() == b.lse.size() &&
           std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0;
}

// 0 asks for the backend's own step, which on the CPU is 64: same kernel, same bits.
void test_zero_is_64_bitwise(void**) {
    for (const DtypeMode& m : all_modes()) {
        const Run own = run(multi_block(m, 0)), explicit64 = run(multi_block(m, 64));
        std::printf("  %-16s key_block 0: %s, 64: %s, bitwise %s\n", m.name, own.kernel.c_str(),
                    explicit64.kernel.c_str(), same_bits(own, explicit64) ? "equal" : "DIFFERENT");
        assert_true(same_bits(own, explicit64));
        assert_string_equal(own.kernel.c_str(), explicit64.kernel.c_str());
        assert_non_null(std::strstr(own.kernel.c_str(), "_bk64"));
    }
}

// 128 through the API is exactly the model with key_block = 128 (what the CUDA LEAN instance
// computes), and the kernel name says so.
void test_128_is_the_128_key_model(void**) {
    for (const DtypeMode& m : all_modes()) {
        const CaseShape s = multi_block(m, 128);
        const Run api = run(s);
        assert_non_null(std::strstr(api.kernel.c_str(), "_bk128"));
        AttentionCase c(s);
        const zyfa::AttnProblem problem = zyfa::validate_attn(&c.params, &c.tq, &c.tk, &c.tv, &c.to, ZYFA_BACKEND_CPU);
        assert_int_equal(problem.key_block, 128);
        zyfa::cpu::NumericsModel model = zyfa::cpu::NumericsModel::for_problem(problem);
        assert_int_equal(model.key_block, 128);
        zyfa::cpu::WorkerPool pool(2);
        zyfa::cpu::attention_blocked(problem, model, pool);
        std::printf("  %-16s %s equals the 128-key model: %s\n", m.name, api.kernel.c_str(),
                    c.o == api.o ? "yes" : "NO");
        assert_true(c.o == api.o);
    }
}

// LEAN's block scales follow the block boundaries: 128 gives other bits than 64 on rows that span
// several blocks, and stays within LEAN's fp64 bound. EXACT and the 16-bit modes honour it too
// (their bits may move only in the last place): within their bounds.
void test_128_changes_lean_bits_within_bounds(void**) {
    for (const DtypeMode& m : all_modes()) {
        const ErrorStats e128 = check_case(g_ctx, multi_block(m, 128), (std::string(m.name) + " key_block 128").c_str());
        const ErrorStats e64 = check_case(g_ctx, multi_block(m, 64), (std::string(m.name) + " key_block 64").c_str());
        const Run a = run(multi_block(m, 64)), b = run(multi_block(m, 128));
        size_t differing = 0;
        for (size_t i = 0; i < a.o.size(); ++i) differing += a.o[i] != b.o[i];
        std::printf("  %-16s 64 vs 128: %zu of %zu output bytes differ; rel_rms 64 %.3e, 128 %.3e\n", m.name, differing,
                    a.o.size(), e64.rel_rms, e128.rel_rms);
        if (m.softmax == ZYFA_SOFTMAX_LEAN) assert_true(differing > 0);
    }
}

// A caller built before key_block passes struct_size = offsetof(key_block): whatever its memory
// holds there (128 here, or garbage) is not read, so the call is key_block 0. A struct_size that
// cuts key_block in two gives it its default too.
void test_older_struct_size_is_zero(void**) {
    const Run own = run(multi_block(kE4m3fnLean, 0));
    const Run step128 = run(multi_block(kE4m3fnLean, 128));
    assert_false(same_bits(own, step128));
    const size_t ends[] = {offsetof(zyfa_attn_params, key_block), offsetof(zyfa_attn_params, key_block) + 2};
    for (size_t end : ends) {
        for (int32_t beyond : {128, static_cast<int32_t>(0xCDCDCDCD)}) {
            AttentionCase c(multi_block(kE4m3fnLean, beyond));
            c.params.reserved = -1;  // beyond struct_size too: not read
            c.params.struct_size = static_cast<uint32_t>(end);
            assert_int_equal(zyfa_attn_supported(g_ctx, &c.params, &c.tq, &c.tk, &c.tv, &c.to), ZYFA_SUCCESS);
            assert_int_equal(c.run(g_ctx), ZYFA_SUCCESS);
            const char* name = zyfa_attn_kernel_name(g_ctx, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
            assert_non_null(name);
            const Run older{c.o, c.lse, name};
            std::printf("  struct_size %zu, key_block bytes hold %d: %s, %s key_block 0\n", end, beyond,
                        older.kernel.c_str(), same_bits(older, own) ? "bitwise" : "DIFFERS FROM");
            assert_true(same_bits(older, own));
            assert_string_equal(older.kernel.c_str(), own.kernel.c_str());
        }
    }
    // Through key_block, reserved cut in two: key_block is read, reserved takes its default.
    AttentionCase c(multi_block(kE4m3fnLean, 128));
    c.params.reserved = -1;
    c.params.struct_size = static_cast<uint32_t>(offsetof(zyfa_attn_params, reserved) + 1);
    assert_int_equal(c.run(g_ctx), ZYFA_SUCCESS);
    assert_true(same_bits(Run{c.o, c.lse, ""}, step128));
}

int setup(void**) {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU;
    return zyfa_context_create(&opts, &g_ctx) == ZYFA_SUCCESS ? 0 : -1;
}
int teardown(void**) {
    zyfa_context_destroy(g_ctx);
    return 0;
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_is_64_bitwise),
        cmocka_unit_test(test_128_is_the_128_key_model),
        cmocka_unit_test(test_128_changes_lean_bits_within_bounds),
        cmocka_unit_test(test_older_struct_size_is_zero),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
