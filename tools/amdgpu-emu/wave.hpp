// The architectural state of one wave64, plus what the checks need: which registers a pending
// load will still write (poisoned until the covering s_waitcnt), and when each register was last
// written by an MFMA or a VALU instruction (in wait states) for the hazard rules.
#ifndef ZYFA_AMDGPU_EMU_WAVE_HPP
#define ZYFA_AMDGPU_EMU_WAVE_HPP

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

namespace zyfa {
namespace emu {

constexpr int kLanes = 64;
constexpr int kSgprs = 104;  // s0..s101 addressable, plus room for flat_scratch/xnack
// Tracked register slots: VGPR i -> i, AGPR i -> 256 + i, SGPR i -> 512 + i, VCC 616..617,
// EXEC 618..619, M0 620.
constexpr int kSlotAgpr = 256, kSlotSgpr = 512, kSlotVcc = 616, kSlotExec = 618, kSlotM0 = 620, kSlots = 621;
constexpr int64_t kNever = -(int64_t(1) << 40);

enum class Counter : uint8_t { None, Vm, Lgkm };

struct SlotTrack {
    Counter pending = Counter::None;
    uint64_t pending_op = 0;
    uint64_t pending_pc = 0;
    int64_t mfma_write = kNever;  // wait-state count of the MFMA that wrote it
    int mfma_passes = 0;
    int mfma_first = 0, mfma_count = 0;  // the producing MFMA's whole destination (slots)
    uint64_t mfma_pc = 0;
    int64_t valu_write = kNever;
    int64_t salu_write = kNever;  // M0 -> direct-to-LDS load hazard
    int64_t any_write = kNever;   // DPP reads: any instruction's write counts (GCNHazardRecognizer)
    int64_t trans_write = kNever;
    int64_t srcc_read = kNever;  // an MFMA read it as SrcC
    int srcc_passes = 0;
    // VALU hazards of gfx940+ (runner.cpp, check_valu_hazards): a store that reads it as more than
    // 8 bytes of data, and a VALU that wrote part of it (SDWA dst_sel, VOP3 op_sel dst bit).
    int64_t wide_store_read = kNever;
    int64_t dst_sel_write = kNever;
    uint64_t valu_write_pc = 0;
};

struct OutstandingOp {
    uint64_t id;
    bool smem;  // lgkm only: scalar loads complete out of order with LDS
};

enum class WaveState { Running, AtBarrier, Done };

class Wave {
public:
    int id = 0;  // within the workgroup
    uint64_t pc = 0;
    WaveState state = WaveState::Running;
    std::array<uint32_t, kSgprs> s{};
    uint64_t exec = ~uint64_t(0), vcc = 0;
    uint32_t m0 = 0;
    bool scc = false;
    int priority = 0;
    int num_vgprs = 0, num_agprs = 0;
    std::vector<std::array<uint32_t, kLanes>> v, a;
    // Wait states issued so far (each instruction 1, s_nop N: N + 1).
    int64_t wait_states = 0;
    uint64_t instructions_issued = 0;
    std::array<SlotTrack, kSlots> track{};
    std::deque<OutstandingOp> vm, lgkm;

    bool lane_active(int lane) const { return (exec >> lane) & 1; }
};

}  // namespace emu
}  // namespace zyfa

#endif
