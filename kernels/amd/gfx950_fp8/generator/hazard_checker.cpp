#include "hazard_checker.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace zyfa {
namespace gfx950_fp8 {

namespace {

bool is_load(Kind k) { return k == Kind::DsRead || k == Kind::GlobalLoad || k == Kind::Smem; }
bool is_memory(Kind k) {
    return k == Kind::DsRead || k == Kind::DsWrite || k == Kind::GlobalLoad || k == Kind::GlobalStore || k == Kind::Smem;
}

// Wait states an MFMA's SrcC read needs before a VALU overwrites those registers.
int srcc_war_wait(int passes) {
    if (passes <= 2) return 1;
    if (passes <= 4) return 3;
    if (passes <= 8) return 7;
    return 15;
}

std::string reg_name(RegFile f, int i) { return (f == RegFile::Vgpr ? "v" : "s") + std::to_string(i); }

// The bits of a modifier list such as "op_sel:[0,1,0]" in `modifiers` (empty when absent).
std::vector<int> modifier_bits(const std::string& modifiers, const std::string& name) {
    std::vector<int> bits;
    const std::string key = name + ":[";  // "op_sel:[" is no part of "op_sel_hi:["
    const size_t at = modifiers.find(key);
    if (at == std::string::npos) return bits;
    for (size_t i = at + key.size(); i < modifiers.size() && modifiers[i] != ']'; ++i) {
        if (modifiers[i] == '0' || modifiers[i] == '1') bits.push_back(modifiers[i] - '0');
    }
    return bits;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

bool writes_part_of_vgpr(const Instruction& inst) {
    if (inst.kind != Kind::Valu) return false;
    if (ends_with(inst.mnemonic, "_sdwa")) {
        // SDWA's dst_sel defaults to DWORD; BYTE_n / WORD_n count whatever dst_unused says (LLVM
        // tests only dst_sel: UNUSED_PAD is a partial write too).
        const size_t at = inst.modifiers.find("dst_sel:");
        return at != std::string::npos && inst.modifiers.compare(at, 13, "dst_sel:DWORD") != 0;
    }
    if (inst.mnemonic.rfind("v_pk_", 0) == 0) {
        // VOP3P: op_sel_hi defaults to all ones; LLVM reads its bit 0 as VOP3's DST_OP_SEL.
        const std::vector<int> hi = modifier_bits(inst.modifiers, "op_sel_hi");
        return hi.empty() || hi[0] != 0;
    }
    // VOP3: op_sel has one bit per source, then the destination's.
    const std::vector<int> sel = modifier_bits(inst.modifiers, "op_sel");
    if (sel.empty()) return false;
    size_t sources = 0;
    for (const Operand& o : inst.operands) sources += !o.text.empty() && o.role != Role::Write ? 1 : 0;
    return sel.size() > sources && sel[sources] != 0;
}

HazardState::HazardState()
    : vgprs_(kVgprCount), sgpr_valu_write_(kSgprCount, kNever), vgpr_pending_(kVgprCount, -1), sgpr_pending_(kSgprCount, -1) {}

bool HazardState::outstanding(int op) const {
    for (const Op& o : vm_)
        if (o.id == op) return true;
    for (const Op& o : lgkm_)
        if (o.id == op) return true;
    return false;
}

int HazardState::pending_op(const Reg& r, int index) const {
    const int i = r.first + index;
    const int op = r.file == RegFile::Vgpr ? vgpr_pending_.at(static_cast<size_t>(i)) : sgpr_pending_.at(static_cast<size_t>(i));
    return op >= 0 && outstanding(op) ? op : -1;
}

int HazardState::wait_states_needed(const Instruction& inst) const {
    int need = 0;
    auto require = [&](int64_t at, int states) {
        const int64_t have = since(at) - 1;  // wait states issued strictly between
        if (at != kNever && have < states) need = std::max<int>(need, static_cast<int>(states - have));
    };
    const bool valu = inst.kind == Kind::Valu || inst.kind == Kind::Permlane;
    const bool reads_lane = inst.mnemonic == "v_readfirstlane_b32" || inst.mnemonic == "v_readlane_b32";
    for (const Operand& op : inst.operands) {
        if (!op.reg.valid()) continue;
        if (op.reg.file == RegFile::Sgpr) {
            const bool vmem = inst.kind == Kind::GlobalLoad || inst.kind == Kind::GlobalStore;
            if ((valu || vmem) && op.role != Role::Write) {
                for (int k = 0; k < op.reg.count; ++k)
                    require(sgpr_valu_write_[static_cast<size_t>(op.reg.first + k)], vmem ? 5 : 2);
            }
            continue;
        }
        for (int k = 0; k < op.reg.count; ++k) {
            if (reads_lane && op.role != Role::Write) require(vgprs_[static_cast<size_t>(op.reg.first + k)].valu_write, 1);
            const VgprState& v = vgprs_[static_cast<size_t>(op.reg.first + k)];
            if (valu || inst.kind == Kind::Mfma) require(v.partial_write, 1);  // dst-sel forwarding, any role
            if (inst.kind == Kind::Mfma) {
                if (op.role == Role::MfmaC) {
                    const bool same = v.mfma_first == op.reg.first && v.mfma_count == op.reg.count;
                    if (!same) require(v.mfma_write, v.mfma_passes + 1);
                } else if (op.role == Role::Write) {
                    // a new accumulation over registers another MFMA still writes: treat as overlap
                    const bool same = v.mfma_first == op.reg.first && v.mfma_count == op.reg.count;
                    if (!same) require(v.mfma_write, v.mfma_passes + 1);
                } else {
                    require(v.mfma_write, v.mfma_passes + 4);
                }
                require(v.valu_write, 2);
            } else if (inst.kind == Kind::Valu || inst.kind == Kind::Permlane || is_memory(inst.kind)) {
                require(v.mfma_write, v.mfma_passes + 4);
                if (inst.kind == Kind::Permlane) require(v.valu_write, 2);  // it reads both operands
                if (op.role == Role::Write || inst.kind == Kind::Permlane) require(v.srcc_read, srcc_war_wait(v.srcc_passes));
            }
        }
    }
    return need;
}

std::string HazardState::check(const Instruction& inst) const {
    if (!reachable) return "";
    for (const Operand& op : inst.operands) {
        if (!op.reg.valid()) continue;
        for (int k = 0; k < op.reg.count; ++k) {
            if (pending_op(op.reg, k) >= 0) {
                return (op.role == Role::Write ? "overwrites " : "reads ") + reg_name(op.reg.file, op.reg.first + k) +
                       " while a load into it is outstanding (missing s_waitcnt)";
            }
        }
    }
    const int need = wait_states_needed(inst);
    if (need > 0) return "needs " + std::to_string(need) + " more wait states (MFMA/VALU dependency, docs/emulator.md, MFMA hazards)";
    if (inst.kind == Kind::Mfma && exec_depth_ > 0) return "MFMA under a narrowed EXEC";
    return "";
}

void HazardState::counts_needed(const std::vector<Reg>& regs, int& vmcnt, int& lgkmcnt) const {
    vmcnt = lgkmcnt = -1;
    for (const Reg& r : regs) {
        for (int k = 0; k < r.count; ++k) {
            const int op = pending_op(r, k);
            if (op < 0) continue;
            for (size_t i = 0; i < vm_.size(); ++i) {
                if (vm_[i].id != op) continue;
                const int newer = static_cast<int>(vm_.size() - 1 - i);
                vmcnt = vmcnt < 0 ? newer : std::min(vmcnt, newer);
            }
            for (size_t i = 0; i < lgkm_.size(); ++i) {
                if (lgkm_[i].id != op) continue;
                int newer = 0;
                for (size_t j = i + 1; j < lgkm_.size(); ++j) newer += lgkm_[j].smem ? 0 : 1;
                if (lgkm_[i].smem) newer = 0;
                lgkmcnt = lgkmcnt < 0 ? newer : std::min(lgkmcnt, newer);
            }
        }
    }
    if (vmcnt > 63) vmcnt = 63;
    if (lgkmcnt > 15) lgkmcnt = 15;
}

void HazardState::issue(const Instruction& inst, int index) {
    if (!reachable) return;
    if (inst.kind == Kind::Waitcnt) {
        if (inst.vmcnt >= 0) {
            while (static_cast<int>(vm_.size()) > inst.vmcnt) vm_.erase(vm_.begin());
        }
        if (inst.lgkmcnt >= 0) {
            if (inst.lgkmcnt == 0) {
                lgkm_.clear();
            } else {
                // An LDS op is complete once more than lgkmcnt in-order ops would be outstanding with it.
                std::vector<Op> kept;
                for (size_t i = 0; i < lgkm_.size(); ++i) {
                    if (lgkm_[i].smem) {
                        kept.push_back(lgkm_[i]);
                        continue;
                    }
                    int from_here = 0;
                    for (size_t j = i; j < lgkm_.size(); ++j) from_here += lgkm_[j].smem ? 0 : 1;
                    if (from_here <= inst.lgkmcnt) kept.push_back(lgkm_[i]);
                }
                lgkm_ = kept;
            }
        }
    }
    if (inst.kind == Kind::ExecChange) exec_depth_ += inst.exec_depth_change;
    if (is_memory(inst.kind)) {
        const Op op{index, inst.kind == Kind::Smem};
        if (inst.kind == Kind::GlobalLoad || inst.kind == Kind::GlobalStore) {
            vm_.push_back(op);
        } else {
            lgkm_.push_back(op);
        }
    }
    for (const Operand& o : inst.operands) {
        if (!o.reg.valid()) continue;
        for (int k = 0; k < o.reg.count; ++k) {
            const int i = o.reg.first + k;
            if (o.role == Role::Write) {
                if (is_load(inst.kind)) {
                    (o.reg.file == RegFile::Vgpr ? vgpr_pending_ : sgpr_pending_)[static_cast<size_t>(i)] = index;
                }
                if (o.reg.file != RegFile::Vgpr) {
                    if (inst.kind == Kind::Valu) sgpr_valu_write_[static_cast<size_t>(i)] = clock_;
                    continue;
                }
                VgprState& v = vgprs_[static_cast<size_t>(i)];
                if (inst.kind == Kind::Mfma) {
                    v.mfma_write = clock_;
                    v.mfma_passes = inst.mfma_passes;
                    v.mfma_first = o.reg.first;
                    v.mfma_count = o.reg.count;
                    v.valu_write = kNever;
                } else {
                    v.mfma_write = kNever;
                    v.mfma_first = -1;
                    v.mfma_count = 0;
                    v.valu_write = (inst.kind == Kind::Valu || inst.kind == Kind::Permlane) ? clock_ : kNever;
                }
            } else if (o.role == Role::MfmaC && o.reg.file == RegFile::Vgpr) {
                VgprState& v = vgprs_[static_cast<size_t>(i)];
                v.srcc_read = clock_;
                v.srcc_passes = inst.mfma_passes;
            }
        }
    }
    if (writes_part_of_vgpr(inst)) {
        for (const Operand& o : inst.operands) {
            if (o.role != Role::Write || !o.reg.valid() || o.reg.file != RegFile::Vgpr) continue;
            for (int k = 0; k < o.reg.count; ++k) vgprs_[static_cast<size_t>(o.reg.first + k)].partial_write = clock_;
        }
    }
    clock_ += inst.wait_states();
    normalise();
}

void HazardState::normalise() {
    // Forget what no rule can still see, so that states along a loop reach a fixpoint.
    for (VgprState& v : vgprs_) {
        if (v.mfma_write != kNever && clock_ - v.mfma_write > kForget) {
            v.mfma_write = kNever;
            v.mfma_passes = 0;
        }
        if (v.valu_write != kNever && clock_ - v.valu_write > kForget) v.valu_write = kNever;
        if (v.partial_write != kNever && clock_ - v.partial_write > kForget) v.partial_write = kNever;
        if (v.srcc_read != kNever && clock_ - v.srcc_read > kForget) {
            v.srcc_read = kNever;
            v.srcc_passes = 0;
        }
    }
    for (int64_t& t : sgpr_valu_write_)
        if (t != kNever && clock_ - t > kForget) t = kNever;
    for (int& p : vgpr_pending_)
        if (p >= 0 && !outstanding(p)) p = -1;
    for (int& p : sgpr_pending_)
        if (p >= 0 && !outstanding(p)) p = -1;
}

void HazardState::merge(const HazardState& o) {
    if (!o.reachable) return;
    if (!reachable) {
        *this = o;
        return;
    }
    if (exec_depth_ != o.exec_depth_) throw std::logic_error("hazard checker: paths join with different EXEC depth");
    const int64_t clock = std::max(clock_, o.clock_);
    auto shift = [](int64_t at, int64_t from, int64_t to) { return at == kNever ? kNever : at + (to - from); };
    for (size_t i = 0; i < vgprs_.size(); ++i) {
        VgprState& a = vgprs_[i];
        const VgprState& b = o.vgprs_[i];
        const int64_t am = shift(a.mfma_write, clock_, clock), bm = shift(b.mfma_write, o.clock_, clock);
        if (bm > am || (bm == am && b.mfma_passes > a.mfma_passes)) {
            a.mfma_write = bm;
            a.mfma_passes = b.mfma_passes;
            a.mfma_first = b.mfma_first;
            a.mfma_count = b.mfma_count;
        } else {
            a.mfma_write = am;
        }
        a.valu_write = std::max(shift(a.valu_write, clock_, clock), shift(b.valu_write, o.clock_, clock));
        a.partial_write = std::max(shift(a.partial_write, clock_, clock), shift(b.partial_write, o.clock_, clock));
        const int64_t as = shift(a.srcc_read, clock_, clock), bs = shift(b.srcc_read, o.clock_, clock);
        a.srcc_passes = std::max(as == kNever ? 0 : a.srcc_passes, bs == kNever ? 0 : b.srcc_passes);
        a.srcc_read = std::max(as, bs);
        if (o.vgpr_pending_[i] >= 0) vgpr_pending_[i] = std::max(vgpr_pending_[i], o.vgpr_pending_[i]);
    }
    for (size_t i = 0; i < sgpr_pending_.size(); ++i) {
        if (o.sgpr_pending_[i] >= 0) sgpr_pending_[i] = std::max(sgpr_pending_[i], o.sgpr_pending_[i]);
        sgpr_valu_write_[i] = std::max(shift(sgpr_valu_write_[i], clock_, clock), shift(o.sgpr_valu_write_[i], o.clock_, clock));
    }
    auto join = [](std::vector<Op>& a, const std::vector<Op>& b) {
        for (const Op& op : b) {
            bool found = false;
            for (const Op& x : a) found = found || x.id == op.id;
            if (!found) a.push_back(op);
        }
        std::sort(a.begin(), a.end(), [](const Op& x, const Op& y) { return x.id < y.id; });
    };
    join(vm_, o.vm_);
    join(lgkm_, o.lgkm_);
    clock_ = clock;
    normalise();
}

bool HazardState::operator==(const HazardState& o) const {
    if (reachable != o.reachable) return false;
    if (!reachable) return true;
    if (exec_depth_ != o.exec_depth_ || vm_.size() != o.vm_.size() || lgkm_.size() != o.lgkm_.size()) return false;
    for (size_t i = 0; i < vm_.size(); ++i)
        if (vm_[i].id != o.vm_[i].id) return false;
    for (size_t i = 0; i < lgkm_.size(); ++i)
        if (lgkm_[i].id != o.lgkm_[i].id) return false;
    auto age = [](int64_t at, int64_t clock) { return at == kNever ? kNever : clock - at; };
    for (size_t i = 0; i < vgprs_.size(); ++i) {
        const VgprState& a = vgprs_[i];
        const VgprState& b = o.vgprs_[i];
        if (age(a.mfma_write, clock_) != age(b.mfma_write, o.clock_) || a.mfma_passes != b.mfma_passes ||
            age(a.valu_write, clock_) != age(b.valu_write, o.clock_) ||
            age(a.partial_write, clock_) != age(b.partial_write, o.clock_) ||
            age(a.srcc_read, clock_) != age(b.srcc_read, o.clock_) || a.srcc_passes != b.srcc_passes ||
            vgpr_pending_[i] != o.vgpr_pending_[i])
            return false;
    }
    for (size_t i = 0; i < sgpr_valu_write_.size(); ++i)
        if (age(sgpr_valu_write_[i], clock_) != age(o.sgpr_valu_write_[i], o.clock_)) return false;
    return sgpr_pending_ == o.sgpr_pending_;
}

std::string check_program(const std::vector<Instruction>& program) {
    std::map<std::string, HazardState> at_label;
    for (int pass = 0; pass < 16; ++pass) {
        bool changed = false;
        HazardState state;
        for (size_t i = 0; i < program.size(); ++i) {
            const Instruction& inst = program[i];
            if (inst.kind == Kind::Label) {
                auto it = at_label.find(inst.label);
                if (it != at_label.end()) state.merge(it->second);
                continue;
            }
            const std::string problem = state.check(inst);
            if (!problem.empty()) return "instruction " + std::to_string(i) + " `" + inst.text() + "`: " + problem;
            state.issue(inst, static_cast<int>(i));
            if (inst.kind == Kind::Branch || inst.kind == Kind::CondBranch) {
                auto it = at_label.find(inst.label);
                if (it == at_label.end()) {
                    at_label.emplace(inst.label, state);
                    changed = true;
                } else {
                    HazardState joined = it->second;
                    joined.merge(state);
                    if (!(joined == it->second)) {
                        it->second = joined;
                        changed = true;
                    }
                }
            }
            if (inst.kind == Kind::Branch || inst.mnemonic == "s_endpgm") state.reachable = false;
        }
        if (!changed) return "";
    }
    return "hazard checker: no fixpoint after 16 passes";
}

}  // namespace gfx950_fp8
}  // namespace zyfa
