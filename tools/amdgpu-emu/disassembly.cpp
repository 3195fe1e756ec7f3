#include "disassembly.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "emu_error.hpp"

#ifndef ZYFA_EMU_DEFAULT_OBJDUMP
#define ZYFA_EMU_DEFAULT_OBJDUMP "llvm-objdump-22"
#endif

namespace zyfa {
namespace emu {

std::string objdump_path() {
    const char* env = std::getenv("ZYFA_EMU_OBJDUMP");
    return env && *env ? env : ZYFA_EMU_DEFAULT_OBJDUMP;
}

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

[[noreturn]] void bad_operand(const std::string& token, const std::string& line) {
    throw EmuError("decode: cannot read operand '" + token + "' in: " + line);
}

int64_t parse_int(const std::string& s, bool* ok) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 0);
    *ok = end && *end == '\0' && !s.empty() && errno == 0;
    if (!*ok && starts_with(s, "0x")) {  // values above INT64_MAX
        const unsigned long long u = std::strtoull(s.c_str(), &end, 16);
        *ok = end && *end == '\0';
        return static_cast<int64_t>(u);
    }
    return v;
}

// "v5", "v[16:19]", "s[0:1]", "a3", "vcc", "exec_lo", "m0", constants, with -, |..|, neg(), sext().
Operand parse_operand(std::string t, const std::string& line) {
    Operand op;
    op.text = t;
    if (starts_with(t, "sext(") && t.back() == ')') {
        op = parse_operand(t.substr(5, t.size() - 6), line);
        op.sext = true;
        return op;
    }
    if (starts_with(t, "neg(") && t.back() == ')') {
        op = parse_operand(t.substr(4, t.size() - 5), line);
        op.neg = !op.neg;
        return op;
    }
    if (starts_with(t, "abs(") && t.back() == ')') {
        op = parse_operand(t.substr(4, t.size() - 5), line);
        op.abs = true;
        return op;
    }
    bool neg = false;
    if (t.size() > 1 && t[0] == '-' && (t[1] == '|' || std::isalpha(static_cast<unsigned char>(t[1])))) {
        neg = true;
        t = t.substr(1);
    }
    bool abs = false;
    if (t.size() > 2 && t.front() == '|' && t.back() == '|') {
        abs = true;
        t = t.substr(1, t.size() - 2);
    }
    op.neg = neg;
    op.abs = abs;
    auto reg = [&](OperandKind kind, const std::string& rest) {
        op.kind = kind;
        bool ok1 = false, ok2 = false;
        if (!rest.empty() && rest[0] == '[') {
            const size_t colon = rest.find(':');
            if (colon == std::string::npos || rest.back() != ']') bad_operand(t, line);
            const int64_t lo = parse_int(rest.substr(1, colon - 1), &ok1);
            const int64_t hi = parse_int(rest.substr(colon + 1, rest.size() - colon - 2), &ok2);
            if (!ok1 || !ok2 || hi < lo) bad_operand(t, line);
            op.index = static_cast<int>(lo);
            op.count = static_cast<int>(hi - lo + 1);
        } else {
            const int64_t i = parse_int(rest, &ok1);
            if (!ok1) bad_operand(t, line);
            op.index = static_cast<int>(i);
            op.count = 1;
        }
    };
    if (t == "vcc" || t == "exec") {
        op.kind = t == "vcc" ? OperandKind::Vcc : OperandKind::Exec;
        op.count = 2;
        return op;
    }
    if (t == "vcc_lo" || t == "vcc_hi" || t == "exec_lo" || t == "exec_hi") {
        op.kind = t[0] == 'v' ? OperandKind::Vcc : OperandKind::Exec;
        op.index = t.back() == 'o' ? 1 : 2;
        return op;
    }
    if (t == "m0") {
        op.kind = OperandKind::M0;
        return op;
    }
    if (t == "scc" || t == "src_scc") {
        op.kind = OperandKind::Scc;
        return op;
    }
    if (t == "off") {
        op.kind = OperandKind::Off;
        return op;
    }
    if (t.size() >= 2 && (t[0] == 'v' || t[0] == 's' || t[0] == 'a') &&
        (std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '[')) {
        reg(t[0] == 'v' ? OperandKind::Vgpr : t[0] == 's' ? OperandKind::Sgpr : OperandKind::Agpr, t.substr(1));
        return op;
    }
    // Constants.
    bool ok = false;
    const int64_t i = parse_int(t, &ok);
    if (ok) {
        op.kind = OperandKind::Constant;
        op.integer = i;
        op.is_literal = starts_with(t, "0x");
        return op;
    }
    if (t.find('.') != std::string::npos) {
        char* end = nullptr;
        const double d = std::strtod(t.c_str(), &end);
        if (end && *end == '\0') {
            op.kind = OperandKind::Constant;
            op.is_float = true;
            op.real = d;
            return op;
        }
    }
    bad_operand(t, line);
}

// "[1,0,1]" -> bits.
void parse_bits(const std::string& v, int* out, const std::string& line) {
    if (v.size() < 2 || v.front() != '[' || v.back() != ']') bad_operand(v, line);
    int n = 0;
    for (size_t i = 1; i + 1 < v.size(); ++i) {
        if (v[i] == '0' || v[i] == '1') {
            if (n >= 4) bad_operand(v, line);
            out[n++] = v[i] - '0';
        }
    }
}

int parse_sel(const std::string& v, const std::string& line) {
    static const char* names[] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"};
    for (int i = 0; i < 7; ++i) {
        if (v == names[i]) return i;
    }
    bad_operand(v, line);
}

// DPP modifiers as llvm-objdump prints them: quad_perm:[a,b,c,d], row_shl:N, row_shr:N, row_ror:N,
// wave_shl:1 (and shr/rol/ror), row_mirror, row_half_mirror, row_bcast:15|31, row_newbcast:N,
// row_mask:0xM, bank_mask:0xM, bound_ctrl:1 (the assembler's bound_ctrl:0 sets the same bit).
bool parse_dpp_modifier(const std::string& key, const std::string& value, Instruction& inst, const std::string& line) {
    bool ok = true;
    auto number = [&]() { return static_cast<int>(parse_int(value, &ok)); };
    static const struct {
        const char* name;
        DppControl control;
    } counted[] = {{"row_shl", DppControl::RowShl},   {"row_shr", DppControl::RowShr},
                   {"row_ror", DppControl::RowRor},   {"wave_shl", DppControl::WaveShl},
                   {"wave_shr", DppControl::WaveShr}, {"wave_rol", DppControl::WaveRol},
                   {"wave_ror", DppControl::WaveRor}, {"row_newbcast", DppControl::RowNewBcast}};
    const auto* control = std::find_if(std::begin(counted), std::end(counted), [&](const auto& c) { return key == c.name; });
    if (control != std::end(counted)) {
        inst.dpp = control->control;
        inst.dpp_arg[0] = number();
        if (inst.dpp_arg[0] < 0 || inst.dpp_arg[0] > 15) ok = false;
    } else if (key == "quad_perm") {
        int n = 0;
        for (size_t i = 0; i < value.size(); ++i) {
            if (value[i] >= '0' && value[i] <= '3' && n < 4) inst.dpp_arg[n++] = value[i] - '0';
        }
        if (n != 4 || value.front() != '[' || value.back() != ']') bad_operand(key + ":" + value, line);
        inst.dpp = DppControl::QuadPerm;
    } else if (key == "row_mirror") {
        inst.dpp = DppControl::RowMirror;
    } else if (key == "row_half_mirror") {
        inst.dpp = DppControl::RowHalfMirror;
    } else if (key == "row_bcast") {
        const int n = number();
        if (n != 15 && n != 31) ok = false;
        inst.dpp = n == 15 ? DppControl::RowBcast15 : DppControl::RowBcast31;
    } else if (key == "row_mask") {
        inst.row_mask = number();
    } else if (key == "bank_mask") {
        inst.bank_mask = number();
    } else if (key == "bound_ctrl") {
        inst.bound_ctrl = true;
    } else {
        return false;
    }
    if (!ok) bad_operand(key + ":" + value, line);
    return true;
}

void parse_modifier(const std::string& m, Instruction& inst, const std::string& line) {
    const size_t colon = m.find(':');
    const std::string key = m.substr(0, colon);
    const std::string value = colon == std::string::npos ? "" : m.substr(colon + 1);
    bool ok = true;
    if (key == "offset") {
        inst.offset = parse_int(value, &ok);
    } else if (key == "offset0") {
        inst.offset0 = parse_int(value, &ok);
    } else if (key == "offset1") {
        inst.offset1 = parse_int(value, &ok);
    } else if (key == "op_sel") {
        parse_bits(value, inst.op_sel, line);
    } else if (key == "op_sel_hi") {
        parse_bits(value, inst.op_sel_hi, line);
    } else if (key == "neg_lo") {
        parse_bits(value, inst.neg_lo, line);
    } else if (key == "neg_hi") {
        parse_bits(value, inst.neg_hi, line);
    } else if (key == "clamp") {
        inst.clamp = true;
    } else if (key == "mul") {
        inst.omod = static_cast<float>(parse_int(value, &ok));
    } else if (key == "div") {
        inst.omod = 1.0f / static_cast<float>(parse_int(value, &ok));
    } else if (key == "cbsz") {
        inst.cbsz = static_cast<int>(parse_int(value, &ok));
    } else if (key == "abid") {
        inst.abid = static_cast<int>(parse_int(value, &ok));
    } else if (key == "blgp") {
        inst.blgp = static_cast<int>(parse_int(value, &ok));
    } else if (key == "bitop3") {
        inst.bitop3 = static_cast<int>(parse_int(value, &ok));
    } else if (key == "dst_sel") {
        inst.dst_sel = parse_sel(value, line);
    } else if (key == "src0_sel") {
        inst.src_sel[0] = parse_sel(value, line);
    } else if (key == "src1_sel") {
        inst.src_sel[1] = parse_sel(value, line);
    } else if (key == "dst_unused") {
        if (value == "UNUSED_PAD") {
            inst.dst_unused = 0;
        } else if (value == "UNUSED_SEXT") {
            inst.dst_unused = 1;
        } else if (value == "UNUSED_PRESERVE") {
            inst.dst_unused = 2;
        } else {
            ok = false;
        }
    } else if (key == "lds") {
        inst.lds = true;
    } else if (key == "offen") {
        inst.offen = true;
    } else if (key == "idxen") {
        inst.idxen = true;
    } else if (parse_dpp_modifier(key, value, inst, line)) {
        // DPP control, masks or bound_ctrl.
    } else if (key == "sc0" || key == "sc1" || key == "nt" || key == "glc" || key == "slc") {
        // Cache policy: no effect on a host model of memory.
    } else {
        throw EmuError("decode: unknown modifier '" + m + "' in: " + line);
    }
    if (!ok) bad_operand(m, line);
}

void parse_waitcnt(const std::string& args, Instruction& inst, const std::string& line) {
    std::istringstream in(args);
    std::string part;
    while (in >> part) {
        const size_t open = part.find('('), close = part.find(')');
        if (open == std::string::npos || close == std::string::npos) {
            bool ok = false;
            const int64_t raw = parse_int(part, &ok);  // raw immediate form
            if (!ok) bad_operand(part, line);
            // gfx9 encoding: vmcnt [3:0] + [15:14], expcnt [6:4], lgkmcnt [11:8].
            inst.vmcnt = static_cast<int>((raw & 0xf) | ((raw >> 10) & 0x30));
            inst.expcnt = static_cast<int>((raw >> 4) & 7);
            inst.lgkmcnt = static_cast<int>((raw >> 8) & 0xf);
            continue;
        }
        bool ok = false;
        const int n = static_cast<int>(parse_int(part.substr(open + 1, close - open - 1), &ok));
        const std::string which = part.substr(0, open);
        if (!ok) bad_operand(part, line);
        if (which == "vmcnt") {
            inst.vmcnt = n;
        } else if (which == "lgkmcnt") {
            inst.lgkmcnt = n;
        } else if (which == "expcnt") {
            inst.expcnt = n;
        } else {
            bad_operand(part, line);
        }
    }
}

}  // namespace

bool parse_instruction_line(const std::string& raw, Instruction& inst) {
    const size_t comment = raw.find("//");
    if (raw.empty() || raw[0] != '\t' || comment == std::string::npos) return false;
    // "// 000000001600: C00A1400 00000020 <sym+0x..>"
    std::istringstream tail(raw.substr(comment + 2));
    std::string address_text;
    tail >> address_text;
    if (address_text.empty() || address_text.back() != ':') return false;
    inst = Instruction();
    inst.address = std::strtoull(address_text.c_str(), nullptr, 16);
    std::string word;
    while (tail >> word) {
        if (word.size() == 8 && word.find_first_not_of("0123456789ABCDEFabcdef") == std::string::npos) {
            inst.size += 4;
        } else {
            break;
        }
    }
    std::string body = raw.substr(1, comment - 1);
    while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.pop_back();
    inst.text = body;
    const size_t space = body.find(' ');
    inst.mnemonic = body.substr(0, space);
    const std::string args = space == std::string::npos ? "" : body.substr(space + 1);
    inst.base = inst.mnemonic;
    for (const char* suffix : {"_e32", "_e64", "_sdwa", "_dpp"}) {
        const size_t n = std::strlen(suffix);
        if (inst.base.size() > n && inst.base.compare(inst.base.size() - n, n, suffix) == 0) {
            inst.base = inst.base.substr(0, inst.base.size() - n);
            inst.encoding = suffix + 1;
            break;
        }
    }
    // global_load_lds_dword*: direct-to-LDS by mnemonic (MUBUF spells it with the lds modifier).
    if (inst.mnemonic.rfind("global_load_lds_", 0) == 0) inst.lds = true;
    if (inst.mnemonic == "s_waitcnt") {
        parse_waitcnt(args, inst, body);
        return true;
    }
    // Operands: tokens while the previous one ended in ','; then modifiers.
    std::istringstream in(args);
    std::string token;
    bool operands = true;
    while (in >> token) {
        if (operands) {
            const bool more = token.back() == ',';
            if (more) token.pop_back();
            inst.ops.push_back(parse_operand(token, body));
            operands = more;
        } else {
            parse_modifier(token, inst, body);
        }
    }
    const bool sopp = inst.mnemonic.rfind("s_branch", 0) == 0 || inst.mnemonic.rfind("s_cbranch", 0) == 0;
    if (sopp) {
        if (inst.ops.size() != 1) throw EmuError("decode: branch without target: " + body);
        int64_t simm = inst.ops[0].integer & 0xffff;
        if (simm >= 0x8000) simm -= 0x10000;
        inst.branch_target = inst.address + 4 + static_cast<uint64_t>(simm * 4);
    }
    if (!inst.ops.empty() && inst.ops[0].kind == OperandKind::Constant) inst.immediate = inst.ops[0].integer;
    return true;
}

std::vector<Instruction> disassemble(const void* elf, size_t size, Arch arch) {
    char path[] = "/tmp/zyfa-emu-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) throw EmuError("decode: cannot create a temporary file");
    const char* p = static_cast<const char*>(elf);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = write(fd, p + done, size - done);
        if (n <= 0) {
            close(fd);
            unlink(path);
            throw EmuError("decode: cannot write the temporary file");
        }
        done += static_cast<size_t>(n);
    }
    close(fd);
    const std::string command = objdump_path() + " -d --mcpu=" + arch_name(arch) + " " + path + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) {
        unlink(path);
        throw EmuError("decode: cannot run " + command);
    }
    std::string text;
    char buffer[65536];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, n);
    const int status = pclose(pipe);
    unlink(path);
    if (status != 0) throw EmuError("decode: '" + command + "' failed: " + text.substr(0, 400));
    std::vector<Instruction> out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        Instruction inst;
        if (!parse_instruction_line(line, inst)) continue;
        if (inst.mnemonic == "<unknown>" || inst.mnemonic.empty()) {
            throw EmuError("decode: llvm-objdump could not decode the word at " + std::to_string(inst.address));
        }
        bind_instruction(inst, arch);
        out.push_back(std::move(inst));
    }
    if (out.empty()) throw EmuError("decode: no instructions in the code object ('" + command + "')");
    return out;
}

}  // namespace emu
}  // namespace zyfa
