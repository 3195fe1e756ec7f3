// The generator's own hazard and counter accounting (docs/emulator.md, ISA facts). gfx950 does not
// interlock MFMA results or memory returns: instruction order alone makes a schedule correct.
//
// HazardState follows one path through the code: which registers wait on an outstanding load
// (vmcnt / lgkmcnt), how many wait states ago an MFMA or VALU wrote each VGPR, whether EXEC is
// narrowed. The emitter asks it how many s_nop / which s_waitcnt a read needs (the schedule asks
// for those explicitly), and check_program() runs it over the whole program, following branches
// and the loop's back edge to a fixpoint: the generator refuses to write a program it finds a
// hazard in.
//
// Rules (wait states between producer and consumer; P = passes of the producing MFMA):
//   MFMA write -> VALU / permlane / LDS / global read or overwrite, MFMA SrcA/B   P + 4
//   MFMA write -> MFMA SrcC of exactly the same registers                       0
//   MFMA write -> MFMA SrcC partially overlapping                               P + 1
//   MFMA SrcC read -> VALU overwrite                                            1/3/7/15 (P 2/4/8/16)
//   VALU write -> MFMA read (scale operands included), -> v_permlane*_swap      2
//   VALU writes an SGPR or VCC -> a VALU reads it (gfx940+, VDecCoExec)        2
//   VALU writes an SGPR -> a global load/store reads it (gfx9)                  5
//   VALU writes a VGPR -> v_readfirstlane / v_readlane reads it                1
//   VALU writes part of a VGPR -> a VALU / MFMA reads or overwrites it         1
//     (gfx940+ dst-sel forwarding, GCNHazardRecognizer: SDWA dst_sel other than DWORD, a VOP3
//     op_sel destination bit, any v_pk_* with op_sel_hi[0] = 1, the default; writes_part_of_vgpr)
//   a register written by a load is neither read nor overwritten until an s_waitcnt retires it
//   (in order within vmcnt and within the LDS part of lgkmcnt; scalar loads only at lgkmcnt(0))
//   no MFMA while EXEC is narrowed.
#ifndef ZYFA_GFX950_FP8_HAZARD_CHECKER_HPP
#define ZYFA_GFX950_FP8_HAZARD_CHECKER_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "instruction.hpp"

namespace zyfa {
namespace gfx950_fp8 {

constexpr int kVgprCount = 512;
constexpr int kSgprCount = 108;

class HazardState {
public:
    HazardState();

    // "" when `inst` may issue now, else what it violates.
    std::string check(const Instruction& inst) const;
    void issue(const Instruction& inst, int index);  // index: the instruction's place in the program

    // Wait states still needed before `inst` may issue (0 when none).
    int wait_states_needed(const Instruction& inst) const;
    // The s_waitcnt counts that retire every load writing one of `regs` (-1: no wait needed).
    void counts_needed(const std::vector<Reg>& regs, int& vmcnt, int& lgkmcnt) const;

    // Joins the state of another path into this one (the worst of both).
    void merge(const HazardState& other);
    bool operator==(const HazardState& other) const;
    bool reachable = true;

private:
    struct Op {
        int id;
        bool smem;
    };
    struct VgprState {
        int64_t mfma_write = kNever;  // clock of the MFMA that wrote it
        int mfma_passes = 0;
        int mfma_first = -1, mfma_count = 0;  // that MFMA's destination run
        int64_t valu_write = kNever;
        int64_t partial_write = kNever;  // clock of the last VALU that wrote only part of it
        int64_t srcc_read = kNever;
        int srcc_passes = 0;
        bool operator==(const VgprState& o) const {
            return mfma_write == o.mfma_write && mfma_passes == o.mfma_passes && mfma_first == o.mfma_first &&
                   mfma_count == o.mfma_count && valu_write == o.valu_write && partial_write == o.partial_write &&
                   srcc_read == o.srcc_read &&
                   srcc_passes == o.srcc_passes;
        }
    };
    static constexpr int64_t kNever = INT64_MIN / 4;
    static constexpr int64_t kForget = 64;  // no rule needs more wait states than this

    int pending_op(const Reg& r, int index) const;  // op id a register waits on, or -1
    bool outstanding(int op) const;
    int64_t since(int64_t at) const { return at == kNever ? kForget : clock_ - at; }
    void normalise();

    int64_t clock_ = 0;
    std::vector<VgprState> vgprs_;
    std::vector<int64_t> sgpr_valu_write_;  // clock of the last VALU write of each SGPR (VCC included)
    std::vector<int> vgpr_pending_, sgpr_pending_;  // op id or -1
    std::vector<Op> vm_, lgkm_;                    // outstanding, oldest first
    int exec_depth_ = 0;
};

// Runs HazardState over the program, following branches to a fixpoint. Returns "" or the first
// hazard found, naming the instruction.
std::string check_program(const std::vector<Instruction>& program);

// Whether a VALU instruction writes only part of its destination VGPR, as gfx940+'s dst-sel
// forwarding hazard counts it (from the instruction's mnemonic and modifiers).
bool writes_part_of_vgpr(const Instruction& inst);

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
