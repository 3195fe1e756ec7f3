#include "emitter.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace zyfa {
namespace gfx950_fp8 {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

Kind kind_of(const std::string& m) {
    if (m == "s_waitcnt") return Kind::Waitcnt;
    if (m == "s_nop") return Kind::Nop;
    if (m == "s_barrier") return Kind::Barrier;
    if (m == "s_branch") return Kind::Branch;
    if (starts_with(m, "s_cbranch")) return Kind::CondBranch;
    if (starts_with(m, "s_load")) return Kind::Smem;
    if (starts_with(m, "s_")) return Kind::Salu;
    if (starts_with(m, "v_mfma")) return Kind::Mfma;
    if (starts_with(m, "v_permlane")) return Kind::Permlane;
    if (starts_with(m, "ds_read") || starts_with(m, "ds_bpermute")) return Kind::DsRead;  // LDS ops that return data
    if (starts_with(m, "ds_")) return Kind::DsWrite;
    if (starts_with(m, "global_load")) return Kind::GlobalLoad;
    if (starts_with(m, "global_store")) return Kind::GlobalStore;
    if (starts_with(m, "v_")) return Kind::Valu;
    throw std::logic_error("emitter: unknown mnemonic class " + m);
}

}  // namespace

std::string float_literal(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    char text[16];
    std::snprintf(text, sizeof text, "0x%08x", bits);
    return text;
}

void Emitter::append(Instruction inst) {
    if (inst.kind == Kind::Label) {
        auto it = forward_.find(inst.label);
        if (it != forward_.end()) {
            state_.merge(it->second);
            forward_.erase(it);
        }
        program_.push_back(inst);
        return;
    }
    const std::string problem = state_.check(inst);
    if (!problem.empty()) {
        std::string context;
        for (size_t i = program_.size() > 12 ? program_.size() - 12 : 0; i < program_.size(); ++i)
            context += program_[i].text() + "\n";
        throw std::runtime_error("generator refuses `" + inst.text() + "`: " + problem + "\nafter:\n" + context);
    }
    state_.issue(inst, static_cast<int>(program_.size()));
    if (inst.kind == Kind::Branch || inst.kind == Kind::CondBranch) {
        auto it = forward_.find(inst.label);
        if (it == forward_.end()) {
            forward_.emplace(inst.label, state_);
        } else {
            it->second.merge(state_);
        }
    }
    if (inst.kind == Kind::Branch || inst.mnemonic == "s_endpgm") state_.reachable = false;
    program_.push_back(inst);
}

Instruction Emitter::make(const std::string& mnemonic, std::vector<Operand> operands, const std::string& modifiers,
                          const std::string& comment) const {
    Instruction inst;
    inst.kind = kind_of(mnemonic);
    inst.mnemonic = mnemonic;
    inst.operands = std::move(operands);
    inst.modifiers = modifiers;
    inst.comment = comment;
    if (inst.kind == Kind::Mfma) throw std::logic_error("emitter: use mfma_scaled()");
    // VCC is tracked like an SGPR pair: written where it is the destination (operand 0, or the
    // carry-out of v_add_co / v_addc_co / v_sub_co / v_div_scale), read elsewhere.
    const bool carry_out = starts_with(mnemonic, "v_add_co") || starts_with(mnemonic, "v_addc_co") ||
                           starts_with(mnemonic, "v_sub_co") || starts_with(mnemonic, "v_div_scale");
    for (size_t i = 0; i < inst.operands.size(); ++i) {
        Operand& o = inst.operands[i];
        if (o.text != "vcc" || o.reg.valid()) continue;
        o.reg = vcc_reg();
        o.role = (i == 0 || (i == 1 && carry_out)) ? Role::Write : Role::Read;
    }
    if (mnemonic == "v_div_fmas_f32") inst.operands.push_back(Operand{"", vcc_reg(), Role::Read});  // implicit VCC
    return inst;
}

void Emitter::op(const std::string& mnemonic, std::vector<Operand> operands, const std::string& modifiers,
                 const std::string& comment) {
    append(make(mnemonic, std::move(operands), modifiers, comment));
}

void Emitter::op_settled(const std::string& mnemonic, std::vector<Operand> operands, const std::string& modifiers,
                         const std::string& comment) {
    Instruction inst = make(mnemonic, std::move(operands), modifiers, comment);
    nop(state_.wait_states_needed(inst), "VALU-written SGPR/VCC or VGPR -> this read");
    append(inst);
}

void Emitter::mfma_scaled(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const Reg& scale_a,
                          const Reg& scale_b, const std::string& comment) {
    if (d.count != 16 || a.count != 8 || b.count != 8) throw std::logic_error("mfma_scaled: 16/8/8 registers");
    Instruction inst;
    inst.kind = Kind::Mfma;
    inst.mnemonic = "v_mfma_scale_f32_32x32x64_f8f6f4";
    inst.mfma_passes = 16;  // docs/emulator.md, MFMA passes: 32x32x64 with 8-bit operands
    inst.operands = {Operand{d.text(), d, Role::Write}, Operand{a.text(), a, Role::MfmaA},
                     Operand{b.text(), b, Role::MfmaB},
                     c.valid() ? Operand{c.text(), c, Role::MfmaC} : I(0),
                     Operand{scale_a.text(), scale_a, Role::MfmaScale}, Operand{scale_b.text(), scale_b, Role::MfmaScale}};
    inst.modifiers = "op_sel_hi:[0,0,0]";
    inst.comment = comment;
    append(inst);
}

void Emitter::mfma_bf16(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment) {
    if (d.count != 16 || a.count != 4 || b.count != 4) throw std::logic_error("mfma_bf16: 16/4/4 registers");
    Instruction inst;
    inst.kind = Kind::Mfma;
    inst.mnemonic = "v_mfma_f32_32x32x16_bf16";
    inst.mfma_passes = 8;  // docs/emulator.md, MFMA passes
    inst.operands = {Operand{d.text(), d, Role::Write}, Operand{a.text(), a, Role::MfmaA},
                     Operand{b.text(), b, Role::MfmaB}, c.valid() ? Operand{c.text(), c, Role::MfmaC} : I(0)};
    inst.comment = comment;
    append(inst);
}

void Emitter::mfma_bf16_k8(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment) {
    if (d.count != 16 || a.count != 2 || b.count != 2) throw std::logic_error("mfma_bf16_k8: 16/2/2 registers");
    Instruction inst;
    inst.kind = Kind::Mfma;
    inst.mnemonic = "v_mfma_f32_32x32x8_bf16";
    inst.mfma_passes = 8;  // docs/emulator.md, MFMA passes (32x32 shapes other than f8f6f4: 8)
    inst.operands = {Operand{d.text(), d, Role::Write}, Operand{a.text(), a, Role::MfmaA},
                     Operand{b.text(), b, Role::MfmaB}, c.valid() ? Operand{c.text(), c, Role::MfmaC} : I(0)};
    inst.comment = comment;
    append(inst);
}

void Emitter::mfma_fp8_k16(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment) {
    if (d.count != 16 || a.count != 2 || b.count != 2) throw std::logic_error("mfma_fp8_k16: 16/2/2 registers");
    Instruction inst;
    inst.kind = Kind::Mfma;
    inst.mnemonic = "v_mfma_f32_32x32x16_fp8_fp8";
    inst.mfma_passes = 8;  // docs/emulator.md, MFMA passes (32x32 shapes other than f8f6f4: 8)
    inst.operands = {Operand{d.text(), d, Role::Write}, Operand{a.text(), a, Role::MfmaA},
                     Operand{b.text(), b, Role::MfmaB}, c.valid() ? Operand{c.text(), c, Role::MfmaC} : I(0)};
    inst.comment = comment;
    append(inst);
}

void Emitter::label(const std::string& name) {
    Instruction inst;
    inst.kind = Kind::Label;
    inst.label = name;
    append(inst);
}

void Emitter::branch(const std::string& target) {
    Instruction inst;
    inst.kind = Kind::Branch;
    inst.mnemonic = "s_branch";
    inst.operands = {I(target)};
    inst.label = target;
    append(inst);
}

void Emitter::cbranch(const std::string& condition, const std::string& target) {
    Instruction inst;
    inst.kind = Kind::CondBranch;
    inst.mnemonic = "s_cbranch_" + condition;
    inst.operands = {I(target)};
    inst.label = target;
    append(inst);
}

void Emitter::narrow_exec(const Reg& saved, const std::string& mask, const std::string& comment) {
    Instruction inst;
    inst.kind = Kind::ExecChange;
    inst.mnemonic = "s_and_saveexec_b64";
    inst.operands = {W(saved), I(mask)};
    inst.exec_depth_change = 1;
    inst.comment = comment;
    append(inst);
}

void Emitter::restore_exec(const Reg& saved) {
    Instruction inst;
    inst.kind = Kind::ExecChange;
    inst.mnemonic = "s_mov_b64";
    inst.operands = {I("exec"), R(saved)};
    inst.exec_depth_change = -1;
    append(inst);
}

void Emitter::waitcnt(int vmcnt, int lgkmcnt, const std::string& why) {
    Instruction inst;
    inst.kind = Kind::Waitcnt;
    inst.mnemonic = "s_waitcnt";
    inst.vmcnt = vmcnt;
    inst.lgkmcnt = lgkmcnt;
    std::string counts;
    if (vmcnt >= 0) counts += "vmcnt(" + std::to_string(vmcnt) + ")";
    if (lgkmcnt >= 0) counts += (counts.empty() ? "" : " ") + std::string("lgkmcnt(") + std::to_string(lgkmcnt) + ")";
    inst.operands = {I(counts)};
    inst.comment = why;
    append(inst);
}

void Emitter::wait_loads(const std::vector<Reg>& regs, const std::string& why) {
    int vm = -1, lgkm = -1;
    state_.counts_needed(regs, vm, lgkm);
    if (vm >= 0 || lgkm >= 0) waitcnt(vm, lgkm, why);
}

void Emitter::nop(int wait_states, const std::string& why) {
    while (wait_states > 0) {
        const int n = wait_states > 16 ? 16 : wait_states;
        Instruction inst;
        inst.kind = Kind::Nop;
        inst.mnemonic = "s_nop";
        inst.nop_count = n - 1;
        inst.operands = {I(n - 1)};
        inst.comment = why;
        append(inst);
        wait_states -= n;
    }
}

void Emitter::pad_for_valu(const std::vector<Reg>& regs, const std::string& why) {
    Instruction probe;
    probe.kind = Kind::Valu;
    for (const Reg& r : regs) probe.operands.push_back(R(r));
    nop(state_.wait_states_needed(probe), why);
}

void Emitter::pad_for_mfma(const std::vector<Reg>& regs, const std::string& why) {
    Instruction probe;
    probe.kind = Kind::Mfma;
    for (const Reg& r : regs) probe.operands.push_back(Operand{r.text(), r, Role::MfmaA});
    nop(state_.wait_states_needed(probe), why);
}

void Emitter::pad_for_mfma_acc(const Reg& acc, const std::string& why) {
    Instruction probe;
    probe.kind = Kind::Mfma;
    probe.operands.push_back(Operand{acc.text(), acc, Role::MfmaC});
    nop(state_.wait_states_needed(probe), why);
}

void Emitter::pad_for_permlane(const std::vector<Reg>& regs, const std::string& why) {
    Instruction probe;
    probe.kind = Kind::Permlane;
    for (const Reg& r : regs) probe.operands.push_back(W(r));
    nop(state_.wait_states_needed(probe), why);
}

std::string Emitter::unique_label(const std::string& stem) { return ".L" + stem + "_" + std::to_string(labels_++); }

int Emitter::count(Kind k) const {
    int n = 0;
    for (const Instruction& i : program_) n += i.kind == k ? 1 : 0;
    return n;
}

}  // namespace gfx950_fp8
}  // namespace zyfa
