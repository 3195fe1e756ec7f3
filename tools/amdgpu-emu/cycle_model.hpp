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
//   - VALU: one VALU pipe, valu_cycles per instruction (trans_cycles for v_exp/log/rcp/rsq/sqrt);
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

namespace zyfa {
namespace emu {

struct CycleParams {
    int valu_cycles = 1;            // a VALU instruction's cycles on the VALU pipe
    int trans_cycles = 4;           // a transcendental VALU instruction's
    int lds_bytes_per_cycle = 128;  // DS pipe bandwidth available to this SIMD
    int lds_latency = 64;           // DS issue -> data
    int memory_latency = 500;       // global/buffer issue -> data
    int smem_latency = 200;         // s_load issue -> data
};

// The instruction counts of one steady-state loop iteration (wave 0).
struct LoopMix {
    double mfma = 0, valu = 0, trans = 0, lds = 0, vmem = 0, salu = 0, waitcnt = 0, barrier = 0, nop_cycles = 0;
    double mfma_pipe_cycles = 0;  // sum of 4 * passes
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

// traces[0] and traces[1]: the PCs the two waves sharing the SIMD executed (whole kernel).
// The loop is the backward branch of wave 0's trace whose iterations hold the most MFMAs.
CycleEstimate estimate_mfma_busy(const CodeObject& object, const std::vector<uint64_t>& wave_a,
                                 const std::vector<uint64_t>& wave_b, const CycleParams& params);

}  // namespace emu
}  // namespace zyfa

#endif
