// Paged K/V on the AMD path in the emulator (libzyfa.so's HIP backend over the HIP stand-in): the
// HIP C++ paged kernels (kernels/amd/attention_fwd.h with PAGED, variants attn_fwd_paged_*) give
// the contiguous kernels' O and lse bit for bit on the same keys, at page sizes 1 to 128 (the
// pools' other rows hold NaN), with bottom-right chunks, GQA and packed queries with per-sequence
// key counts; BF16 and FP8 LEAN in the target's format (ZYFA_EMU_ARCH). Those comparisons run on a
// HipCpp context (tests/support/hip_context.hpp), so that the contiguous reference is the HIP C++
// kernel too. The INT8 Q/K mode (LEAN, v in the target's FP8 format) too: its per-64-key descales
// follow the key index, not the page, as does a per-key bias. Head dims other than 128 are
// NOT_SUPPORTED.
//
// The generated assembly kernels' paged variants (kernels/amd/gfx950_fp8, <kind>_paged_d128_<mask>:
// FP8 LEAN, FP8 EXACT and BF16 on gfx950 and gfx942; masks none and bottom-right
// causal; power-of-two pages of 8 to 256 keys) run on the library's own context and are compared
// bit for bit with the contiguous asm kernel on the same keys (the same schedule: only the K/V
// addresses differ), at page sizes 8 to 256, with packed queries, per-sequence key counts, windows,
// sinks and a
// block-table entry outside [0, num_pages) (a page of zero keys: the contiguous call with those
// keys zeroed). Other page sizes, top-left causal and INT8 stay on the HIP C++ paged kernel
// (test_automatic_context_plans). Small shapes: the emulator runs every instruction.
#include <algorithm>
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

// The modes the paged asm kernels take on this target.
std::vector<DtypeMode> asm_modes() {
    if (g_gfx942) return {kE4m3fnuzLean, kE4m3fnuzExact, kBf16};
    return {kE4m3fnLean, kE4m3fnExact, kBf16};
}

bool has_asm_paged(const DtypeMode& m) {
    for (const DtypeMode& a : asm_modes())
        if (a.dtype == m.dtype && a.softmax == m.softmax) return true;
    return false;
}

// The kernel the library's own context plans for `shape` paged at `page_size`.
std::string automatic_paged_kernel(const CaseShape& shape, int32_t page_size) {
    Session& s = session();
    GpuCase c(*s.runtime, shape);
    PagedLayout layout;
    layout.page_size = page_size;
    DevicePaged paged(*s.runtime, c, layout);
    const char* name = zyfa_attn_kernel_name(g_automatic, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
    if (name == nullptr) std::printf("  %s\n", zyfa_last_error_message());
    assert_non_null(name);
    return name;
}

// The library's own context: the paged asm kernel where one covers the problem (head dim 128, mask
// none or bottom-right causal, power-of-two pages of 8 to 256 keys), the HIP C++ paged kernel
// otherwise.
void test_automatic_context_plans(void**) {
    std::vector<DtypeMode> all = modes();
    for (const DtypeMode& m : asm_modes())
        if (!has_asm_paged(m) || std::find_if(all.begin(), all.end(), [&](const DtypeMode& x) {
                                      return x.dtype == m.dtype && x.softmax == m.softmax;
                                  }) == all.end())
            all.push_back(m);
    for (const DtypeMode& m : all) {
        for (int32_t ps : {1, 4, 8, 16, 256}) {
            for (zyfa_mask mask : {ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, ZYFA_MASK_CAUSAL, ZYFA_MASK_NONE}) {
                CaseShape shape = chunk(m);
                shape.mask = mask;
                const std::string name = automatic_paged_kernel(shape, ps);
                const bool asm_expected = has_asm_paged(m) && ps >= 8 && mask != ZYFA_MASK_CAUSAL;
                std::printf("  automatic context, paged %s, page %3d, mask %d: %s\n", m.name, ps, static_cast<int>(mask),
                            name.c_str());
                if (asm_expected) {
                    assert_true(name.rfind("zyfa_gfx9", 0) == 0);
                    assert_true(name.find("_paged_d128_") != std::string::npos);
                } else {
                    assert_true(name.rfind("zyfa_attn_fwd_paged_", 0) == 0);
                }
            }
        }
    }
}

// Runs `check` with the library's own context (the asm kernels) as the session's context.
template <class Check>
void on_automatic_context(Check check) {
    zyfa_context* hip_cpp = session().cuda;
    session().cuda = g_automatic;
    check();
    session().cuda = hip_cpp;
}

// Paged asm against contiguous asm, bit for bit: page sizes 8 to 256, both masks, keys ending
// inside a page and (600 keys) blocks that start inside a page of 128 or 256.
void test_asm_paged_equals_contiguous(void**) {
    on_automatic_context([] {
        for (const DtypeMode& m : asm_modes()) {
            for (zyfa_mask mask : {ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, ZYFA_MASK_NONE}) {
                CaseShape shape = chunk(m);
                shape.mask = mask;
                for (int32_t ps : {8, 16, 64})
                    expect_paged_equals_contiguous(shape, ps, std::string("asm chunk ") + m.name, "_paged_d128_");
                shape.batch = 1;
                shape.seqlen_k = 600;
                for (int32_t ps : {128, 256})
                    expect_paged_equals_contiguous(shape, ps, std::string("asm 600 keys ") + m.name, "_paged_d128_");
            }
        }
    });
}

// Packed queries, per-sequence key counts (one sequence without keys), GQA 4/2.
void test_asm_paged_varlen_seqused(void**) {
    on_automatic_context([] {
        for (const DtypeMode& m : asm_modes()) {
            CaseShape s = chunk(m);
            s.batch = 3;
            s.lengths_q = {20, 1, 9};
            s.lengths_k = {150, 33, 0};
            s.seqlen_q = 20;
            s.heads_q = 4;
            s.heads_kv = 2;
            expect_paged_equals_contiguous(s, 16, std::string("asm varlen ") + m.name, "_paged_d128_");
        }
    });
}

// Sliding windows (run-time arguments: the loop starts at the window's first block, inside a page)
// and sinks (folded in the epilogue), as the contiguous kernels take them.
void test_asm_paged_windows_and_sinks(void**) {
    on_automatic_context([] {
        for (const DtypeMode& m : asm_modes()) {
            CaseShape s = chunk(m);
            s.batch = 1;
            s.seqlen_k = 600;
            s.window_left = 200;
            s.window_right = 0;
            expect_paged_equals_contiguous(s, 32, std::string("asm window ") + m.name, "_paged_d128_");
            s.window_left = s.window_right = -1;
            s.mask = ZYFA_MASK_NONE;
            s.sinks = {0.5f, -1.25f};
            expect_paged_equals_contiguous(s, 64, std::string("asm sinks ") + m.name, "_paged_d128_");
        }
    });
}

// A block-table entry outside [0, num_pages) reads as a page of zero keys: the same O and lse as
// the contiguous call whose keys of that page are zero (K and V), on both kinds of kernel.
void test_paged_invalid_page_reads_zero_keys(void**) {
    Session& s = session();
    zyfa_context* const contexts[] = {s.cuda, g_automatic};
    for (zyfa_context* ctx : contexts) {
        const std::vector<DtypeMode> ms = ctx == g_automatic ? asm_modes() : std::vector<DtypeMode>{kBf16};
        for (const DtypeMode& m : ms) {
            for (int32_t bad : {-1, 1 << 20}) {
                const CaseShape shape = chunk(m);
                const int64_t ps = 16, slot = 2;  // keys 32 .. 47 of sequence 0
                GpuCase c(*s.runtime, shape);
                PagedLayout layout;
                layout.page_size = static_cast<int32_t>(ps);
                DevicePaged paged(*s.runtime, c, layout);
                paged.host.block_table[slot] = bad;
                paged.table.upload(paged.host.block_table.data());
                GpuCase zeroed(*s.runtime, shape, [&](AttentionCase& a) {
                    const size_t ke = zyfa::cpu::dtype_size(a.tk.dtype), ve = zyfa::cpu::dtype_size(a.tv.dtype);
                    for (int64_t j = slot * ps; j < (slot + 1) * ps; ++j) {
                        for (int64_t h = 0; h < shape.heads_kv; ++h) {
                            const int64_t k_off = zyfa::AttnProblem::offset(PagedKv::view_of(a.tk), 0, 0, j, h);
                            const int64_t v_off = zyfa::AttnProblem::offset(PagedKv::view_of(a.tv), 0, 0, j, h);
                            std::memset(&a.k[static_cast<size_t>(k_off) * ke], 0, static_cast<size_t>(shape.head_dim_qk) * ke);
                            std::memset(&a.v[static_cast<size_t>(v_off) * ve], 0, static_cast<size_t>(shape.head_dim_v) * ve);
                        }
                    }
                });
                assert_int_equal(zeroed.run(ctx, *s.runtime, s.stream), ZYFA_SUCCESS);
                const char* name = zyfa_attn_kernel_name(ctx, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
                assert_non_null(name);
                zyfa_context* const saved = s.cuda;
                s.cuda = ctx;
                expect_paged_run_matches(s, zeroed, paged, static_cast<int32_t>(ps),
                                         std::string("page index ") + std::to_string(bad) + " " + m.name, name);
                s.cuda = saved;
            }
        }
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
        cmocka_unit_test(test_automatic_context_plans),
        cmocka_unit_test(test_asm_paged_equals_contiguous),
        cmocka_unit_test(test_asm_paged_varlen_seqused),
        cmocka_unit_test(test_asm_paged_windows_and_sinks),
        cmocka_unit_test(test_paged_invalid_page_reads_zero_keys),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();  // destroys session().cuda (the HipCpp context)
    zyfa_context_destroy(g_automatic);
    return failed;
}
