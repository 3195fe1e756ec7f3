// Instruction semantics are registered by family (semantics_*.cpp) into one table keyed by the
// mnemonic without its encoding suffix.
#ifndef ZYFA_AMDGPU_EMU_SEMANTICS_HPP
#define ZYFA_AMDGPU_EMU_SEMANTICS_HPP

#include <string>
#include <unordered_map>

#include "runner.hpp"

namespace zyfa {
namespace emu {

typedef WorkgroupRunner R;

class Registry {
public:
    void add(const std::string& name, Handler handler, Unit unit, int num_dst, bool reads_dst = false) {
        table_[name] = HandlerInfo{handler, unit, num_dst, reads_dst};
    }
    const HandlerInfo* find(const std::string& name) const {
        auto it = table_.find(name);
        return it == table_.end() ? nullptr : &it->second;
    }
    size_t size() const { return table_.size(); }

private:
    std::unordered_map<std::string, HandlerInfo> table_;
};

void register_scalar(Registry& r);
void register_vector(Registry& r);
void register_memory(Registry& r);
void register_mfma(Registry& r);


}  // namespace emu
}  // namespace zyfa

#endif
