#include "instruction.hpp"

#include <stdexcept>

namespace zyfa {
namespace gfx950_fp8 {

Reg Reg::at(int i, int n) const {
    if (i < 0 || i + n > count) throw std::logic_error("register index out of range in " + text());
    return Reg(file, first + i, n);
}

std::string Reg::text() const {
    const char* prefix = file == RegFile::Vgpr ? "v" : "s";
    if (count == 1) return prefix + std::to_string(first);
    return std::string(prefix) + "[" + std::to_string(first) + ":" + std::to_string(first + count - 1) + "]";
}

std::string Instruction::text() const {
    if (kind == Kind::Label) return label + ":";
    std::string line = "  " + mnemonic;
    bool first = true;
    for (const Operand& op : operands) {
        if (op.text.empty()) continue;
        line += (first ? " " : ", ") + op.text;
        first = false;
    }
    if (!modifiers.empty()) line += " " + modifiers;
    if (!comment.empty()) {
        if (line.size() < 64) line.append(64 - line.size(), ' ');
        line += " // " + comment;
    }
    return line;
}

int Instruction::wait_states() const {
    if (kind == Kind::Label) return 0;
    if (kind == Kind::Nop) return nop_count + 1;
    return 1;
}

}  // namespace gfx950_fp8
}  // namespace zyfa
