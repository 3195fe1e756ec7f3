// A static proof that every MFMA of an AMDGPU code object runs with a full EXEC, from
// llvm-objdump's canonical listing (the rule "uniform-mfma" of code_object_check.cpp).
//
// Why: what the matrix unit does with inactive lanes is not documented in the sources zyfa
// relies on (docs/emulator.md, ISA facts), and the compiler may sink an MFMA whose result only one side of
// a divergent branch uses into that branch. The emulator rejects such an MFMA when it executes
// one; this check covers every path of every object without running it.
//
// Method: a forward dataflow analysis over the listing's control-flow graph. Each 64-bit lane mask
// (EXEC, VCC, every SGPR pair) is a boolean function of at most six opaque "atoms" (a compare
// result, a value this analysis does not follow, or the merge of differing values at a join),
// stored as a truth table, so that the compiler's exec-mask idioms (s_and_saveexec / s_xor /
// s_andn2_saveexec / s_or exec, loop break masks) are evaluated exactly: the mask restored after a
// divergent region is proven to be the full mask only if it is, as a function of its atoms.
// At kernel entry EXEC is the full mask (the workgroup is whole wave64s; the launch plan's block
// is kThreads = 8 waves). Anything the analysis does not model that writes a mask register makes
// it opaque, so an unproven MFMA is reported, never missed.
#ifndef ZYFA_TESTS_AMD_EXEC_MASK_ANALYSIS_HPP
#define ZYFA_TESTS_AMD_EXEC_MASK_ANALYSIS_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace zyfa_amd_check {

struct ExecFinding {
    uint64_t address = 0;
    std::string kernel;        // the function label the instruction belongs to
    uint64_t kernel_offset = 0;
    std::string instruction;   // the listing's text, without the encoding comment
};

struct ExecReport {
    size_t mfma_count = 0;                  // MFMAs reached from a kernel entry
    std::vector<ExecFinding> partial_exec;  // MFMAs where EXEC is not proven full
    std::string error;                      // the listing could not be analysed (unparsed branch, ...)
};

// `listing`: llvm-objdump -d --mcpu=gfxNNN output of one code object.
ExecReport find_mfma_under_partial_exec(const std::string& listing);

}  // namespace zyfa_amd_check

#endif
