#include "exec_mask_analysis.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

namespace zyfa_amd_check {
namespace {

constexpr int kMaxAtoms = 6;  // a truth table of 2^6 assignments fits in one uint64_t
constexpr int kExec = -2;
constexpr int kVcc = -1;
// Any other key is the first SGPR of an (even-aligned) pair.

// A lane mask as a boolean function of atoms; canonical: no atom it does not depend on.
struct Mask {
    std::vector<int> atoms;  // sorted atom ids
    uint64_t table = 0;      // bit i: the value when atom atoms[j] is bit j of i
    bool operator==(const Mask& o) const { return atoms == o.atoms && table == o.table; }
    bool operator!=(const Mask& o) const { return !(*this == o); }
    bool is_full() const { return atoms.empty() && (table & 1u) != 0; }
};

uint64_t table_bits(size_t atoms) { return atoms >= 6 ? ~uint64_t(0) : (uint64_t(1) << (1u << atoms)) - 1; }

Mask constant(bool value) { return Mask{{}, value ? 1u : 0u}; }

Mask atom_mask(int id) { return Mask{{id}, 0x2u}; }

// Drops atoms the function does not depend on.
Mask canonical(Mask m) {
    m.table &= table_bits(m.atoms.size());
    for (size_t j = 0; j < m.atoms.size();) {
        const size_t n = m.atoms.size();
        bool depends = false;
        for (uint64_t i = 0; i < (uint64_t(1) << n) && !depends; ++i) {
            if (!(i >> j & 1u)) depends = ((m.table >> i) ^ (m.table >> (i | (uint64_t(1) << j)))) & 1u;
        }
        if (depends) {
            ++j;
            continue;
        }
        uint64_t t = 0;
        for (uint64_t i = 0; i < (uint64_t(1) << (n - 1)); ++i) {
            const uint64_t low = i & ((uint64_t(1) << j) - 1), high = (i >> j) << (j + 1);
            t |= ((m.table >> (low | high)) & 1u) << i;
        }
        m.table = t;
        m.atoms.erase(m.atoms.begin() + static_cast<long>(j));
    }
    return m;
}

enum class Op { And, Or, Xor, AndNot, OrNot, Nand, Nor, Xnor, NotAnd, NotOr };

bool apply(Op op, bool a, bool b) {
    switch (op) {
        case Op::And: return a && b;
        case Op::Or: return a || b;
        case Op::Xor: return a != b;
        case Op::AndNot: return a && !b;  // andn2: a & ~b
        case Op::OrNot: return a || !b;   // orn2: a | ~b
        case Op::Nand: return !(a && b);
        case Op::Nor: return !(a || b);
        case Op::Xnor: return a == b;
        case Op::NotAnd: return !a && b;  // andn1: ~a & b
        case Op::NotOr: return !a || b;   // orn1: ~a | b
    }
    return false;
}

// nullopt when the result would depend on more than kMaxAtoms atoms.
std::optional<Mask> combine(Op op, const Mask& a, const Mask& b) {
    std::vector<int> atoms = a.atoms;
    atoms.insert(atoms.end(), b.atoms.begin(), b.atoms.end());
    std::sort(atoms.begin(), atoms.end());
    atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
    if (atoms.size() > kMaxAtoms) return std::nullopt;
    auto index_in = [&](const Mask& m, uint64_t i) {
        uint64_t k = 0;
        for (size_t j = 0; j < m.atoms.size(); ++j) {
            const size_t pos = static_cast<size_t>(std::lower_bound(atoms.begin(), atoms.end(), m.atoms[j]) - atoms.begin());
            k |= ((i >> pos) & 1u) << j;
        }
        return k;
    };
    Mask r{atoms, 0};
    for (uint64_t i = 0; i < (uint64_t(1) << atoms.size()); ++i) {
        const bool va = (a.table >> index_in(a, i)) & 1u, vb = (b.table >> index_in(b, i)) & 1u;
        r.table |= uint64_t(apply(op, va, vb)) << i;
    }
    return canonical(r);
}

struct Line {
    uint64_t address = 0;
    std::string mnemonic;
    std::vector<std::string> ops;  // first word of each comma-separated operand
    std::string text;
    std::string kernel;
    uint64_t kernel_entry = 0;
};

struct State {
    bool reachable = false;
    std::map<int, Mask> regs;  // a key absent here holds its kernel-entry value
};

class Analysis {
public:
    explicit Analysis(std::vector<Line> lines) : lines_(std::move(lines)) {
        for (size_t i = 0; i < lines_.size(); ++i) index_[lines_[i].address] = i;
    }

    ExecReport run(const std::vector<size_t>& entries);

private:
    int atom(int kind, uint64_t where, int key) {
        const auto k = std::make_tuple(kind, where, key);
        auto it = atoms_.find(k);
        if (it != atoms_.end()) return it->second;
        const int id = static_cast<int>(atoms_.size());
        atoms_.emplace(k, id);
        return id;
    }
    Mask get(const State& s, int key) {
        auto it = s.regs.find(key);
        return it != s.regs.end() ? it->second : atom_mask(atom(0, 0, key));  // 0: the entry value
    }
    Mask opaque(uint64_t pc, int key) { return atom_mask(atom(1, pc, key)); }
    State merge(size_t at, const std::vector<const State*>& in);
    bool transfer(const Line& line, State& s, std::string& error);
    std::vector<size_t> successors(size_t i, std::string& error) const;

    std::vector<Line> lines_;
    std::map<uint64_t, size_t> index_;
    std::map<std::tuple<int, uint64_t, int>, int> atoms_;
    std::map<std::pair<size_t, int>, int> join_level_;
};

// The register a mask operand names: exec, vcc or an SGPR pair; nullopt for anything else.
std::optional<int> mask_key(const std::string& op) {
    if (op == "exec") return kExec;
    if (op == "vcc") return kVcc;
    if (op.size() > 3 && op[0] == 's' && op[1] == '[') {
        const int first = std::atoi(op.c_str() + 2);
        const size_t colon = op.find(':');
        if (colon != std::string::npos && std::atoi(op.c_str() + colon + 1) == first + 1) return first;
    }
    return std::nullopt;
}

// Pair keys (and exec/vcc) overlapped by a scalar destination operand that is not a whole pair.
std::vector<int> clobbered_keys(const std::string& op) {
    if (op == "exec_lo" || op == "exec_hi") return {kExec};
    if (op == "vcc_lo" || op == "vcc_hi") return {kVcc};
    if (op.size() > 1 && op[0] == 's' && op[1] == '[') {
        const int first = std::atoi(op.c_str() + 2);
        const size_t colon = op.find(':');
        const int last = colon == std::string::npos ? first : std::atoi(op.c_str() + colon + 1);
        std::vector<int> keys;
        for (int r = first & ~1; r <= last; r += 2) keys.push_back(r);
        return keys;
    }
    if (op.size() > 1 && op[0] == 's' && op[1] >= '0' && op[1] <= '9') return {std::atoi(op.c_str() + 1) & ~1};
    return {};
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

State Analysis::merge(size_t at, const std::vector<const State*>& in) {
    State out;
    std::vector<const State*> live;
    for (const State* s : in) {
        if (s->reachable) live.push_back(s);
    }
    if (live.empty()) return out;
    out.reachable = true;
    if (live.size() == 1) {
        out.regs = live[0]->regs;
        return out;
    }
    std::vector<int> keys;
    for (const State* s : live) {
        for (const auto& kv : s->regs) keys.push_back(kv.first);
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    // EXEC first: the other registers' join may refer to it.
    keys.erase(std::remove(keys.begin(), keys.end(), kExec), keys.end());
    keys.insert(keys.begin(), kExec);
    for (int key : keys) {
        // How this join has met the key so far; it only ever rises, so the iteration ends:
        // 0 equal values, 1 "~EXEC | J", 2 the fresh atom J.
        int& level = join_level_[std::make_pair(at, key)];
        const Mask first = get(*live[0], key);
        bool same = true;
        for (size_t i = 1; i < live.size() && same; ++i) same = get(*live[i], key) == first;
        if (same && level == 0) {
            out.regs[key] = first;
            continue;
        }
        // Differing values meet as a fresh atom of this join (the same atom on every iteration).
        const Mask fresh = atom_mask(atom(2, lines_[at].address, key));
        out.regs[key] = fresh;
        if (key == kExec) {
            level = 2;
            continue;
        }
        // The loop-break and else-mask invariant: if EXEC | X is the full mask on every incoming
        // edge, X = ~EXEC | J keeps it (sound: J may be X itself, since X contains ~EXEC).
        bool covers = level <= 1;
        for (size_t i = 0; i < live.size() && covers; ++i) {
            const std::optional<Mask> u = combine(Op::Or, get(*live[i], kExec), get(*live[i], key));
            covers = u && u->is_full();
        }
        const std::optional<Mask> x = covers ? combine(Op::NotOr, out.regs[kExec], fresh) : std::nullopt;
        if (x) {
            out.regs[key] = *x;
            level = 1;
        } else {
            level = 2;
        }
    }
    return out;
}

bool Analysis::transfer(const Line& l, State& s, std::string& error) {
    const std::string& m = l.mnemonic;
    const std::vector<std::string>& ops = l.ops;
    auto value = [&](size_t i) -> Mask {
        if (i >= ops.size()) return opaque(l.address, 1000 + static_cast<int>(i));
        if (ops[i] == "-1") return constant(true);
        if (ops[i] == "0") return constant(false);
        if (auto key = mask_key(ops[i])) return get(s, *key);
        return opaque(l.address, 1000 + static_cast<int>(i));
    };
    auto write = [&](const std::string& op, const std::optional<Mask>& v) {
        if (auto key = mask_key(op)) {
            s.regs[*key] = v ? *v : opaque(l.address, *key);
        } else {
            for (int k : clobbered_keys(op)) s.regs[k] = opaque(l.address, k);
        }
    };
    static const std::map<std::string, Op> kBinary = {
        {"and", Op::And},   {"or", Op::Or},     {"xor", Op::Xor},   {"andn2", Op::AndNot}, {"orn2", Op::OrNot},
        {"nand", Op::Nand}, {"nor", Op::Nor},   {"xnor", Op::Xnor}, {"andn1", Op::NotAnd}, {"orn1", Op::NotOr}};

    if (starts_with(m, "s_") && m.size() > 13 && m.compare(m.size() - 13, 13, "_saveexec_b64") == 0) {
        // D = EXEC; EXEC = op(S0, EXEC)
        auto it = kBinary.find(m.substr(2, m.size() - 15));
        if (it == kBinary.end() || ops.size() != 2) {
            error = "unmodelled exec instruction: " + l.text;
            return false;
        }
        const Mask old_exec = get(s, kExec);
        const std::optional<Mask> new_exec = combine(it->second, value(1), old_exec);
        write(ops[0], old_exec);
        s.regs[kExec] = new_exec ? *new_exec : opaque(l.address, kExec);
        return true;
    }
    if (starts_with(m, "s_") && m.size() > 14 && m.compare(m.size() - 14, 14, "_wrexec_b64") == 0) {
        error = "unmodelled exec instruction: " + l.text;
        return false;
    }
    if (starts_with(m, "s_") && m.size() > 4 && m.compare(m.size() - 4, 4, "_b64") == 0 && ops.size() == 3 &&
        kBinary.count(m.substr(2, m.size() - 6))) {
        write(ops[0], combine(kBinary.at(m.substr(2, m.size() - 6)), value(1), value(2)));
        return true;
    }
    if (m == "s_mov_b64" && ops.size() == 2) {
        write(ops[0], value(1));
        return true;
    }
    if (m == "s_not_b64" && ops.size() == 2) {
        write(ops[0], combine(Op::Nand, value(1), constant(true)));
        return true;
    }
    if (m == "s_cselect_b64" && ops.size() == 3) {
        const Mask a = value(1), b = value(2);
        write(ops[0], a == b ? std::optional<Mask>(a) : std::nullopt);
        return true;
    }
    if (starts_with(m, "v_cmpx")) {
        // EXEC (and the destination) = compare result AND EXEC.
        const std::optional<Mask> r = combine(Op::And, opaque(l.address, kExec), get(s, kExec));
        if (!ops.empty()) write(ops[0], r);
        s.regs[kExec] = r ? *r : opaque(l.address, kExec);
        return true;
    }
    if (starts_with(m, "v_cmp")) {
        // Inactive lanes read 0.
        if (!ops.empty()) write(ops[0], combine(Op::And, opaque(l.address, 0), get(s, kExec)));
        return true;
    }
    if (starts_with(m, "s_")) {
        // Writes only SCC, memory or hardware state: no mask register changes.
        if (starts_with(m, "s_cmp") || starts_with(m, "s_bitcmp") || starts_with(m, "s_store") ||
            starts_with(m, "s_buffer_store") || starts_with(m, "s_setreg") || starts_with(m, "s_set_gpr_idx")) {
            return true;
        }
        if (!ops.empty()) write(ops[0], std::nullopt);
        return true;
    }
    if (starts_with(m, "v_")) {
        // Scalar destinations: v_readlane/v_readfirstlane (operand 0) and the carry-out of the
        // _co_, v_div_scale and v_mad_*64 forms (operand 1). Other VALU writes no SGPR.
        if (!ops.empty() && (mask_key(ops[0]) || !clobbered_keys(ops[0]).empty())) write(ops[0], std::nullopt);
        const bool carry_out = m.find("_co_") != std::string::npos || starts_with(m, "v_div_scale") ||
                               starts_with(m, "v_mad_u64") || starts_with(m, "v_mad_i64");
        if (carry_out && ops.size() > 1) write(ops[1], std::nullopt);
        return true;
    }
    return true;  // memory instructions write VGPRs/AGPRs/LDS only
}

std::vector<size_t> Analysis::successors(size_t i, std::string& error) const {
    const Line& l = lines_[i];
    const std::string& m = l.mnemonic;
    std::vector<size_t> next;
    if (starts_with(m, "s_endpgm")) return next;
    if (m == "s_setpc_b64" || m == "s_swappc_b64" || starts_with(m, "s_cbranch_g_fork") || m == "s_cbranch_join" ||
        starts_with(m, "s_subvector_loop")) {
        error = "unmodelled control flow: " + l.text;
        return next;
    }
    const bool branch = m == "s_branch" || starts_with(m, "s_cbranch_");
    if (branch) {
        if (l.ops.empty()) {
            error = "branch without offset: " + l.text;
            return next;
        }
        long simm = std::strtol(l.ops[0].c_str(), nullptr, 0);
        if (simm >= 32768) simm -= 65536;
        const uint64_t target = l.address + 4 + static_cast<uint64_t>(4 * simm);
        auto it = index_.find(target);
        if (it == index_.end()) {
            error = "branch target not an instruction: " + l.text;
            return next;
        }
        next.push_back(it->second);
        if (m == "s_branch") return next;
    }
    if (i + 1 < lines_.size() && lines_[i + 1].kernel == l.kernel) next.push_back(i + 1);
    return next;
}

ExecReport Analysis::run(const std::vector<size_t>& entries) {
    ExecReport report;
    const size_t n = lines_.size();
    std::vector<std::vector<size_t>> succ(n), pred(n);
    for (size_t i = 0; i < n; ++i) {
        succ[i] = successors(i, report.error);
        if (!report.error.empty()) return report;
        for (size_t j : succ[i]) pred[j].push_back(i);
    }
    State entry_state;
    entry_state.reachable = true;
    entry_state.regs[kExec] = constant(true);
    std::vector<State> in(n), out(n);
    std::vector<bool> is_entry(n, false);
    for (size_t e : entries) is_entry[e] = true;
    std::vector<size_t> work(entries.rbegin(), entries.rend());
    std::vector<bool> queued(n, false);
    for (size_t e : entries) queued[e] = true;
    size_t steps = 0;
    while (!work.empty()) {
        const size_t i = work.back();
        work.pop_back();
        queued[i] = false;
        if (++steps > 200 * n + 1000) {
            report.error = "the exec-mask analysis did not converge";
            return report;
        }
        std::vector<const State*> sources;
        if (is_entry[i]) sources.push_back(&entry_state);
        for (size_t p : pred[i]) sources.push_back(&out[p]);
        in[i] = merge(i, sources);
        State s = in[i];
        if (s.reachable && !transfer(lines_[i], s, report.error)) return report;
        const bool changed = s.reachable != out[i].reachable || s.regs != out[i].regs;
        out[i] = std::move(s);
        if (!changed) continue;
        for (size_t j : succ[i]) {
            if (!queued[j]) {
                queued[j] = true;
                work.push_back(j);
            }
        }
    }
    for (size_t i = 0; i < n; ++i) {
        const Line& l = lines_[i];
        if (!in[i].reachable || !(starts_with(l.mnemonic, "v_mfma") || starts_with(l.mnemonic, "v_smfmac"))) continue;
        ++report.mfma_count;
        if (!get(in[i], kExec).is_full()) {
            report.partial_exec.push_back(ExecFinding{l.address, l.kernel, l.address - l.kernel_entry, l.text});
        }
    }
    return report;
}

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t");
    const size_t e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

ExecReport find_mfma_under_partial_exec(const std::string& listing) {
    std::vector<Line> lines;
    std::vector<size_t> entries;
    std::string kernel;
    uint64_t kernel_entry = 0;
    bool at_entry = false;
    std::istringstream in(listing);
    std::string raw;
    while (std::getline(in, raw)) {
        // "0000000000001600 <name>:" starts a function.
        const size_t lt = raw.find(" <");
        if (!raw.empty() && raw[0] != '\t' && lt != std::string::npos && raw.size() > 2 &&
            raw.compare(raw.size() - 2, 2, ">:") == 0) {
            kernel = raw.substr(lt + 2, raw.size() - lt - 4);
            kernel_entry = std::strtoull(raw.c_str(), nullptr, 16);
            at_entry = true;
            continue;
        }
        if (raw.empty() || raw[0] != '\t') continue;
        const size_t comment = raw.find("//");
        if (comment == std::string::npos) continue;
        Line l;
        l.address = std::strtoull(raw.c_str() + comment + 2, nullptr, 16);
        l.text = trim(raw.substr(0, comment));
        if (l.text.empty()) continue;
        const size_t space = l.text.find(' ');
        l.mnemonic = l.text.substr(0, space);
        if (space != std::string::npos) {
            std::istringstream operands(l.text.substr(space + 1));
            std::string op;
            while (std::getline(operands, op, ',')) {
                op = trim(op);
                l.ops.push_back(op.substr(0, op.find(' ')));
            }
        }
        l.kernel = kernel;
        l.kernel_entry = kernel_entry;
        if (at_entry) entries.push_back(lines.size());
        at_entry = false;
        lines.push_back(std::move(l));
    }
    if (entries.empty()) {
        ExecReport report;
        report.error = "no function label in the listing";
        return report;
    }
    return Analysis(std::move(lines)).run(entries);
}

}  // namespace zyfa_amd_check
