// Runs kernels: one workgroup (its waves interleaved by a seeded scheduler, s_barrier, shared LDS
// with a race check) or a whole grid (workgroups spread over host threads). Also the helpers the
// instruction semantics use to read and write operands and memory with every check applied.
#ifndef ZYFA_AMDGPU_EMU_RUNNER_HPP
#define ZYFA_AMDGPU_EMU_RUNNER_HPP

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "code_object.hpp"
#include "instruction.hpp"
#include "wave.hpp"

namespace zyfa {
namespace emu {

// Host memory the kernel may touch (device memory is host memory). Anything else is an
// out-of-bounds access.
struct MemoryRange {
    uint64_t base = 0, size = 0;
    bool writable = true;
};

struct LaunchConfig {
    uint32_t grid[3] = {1, 1, 1};   // workgroups
    uint32_t block[3] = {64, 1, 1};  // work-items per workgroup
    std::vector<uint8_t> kernarg;    // the kernarg segment as the kernel reads it
    uint32_t dynamic_lds = 0;
    uint64_t seed = 1;
    bool random_schedule = true;  // false: round robin, one instruction per turn
    int threads = 0;               // 0: ZYFA_EMU_THREADS or the host's cores
    std::vector<MemoryRange> memory;
    // When set: the PCs each wave of workgroup trace_group executes, in order (cycle_model.hpp).
    std::vector<std::vector<uint64_t>>* trace = nullptr;
    // Which workgroup to trace: not always workgroup 0, e.g. in a top-left causal grid only the
    // last query workgroup sees every key. Must lie inside grid when trace is set.
    uint32_t trace_group[3] = {0, 0, 0};
};

struct RunStats {
    uint64_t instructions = 0;
    uint64_t workgroups = 0;
};

// Runs the grid; throws EmuError with the first fault (workgroup, wave, PC, instruction).
RunStats run_kernel(const CodeObject& object, const Kernel& kernel, const LaunchConfig& config);

enum class ReadRole { Valu, Memory, MfmaAB, MfmaC, Permlane, Salu, Dpp };
enum class WriteRole { Valu, Load, Mfma, Salu };

// The per-byte record the LDS race check keeps.
struct LdsByteTrack {
    uint32_t write_epoch = 0;
    uint32_t read_epoch = 0;
    uint64_t write_op = 0;
    uint16_t read_mask = 0;
    int8_t writer = -1;
    bool atomic = false;
    Counter write_counter = Counter::None;
};

class WorkgroupRunner {
public:
    WorkgroupRunner(const CodeObject& object, const Kernel& kernel, const LaunchConfig& config,
                    const uint32_t group_id[3], uint64_t kernarg_address, const std::vector<MemoryRange>& memory);
    uint64_t run();

    const Arch arch;
    const Kernel& kernel;

    // Operand access for the current lane. Floating modifiers (neg, abs) act on the sign bit.
    uint32_t read32(const Wave& w, const Operand& op, int lane) const;
    uint64_t read64(const Wave& w, const Operand& op, int lane, bool as_double = false) const;
    void write32(Wave& w, const Operand& op, int lane, uint32_t value);
    void write64(Wave& w, const Operand& op, int lane, uint64_t value);
    // The k-th 32-bit register of a VGPR/AGPR tuple operand.
    uint32_t& reg(Wave& w, const Operand& op, int k, int lane);
    uint32_t reg_value(const Wave& w, const Operand& op, int k, int lane) const;
    // A wave-wide 64-bit mask operand (SGPR pair, VCC, EXEC) or scalar 64-bit value.
    uint64_t read_scalar64(const Wave& w, const Operand& op) const;
    void write_scalar64(Wave& w, const Operand& op, uint64_t value);
    uint32_t read_scalar32(const Wave& w, const Operand& op) const { return read32(w, op, 0); }
    void write_scalar32(Wave& w, const Operand& op, uint32_t value) { write32(w, op, 0, value); }

    // Memory with bounds checks (and the LDS race check).
    void global_read(Wave& w, const Instruction& inst, uint64_t address, void* out, uint32_t bytes);
    void global_write(Wave& w, const Instruction& inst, uint64_t address, const void* in, uint32_t bytes);
    void lds_read(Wave& w, const Instruction& inst, uint64_t address, void* out, uint32_t bytes);
    void lds_write(Wave& w, const Instruction& inst, uint64_t address, const void* in, uint32_t bytes,
                   bool atomic = false, Counter counter = Counter::Lgkm);
    // Bytes for an atomic read-modify-write (bounds-checked; the write goes through lds_write).
    const uint8_t* lds_peek(Wave& w, const Instruction& inst, uint64_t address, uint32_t bytes);
    uint32_t lds_size() const { return static_cast<uint32_t>(lds_.size()); }
    uint64_t current_op() const { return current_op_; }

    [[noreturn]] void fail(const Wave& w, const Instruction& inst, const std::string& message) const;
    [[noreturn]] void fail(const Wave& w, const std::string& message) const;

private:
    std::string located(const Wave& w, const Instruction& inst, const std::string& message) const;
    void dst_sel_hazard(const Wave& w, const Instruction& inst, const std::string& message) const;

private:
    void init_waves(const LaunchConfig& config, uint64_t kernarg_address);
    bool step(Wave& w);
    void check_operands(Wave& w, const Instruction& inst);
    void check_valu_hazards(Wave& w, const Instruction& inst);
    void update_tracking(Wave& w, const Instruction& inst);
    void check_read(Wave& w, const Instruction& inst, int slot, ReadRole role, const Operand& op);
    void check_write(Wave& w, const Instruction& inst, int slot, WriteRole role, const Operand& op, int first,
                     int count);
    void wait_counters(Wave& w, const Instruction& inst);
    void execute_dpp(Wave& w, const Instruction& inst);
    int slot_of(const Wave& w, const Instruction* inst, const Operand& op, int k) const;
    std::string slot_name(int slot) const;
    int mfma_result_wait(int passes) const;
    bool op_outstanding(const Wave& w, Counter counter, uint64_t op) const;

    const CodeObject& object_;
    std::vector<Wave> waves_;
    std::vector<uint8_t> lds_;
    std::vector<LdsByteTrack> lds_track_;
    uint32_t epoch_ = 1;
    // Memory operations still outstanding when their wave reached an s_barrier: their LDS data is
    // not guaranteed visible to the other waves after that barrier.
    std::vector<uint64_t> unfenced_;
    std::mt19937_64 rng_;
    bool random_;
    const std::vector<MemoryRange>& memory_;
    uint32_t group_id_[3];
    uint64_t next_op_ = 1;
    uint64_t current_op_ = 0;
    uint64_t instructions_ = 0;
    std::vector<std::vector<uint64_t>>* trace_ = nullptr;
    // While a DPP instruction executes: its src0 operand and the values read32 returns for it
    // (each lane's permuted source).
    const Operand* dpp_operand_ = nullptr;
    std::array<uint32_t, kLanes> dpp_values_{};
};

// Registry of instruction semantics (semantics_*.cpp).
struct HandlerInfo {
    Handler handler;
    Unit unit;
    int num_dst;
    bool reads_dst;  // the destination is also a source (fmac, writelane, permlane swaps, d16_hi loads)
};
const HandlerInfo* find_handler(const std::string& base, const std::string& mnemonic);
int mfma_passes(const Instruction& inst);

}  // namespace emu
}  // namespace zyfa

#endif
