// Decoding: the code object's text section as llvm-objdump-22 prints it, parsed into
// Instructions and bound to the emulator's handlers.
//
// Why text rather than the binary: the GCN/CDNA encodings (VOP1/2/3/3P/C, SDWA, DPP, MAI with
// its 16-byte scaled form, SMEM, DS, FLAT/GLOBAL, MUBUF, literals) are large tables that LLVM
// already maintains and tests for every gfx942/gfx950 instruction, and llvm-objdump-22 is the
// same LLVM that assembles zyfa's code. Its canonical syntax names every operand and modifier
// explicitly, so the emulator's own decoder is a small parser whose failures are loud (an
// unknown mnemonic or operand is an error naming it) instead of a second encoding table that
// could silently disagree. The cost is a run of llvm-objdump-22 per code object load (it is a
// build dependency anyway; ZYFA_EMU_OBJDUMP overrides the path).
#ifndef ZYFA_AMDGPU_EMU_DISASSEMBLY_HPP
#define ZYFA_AMDGPU_EMU_DISASSEMBLY_HPP

#include <string>
#include <vector>

#include "code_object.hpp"
#include "instruction.hpp"

namespace zyfa {
namespace emu {

std::vector<Instruction> disassemble(const void* elf, size_t size, Arch arch);

// Parses one objdump line ("\tmnemonic operands  // ADDR: HEX..."); false when it is not an
// instruction line. Throws EmuError on an operand it cannot read.
bool parse_instruction_line(const std::string& line, Instruction& out);

// Binds the handler, unit and destination count; leaves handler null when unknown.
void bind_instruction(Instruction& inst, Arch arch);

std::string objdump_path();

}  // namespace emu
}  // namespace zyfa

#endif
