// One decoded instruction of an AMDGPU code object, as read from llvm-objdump-22's canonical
// text (disassembly.cpp explains why text and not the binary encoding).
#ifndef ZYFA_AMDGPU_EMU_INSTRUCTION_HPP
#define ZYFA_AMDGPU_EMU_INSTRUCTION_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace zyfa {
namespace emu {

enum class OperandKind { Vgpr, Agpr, Sgpr, Vcc, Exec, M0, Scc, Constant, Off, Label };

struct Operand {
    OperandKind kind = OperandKind::Constant;
    int index = 0;   // first register (Vcc/Exec: 0 = whole 64-bit, 1 = _lo, 2 = _hi)
    int count = 1;   // registers in the tuple
    // Constant: an integer (inline or literal) or an inline float constant.
    int64_t integer = 0;
    bool is_float = false;
    double real = 0.0;
    bool is_literal = false;  // 32-bit literal (printed as hex), zero-extended in 64-bit use
    bool neg = false, abs = false, sext = false;
    std::string text;
};

// DPP lane controls of gfx9 (docs/emulator.md, DPP).
enum class DppControl {
    None, QuadPerm, RowShl, RowShr, RowRor, WaveShl, WaveShr, WaveRol, WaveRor, RowMirror, RowHalfMirror,
    RowBcast15, RowBcast31, RowNewBcast
};

// Which hardware unit and which hazard/counter rules apply.
enum class Unit { Salu, Smem, Sopp, Valu, ValuTrans, Vmem, Ds, Mfma };

struct Instruction;
class Wave;
class WorkgroupRunner;
typedef void (*Handler)(WorkgroupRunner&, Wave&, const Instruction&);

struct Instruction {
    uint64_t address = 0;
    uint32_t size = 0;
    std::string text;      // the whole canonical line, for messages
    std::string mnemonic;  // as printed, e.g. v_add_f32_e32
    std::string base;      // without _e32/_e64/_sdwa/_dpp
    std::string encoding;  // "", "e32", "e64", "sdwa", "dpp"
    std::vector<Operand> ops;
    // Modifiers (absent ones keep their defaults).
    int64_t offset = 0, offset0 = 0, offset1 = 0;
    int op_sel[4] = {0, 0, 0, 0};
    int op_sel_hi[4] = {1, 1, 1, 1};
    int neg_lo[4] = {0, 0, 0, 0};
    int neg_hi[4] = {0, 0, 0, 0};
    bool clamp = false;
    float omod = 1.0f;
    int cbsz = 0, abid = 0, blgp = 0;
    int bitop3 = 0;
    // SDWA selections: 0..3 BYTE_n, 4..5 WORD_n, 6 DWORD; dst_unused 0 pad, 1 sext, 2 preserve.
    int dst_sel = 6, dst_unused = 0, src_sel[2] = {6, 6};
    bool lds = false;  // direct-to-LDS load
    // MUBUF addressing: the VGPR operand holds a byte offset (offen), an index (idxen), or both
    // (v[n] index, v[n+1] offset).
    bool offen = false, idxen = false;
    // DPP (encoding "dpp"): which lanes src0 is read from, and which lanes are written.
    DppControl dpp = DppControl::None;
    int dpp_arg[4] = {0, 0, 0, 0};  // quad_perm selectors, or the shift/rotate/broadcast count
    int row_mask = 0xf, bank_mask = 0xf;
    bool bound_ctrl = false;  // an invalid source lane reads 0 (else the lane is not written)
    // s_waitcnt limits (-1: not waited on).
    int vmcnt = -1, lgkmcnt = -1, expcnt = -1;
    uint64_t branch_target = 0;
    int64_t immediate = 0;  // SOPP/SOPK immediate
    // Bound at load time.
    Handler handler = nullptr;
    Unit unit = Unit::Valu;
    int num_dst = 1;  // leading operands written (the rest are read)
    bool reads_dst = false;
    int passes = 0;  // MFMA passes (4 cycles each)
};

}  // namespace emu
}  // namespace zyfa

#endif
