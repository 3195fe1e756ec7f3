// A cycle ESTIMATE for one SIMD running two waves: how busy the MFMA pipe is in a kernel's
// steady-state loop. It replays instruction traces the emulator recorded (runner.hpp,
// LaunchConfig::trace: the dynamic path, so branches are resolved) through a simple issue model.
// It is not a hardware simulator; docs/emulator.md lists what it assumes and ignores.
//
// The model, per cycle, for the two waves of one SIMD:
//   - each wave issues its trace in order, at most one instruction per cycle; when both waves
//     could use the same pipe, the wave with the higher s_setprio goes first, ties go to the wave
//     that issued less recently;
//   - MFMA: one matrix pipe per SIMD, busy 4 * passes cycles per instruction (docs/emulator.md,
//     ISA facts); an instruction that reads an MFMA's destination waits until it completes (a chained
//     MFMA on the same accumulator simply queues on the pipe);
//   - VALU: one VALU pipe, each instruction busy for the cycles of its class (CycleParams, the
//     table in docs/emulator.md "Cycle model costs": 32-bit and packed fp32 one pass of 4 cycles,
//     conversions one pass, transcendentals quarter rate, 16 cycles); after an MFMA issues, a VALU
//     of the same wave waits out the co-execution hold (1 + A-operand bytes / 16 passes; packed
//     fp32 NumPasses + 2, + 1 when the A operand is 16 bytes or more);
//   - LDS: one DS pipe shared by the SIMD, an instruction occupies it bytes-per-wave /
//     lds_bytes_per_cycle; its data is back lds_latency cycles after issue, in order;
//   - global/buffer memory: data back memory_latency cycles after issue, in order; scalar loads
//     smem_latency, out of order (only lgkmcnt(0) waits for them); bandwidth is not modelled;
//   - s_waitcnt blocks until enough of the wave's operations are back; s_nop N idles N + 1
//     cycles; s_barrier releases when both waves have arrived (the other SIMDs' waves are assumed
//     to arrive at the same time); SALU, branches and other scalar instructions take one cycle.
#ifndef ZYFA_AMDGPU_EMU_CYCLE_MODEL_HPP
#define ZYFA_AMDGPU_EMU_CYCLE_MODEL_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "code_object.hpp"
#include "instruction.hpp"

namespace zyfa {
namespace emu {

// Costs in cycles of one SIMD (docs/emulator.md, "Cycle model costs", gives each one's source).
// A pass is 4 cycles: a wave64 over 16 lanes. Where AMD's ISA guides give no rate, LLVM's AMDGPU
// scheduling model for gfx942/gfx950 (SISchedule.td, slots of one pass) and LLVM's MFMA
// co-execution rules (pull request 233721, fitted to MI300X / MI350X thread traces), with two
// documented departures: conversions at one pass (ZYFA's published Lean P budget for MI355X, 384
// cycles = 96 one-pass instructions, contradicts LLVM's quarter-rate WriteFloatCvt, which LLVM
// itself says comes from a GCN-era guide), and the holds applied to the MFMA's own wave only.
// gfx942 (CDNA3) takes the same costs: its VALU is the same 16-lane SIMD (a wave64 pass is 4
// cycles), LLVM schedules gfx940 and gfx950 with these classes, and the MFMA passes follow the
// shape (mfma_passes(): 32x32x8 bf16 on CDNA3 is 8 passes, 16,384 FLOP in 32 cycles, AMD's matrix
// instruction calculator for CDNA3 (ROCm/amd_matrix_instruction_calculator); it matches MI300X's 1,307
// dense BF16 TFLOP/s = 304 CUs x 4 SIMDs x 512 FLOP/cycle x 2.1 GHz).
struct CycleParams {
    int valu_cycles = 4;            // 32-bit and 64-bit VALU, SDWA and DPP forms: Write32Bit / Write64Bit = 1 pass
    int packed_f32_cycles = 4;      // v_pk_{fma,mul,add}_f32, v_pk_mov_b32: 1 pass (2 results per lane)
    int trans_cycles = 16;          // v_exp/log/rcp/rsq/sqrt/sin/cos: WriteTrans32 = 4 passes (quarter rate)
    int cvt_cycles = 4;             // f32<->i32/u32/f16/fp8 conversions: 1 pass (LLVM's WriteFloatCvt: 4 passes)
    bool mfma_coexec_holds = true;  // the VALU / packed-fp32 holds after an MFMA issue (LLVM PR 233721)
    bool coexec_per_simd = false;   // the holds apply to both waves of the SIMD (default: the MFMA's own wave)
    int lds_bytes_per_cycle = 128;  // DS pipe bandwidth available to this SIMD
    int lds_latency = 64;           // DS issue -> data
    int memory_latency = 500;       // global/buffer issue -> data
    int smem_latency = 200;         // s_load issue -> data
};

// The instruction counts of one steady-state loop iteration (wave 0).
struct LoopMix {
    double mfma = 0, valu = 0, trans = 0, lds = 0, vmem = 0, salu = 0, waitcnt = 0, barrier = 0, nop_cycles = 0;
    double cvt = 0, packed_f32 = 0;  // of valu: conversions, packed fp32
    double mfma_pipe_cycles = 0;     // sum of 4 * passes
    double valu_pipe_cycles = 0;     // sum of the VALU costs (all classes)
};

struct CycleEstimate {
    bool loop_found = false;
    std::string message;           // why no estimate, when loop_found is false
    uint64_t loop_branch = 0;      // PC of the loop's backward branch
    int iterations = 0;            // loop trips of wave 0 in the trace
    int window_iterations = 0;     // steady-state trips measured (first and last excluded)
    double window_cycles = 0;      // length of the measured window
    double mfma_busy_cycles = 0;   // MFMA pipe busy cycles inside the window (both waves)
    double mfma_busy_fraction = 0; // mfma_busy_cycles / window_cycles
    double cycles_per_iteration = 0;
    LoopMix mix;                   // per iteration of wave 0
};

// The cost class of a VALU instruction (Unit::Valu or Unit::ValuTrans).
enum class ValuClass { Plain, PackedF32, Trans, Cvt };
ValuClass valu_class(const Instruction& inst);
int valu_cost(const Instruction& inst, const CycleParams& params);

// traces[0] and traces[1]: the PCs the two waves sharing the SIMD executed (whole kernel).
// The loop is the backward branch of wave 0's trace whose iterations hold the most MFMAs.
CycleEstimate estimate_mfma_busy(const CodeObject& object, const std::vector<uint64_t>& wave_a,
                                 const std::vector<uint64_t>& wave_b, const CycleParams& params);

}  // namespace emu
}  // namespace zyfa

#endif
