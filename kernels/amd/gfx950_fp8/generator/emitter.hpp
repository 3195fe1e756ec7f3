// The instruction emitter: appends instructions to the program, classifying each by its mnemonic
// and recording the role of every register operand. It tracks the hazard state along the code as
// it is written and throws (refuses) when an instruction would issue into a hazard; the schedule
// asks for the waits it needs explicitly (wait_loads, pad_for_valu, pad_for_mfma), which compute
// the s_waitcnt counts and s_nop lengths from that state.
#ifndef ZYFA_GFX950_FP8_EMITTER_HPP
#define ZYFA_GFX950_FP8_EMITTER_HPP

#include <map>
#include <string>
#include <vector>

#include "hazard_checker.hpp"
#include "instruction.hpp"

namespace zyfa {
namespace gfx950_fp8 {

// Operand constructors: W written, R read (with an optional source modifier such as "-"),
// I an immediate, label or special register (vcc, exec) the checker does not track.
inline Operand W(const Reg& r) { return Operand{r.text(), r, Role::Write}; }
inline Operand R(const Reg& r, const std::string& prefix = "") { return Operand{prefix + r.text(), r, Role::Read}; }
inline Operand I(const std::string& text) { return Operand{text, Reg(), Role::Read}; }
inline Operand I(long long value) { return Operand{std::to_string(value), Reg(), Role::Read}; }
std::string float_literal(float f);  // 0x... hex bits, exact

class Emitter {
public:
    // Any instruction; the kind follows from the mnemonic.
    void op(const std::string& mnemonic, std::vector<Operand> operands, const std::string& modifiers = "",
            const std::string& comment = "");
    // The same, after the s_nop its operands need (VALU-written SGPR/VCC read by a VALU: 2 wait
    // states; VALU-written VGPR read by v_readfirstlane: 1). For the few places where nothing
    // independent can fill the gap.
    void op_settled(const std::string& mnemonic, std::vector<Operand> operands, const std::string& modifiers = "",
                    const std::string& comment = "");
    // v_mfma_scale_f32_32x32x64_f8f6f4 (fp8 x fp8, 16 passes): D = C + A B 2^(sa-127) 2^(sb-127),
    // the scale bytes in byte 0 of scale_a / scale_b. `c` may be the inline constant 0 (c invalid).
    void mfma_scaled(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const Reg& scale_a, const Reg& scale_b,
                     const std::string& comment = "");

    // v_mfma_f32_32x32x16_bf16 (8 passes): D = C + A B, A and B 8 bf16 per lane (4 VGPRs).
    void mfma_bf16(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment = "");
    // gfx942's v_mfma_f32_32x32x8_bf16 (8 passes: AMD's matrix instruction calculator for CDNA3,
    // 32 cycles): D = C + A B, A and B 4 bf16 per lane (2 VGPRs).
    void mfma_bf16_k8(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment = "");
    // v_mfma_f32_32x32x16_fp8_fp8 (8 passes; gfx942 reads e4m3fnuz): A and B 8 fp8 per lane (2 VGPRs).
    void mfma_fp8_k16(const Reg& d, const Reg& a, const Reg& b, const Reg& c, const std::string& comment = "");

    void label(const std::string& name);
    void branch(const std::string& target);
    void cbranch(const std::string& condition, const std::string& target);  // scc0, scc1, vccz, vccnz, execz
    // Narrows EXEC to the lanes in `mask` (vcc or an SGPR pair), saving it in `saved`; restore_exec undoes it.
    void narrow_exec(const Reg& saved, const std::string& mask, const std::string& comment = "");
    void restore_exec(const Reg& saved);

    // s_waitcnt that retires every outstanding load into one of `regs` (nothing when none is).
    void wait_loads(const std::vector<Reg>& regs, const std::string& why = "");
    void waitcnt(int vmcnt, int lgkmcnt, const std::string& why = "");
    void nop(int wait_states, const std::string& why = "");
    // s_nop until a VALU may read/overwrite `regs` (MFMA results: P+4 wait states).
    void pad_for_valu(const std::vector<Reg>& regs, const std::string& why = "");
    // s_nop until an MFMA may read `regs` as A/B/scale (VALU write: 2; MFMA result: P+4).
    void pad_for_mfma(const std::vector<Reg>& regs, const std::string& why = "");
    // s_nop until an MFMA may accumulate into `acc` (SrcC): VALU write 2, other MFMA's partial overlap P+1.
    void pad_for_mfma_acc(const Reg& acc, const std::string& why = "");
    // s_nop until a v_permlane*_swap may read/write `regs`.
    void pad_for_permlane(const std::vector<Reg>& regs, const std::string& why = "");

    std::string unique_label(const std::string& stem);
    const std::vector<Instruction>& program() const { return program_; }
    int count(Kind k) const;

private:
    Instruction make(const std::string& mnemonic, std::vector<Operand> operands, const std::string& modifiers,
                     const std::string& comment) const;
    void append(Instruction inst);
    std::vector<Instruction> program_;
    HazardState state_;
    std::map<std::string, HazardState> forward_;  // states carried by branches to labels not yet placed
    int labels_ = 0;
};

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
