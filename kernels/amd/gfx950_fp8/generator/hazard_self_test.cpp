#include "hazard_self_test.hpp"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "emitter.hpp"
#include "hazard_checker.hpp"

namespace zyfa {
namespace gfx950_fp8 {

namespace {

// Raw programs (no emitter: it would refuse them while they are written).
Instruction raw(Kind kind, const std::string& mnemonic, std::vector<Operand> operands, int passes = 0) {
    Instruction i;
    i.kind = kind;
    i.mnemonic = mnemonic;
    i.operands = std::move(operands);
    i.mfma_passes = passes;
    return i;
}

Instruction raw(Kind kind, const std::string& mnemonic, std::vector<Operand> operands, const std::string& modifiers) {
    Instruction i = raw(kind, mnemonic, std::move(operands));
    i.modifiers = modifiers;
    return i;
}

Instruction mfma(const Reg& d, const Reg& a, const Reg& b) {
    return raw(Kind::Mfma, "v_mfma_scale_f32_32x32x64_f8f6f4",
               {W(d), Operand{a.text(), a, Role::MfmaA}, Operand{b.text(), b, Role::MfmaB}, I(0),
                Operand{"v100", vgpr(100), Role::MfmaScale}, Operand{"v100", vgpr(100), Role::MfmaScale}},
               16);
}

Instruction nop(int states) {
    Instruction i = raw(Kind::Nop, "s_nop", {I(states - 1)});
    i.nop_count = states - 1;
    return i;
}

Instruction label(const std::string& name) {
    Instruction i;
    i.kind = Kind::Label;
    i.label = name;
    return i;
}

Instruction branch(Kind kind, const std::string& target) {
    Instruction i = raw(kind, kind == Kind::Branch ? "s_branch" : "s_cbranch_scc1", {I(target)});
    i.label = target;
    return i;
}

struct Case {
    const char* what;
    std::vector<Instruction> bad, good;
};

std::vector<Case> cases() {
    const Reg acc = vgpr(0, 16), a = vgpr(16, 8), b = vgpr(24, 8), x = vgpr(40);
    std::vector<Case> c;
    c.push_back({"MFMA result -> VALU read needs 20 wait states",
                 {mfma(acc, a, b), nop(16), nop(3), raw(Kind::Valu, "v_mov_b32", {W(x), R(acc.at(3))})},
                 {mfma(acc, a, b), nop(16), nop(4), raw(Kind::Valu, "v_mov_b32", {W(x), R(acc.at(3))})}});
    c.push_back({"VALU write -> MFMA read needs 2",
                 {raw(Kind::Valu, "v_mov_b32", {W(a.at(2)), I(0)}), nop(1), mfma(acc, a, b)},
                 {raw(Kind::Valu, "v_mov_b32", {W(a.at(2)), I(0)}), nop(2), mfma(acc, a, b)}});
    Instruction load = raw(Kind::DsRead, "ds_read_b128", {W(a.at(4, 4)), R(x)});
    Instruction wait_all = raw(Kind::Waitcnt, "s_waitcnt", {I("lgkmcnt(0)")});
    wait_all.lgkmcnt = 0;
    Instruction wait_one = raw(Kind::Waitcnt, "s_waitcnt", {I("lgkmcnt(1)")});
    wait_one.lgkmcnt = 1;
    Instruction load2 = raw(Kind::DsRead, "ds_read_b128", {W(b.at(0, 4)), R(x)});
    c.push_back({"LDS load -> MFMA read needs s_waitcnt (in order: lgkmcnt(1) retires the older)",
                 {load, load2, wait_one, mfma(acc, b, a)},
                 {load, load2, wait_one, raw(Kind::Valu, "v_mov_b32", {W(x), R(a.at(4))}), wait_all, nop(2),
                  mfma(acc, b, a)}});
    Instruction narrow = raw(Kind::ExecChange, "s_and_saveexec_b64", {W(sgpr(10, 2)), I("vcc")});
    narrow.exec_depth_change = 1;
    Instruction restore = raw(Kind::ExecChange, "s_mov_b64", {I("exec"), R(sgpr(10, 2))});
    restore.exec_depth_change = -1;
    c.push_back({"MFMA under a narrowed EXEC", {narrow, mfma(acc, a, b), restore}, {narrow, restore, mfma(acc, a, b)}});
    const Operand vcc_w{"vcc", vcc_reg(), Role::Write}, vcc_r{"vcc", vcc_reg(), Role::Read};
    c.push_back({"VALU-written VCC -> VALU read needs 2 (gfx940+)",
                 {raw(Kind::Valu, "v_cmp_lt_i32", {vcc_w, I(0), R(x)}), nop(1),
                  raw(Kind::Valu, "v_cndmask_b32", {W(x), I(0), R(x), vcc_r})},
                 {raw(Kind::Valu, "v_cmp_lt_i32", {vcc_w, I(0), R(x)}), nop(2),
                  raw(Kind::Valu, "v_cndmask_b32", {W(x), I(0), R(x), vcc_r})}});
    c.push_back({"VALU write -> v_readfirstlane needs 1",
                 {raw(Kind::Valu, "v_mov_b32", {W(x), I(0)}), raw(Kind::Valu, "v_readfirstlane_b32", {W(sgpr(20)), R(x)})},
                 {raw(Kind::Valu, "v_mov_b32", {W(x), I(0)}), nop(1),
                  raw(Kind::Valu, "v_readfirstlane_b32", {W(sgpr(20)), R(x)})}});
    // Dst-sel forwarding (gfx940+): a VALU that wrote part of a VGPR, then any VALU operand on it.
    // Lean P packs fp8 codes byte by byte: back to back into one VGPR is the hazard (the
    // UNUSED_PRESERVE write reads the old bytes); byte k of two VGPRs in turn is the fix.
    auto pack = [&](const Reg& dst, const Reg& src, int byte) {
        return raw(Kind::Valu, "v_cvt_u32_f32_sdwa", {W(dst), R(src)},
                   "dst_sel:BYTE_" + std::to_string(byte) +
                       (byte == 0 ? " dst_unused:UNUSED_PAD" : " dst_unused:UNUSED_PRESERVE") + " src0_sel:DWORD");
    };
    const Reg p0 = vgpr(50), p1 = vgpr(51);
    c.push_back({"SDWA byte write -> next byte of the same VGPR needs 1 (dst-sel forwarding)",
                 {pack(p0, a.at(0), 0), pack(p0, a.at(1), 1), pack(p1, a.at(2), 0), pack(p1, a.at(3), 1)},
                 {pack(p0, a.at(0), 0), pack(p1, a.at(2), 0), pack(p0, a.at(1), 1), pack(p1, a.at(3), 1)}});
    c.push_back({"SDWA byte write (UNUSED_PAD too) -> VALU read needs 1",
                 {pack(p0, a.at(0), 0), raw(Kind::Valu, "v_mov_b32", {W(x), R(p0)})},
                 {pack(p0, a.at(0), 0), nop(1), raw(Kind::Valu, "v_mov_b32", {W(x), R(p0)})}});
    // LLVM reads op_sel_hi[0] of a VOP3P as the VOP3 destination op_sel bit: with the default
    // (all ones) every v_pk_* counts as a partial write of its whole destination.
    const Reg pair = vgpr(44, 2), scale = vgpr(46, 2);
    c.push_back({"v_pk_mul_f32 (default op_sel_hi) -> VALU read of its result needs 1",
                 {raw(Kind::Valu, "v_pk_mul_f32", {W(pair), R(pair), R(scale)}),
                  raw(Kind::Valu, "v_mov_b32", {W(x), R(pair.at(1))})},
                 {raw(Kind::Valu, "v_pk_mul_f32", {W(pair), R(pair), R(scale)}), nop(1),
                  raw(Kind::Valu, "v_mov_b32", {W(x), R(pair.at(1))})}});
    c.push_back({"v_pk_fma_f32 op_sel_hi:[1,..] -> VALU overwrite needs 1; op_sel_hi[0] = 0 is a full write",
                 {raw(Kind::Valu, "v_pk_fma_f32", {W(pair), R(pair), R(scale), R(scale)}, "op_sel_hi:[1,1,1]"),
                  raw(Kind::Valu, "v_mov_b32", {W(pair.at(0)), I(0)})},
                 {raw(Kind::Valu, "v_pk_fma_f32", {W(pair), R(pair), R(scale), R(scale)}, "op_sel_hi:[0,1,1]"),
                  raw(Kind::Valu, "v_mov_b32", {W(pair.at(0)), I(0)})}});
    c.push_back({"VOP3 op_sel destination bit -> VALU read needs 1; source bits alone do not",
                 {raw(Kind::Valu, "v_cvt_f16_f32", {W(p0), R(x)}, "op_sel:[0,1]"), raw(Kind::Valu, "v_mov_b32", {W(p1), R(p0)})},
                 {raw(Kind::Valu, "v_add_f16", {W(p0), R(x), R(x)}, "op_sel:[1,1,0]"),
                  raw(Kind::Valu, "v_mov_b32", {W(p1), R(p0)})}});
    // The loop body ends with an MFMA whose result the loop head reads: only the back edge shows it.
    c.push_back({"hazard across a loop back edge",
                 {label(".Lloop"), raw(Kind::Valu, "v_mov_b32", {W(x), R(acc.at(0))}), mfma(acc, a, b),
                  branch(Kind::CondBranch, ".Lloop"), nop(16), nop(4)},
                 {label(".Lloop"), raw(Kind::Valu, "v_mov_b32", {W(x), R(acc.at(0))}), mfma(acc, a, b), nop(16), nop(4),
                  branch(Kind::CondBranch, ".Lloop")}});
    return c;
}

}  // namespace

int run_hazard_self_test() {
    int failures = 0;
    for (const Case& c : cases()) {
        const std::string bad = check_program(c.bad), good = check_program(c.good);
        const bool ok = !bad.empty() && good.empty();
        std::printf("%s %s\n", ok ? "ok  " : "FAIL", c.what);
        if (!ok) {
            std::printf("     hazardous program: %s\n     corrected twin: %s\n", bad.empty() ? "accepted" : bad.c_str(),
                        good.empty() ? "accepted" : good.c_str());
            ++failures;
        }
    }
    return failures;
}

}  // namespace gfx950_fp8
}  // namespace zyfa
