// The uniform-mfma rule's analysis on small listings in llvm-objdump's format: the compiler's
// exec-mask idioms must be proven to restore the full mask, and an MFMA inside a divergent region
// (the bug the emulator found in the FP8 LEAN d128 kernels) must be reported.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

extern "C" {
#include <cmocka.h>
}

#include <cstdio>
#include <string>
#include <vector>

#include "exec_mask_analysis.hpp"

namespace {

// One function "k" at 0x1000; every instruction is 4 bytes. "@N" as the operand of a branch
// stands for instruction N and becomes the SOPP offset that llvm-objdump prints.
std::string listing(const std::vector<std::string>& code) {
    std::string out = "\nfile.hsaco:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n"
                      "0000000000001000 <k>:\n";
    for (size_t i = 0; i < code.size(); ++i) {
        std::string text = code[i];
        const size_t at = text.find('@');
        if (at != std::string::npos) {
            const long target = std::stol(text.substr(at + 1));
            const long offset = target - static_cast<long>(i) - 1;
            text = text.substr(0, at) + std::to_string(offset < 0 ? offset + 65536 : offset);
        }
        char address[64];
        std::snprintf(address, sizeof address, "// %012X: 00000000", 0x1000u + 4u * static_cast<unsigned>(i));
        out += "\t" + text + std::string(text.size() < 58 ? 58 - text.size() : 1, ' ') + address + "\n";
    }
    return out;
}

const char* kMfma = "v_mfma_f32_32x32x8_bf16 v[0:15], v[16:17], v[18:19], v[0:15]";

void test_straight_line_is_uniform(void**) {
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({kMfma, kMfma, "s_endpgm"}));
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.mfma_count, 2);
    assert_int_equal(r.partial_exec.size(), 0);
}

void test_mfma_inside_if_is_reported(void**) {
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({
        "v_cmp_gt_i32_e32 vcc, 5, v0",           // 0
        "s_and_saveexec_b64 s[8:9], vcc",        // 1
        "s_cbranch_execz @4",                    // 2
        kMfma,                                   // 3: under the partial EXEC
        "s_or_b64 exec, exec, s[8:9]",           // 4
        kMfma,                                   // 5: after the restore
        "s_endpgm"}));
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.mfma_count, 2);
    assert_int_equal(r.partial_exec.size(), 1);
    assert_int_equal(r.partial_exec[0].address, 0x1000 + 4 * 3);
    assert_string_equal(r.partial_exec[0].kernel.c_str(), "k");
}

void test_if_else_restores(void**) {
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({
        "v_cmp_gt_i32_e64 s[4:5], 5, v0",       // 0
        "s_and_saveexec_b64 s[0:1], s[4:5]",     // 1
        "s_xor_b64 s[0:1], exec, s[0:1]",        // 2: the else lanes
        "s_cbranch_execz @5",                    // 3
        "v_mov_b32_e32 v1, 1",                   // 4
        "s_andn2_saveexec_b64 s[0:1], s[0:1]",   // 5: else
        "s_cbranch_execz @8",                    // 6
        "v_mov_b32_e32 v1, 2",                   // 7
        "s_or_b64 exec, exec, s[0:1]",           // 8
        kMfma,                                   // 9
        "s_endpgm"}));
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.mfma_count, 1);
    assert_int_equal(r.partial_exec.size(), 0);
}

void test_divergent_loop_restores(void**) {
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({
        "s_mov_b64 s[2:3], 0",                   // 0: lanes that left the loop
        "v_add_u32_e32 v0, 64, v0",              // 1: loop head
        "v_cmp_le_i32_e32 vcc, s6, v0",          // 2
        "s_or_b64 s[2:3], vcc, s[2:3]",          // 3
        "s_andn2_b64 exec, exec, s[2:3]",        // 4
        "s_cbranch_execnz @1",                   // 5
        "s_or_b64 exec, exec, s[2:3]",           // 6
        kMfma,                                   // 7
        "s_endpgm"}));
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.partial_exec.size(), 0);
}

void test_mfma_inside_divergent_loop_is_reported(void**) {
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({
        "s_mov_b64 s[2:3], 0",                   // 0
        kMfma,                                   // 1: loop head, lanes drop out from the 2nd trip
        "v_cmp_le_i32_e32 vcc, s6, v0",          // 2
        "s_or_b64 s[2:3], vcc, s[2:3]",          // 3
        "s_andn2_b64 exec, exec, s[2:3]",        // 4
        "s_cbranch_execnz @1",                   // 5
        "s_or_b64 exec, exec, s[2:3]",           // 6
        "s_endpgm"}));
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.partial_exec.size(), 1);
    assert_int_equal(r.partial_exec[0].address, 0x1000 + 4 * 1);
}

void test_clobbered_saved_mask_is_reported(void**) {
    // The saved EXEC is overwritten by a 32-bit load before the restore: not provably full.
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({
        "v_cmp_gt_i32_e32 vcc, 5, v0",           // 0
        "s_and_saveexec_b64 s[8:9], vcc",        // 1
        "s_load_dword s9, s[0:1], 0x0",          // 2
        "s_or_b64 exec, exec, s[8:9]",           // 3
        kMfma,                                   // 4
        "s_endpgm"}));
    assert_int_equal(r.partial_exec.size(), 1);
}

void test_uniform_branch_keeps_full_exec(void**) {
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({
        "s_cmp_lt_i32 s4, s5",                   // 0
        "s_cbranch_scc1 @3",                     // 1
        kMfma,                                   // 2
        kMfma,                                   // 3
        "s_branch @0",                           // 4
        "s_endpgm"}));
    assert_string_equal(r.error.c_str(), "");
    assert_int_equal(r.mfma_count, 2);
    assert_int_equal(r.partial_exec.size(), 0);
}

void test_indirect_jump_is_an_error(void**) {
    const auto r = zyfa_amd_check::find_mfma_under_partial_exec(listing({"s_setpc_b64 s[0:1]", kMfma, "s_endpgm"}));
    assert_true(r.error.find("unmodelled control flow") != std::string::npos);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straight_line_is_uniform),
        cmocka_unit_test(test_mfma_inside_if_is_reported),
        cmocka_unit_test(test_if_else_restores),
        cmocka_unit_test(test_divergent_loop_restores),
        cmocka_unit_test(test_mfma_inside_divergent_loop_is_reported),
        cmocka_unit_test(test_clobbered_saved_mask_is_reported),
        cmocka_unit_test(test_uniform_branch_keeps_full_exec),
        cmocka_unit_test(test_indirect_jump_is_an_error),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
