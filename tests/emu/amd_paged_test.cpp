// Paged K/V on the AMD path in the emulator (libzyfa.so's HIP backend over the HIP stand-in): the
// HIP C++ paged kernels (kernels/amd/attention_fwd.h with PAGED, variants attn_fwd_paged_*) give
// the contiguous kernels' O and lse bit for bit on the same keys, at page sizes 1 to 128 (the
// pools' other rows hold NaN), with bottom-right chunks, GQA and packed queries with per-sequence
// key counts; BF16 and FP8 LEAN in the target's format (ZYFA_EMU_ARCH). On gfx950 the library's
// own context plans paged FP8 LEAN and BF16 on the HIP C++ kernel: the assembly kernels read
// contiguous K/V only and decline it (test_automatic_context_plans_paged_on_hip_cpp). The
// comparisons run on a HipCpp context (tests/support/hip_context.hpp), so that the contiguous
// reference is the HIP C++ kernel too: the BF16 assembly kernels sum in another order, so they
// are not bitwise the paged HIP C++ kernel's (tests/emu/asm_end_to_end_test.cpp checks them
// against the CPU model). The INT8 Q/K mode (LEAN, v in the target's FP8 format) too: its per-64-key
// descales follow the key index, not the page, as does a per-key bias. Head dims other than 128 are NOT_SUPPORTED. Small shapes: the emulator
// runs every instruction.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "emulated_hip_session.hpp"
#include "gpu/paged_gpu_check.hpp"
#include "support/attention_modes.hpp"
#include "support/hip_context.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

bool g_gfx942 = false;
zyfa_context* g_automatic = nullptr;  // the library's own context (zyfa_context_create)

std::vector<DtypeMode> modes() { return {kBf16, g_gfx942 ? kE4m3fnuzLean : kE4m3fnLean, kInt8qkLean}; }

CaseShape chunk(const DtypeMode& m) {
    CaseShape s = mode_shape(m);
    s.head_dim_qk = s.head_dim_v = 128;
    s.batch = 2;
    s.seqlen_q = 40;
    s.seqlen_k = 150;  // three 64-key blocks, the last ending inside a page for most page sizes
    s.heads_q = 2;
    s.heads_kv = 1;
    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.v_dtype_int8 = g_gfx942 ? ZYFA_DTYPE_FP8_E4M3FNUZ : ZYFA_DTYPE_FP8_E4M3FN;
    return s;
}

void test_paged_chunk(void**) {
    for (const DtypeMode& m : modes())
        for (int32_t ps : {1, 16, 128})
            expect_paged_equals_contiguous(chunk(m), ps, std::string("chunk ") + m.name, "_paged_");
}

// A per-key bias (zyfa_attn_params.key_bias, [batch, heads_q, seqlen_k] paged or not): the paged
// kernel indexes it by the key's place in its sequence, as the contiguous one does.
void test_paged_key_bias(void**) {
    for (const DtypeMode& m : {kBf16, g_gfx942 ? kE4m3fnuzLean : kE4m3fnLean}) {
        CaseShape s = chunk(m);
        s.key_bias.resize(static_cast<size_t>(s.batch * s.heads_q * s.seqlen_k));
        for (size_t i = 0; i < s.key_bias.size(); ++i) s.key_bias[i] = 0.25f * static_cast<float>(static_cast<int>(i % 13) - 6);
        expect_paged_equals_contiguous(s, 16, std::string("key bias ") + m.name, "_paged_");
    }
}

void test_paged_varlen_seqused(void**) {
    for (const DtypeMode& m : modes()) {
        CaseShape s = chunk(m);
        s.batch = 3;
        s.lengths_q = {20, 1, 9};
        s.lengths_k = {150, 33, 0};
        s.seqlen_q = 20;
        expect_paged_equals_contiguous(s, 16, std::string("varlen ") + m.name, "_paged_");
    }
}

// The library's own context plans every paged problem on a HIP C++ paged kernel.
void test_automatic_context_plans_paged_on_hip_cpp(void**) {
    Session& s = session();
    for (const DtypeMode& m : modes()) {
        GpuCase c(*s.runtime, chunk(m));
        DevicePaged paged(*s.runtime, c, PagedLayout{});
        const char* name = zyfa_attn_kernel_name(g_automatic, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
        std::printf("  automatic context, paged %s: %s\n", m.name, name ? name : zyfa_last_error_message());
        assert_non_null(name);
        assert_non_null(std::strstr(name, "zyfa_attn_fwd_paged_"));
    }
}

void test_paged_other_head_dims_not_supported(void**) {
    Session& s = session();
    CaseShape shape = chunk(kBf16);
    shape.head_dim_qk = 192;
    GpuCase c(*s.runtime, shape);
    DevicePaged paged(*s.runtime, c, PagedLayout{});
    const zyfa_status st = zyfa_attn_supported(s.cuda, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
    std::printf("  paged head dims 192/128: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
    assert_int_equal(st, ZYFA_ERROR_NOT_SUPPORTED);
}

}  // namespace

int main() {
    const char* arch = std::getenv("ZYFA_EMU_ARCH");
    g_gfx942 = arch && std::string(arch) == "gfx942";
    const int status = open_emulated_hip_session("amd_paged");
    if (status != 0) return status;
    // The comparisons on a HipCpp context; the library's own one for the plan's check.
    g_automatic = session().cuda;
    std::string error;
    zyfa_context* hip_cpp = hip_context_with(zyfa::hip::AmdKernelChoice::HipCpp, &error);
    if (hip_cpp == nullptr) {
        std::printf("FAIL amd_paged: HIP context (HIP C++ kernels): %s\n", error.c_str());
        return 1;
    }
    session().cuda = hip_cpp;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paged_chunk),
        cmocka_unit_test(test_paged_varlen_seqused),
        cmocka_unit_test(test_paged_key_bias),
        cmocka_unit_test(test_paged_other_head_dims_not_supported),
        cmocka_unit_test(test_automatic_context_plans_paged_on_hip_cpp),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();  // destroys session().cuda (the HipCpp context)
    zyfa_context_destroy(g_automatic);
    return failed;
}
