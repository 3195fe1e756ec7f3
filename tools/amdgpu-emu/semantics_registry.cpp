#include <algorithm>

#include "disassembly.hpp"
#include "semantics.hpp"

namespace zyfa {
namespace emu {

namespace {

struct AllSemantics {
    Registry registry;
    std::vector<std::string> names;
    AllSemantics() {
        register_scalar(registry);
        register_vector(registry);
        register_memory(registry);
        register_mfma(registry);
    }
};

Registry& semantics() {
    static AllSemantics all;
    return all.registry;
}

}  // namespace

const HandlerInfo* find_handler(const std::string& base, const std::string& mnemonic) {
    if (const HandlerInfo* h = semantics().find(mnemonic)) return h;
    return semantics().find(base);
}

void bind_instruction(Instruction& inst, Arch) {
    // MUBUF direct-to-LDS loads share the mnemonic of the register form; their semantics are
    // registered as "MNEMONIC lds".
    const bool mubuf_lds = inst.lds && inst.mnemonic.rfind("buffer_", 0) == 0;
    const HandlerInfo* h = mubuf_lds ? semantics().find(inst.mnemonic + " lds") : find_handler(inst.base, inst.mnemonic);
    if (!h) return;
    inst.handler = h->handler;
    inst.unit = h->unit;
    inst.num_dst = h->num_dst;
    inst.reads_dst = h->reads_dst;
    if (inst.unit == Unit::Mfma) inst.passes = mfma_passes(inst);
}

}  // namespace emu
}  // namespace zyfa
