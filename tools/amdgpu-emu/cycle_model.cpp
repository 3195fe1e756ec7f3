#include "cycle_model.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>

#include "instruction.hpp"

namespace zyfa {
namespace emu {

namespace {

bool is_branch(const Instruction& inst) {
    return inst.mnemonic == "s_branch" || inst.mnemonic.rfind("s_cbranch_", 0) == 0;
}

// Bytes of an MFMA's A operand (the first source): the co-execution hold grows with it.
int mfma_a_bytes(const Instruction& inst) {
    const size_t a = static_cast<size_t>(inst.num_dst);
    return a < inst.ops.size() ? 4 * inst.ops[a].count : 0;
}

// Bytes one lane moves in a DS instruction (read2/write2: both elements).
int ds_lane_bytes(const std::string& m) {
    int bytes = 4;
    if (m.find("b128") != std::string::npos) bytes = 16;
    else if (m.find("b96") != std::string::npos) bytes = 12;
    else if (m.find("b64") != std::string::npos) bytes = 8;
    else if (m.find("16") != std::string::npos) bytes = 2;
    else if (m.find("8") != std::string::npos && m.find("b128") == std::string::npos) bytes = 1;
    if (m.find("read2") != std::string::npos || m.find("write2") != std::string::npos) bytes *= 2;
    return bytes;
}

struct Op {
    int64_t done;
    bool smem;
};

struct WaveSim {
    const std::vector<uint64_t>* trace = nullptr;
    std::vector<const Instruction*> code;
    size_t pos = 0;
    int64_t ready = 0;  // earliest cycle of the next issue
    int64_t last_issue = -1;
    int prio = 0;
    bool at_barrier = false;
    bool done = false;
    std::vector<Op> vm, lgkm;
    int64_t last_vm = 0, last_lds = 0;
    std::array<int64_t, 512> reg_ready{};  // v0..v255, a0..a255
    std::vector<int64_t> issued;           // issue cycle per trace position
};

// VGPR/AGPR slots an operand covers.
template <class F>
void for_vector_regs(const Operand& op, F f) {
    if (op.kind != OperandKind::Vgpr && op.kind != OperandKind::Agpr) return;
    const int base = op.kind == OperandKind::Agpr ? 256 : 0;
    for (int k = 0; k < op.count; ++k) {
        const int r = base + op.index + k;
        if (r >= 0 && r < 512) f(r);
    }
}

bool waitcnt_satisfied(const WaveSim& w, const Instruction& inst, int64_t t) {
    if (inst.vmcnt >= 0) {
        int outstanding = 0;
        for (const Op& o : w.vm) outstanding += o.done > t;
        if (outstanding > inst.vmcnt) return false;
    }
    if (inst.lgkmcnt >= 0) {
        int outstanding = 0;
        for (const Op& o : w.lgkm) {
            if (o.done <= t) continue;
            if (inst.lgkmcnt == 0) return false;
            outstanding += o.smem ? 0 : 1;  // scalar loads: only lgkmcnt(0) waits for them
        }
        if (outstanding > inst.lgkmcnt) return false;
    }
    return true;
}

}  // namespace

// LLVM's classes (VOP1Instructions.td / VOP3Instructions.td SchedRW): WriteFloatCvt holds the f32
// <-> 32-bit integer and f16 conversions and every gfx940 fp8/bf8 conversion; WriteTrans32 the
// TRANS instructions (the emulator's Unit::ValuTrans). The packed fp32 ones are those LLVM's
// co-execution rules name (PK_F32). Everything else, SDWA and DPP forms included (LLVM gives them
// the base instruction's SchedRW), is one pass.
ValuClass valu_class(const Instruction& inst) {
    if (inst.unit == Unit::ValuTrans) return ValuClass::Trans;
    const std::string& b = inst.base;
    if (b == "v_pk_fma_f32" || b == "v_pk_mul_f32" || b == "v_pk_add_f32" || b == "v_pk_mov_b32") return ValuClass::PackedF32;
    static const char* const cvt[] = {
        "v_cvt_f32_i32", "v_cvt_f32_u32", "v_cvt_u32_f32", "v_cvt_i32_f32", "v_cvt_f16_f32", "v_cvt_f32_f16",
        "v_cvt_rpi_i32_f32", "v_cvt_flr_i32_f32", "v_cvt_off_f32_i4", "v_cvt_f32_fp8", "v_cvt_f32_bf8",
        "v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8", "v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32", "v_cvt_sr_fp8_f32",
        "v_cvt_sr_bf8_f32"};
    for (const char* c : cvt) {
        if (b == c) return ValuClass::Cvt;
    }
    return ValuClass::Plain;
}

int valu_cost(const Instruction& inst, const CycleParams& params) {
    switch (valu_class(inst)) {
        case ValuClass::PackedF32: return params.packed_f32_cycles;
        case ValuClass::Trans: return params.trans_cycles;
        case ValuClass::Cvt: return params.cvt_cycles;
        case ValuClass::Plain: break;
    }
    return params.valu_cycles;
}

CycleEstimate estimate_mfma_busy(const CodeObject& object, const std::vector<uint64_t>& wave_a,
                                 const std::vector<uint64_t>& wave_b, const CycleParams& params) {
    CycleEstimate est;
    WaveSim waves[2];
    const std::vector<uint64_t>* traces[2] = {&wave_a, &wave_b};
    for (int i = 0; i < 2; ++i) {
        waves[i].trace = traces[i];
        for (uint64_t pc : *traces[i]) {
            const Instruction* inst = object.at(pc);
            if (!inst) {
                est.message = "trace PC not an instruction";
                return est;
            }
            waves[i].code.push_back(inst);
        }
        waves[i].issued.assign(traces[i]->size(), -1);
    }

    // The loop: wave 0's backward branch whose trips hold the most MFMAs.
    std::map<uint64_t, std::vector<size_t>> taken;  // branch PC -> trace positions where taken
    const std::vector<const Instruction*>& code0 = waves[0].code;
    for (size_t i = 0; i + 1 < code0.size(); ++i) {
        if (is_branch(*code0[i]) && wave_a[i + 1] < wave_a[i]) taken[wave_a[i]].push_back(i);
    }
    // An inner loop (a copy loop run twice per block) has trips without MFMAs: the main loop is
    // the one whose every trip holds the most MFMAs.
    size_t best_min = 0;
    std::vector<size_t> trips;
    for (const auto& kv : taken) {
        if (kv.second.size() < 3) continue;
        size_t min_mfma = SIZE_MAX;
        for (size_t j = 0; j + 1 < kv.second.size(); ++j) {
            size_t mfma = 0;
            for (size_t i = kv.second[j]; i < kv.second[j + 1]; ++i) mfma += code0[i]->unit == Unit::Mfma;
            min_mfma = std::min(min_mfma, mfma);
        }
        if (min_mfma > best_min) {
            best_min = min_mfma;
            est.loop_branch = kv.first;
            trips = kv.second;
        }
    }
    if (trips.empty()) {
        est.message = "no backward branch taken 3 or more times with MFMAs in every trip (too few loop trips?)";
        return est;
    }
    est.loop_found = true;
    est.iterations = static_cast<int>(trips.size()) + 1;
    est.window_iterations = static_cast<int>(trips.size()) - 1;

    // Issue simulation.
    int64_t mfma_free = 0, valu_free = 0, lds_free = 0;
    // The co-execution holds after an MFMA issue (LLVM pull request 233721, from thread traces of
    // MI300X and MI350X): no VALU before 1 + (A bytes) / 16 passes, no packed fp32 before
    // passes + 2 (+ 1 with an A operand of 16 bytes or more). Per SIMD, or per wave when
    // coexec_per_simd is off ([0], [1]: the wave's own MFMAs).
    int64_t valu_hold[2] = {0, 0}, packed_hold[2] = {0, 0};
    std::vector<std::pair<int64_t, int64_t>> mfma_busy;
    int64_t t = 0;
    const int64_t limit = 4000000000ll;
    for (; t < limit; ++t) {
        if (waves[0].done && waves[1].done) break;
        int order[2] = {0, 1};
        if (waves[1].prio > waves[0].prio ||
            (waves[1].prio == waves[0].prio && waves[1].last_issue < waves[0].last_issue)) {
            std::swap(order[0], order[1]);
        }
        bool used_mfma = false, used_valu = false, used_lds = false;
        for (int wi : order) {
            WaveSim& w = waves[wi];
            if (w.done || w.at_barrier || w.ready > t) continue;
            if (w.pos >= w.code.size()) {
                w.done = true;
                continue;
            }
            const Instruction& inst = *w.code[w.pos];
            bool deps_ready = true;
            for (const Operand& op : inst.ops) for_vector_regs(op, [&](int r) { deps_ready &= w.reg_ready[r] <= t; });
            if (!deps_ready) continue;
            int64_t dst_ready = t + 1;
            switch (inst.unit) {
                case Unit::Mfma:
                    if (used_mfma || mfma_free > t) continue;
                    used_mfma = true;
                    mfma_free = t + 4 * inst.passes;
                    mfma_busy.emplace_back(t, mfma_free);
                    dst_ready = mfma_free;
                    if (params.mfma_coexec_holds) {
                        const int a_bytes = mfma_a_bytes(inst);
                        for (int h = 0; h < 2; ++h) {
                            if (!params.coexec_per_simd && h != wi) continue;
                            valu_hold[h] = std::max(valu_hold[h], t + 4 * (1 + a_bytes / 16));
                            packed_hold[h] = std::max(packed_hold[h], t + 4 * (inst.passes + 2 + (a_bytes >= 16 ? 1 : 0)));
                        }
                    }
                    break;
                case Unit::Valu:
                case Unit::ValuTrans: {
                    if (used_valu || valu_free > t || valu_hold[wi] > t) continue;
                    if (valu_class(inst) == ValuClass::PackedF32 && packed_hold[wi] > t) continue;
                    used_valu = true;
                    valu_free = t + valu_cost(inst, params);
                    dst_ready = valu_free;
                    break;
                }
                case Unit::Ds: {
                    if (used_lds || lds_free > t) continue;
                    used_lds = true;
                    const int64_t bytes = 64 * ds_lane_bytes(inst.mnemonic);
                    lds_free = t + std::max<int64_t>(1, (bytes + params.lds_bytes_per_cycle - 1) / params.lds_bytes_per_cycle);
                    w.last_lds = std::max(w.last_lds, t + params.lds_latency);
                    w.lgkm.push_back(Op{w.last_lds, false});
                    dst_ready = 0;  // the trace's s_waitcnt orders the use
                    break;
                }
                case Unit::Vmem:
                    w.last_vm = std::max(w.last_vm, t + params.memory_latency);
                    w.vm.push_back(Op{w.last_vm, false});
                    dst_ready = 0;
                    break;
                case Unit::Smem:
                    w.lgkm.push_back(Op{t + params.smem_latency, true});
                    break;
                default:
                    if (inst.mnemonic == "s_waitcnt" && !waitcnt_satisfied(w, inst, t)) continue;
                    break;
            }
            for (int k = 0; k < inst.num_dst && k < static_cast<int>(inst.ops.size()); ++k) {
                for_vector_regs(inst.ops[static_cast<size_t>(k)], [&](int r) { w.reg_ready[r] = dst_ready; });
            }
            w.issued[w.pos] = t;
            w.last_issue = t;
            w.ready = t + 1;
            if (inst.mnemonic == "s_nop") w.ready = t + (inst.immediate & 0xf) + 1;
            if (inst.mnemonic == "s_setprio") w.prio = static_cast<int>(inst.immediate);
            if (inst.mnemonic == "s_barrier") w.at_barrier = true;
            if (inst.mnemonic == "s_endpgm") w.done = true;
            ++w.pos;
            if (w.pos >= w.code.size()) w.done = true;
        }
        // The barrier releases once every wave still running has reached it.
        bool any = false, all = true;
        for (const WaveSim& w : waves) {
            if (w.done) continue;
            any |= w.at_barrier;
            all &= w.at_barrier;
        }
        if (any && all) {
            for (WaveSim& w : waves) {
                if (w.at_barrier) {
                    w.at_barrier = false;
                    w.ready = t + 1;
                }
            }
        }
    }
    if (t >= limit) {
        est.loop_found = false;
        est.message = "the issue model did not finish (a wave waiting forever?)";
        return est;
    }

    // Steady state: wave 0's trips after the first taken back edge up to the last one.
    const int64_t begin = waves[0].issued[trips.front() + 1];
    const int64_t end = waves[0].issued[trips.back() + 1];
    est.window_cycles = static_cast<double>(end - begin);
    for (const auto& b : mfma_busy) {
        const int64_t lo = std::max(b.first, begin), hi = std::min(b.second, end);
        if (hi > lo) est.mfma_busy_cycles += static_cast<double>(hi - lo);
    }
    est.mfma_busy_fraction = est.window_cycles > 0 ? est.mfma_busy_cycles / est.window_cycles : 0.0;
    est.cycles_per_iteration = est.window_cycles / est.window_iterations;
    LoopMix& m = est.mix;
    for (size_t i = trips.front() + 1; i <= trips.back(); ++i) {
        const Instruction& inst = *code0[i];
        switch (inst.unit) {
            case Unit::Mfma:
                m.mfma += 1;
                m.mfma_pipe_cycles += 4 * inst.passes;
                break;
            case Unit::Valu:
            case Unit::ValuTrans: {
                const ValuClass c = valu_class(inst);
                if (c == ValuClass::Trans) m.trans += 1;
                else m.valu += 1;
                m.cvt += c == ValuClass::Cvt;
                m.packed_f32 += c == ValuClass::PackedF32;
                m.valu_pipe_cycles += valu_cost(inst, params);
                break;
            }
            case Unit::Ds: m.lds += 1; break;
            case Unit::Vmem: m.vmem += 1; break;
            default:
                if (inst.mnemonic == "s_waitcnt") m.waitcnt += 1;
                else if (inst.mnemonic == "s_barrier") m.barrier += 1;
                else if (inst.mnemonic == "s_nop") m.nop_cycles += static_cast<double>((inst.immediate & 0xf) + 1);
                else m.salu += 1;
        }
    }
    const double n = est.window_iterations;
    for (double* x : {&m.mfma, &m.valu, &m.trans, &m.lds, &m.vmem, &m.salu, &m.waitcnt, &m.barrier, &m.nop_cycles,
                      &m.cvt, &m.packed_f32, &m.mfma_pipe_cycles, &m.valu_pipe_cycles}) {
        *x /= n;
    }
    return est;
}

}  // namespace emu
}  // namespace zyfa
