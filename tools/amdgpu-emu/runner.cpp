#include "runner.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "emu_error.hpp"

namespace zyfa {
namespace emu {

namespace {

std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

// The operand index of a store's data when it is wider than 8 bytes and so can be overwritten by
// the next instructions before the store has read it (GCNHazardRecognizer::createsVALUHazard:
// FLAT/GLOBAL data over 64 bits; MUBUF data over 64 bits unless soffset is an SGPR), else -1.
int wide_store_data_operand(const Instruction& inst) {
    if (inst.unit != Unit::Vmem || inst.mnemonic.find("_store_") == std::string::npos) return -1;
    const bool buffer = inst.mnemonic.rfind("buffer_", 0) == 0;
    const bool flat = inst.mnemonic.rfind("global_", 0) == 0 || inst.mnemonic.rfind("flat_", 0) == 0;
    const size_t data = buffer ? 0 : 1;
    if ((!buffer && !flat) || inst.ops.size() <= data) return -1;
    const Operand& op = inst.ops[data];
    if ((op.kind != OperandKind::Vgpr && op.kind != OperandKind::Agpr) || op.count <= 2) return -1;
    if (buffer && (inst.ops.size() < 4 || inst.ops[3].kind == OperandKind::Sgpr || inst.ops[3].kind == OperandKind::M0)) {
        return -1;
    }
    return static_cast<int>(data);
}

// A VALU that writes only part of its destination, shifting the result into place: SDWA with a
// dst_sel other than DWORD, or a VOP3 op_sel with the destination bit (the bit after the sources').
// GCNHazardRecognizer::getDstSelForwardingOperand (hasDstSelForwardingHazard, gfx940+). It tests
// the DST_OP_SEL bit of src0_modifiers, which VOP3P shares with op_sel_hi[0] (SISrcMods), so LLVM
// also treats every v_pk_* with op_sel_hi[0] = 1 (the default) as a producer: llc-22
// -run-pass=post-RA-hazard-rec puts an s_nop 0 between v_pk_add_f32 and a v_mov of its result on
// gfx942 and gfx950, and none with op_sel_hi[0] = 0. The emulator follows LLVM.
bool partial_dst_write(const Instruction& inst) {
    if (inst.encoding == "sdwa") return inst.dst_sel != 6;
    if (inst.base.rfind("v_pk_", 0) == 0) return inst.op_sel_hi[0] != 0;
    const int sources = static_cast<int>(inst.ops.size()) - inst.num_dst;
    return sources >= 0 && sources < 4 && inst.op_sel[sources] != 0;
}


}  // namespace

WorkgroupRunner::WorkgroupRunner(const CodeObject& object, const Kernel& k, const LaunchConfig& config,
                                 const uint32_t group_id[3], uint64_t kernarg_address,
                                 const std::vector<MemoryRange>& memory)
    : arch(object.arch()), kernel(k), object_(object),
      // Each workgroup's schedule depends only on the seed and its own index.
      rng_(config.seed * 0x9E3779B97F4A7C15ull ^
           (uint64_t(group_id[0]) | uint64_t(group_id[1]) << 21 | uint64_t(group_id[2]) << 42)),
      random_(config.random_schedule),
      memory_(memory) {
    std::memcpy(group_id_, group_id, sizeof group_id_);
    if (config.trace && group_id[0] == config.trace_group[0] && group_id[1] == config.trace_group[1] &&
        group_id[2] == config.trace_group[2]) {
        trace_ = config.trace;
    }
    const uint32_t lds_bytes = k.descriptor.group_segment_fixed_size + config.dynamic_lds;
    const uint32_t lds_limit = arch == Arch::Gfx950 ? 163840 : 65536;
    if (lds_bytes > lds_limit) {
        throw EmuError("launch: kernel " + k.name + " needs " + std::to_string(lds_bytes) + " bytes of LDS, " +
                       arch_name(arch) + " has " + std::to_string(lds_limit));
    }
    lds_.assign(lds_bytes, 0);
    lds_track_.assign(lds_bytes, LdsByteTrack());
    init_waves(config, kernarg_address);
    if (trace_) trace_->assign(waves_.size(), {});
}

void WorkgroupRunner::init_waves(const LaunchConfig& config, uint64_t kernarg_address) {
    const KernelDescriptor& d = kernel.descriptor;
    if (d.private_segment_fixed_size != 0) {
        throw EmuError("launch: kernel " + kernel.name + " uses scratch (private segment), which is not modelled");
    }
    if (d.code_properties & (1u << 10)) throw EmuError("launch: wave32 kernels are not modelled");
    const uint32_t threads = config.block[0] * config.block[1] * config.block[2];
    const int nwaves = static_cast<int>((threads + kLanes - 1) / kLanes);
    if (nwaves > 16) throw EmuError("launch: more than 1024 work-items per workgroup");
    waves_.resize(nwaves);
    for (int wi = 0; wi < nwaves; ++wi) {
        Wave& w = waves_[wi];
        w.id = wi;
        w.pc = kernel.entry;
        w.num_vgprs = d.accum_offset;
        w.num_agprs = d.total_vgprs - d.accum_offset;
        if (w.num_agprs < 0) w.num_agprs = 0;
        w.v.assign(w.num_vgprs, std::array<uint32_t, kLanes>{});
        w.a.assign(w.num_agprs, std::array<uint32_t, kLanes>{});
        int sgpr = 0;
        auto need = [&](int bit, const char* what) {
            if (d.code_properties & (1u << bit)) {
                throw EmuError(std::string("launch: kernel requests the ") + what + " user SGPRs, not modelled");
            }
        };
        need(0, "private segment buffer");
        need(1, "dispatch pointer");
        need(2, "queue pointer");
        if (d.code_properties & (1u << 3)) {
            w.s[sgpr++] = static_cast<uint32_t>(kernarg_address);
            w.s[sgpr++] = static_cast<uint32_t>(kernarg_address >> 32);
        }
        need(4, "dispatch id");
        need(5, "flat scratch init");
        need(6, "private segment size");
        // Kernarg preload (gfx940+): dwords of the kernarg segment in the following user SGPRs.
        const int preload_dwords = d.kernarg_preload & 0x7f;
        const int preload_offset = (d.kernarg_preload >> 7) * 4;
        for (int i = 0; i < preload_dwords; ++i) {
            uint32_t value = 0;
            if (preload_offset + 4 * i + 4 <= static_cast<int>(config.kernarg.size())) {
                std::memcpy(&value, config.kernarg.data() + preload_offset + 4 * i, 4);
            }
            w.s[sgpr++] = value;
        }
        if (sgpr != d.user_sgpr_count) {
            throw EmuError("launch: descriptor declares " + std::to_string(d.user_sgpr_count) +
                           " user SGPRs, the enabled fields give " + std::to_string(sgpr));
        }
        for (int i = 0; i < 3; ++i) {
            if (d.workgroup_id[i]) w.s[sgpr++] = group_id_[i];
        }
        if (d.rsrc2 & (1u << 10)) throw EmuError("launch: workgroup info SGPR not modelled");
        w.exec = 0;
        for (int lane = 0; lane < kLanes; ++lane) {
            const uint32_t t = static_cast<uint32_t>(wi * kLanes + lane);
            if (t >= threads) continue;
            w.exec |= uint64_t(1) << lane;
            const uint32_t x = t % config.block[0];
            const uint32_t y = (t / config.block[0]) % config.block[1];
            const uint32_t z = t / (config.block[0] * config.block[1]);
            uint32_t packed = x;
            if (d.workitem_id_dims >= 1) packed |= y << 10;
            if (d.workitem_id_dims >= 2) packed |= z << 20;
            if (w.num_vgprs > 0) w.v[0][lane] = packed;
        }
    }
}

std::string WorkgroupRunner::located(const Wave& w, const Instruction& inst, const std::string& message) const {
    return message + "\n  at PC " + hex(inst.address) + " (" + kernel.name + "+" + hex(inst.address - kernel.entry) +
           "): " + inst.text + "\n  workgroup (" + std::to_string(group_id_[0]) + "," + std::to_string(group_id_[1]) +
           "," + std::to_string(group_id_[2]) + "), wave " + std::to_string(w.id) + ", " + arch_name(arch);
}

[[noreturn]] void WorkgroupRunner::fail(const Wave& w, const Instruction& inst, const std::string& message) const {
    throw EmuError(located(w, inst, message));
}

// The dst-sel forwarding rule is an error like the other hazards (every code object of zyfa keeps
// it). ZYFA_EMU_DST_SEL_HAZARD=warning reports it instead, once per kernel address, and runs on:
// for looking into code objects from elsewhere.
void WorkgroupRunner::dst_sel_hazard(const Wave& w, const Instruction& inst, const std::string& message) const {
    const char* mode = std::getenv("ZYFA_EMU_DST_SEL_HAZARD");
    if (!mode || std::strcmp(mode, "warning") != 0) fail(w, inst, message);
    static std::mutex reported_mutex;
    static std::set<std::string> reported;
    const std::string key = std::string(arch_name(arch)) + ":" + kernel.name + "+" + hex(inst.address - kernel.entry);
    std::lock_guard<std::mutex> lock(reported_mutex);
    if (!reported.insert(key).second) return;
    std::fprintf(stderr, "zyfa ISA emulator warning (ZYFA_EMU_DST_SEL_HAZARD=warning; an error without it): %s\n",
                 located(w, inst, message).c_str());
}

[[noreturn]] void WorkgroupRunner::fail(const Wave& w, const std::string& message) const {
    throw EmuError(message + "\n  at PC " + hex(w.pc) + ", workgroup (" + std::to_string(group_id_[0]) + "," +
                   std::to_string(group_id_[1]) + "," + std::to_string(group_id_[2]) + "), wave " +
                   std::to_string(w.id));
}

// ---------------------------------------------------------------- operands

int WorkgroupRunner::slot_of(const Wave& w, const Instruction* inst, const Operand& op, int k) const {
    auto bad = [&](const std::string& why) -> int {
        if (inst) fail(w, *inst, why);
        fail(w, why);
    };
    switch (op.kind) {
        case OperandKind::Vgpr:
            if (op.index + k >= w.num_vgprs) {
                return bad("v" + std::to_string(op.index + k) + " is beyond the kernel's " +
                           std::to_string(w.num_vgprs) + " arch VGPRs (descriptor accum_offset)");
            }
            return op.index + k;
        case OperandKind::Agpr:
            if (op.index + k >= w.num_agprs) {
                return bad("a" + std::to_string(op.index + k) + " is beyond the kernel's " +
                           std::to_string(w.num_agprs) + " AGPRs (descriptor)");
            }
            return kSlotAgpr + op.index + k;
        case OperandKind::Sgpr:
            if (op.index + k >= 102) return bad("s" + std::to_string(op.index + k) + " does not exist");
            return kSlotSgpr + op.index + k;
        case OperandKind::Vcc: return kSlotVcc + (op.index == 2 ? 1 : k);
        case OperandKind::Exec: return kSlotExec + (op.index == 2 ? 1 : k);
        case OperandKind::M0: return kSlotM0;
        default: return -1;
    }
}

std::string WorkgroupRunner::slot_name(int slot) const {
    if (slot < kSlotAgpr) return "v" + std::to_string(slot);
    if (slot < kSlotSgpr) return "a" + std::to_string(slot - kSlotAgpr);
    if (slot < kSlotVcc) return "s" + std::to_string(slot - kSlotSgpr);
    if (slot < kSlotExec) return slot == kSlotVcc ? "vcc_lo" : "vcc_hi";
    if (slot < kSlotM0) return slot == kSlotExec ? "exec_lo" : "exec_hi";
    return "m0";
}

static uint32_t float_modifiers(const Operand& op, uint32_t bits) {
    if (op.abs) bits &= 0x7fffffffu;
    if (op.neg) bits ^= 0x80000000u;
    return bits;
}

uint32_t WorkgroupRunner::read32(const Wave& w, const Operand& op, int lane) const {
    if (&op == dpp_operand_) return float_modifiers(op, dpp_values_[lane]);
    uint32_t bits = 0;
    switch (op.kind) {
        case OperandKind::Vgpr: bits = w.v[op.index][lane]; break;
        case OperandKind::Agpr: bits = w.a[op.index][lane]; break;
        case OperandKind::Sgpr: bits = w.s[op.index]; break;
        case OperandKind::Vcc: bits = static_cast<uint32_t>(op.index == 2 ? w.vcc >> 32 : w.vcc); break;
        case OperandKind::Exec: bits = static_cast<uint32_t>(op.index == 2 ? w.exec >> 32 : w.exec); break;
        case OperandKind::M0: bits = w.m0; break;
        case OperandKind::Scc: bits = w.scc; break;
        case OperandKind::Constant:
            if (op.is_float) {
                const float f = static_cast<float>(op.real);
                std::memcpy(&bits, &f, 4);
            } else {
                bits = static_cast<uint32_t>(op.integer);
            }
            break;
        default: fail(w, "operand '" + op.text + "' cannot be read as 32 bits");
    }
    return float_modifiers(op, bits);
}

uint64_t WorkgroupRunner::read64(const Wave& w, const Operand& op, int lane, bool as_double) const {
    uint64_t bits = 0;
    switch (op.kind) {
        case OperandKind::Vgpr:
        case OperandKind::Agpr:
            bits = reg_value(w, op, 0, lane) | (uint64_t(reg_value(w, op, 1, lane)) << 32);
            break;
        case OperandKind::Sgpr: bits = w.s[op.index] | (uint64_t(w.s[op.index + 1]) << 32); break;
        case OperandKind::Vcc: bits = w.vcc; break;
        case OperandKind::Exec: bits = w.exec; break;
        case OperandKind::Constant:
            if (op.is_float) {
                if (as_double) {
                    std::memcpy(&bits, &op.real, 8);
                } else {
                    fail(w, "a float constant as a 64-bit non-double operand is not modelled: " + op.text);
                }
            } else if (op.is_literal) {
                // A 32-bit literal: the high half of a double, zero-extended for integers.
                bits = as_double ? uint64_t(static_cast<uint32_t>(op.integer)) << 32
                                 : uint64_t(static_cast<uint32_t>(op.integer));
            } else {
                bits = static_cast<uint64_t>(op.integer);  // inline integer: sign-extended
                if (as_double) {
                    const double d = static_cast<double>(op.integer);
                    std::memcpy(&bits, &d, 8);
                }
            }
            break;
        default: fail(w, "operand '" + op.text + "' cannot be read as 64 bits");
    }
    if (op.abs) bits &= ~(uint64_t(1) << 63);
    if (op.neg) bits ^= uint64_t(1) << 63;
    return bits;
}

uint32_t& WorkgroupRunner::reg(Wave& w, const Operand& op, int k, int lane) {
    if (op.kind == OperandKind::Vgpr) return w.v.at(op.index + k)[lane];
    if (op.kind == OperandKind::Agpr) return w.a.at(op.index + k)[lane];
    fail(w, "operand '" + op.text + "' is not a vector register");
}

uint32_t WorkgroupRunner::reg_value(const Wave& w, const Operand& op, int k, int lane) const {
    if (op.kind == OperandKind::Vgpr) return w.v.at(op.index + k)[lane];
    if (op.kind == OperandKind::Agpr) return w.a.at(op.index + k)[lane];
    if (op.kind == OperandKind::Sgpr) return w.s.at(op.index + k);
    if (op.kind == OperandKind::Constant && k == 0) return read32(w, op, lane);
    if (op.kind == OperandKind::Constant) return 0;
    fail(w, "operand '" + op.text + "' is not a register tuple");
}

void WorkgroupRunner::write32(Wave& w, const Operand& op, int lane, uint32_t value) {
    switch (op.kind) {
        case OperandKind::Vgpr: w.v[op.index][lane] = value; break;
        case OperandKind::Agpr: w.a[op.index][lane] = value; break;
        case OperandKind::Sgpr: w.s[op.index] = value; break;
        case OperandKind::Vcc:
            if (op.index == 2) {
                w.vcc = (w.vcc & 0xffffffffu) | (uint64_t(value) << 32);
            } else {
                w.vcc = (w.vcc & ~uint64_t(0xffffffffu)) | value;
            }
            break;
        case OperandKind::Exec:
            if (op.index == 2) {
                w.exec = (w.exec & 0xffffffffu) | (uint64_t(value) << 32);
            } else {
                w.exec = (w.exec & ~uint64_t(0xffffffffu)) | value;
            }
            break;
        case OperandKind::M0: w.m0 = value; break;
        default: fail(w, "operand '" + op.text + "' cannot be written");
    }
}

void WorkgroupRunner::write64(Wave& w, const Operand& op, int lane, uint64_t value) {
    switch (op.kind) {
        case OperandKind::Vgpr:
        case OperandKind::Agpr:
            reg(w, op, 0, lane) = static_cast<uint32_t>(value);
            reg(w, op, 1, lane) = static_cast<uint32_t>(value >> 32);
            break;
        default: write_scalar64(w, op, value);
    }
}

uint64_t WorkgroupRunner::read_scalar64(const Wave& w, const Operand& op) const { return read64(w, op, 0); }

void WorkgroupRunner::write_scalar64(Wave& w, const Operand& op, uint64_t value) {
    switch (op.kind) {
        case OperandKind::Sgpr:
            w.s[op.index] = static_cast<uint32_t>(value);
            w.s[op.index + 1] = static_cast<uint32_t>(value >> 32);
            break;
        case OperandKind::Vcc: w.vcc = value; break;
        case OperandKind::Exec: w.exec = value; break;
        default: fail(w, "operand '" + op.text + "' cannot take a 64-bit scalar");
    }
}

// ---------------------------------------------------------------- memory

void WorkgroupRunner::global_read(Wave& w, const Instruction& inst, uint64_t address, void* out, uint32_t bytes) {
    for (const MemoryRange& r : memory_) {
        if (address >= r.base && address - r.base <= r.size && bytes <= r.size - (address - r.base)) {
            std::memcpy(out, reinterpret_cast<const void*>(address), bytes);
            return;
        }
    }
    fail(w, inst, "out-of-bounds global read of " + std::to_string(bytes) + " bytes at address " + hex(address));
}

void WorkgroupRunner::global_write(Wave& w, const Instruction& inst, uint64_t address, const void* in,
                                   uint32_t bytes) {
    for (const MemoryRange& r : memory_) {
        if (address >= r.base && address - r.base <= r.size && bytes <= r.size - (address - r.base)) {
            if (!r.writable) break;
            std::memcpy(reinterpret_cast<void*>(address), in, bytes);
            return;
        }
    }
    fail(w, inst, "out-of-bounds global write of " + std::to_string(bytes) + " bytes at address " + hex(address));
}

const uint8_t* WorkgroupRunner::lds_peek(Wave& w, const Instruction& inst, uint64_t address, uint32_t bytes) {
    if (address + bytes > lds_.size()) {
        fail(w, inst, "out-of-bounds LDS atomic of " + std::to_string(bytes) + " bytes at LDS address " + hex(address) +
                          " (LDS size " + std::to_string(lds_.size()) + ")");
    }
    return lds_.data() + address;
}

bool WorkgroupRunner::op_outstanding(const Wave& w, Counter counter, uint64_t op) const {
    const std::deque<OutstandingOp>& q = counter == Counter::Vm ? w.vm : w.lgkm;
    for (const OutstandingOp& o : q) {
        if (o.id == op) return true;
    }
    return false;
}

void WorkgroupRunner::lds_read(Wave& w, const Instruction& inst, uint64_t address, void* out, uint32_t bytes) {
    if (address + bytes > lds_.size()) {
        fail(w, inst, "out-of-bounds LDS read of " + std::to_string(bytes) + " bytes at LDS address " +
                          hex(address) + " (LDS size " + std::to_string(lds_.size()) + ")");
    }
    for (uint32_t i = 0; i < bytes; ++i) {
        LdsByteTrack& t = lds_track_[address + i];
        if (t.writer >= 0 && t.writer != w.id) {
            if (t.write_epoch == epoch_) {
                fail(w, inst, "LDS race: reads LDS address " + hex(address + i) + " written by wave " +
                                  std::to_string(t.writer) + " since the last s_barrier (missing barrier)");
            }
            if (std::find(unfenced_.begin(), unfenced_.end(), t.write_op) != unfenced_.end() ||
                op_outstanding(waves_[t.writer], t.write_counter, t.write_op)) {
                fail(w, inst, "reads LDS address " + hex(address + i) + " whose write by wave " +
                                  std::to_string(t.writer) + " was not waited for (s_waitcnt) before the barrier");
            }
        }
        if (t.writer == w.id && t.write_counter == Counter::Vm && op_outstanding(w, Counter::Vm, t.write_op)) {
            fail(w, inst, "reads LDS address " + hex(address + i) +
                              " before the s_waitcnt vmcnt that covers the direct-to-LDS load writing it");
        }
        if (t.read_epoch != epoch_) {
            t.read_epoch = epoch_;
            t.read_mask = 0;
        }
        t.read_mask |= static_cast<uint16_t>(1u << w.id);
    }
    std::memcpy(out, lds_.data() + address, bytes);
}

void WorkgroupRunner::lds_write(Wave& w, const Instruction& inst, uint64_t address, const void* in, uint32_t bytes,
                                bool atomic, Counter counter) {
    if (address + bytes > lds_.size()) {
        fail(w, inst, "out-of-bounds LDS write of " + std::to_string(bytes) + " bytes at LDS address " +
                          hex(address) + " (LDS size " + std::to_string(lds_.size()) + ")");
    }
    for (uint32_t i = 0; i < bytes; ++i) {
        LdsByteTrack& t = lds_track_[address + i];
        const bool both_atomic = atomic && t.atomic;
        if (t.writer >= 0 && t.writer != w.id && t.write_epoch == epoch_ && !both_atomic) {
            fail(w, inst, "LDS race: writes LDS address " + hex(address + i) + " also written by wave " +
                              std::to_string(t.writer) + " since the last s_barrier (missing barrier)");
        }
        if (t.read_epoch == epoch_ && (t.read_mask & ~(1u << w.id)) != 0 && !both_atomic) {
            fail(w, inst, "LDS race: writes LDS address " + hex(address + i) +
                              " read by another wave since the last s_barrier (missing barrier)");
        }
        if (t.writer == w.id && t.write_counter == Counter::Vm && counter != Counter::Vm &&
            op_outstanding(w, Counter::Vm, t.write_op)) {
            // The DS write and the outstanding load's LDS write are not ordered with each other.
            fail(w, inst, "writes LDS address " + hex(address + i) +
                              " that a direct-to-LDS load of this wave still writes (no s_waitcnt vmcnt)");
        }
        t.writer = static_cast<int8_t>(w.id);
        t.write_epoch = epoch_;
        t.write_op = current_op_;
        t.write_counter = counter;
        t.atomic = atomic;
    }
    std::memcpy(lds_.data() + address, in, bytes);
}

// ---------------------------------------------------------------- hazards and counters

int WorkgroupRunner::mfma_result_wait(int passes) const {
    // docs/emulator.md, MFMA hazards: an MFMA result read by VALU/memory or as SrcA/B of another MFMA.
    if (arch == Arch::Gfx950) return passes > 2 ? passes + 4 : passes + 3;
    return passes + 3;
}

void WorkgroupRunner::check_read(Wave& w, const Instruction& inst, int slot, ReadRole role, const Operand& op) {
    const SlotTrack& t = w.track[slot];
    if (t.pending != Counter::None) {
        fail(w, inst, "reads " + slot_name(slot) + " before the s_waitcnt " +
                          (t.pending == Counter::Vm ? "vmcnt" : "lgkmcnt") + " that covers the load at PC " +
                          hex(t.pending_pc));
    }
    if (role == ReadRole::Memory && inst.unit == Unit::Vmem && slot >= kSlotSgpr &&
        w.wait_states - t.valu_write - 1 < 5) {
        // GCNHazardRecognizer::checkVMEMHazards (hasVMEMReadSGPRVALUDefHazard, gfx8+): 5 wait states.
        fail(w, inst, "hazard: a vector memory instruction reads " + slot_name(slot) + " " +
                          std::to_string(w.wait_states - t.valu_write - 1) + " wait states after a VALU wrote it; 5 required");
    }
    if (slot >= kSlotSgpr) return;
    const int64_t now = w.wait_states;
    if (t.mfma_write != kNever) {
        const int64_t between = now - t.mfma_write - 1;
        int need = mfma_result_wait(t.mfma_passes);
        if (role == ReadRole::MfmaC) {
            const int first = slot_of(w, &inst, op, 0);
            if (first == t.mfma_first && op.count == t.mfma_count && inst.passes == t.mfma_passes) {
                need = (arch == Arch::Gfx942 && t.mfma_passes == 2) ? 2 : 0;  // same-accumulator chain
            } else {
                need = t.mfma_passes + 1 + ((arch == Arch::Gfx950 && t.mfma_passes == 2) ? 1 : 0);
            }
        }
        if (between < need) {
            fail(w, inst, "MFMA hazard: reads " + slot_name(slot) + " " + std::to_string(between) +
                              " wait states after the MFMA at PC " + hex(t.mfma_pc) + " wrote it; " +
                              std::to_string(need) + " required");
        }
    }
    if ((role == ReadRole::MfmaAB || role == ReadRole::MfmaC) && now - t.valu_write - 1 < 2) {
        fail(w, inst, "MFMA hazard: reads " + slot_name(slot) + " " + std::to_string(now - t.valu_write - 1) +
                          " wait states after a VALU write; 2 required");
    }
    if (role == ReadRole::Dpp && now - t.any_write - 1 < 2) {
        // GCNHazardRecognizer::checkDPPHazards: DppVgprWaitStates = 2 after any write of the VGPR.
        fail(w, inst, "DPP hazard: reads " + slot_name(slot) + " " + std::to_string(now - t.any_write - 1) +
                          " wait states after an instruction wrote it; 2 required");
    }
    // GCNHazardRecognizer::checkVALUHazards (hasTransForwardingHazard, gfx940+): a transcendental
    // result feeding a non-transcendental VALU.
    if ((role == ReadRole::Valu || role == ReadRole::Dpp) && inst.unit != Unit::ValuTrans &&
        now - t.trans_write - 1 < 1) {
        fail(w, inst, "hazard: reads " + slot_name(slot) + " right after the transcendental VALU that wrote it; 1 wait state required");
    }
    if (role == ReadRole::Permlane && arch == Arch::Gfx950 && now - t.valu_write - 1 < 2) {
        fail(w, inst, "hazard: v_permlane reads " + slot_name(slot) + " " + std::to_string(now - t.valu_write - 1) +
                          " wait states after a VALU write; 2 required");
    }
}

void WorkgroupRunner::check_write(Wave& w, const Instruction& inst, int slot, WriteRole role, const Operand&,
                                  int first, int count) {
    const SlotTrack& t = w.track[slot];
    if (t.pending != Counter::None) {
        fail(w, inst, "writes " + slot_name(slot) + " while the load at PC " + hex(t.pending_pc) +
                          " that also writes it is still outstanding (no s_waitcnt)");
    }
    if (slot >= kSlotSgpr) return;
    const int64_t between = w.wait_states - t.mfma_write - 1;
    if (t.mfma_write != kNever) {
        int need = mfma_result_wait(t.mfma_passes);
        if (role == WriteRole::Mfma) {
            const bool same = first == t.mfma_first && count == t.mfma_count && inst.passes == t.mfma_passes;
            need = same ? 0 : t.mfma_passes + 1 + ((arch == Arch::Gfx950 && t.mfma_passes == 2) ? 1 : 0);
        }
        if (between < need) {
            fail(w, inst, "MFMA hazard: overwrites " + slot_name(slot) + " " + std::to_string(between) +
                              " wait states after the MFMA at PC " + hex(t.mfma_pc) + " wrote it; " +
                              std::to_string(need) + " required");
        }
    }
    if (role != WriteRole::Mfma && t.srcc_read != kNever) {
        const int p = t.srcc_passes;
        const int need = p <= 2 ? 1 : p <= 4 ? 3 : p <= 8 ? 7 : 15;
        if (w.wait_states - t.srcc_read - 1 < need) {
            fail(w, inst, "MFMA hazard: overwrites " + slot_name(slot) + " " +
                              std::to_string(w.wait_states - t.srcc_read - 1) +
                              " wait states after an MFMA read it as SrcC; " + std::to_string(need) + " required");
        }
    }
}

// VALU hazards that gfx940+ (gfx942, gfx950) does not interlock, as LLVM's GCNHazardRecognizer
// (llvm/lib/Target/AMDGPU/GCNHazardRecognizer.cpp, read 2026-11-29 in llvm/llvm-project and
// ROCm/llvm-project) inserts wait states for them. LLVM counts MFMAs as VALU, so they are
// consumers here too.
//  - checkVALUHazards, hasVDecCoExecHazard (GFX940Insts): a VALU write of an SGPR, VCC, EXEC or M0
//    -> a VALU reading it as an explicit source (VCC also implicitly): 2
//    (VALUWriteSGPRVALUReadWaitstates); a VALU write of the VGPR v_readlane/v_readfirstlane reads
//    (src0): 1 (VALUWriteVGPRReadlaneRead); a VALU write of EXEC -> v_readlane,
//    v_readfirstlane, v_writelane: 4 (VALUWriteEXECRWLane).
//  - checkRWLaneHazards (every target): a VALU write of the lane-select SGPR (src1) of
//    v_readlane / v_writelane: 4.
//  - checkDivFMasHazards (every target): a VALU write of VCC -> v_div_fmas: 4.
//  - checkMAIHazards90A (gfx90a+): a VALU write of EXEC -> an MFMA: 4 (VALUWritesExecWaitStates).
//  - checkVALUHazardsHelper (has12DWordStoreHazard): a VALU overwriting the data of a store wider
//    than 8 bytes (wide_store_data_operand): 2 on gfx940+.
//  - hasDstSelForwardingHazard (GFX940Insts): a VALU that wrote part of a VGPR
//    (partial_dst_write) -> any VALU operand (source or destination) on it: 1.
void WorkgroupRunner::check_valu_hazards(Wave& w, const Instruction& inst) {
    const int64_t now = w.wait_states;
    auto require_after_valu = [&](int slot, int need, const char* rule) {
        const SlotTrack& t = w.track[slot];
        const int64_t between = now - t.valu_write - 1;
        if (t.valu_write != kNever && between < need) {
            fail(w, inst, std::string("VALU hazard (") + rule + "): reads " + slot_name(slot) + " " + std::to_string(between) +
                              " wait states after the VALU at PC " + hex(t.valu_write_pc) + " wrote it; " +
                              std::to_string(need) + " required");
        }
    };
    const bool read_lane = inst.base == "v_readlane_b32" || inst.base == "v_readfirstlane_b32";
    const bool rw_lane = inst.base == "v_readlane_b32" || inst.base == "v_writelane_b32";
    for (size_t i = static_cast<size_t>(inst.num_dst); i < inst.ops.size(); ++i) {
        const Operand& op = inst.ops[i];
        if (op.kind == OperandKind::Constant || op.kind == OperandKind::Off || op.kind == OperandKind::Scc ||
            op.kind == OperandKind::Label) {
            continue;
        }
        const int count = (op.kind == OperandKind::Vcc || op.kind == OperandKind::Exec) && op.index == 0 ? 2 : op.count;
        const bool src0 = i == static_cast<size_t>(inst.num_dst);
        for (int k = 0; k < count; ++k) {
            const int slot = slot_of(w, &inst, op, k);
            if (slot < 0) continue;
            if (slot >= kSlotSgpr) {
                require_after_valu(slot, 2, "VALU write of an SGPR or VCC, VALU read");
                if (rw_lane && i == static_cast<size_t>(inst.num_dst) + 1) {
                    require_after_valu(slot, 4, "VALU write of the lane select of v_readlane/v_writelane");
                }
            } else if (read_lane && src0 && op.kind == OperandKind::Vgpr) {
                require_after_valu(slot, 1, "VALU write of the VGPR v_readlane/v_readfirstlane reads");
            }
        }
    }
    if (read_lane || rw_lane) {
        for (int k = 0; k < 2; ++k) require_after_valu(kSlotExec + k, 4, "VALU write of EXEC before v_readlane/v_readfirstlane/v_writelane");
    }
    if (inst.base == "v_div_fmas_f32" || inst.base == "v_div_fmas_f64") {
        for (int k = 0; k < 2; ++k) require_after_valu(kSlotVcc + k, 4, "VALU write of VCC before v_div_fmas");
    }
    if (inst.unit == Unit::Mfma) {
        for (int k = 0; k < 2; ++k) require_after_valu(kSlotExec + k, 4, "VALU write of EXEC before an MFMA");
    }
    for (size_t i = 0; i < inst.ops.size(); ++i) {
        const Operand& op = inst.ops[i];
        if (op.kind != OperandKind::Vgpr && op.kind != OperandKind::Agpr) continue;
        for (int k = 0; k < op.count; ++k) {
            const int slot = slot_of(w, &inst, op, k);
            const SlotTrack& t = w.track[slot];
            if (static_cast<int>(i) < inst.num_dst && now - t.wide_store_read - 1 < 2) {
                fail(w, inst, "VALU hazard: overwrites " + slot_name(slot) + " " +
                                  std::to_string(now - t.wide_store_read - 1) +
                                  " wait states after a store of more than 8 bytes read it as data; 2 required");
            }
            if (now - t.dst_sel_write - 1 < 1) {
                dst_sel_hazard(w, inst, "VALU hazard: uses " + slot_name(slot) + " right after the VALU at PC " +
                                  hex(t.valu_write_pc) +
                                  " wrote part of it (SDWA dst_sel or op_sel destination); 1 wait state required");
            }
        }
    }
}

void WorkgroupRunner::check_operands(Wave& w, const Instruction& inst) {
    const bool mfma = inst.unit == Unit::Mfma;
    for (size_t i = 0; i < inst.ops.size(); ++i) {
        const Operand& op = inst.ops[i];
        const bool is_dst = static_cast<int>(i) < inst.num_dst;
        if (op.kind == OperandKind::Constant || op.kind == OperandKind::Off || op.kind == OperandKind::Scc) continue;
        const int count = (op.kind == OperandKind::Vcc || op.kind == OperandKind::Exec) && op.index == 0 ? 2 : op.count;
        const int first = slot_of(w, &inst, op, 0);
        for (int k = 0; k < count; ++k) {
            const int slot = slot_of(w, &inst, op, k);
            if (slot < 0) continue;
            if (is_dst) {
                const WriteRole role = mfma ? WriteRole::Mfma
                                            : (inst.unit == Unit::Vmem || inst.unit == Unit::Ds || inst.unit == Unit::Smem)
                                                  ? WriteRole::Load
                                                  : inst.unit == Unit::Salu ? WriteRole::Salu : WriteRole::Valu;
                check_write(w, inst, slot, role, op, first, count);
                // A DPP instruction reads its destination as the "old" value of lanes it does not
                // write (LLVM lists it among the DPP instruction's uses).
                if (inst.encoding == "dpp" && op.kind == OperandKind::Vgpr && !inst.reads_dst) {
                    check_read(w, inst, slot, ReadRole::Dpp, op);
                }
                if (inst.reads_dst) {
                    const ReadRole role = inst.base.find("permlane") != std::string::npos ? ReadRole::Permlane
                                          : inst.encoding == "dpp" ? ReadRole::Dpp : ReadRole::Valu;
                    check_read(w, inst, slot, role, op);
                }
            } else {
                ReadRole role = ReadRole::Valu;
                if (mfma) {
                    role = i == 3 ? ReadRole::MfmaC : ReadRole::MfmaAB;  // scale VGPRs follow the A/B rule
                } else if (inst.unit == Unit::Vmem || inst.unit == Unit::Ds || inst.unit == Unit::Smem) {
                    role = ReadRole::Memory;
                } else if (inst.unit == Unit::Salu || inst.unit == Unit::Sopp) {
                    role = ReadRole::Salu;
                } else if (inst.base.find("permlane") != std::string::npos) {
                    role = ReadRole::Permlane;
                } else if (inst.encoding == "dpp" && op.kind == OperandKind::Vgpr) {
                    role = ReadRole::Dpp;
                }
                check_read(w, inst, slot, role, op);
            }
        }
    }
    if (inst.encoding == "dpp") {
        // GCNHazardRecognizer::checkDPPHazards: DppExecWaitStates = 5 after a VALU wrote EXEC.
        for (int k = 0; k < 2; ++k) {
            const int64_t between = w.wait_states - w.track[kSlotExec + k].valu_write - 1;
            if (between < 5) {
                fail(w, inst, "DPP hazard: " + std::to_string(between) +
                                  " wait states after a VALU wrote EXEC; 5 required");
            }
        }
    }
    if (inst.lds) {
        // M0 holds the LDS base of a direct-to-LDS load. LLVM's hazard recognizer separates an SALU
        // write of M0 from the load by one wait state (clang-22 emits s_nop 0 there).
        const SlotTrack& m0 = w.track[kSlotM0];
        if (m0.pending != Counter::None) fail(w, inst, "reads m0 before the s_waitcnt that covers its load");
        if (w.wait_states - m0.salu_write - 1 < 1) {
            fail(w, inst, "hazard: direct-to-LDS load right after an SALU write of m0; 1 wait state required");
        }
    }
    if (inst.unit == Unit::Valu || inst.unit == Unit::ValuTrans || inst.unit == Unit::Mfma) check_valu_hazards(w, inst);
    // Implicit VCC reads.
    if (inst.base == "v_div_fmas_f32" || inst.base == "v_div_fmas_f64" ||
        (inst.base.rfind("s_cbranch_vcc", 0) == 0)) {
        for (int k = 0; k < 2; ++k) {
            if (w.track[kSlotVcc + k].pending != Counter::None) fail(w, inst, "reads vcc before its s_waitcnt");
        }
    }
}

void WorkgroupRunner::update_tracking(Wave& w, const Instruction& inst) {
    const int64_t now = w.wait_states;
    const bool mfma = inst.unit == Unit::Mfma;
    const bool load = inst.unit == Unit::Vmem || inst.unit == Unit::Ds || inst.unit == Unit::Smem;
    for (size_t i = 0; i < inst.ops.size(); ++i) {
        const Operand& op = inst.ops[i];
        if (op.kind == OperandKind::Constant || op.kind == OperandKind::Off || op.kind == OperandKind::Scc) continue;
        const int count = (op.kind == OperandKind::Vcc || op.kind == OperandKind::Exec) && op.index == 0 ? 2 : op.count;
        const bool is_dst = static_cast<int>(i) < inst.num_dst;
        const int first = slot_of(w, &inst, op, 0);
        for (int k = 0; k < count; ++k) {
            const int slot = slot_of(w, &inst, op, k);
            if (slot < 0) continue;
            SlotTrack& t = w.track[slot];
            if (is_dst) {
                t.mfma_write = kNever;
                t.srcc_read = kNever;
                t.any_write = now;
                if (inst.unit == Unit::Salu) t.salu_write = now;
                if (mfma) {
                    t.mfma_write = now;
                    t.mfma_passes = inst.passes;
                    t.mfma_first = first;
                    t.mfma_count = count;
                    t.mfma_pc = inst.address;
                } else if (load) {
                    t.pending = inst.unit == Unit::Vmem ? Counter::Vm : Counter::Lgkm;
                    t.pending_op = current_op_;
                    t.pending_pc = inst.address;
                } else if (inst.unit == Unit::Valu || inst.unit == Unit::ValuTrans) {
                    t.valu_write = now;
                    t.valu_write_pc = inst.address;
                    if (inst.unit == Unit::ValuTrans) t.trans_write = now;
                    if (partial_dst_write(inst)) t.dst_sel_write = now;
                }
            } else if (mfma && i == 3) {
                t.srcc_read = now;
                t.srcc_passes = inst.passes;
            } else if (static_cast<int>(i) == wide_store_data_operand(inst)) {
                t.wide_store_read = now;
            }
        }
    }
}

void WorkgroupRunner::wait_counters(Wave& w, const Instruction& inst) {
    // An op is known complete when, were it outstanding, more than N ops would be: the ops issued
    // after it that complete in order with it (all vm ops; LDS ops among lgkm) would be outstanding
    // too. A scalar load completes out of order, so only lgkmcnt(0) covers it.
    auto retire = [&](std::deque<OutstandingOp>& q, int n, Counter counter) {
        if (n < 0) return;
        std::vector<uint64_t> done;
        std::deque<OutstandingOp> keep;
        for (size_t i = 0; i < q.size(); ++i) {
            bool complete;
            if (n == 0) {
                complete = true;
            } else if (q[i].smem) {
                complete = false;
            } else {
                int younger_in_order = 0;
                for (size_t j = i + 1; j < q.size(); ++j) younger_in_order += q[j].smem ? 0 : 1;
                complete = 1 + younger_in_order > n;
            }
            if (complete) {
                done.push_back(q[i].id);
            } else {
                keep.push_back(q[i]);
            }
        }
        q.swap(keep);
        if (done.empty()) return;
        for (SlotTrack& t : w.track) {
            if (t.pending == counter && std::find(done.begin(), done.end(), t.pending_op) != done.end()) {
                t.pending = Counter::None;
            }
        }
    };
    retire(w.vm, inst.vmcnt, Counter::Vm);
    retire(w.lgkm, inst.lgkmcnt, Counter::Lgkm);
}

// ---------------------------------------------------------------- DPP

namespace {

// The lane whose src0 lane `lane` reads under the DPP control, or -1 when it is out of range.
// Directions as LLVM uses them (AMDGPUAtomicOptimizer scans with row_shr: lane i reads lane i - n);
// row_bcast:15 feeds row r from lane 16r - 1, row_bcast:31 feeds rows 2 and 3 from lane 31;
// row_newbcast:n (gfx90a+, the encoding of gfx10's row_share) gives every lane of a row lane n of
// that row.
int dpp_source_lane(const Instruction& in, int lane) {
    const int row = lane / 16, in_row = lane % 16, n = in.dpp_arg[0];
    switch (in.dpp) {
        case DppControl::QuadPerm: return (lane & ~3) | in.dpp_arg[lane & 3];
        case DppControl::RowShl: return in_row + n < 16 ? lane + n : -1;
        case DppControl::RowShr: return in_row - n >= 0 ? lane - n : -1;
        case DppControl::RowRor: return row * 16 + (in_row - n + 16) % 16;
        case DppControl::WaveShl: return lane + 1 < kLanes ? lane + 1 : -1;
        case DppControl::WaveShr: return lane - 1;
        case DppControl::WaveRol: return (lane + 1) % kLanes;
        case DppControl::WaveRor: return (lane + kLanes - 1) % kLanes;
        case DppControl::RowMirror: return row * 16 + 15 - in_row;
        case DppControl::RowHalfMirror: return (lane & ~7) | (7 - (lane & 7));
        case DppControl::RowBcast15: return row == 0 ? -1 : row * 16 - 1;
        case DppControl::RowBcast31: return row < 2 ? -1 : 31;
        case DppControl::RowNewBcast: return row * 16 + n;
        default: return -1;
    }
}

}  // namespace

// A DPP instruction runs its ordinary semantics with src0 replaced by each lane's permuted source
// and EXEC narrowed to the lanes that write: row_mask / bank_mask (bank = 4 consecutive lanes of a
// row) select them, and a lane whose source is out of range or inactive (gfx9 has no
// fetch-inactive) writes 0-sourced results with bound_ctrl, else keeps its destination.
void WorkgroupRunner::execute_dpp(Wave& w, const Instruction& inst) {
    if (inst.dpp == DppControl::None) fail(w, inst, "DPP instruction without a lane control");
    if (inst.num_dst != 1 || inst.base.rfind("v_cmp", 0) == 0 || inst.ops.size() < 2 ||
        inst.ops[1].kind != OperandKind::Vgpr || inst.ops[1].count != 1 || inst.ops[0].count != 1) {
        fail(w, inst, "DPP is modelled on 32-bit VALU operations with one VGPR destination only");
    }
    const Operand& src0 = inst.ops[1];
    uint64_t writes = 0;
    for (int lane = 0; lane < kLanes; ++lane) {
        if (!w.lane_active(lane)) continue;
        if (!((inst.row_mask >> (lane / 16)) & 1) || !((inst.bank_mask >> ((lane % 16) / 4)) & 1)) continue;
        const int source = dpp_source_lane(inst, lane);
        if (source < 0 || !w.lane_active(source)) {
            if (!inst.bound_ctrl) continue;
            dpp_values_[lane] = 0;
        } else {
            dpp_values_[lane] = w.v[src0.index][source];
        }
        writes |= uint64_t(1) << lane;
    }
    const uint64_t exec = w.exec;
    w.exec = writes;
    dpp_operand_ = &src0;
    try {
        inst.handler(*this, w, inst);
    } catch (...) {
        w.exec = exec;
        dpp_operand_ = nullptr;
        throw;
    }
    w.exec = exec;
    dpp_operand_ = nullptr;
}

// ---------------------------------------------------------------- execution

bool WorkgroupRunner::step(Wave& w) {
    const Instruction* inst = object_.at(w.pc);
    if (!inst) fail(w, "the program counter is not at an instruction (jumped into data or off the end)");
    if (!inst->handler) {
        fail(w, *inst, "unknown instruction '" + inst->mnemonic + "' (the emulator does not implement it)");
    }
    check_operands(w, *inst);
    if (trace_) (*trace_)[static_cast<size_t>(w.id)].push_back(inst->address);
    current_op_ = 0;
    if (inst->unit == Unit::Vmem || inst->unit == Unit::Ds || inst->unit == Unit::Smem) {
        current_op_ = next_op_++;
        const bool vm = inst->unit == Unit::Vmem;
        (vm ? w.vm : w.lgkm).push_back(OutstandingOp{current_op_, inst->unit == Unit::Smem});
    }
    if (inst->mnemonic == "s_waitcnt") wait_counters(w, *inst);
    const uint64_t pc_before = w.pc;
    if (inst->encoding == "dpp") {
        execute_dpp(w, *inst);
    } else {
        inst->handler(*this, w, *inst);
    }
    update_tracking(w, *inst);
    w.wait_states += inst->mnemonic == "s_nop" ? (inst->immediate & 0xf) + 1 : 1;
    ++w.instructions_issued;
    ++instructions_;
    if (w.pc == pc_before && w.state == WaveState::Running) w.pc += inst->size;
    return w.state == WaveState::Running;
}

uint64_t WorkgroupRunner::run() {
    std::vector<int> runnable;
    uint64_t guard = 0;
    const uint64_t limit = 2000000000ull;
    for (;;) {
        runnable.clear();
        int live = 0;
        for (const Wave& w : waves_) {
            if (w.state != WaveState::Done) ++live;
            if (w.state == WaveState::Running) runnable.push_back(w.id);
        }
        if (live == 0) break;
        if (runnable.empty()) {
            // Everyone alive is at the barrier: release it.
            ++epoch_;
            for (const Wave& w : waves_) {
                for (const OutstandingOp& o : w.lgkm) unfenced_.push_back(o.id);
                for (const OutstandingOp& o : w.vm) unfenced_.push_back(o.id);
            }
            for (Wave& w : waves_) {
                if (w.state == WaveState::AtBarrier) w.state = WaveState::Running;
            }
            continue;
        }
        Wave* w;
        int burst;
        if (random_) {
            w = &waves_[runnable[rng_() % runnable.size()]];
            burst = 1 + static_cast<int>(rng_() % 16);
        } else {
            w = &waves_[runnable[guard % runnable.size()]];
            burst = 1;
        }
        for (int i = 0; i < burst; ++i) {
            if (!step(*w)) break;
        }
        if (++guard > limit) fail(*w, "instruction limit reached (an endless loop?)");
    }
    return instructions_;
}

// ---------------------------------------------------------------- grid

RunStats run_kernel(const CodeObject& object, const Kernel& kernel, const LaunchConfig& config) {
    // The kernarg segment lives in a 16-byte aligned host buffer the kernel may only read.
    std::vector<uint64_t> kernarg_storage((std::max<size_t>(config.kernarg.size(), 8) + 7) / 8 + 1, 0);
    std::memcpy(kernarg_storage.data(), config.kernarg.data(), config.kernarg.size());
    const uint64_t kernarg_address = reinterpret_cast<uint64_t>(kernarg_storage.data());
    std::vector<MemoryRange> memory = config.memory;
    memory.push_back(MemoryRange{kernarg_address, std::max<uint64_t>(config.kernarg.size(), kernel.descriptor.kernarg_size), false});

    const uint64_t groups = uint64_t(config.grid[0]) * config.grid[1] * config.grid[2];
    if (config.trace) {
        for (int i = 0; i < 3; ++i) {
            if (config.trace_group[i] >= config.grid[i]) {
                throw EmuError("launch: trace_group (" + std::to_string(config.trace_group[0]) + "," +
                               std::to_string(config.trace_group[1]) + "," + std::to_string(config.trace_group[2]) +
                               ") lies outside the grid");
            }
        }
    }
    int threads = config.threads;
    if (threads <= 0) {
        const char* env = std::getenv("ZYFA_EMU_THREADS");
        threads = env ? std::atoi(env) : static_cast<int>(std::thread::hardware_concurrency());
    }
    threads = static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(threads > 0 ? threads : 1, groups)));
    std::atomic<uint64_t> next{0};
    std::atomic<uint64_t> instructions{0};
    std::atomic<bool> failed{false};
    std::string first_error;
    std::mutex error_mutex;
    auto worker = [&]() {
        for (;;) {
            const uint64_t g = next.fetch_add(1);
            if (g >= groups || failed.load()) return;
            const uint32_t id[3] = {static_cast<uint32_t>(g % config.grid[0]),
                                    static_cast<uint32_t>((g / config.grid[0]) % config.grid[1]),
                                    static_cast<uint32_t>(g / (uint64_t(config.grid[0]) * config.grid[1]))};
            try {
                WorkgroupRunner runner(object, kernel, config, id, kernarg_address, memory);
                instructions += runner.run();
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!failed.exchange(true)) first_error = e.what();
                return;
            }
        }
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    if (failed) throw EmuError(first_error);
    return RunStats{instructions.load(), groups};
}

}  // namespace emu
}  // namespace zyfa
