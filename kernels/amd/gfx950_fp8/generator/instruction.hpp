// One gfx950 instruction as the generator sees it: the text the assembler reads, plus what the
// hazard checker needs (which registers it reads and writes, in which role, which counter it
// increments, how many wait states it stands for).
#ifndef ZYFA_GFX950_FP8_INSTRUCTION_HPP
#define ZYFA_GFX950_FP8_INSTRUCTION_HPP

#include <string>
#include <vector>

namespace zyfa {
namespace gfx950_fp8 {

enum class RegFile { Vgpr, Sgpr };

// A run of consecutive registers: v[first : first + count - 1] or s[...].
struct Reg {
    RegFile file = RegFile::Vgpr;
    int first = -1;
    int count = 0;

    Reg() = default;
    Reg(RegFile f, int base, int n) : file(f), first(base), count(n) {}
    bool valid() const { return first >= 0 && count > 0; }
    // The i-th register (or sub-run) of this run.
    Reg at(int i, int n = 1) const;
    std::string text() const;  // v7, v[8:15], s[2:3]
    bool overlaps(const Reg& o) const {
        return file == o.file && first < o.first + o.count && o.first < first + count;
    }
    bool same(const Reg& o) const { return file == o.file && first == o.first && count == o.count; }
};

inline Reg vgpr(int first, int count = 1) { return Reg(RegFile::Vgpr, first, count); }
constexpr int kVccSgpr = 106;  // VCC as the SGPR pair the hazard rules track (s106:107 on gfx9)
inline Reg vcc_reg() { return Reg(RegFile::Sgpr, kVccSgpr, 2); }
inline Reg sgpr(int first, int count = 1) { return Reg(RegFile::Sgpr, first, count); }

// What an instruction is, for the hazard and counter rules of docs/emulator.md (ISA facts).
enum class Kind {
    Salu,
    Valu,
    Permlane,    // v_permlane*_swap: reads need 2 wait states after a VALU write
    Mfma,
    DsRead,      // lgkmcnt, in order
    DsWrite,     // lgkmcnt, in order
    GlobalLoad,  // vmcnt, in order
    GlobalStore, // vmcnt
    Smem,        // lgkmcnt, out of order: only lgkmcnt(0) retires it
    Waitcnt,
    Nop,
    Branch,      // unconditional
    CondBranch,
    Label,
    Barrier,
    ExecChange,  // writes EXEC (lane masking); MFMAs must not run under a partial EXEC
    Other,       // s_setprio, s_endpgm
};

enum class Role { Read, Write, MfmaA, MfmaB, MfmaC, MfmaScale };

struct Operand {
    std::string text;  // empty: an implicit operand, tracked but not printed
    Reg reg;  // invalid for immediates, labels, vcc, exec, ...
    Role role = Role::Read;
};

struct Instruction {
    Kind kind = Kind::Other;
    std::string mnemonic;
    std::vector<Operand> operands;  // in printed order
    std::string modifiers;          // printed after the operands
    std::string comment;
    int mfma_passes = 0;
    int vmcnt = -1, lgkmcnt = -1;  // Waitcnt: -1 = not waited on
    int nop_count = 0;             // Nop: s_nop N stands for N + 1 wait states
    std::string label;             // Label / branch target
    int exec_depth_change = 0;     // ExecChange: +1 narrows EXEC, -1 restores it
    std::string text() const;
    // Wait states this instruction stands for (docs/emulator.md, MFMA hazards: one per instruction).
    int wait_states() const;
};

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
