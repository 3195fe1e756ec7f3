// An AMDGPU HSA code object (ELF): its kernels, their descriptors and metadata, and the decoded
// text of each kernel.
#ifndef ZYFA_AMDGPU_EMU_CODE_OBJECT_HPP
#define ZYFA_AMDGPU_EMU_CODE_OBJECT_HPP

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "instruction.hpp"

namespace zyfa {
namespace emu {

enum class Arch { Gfx942, Gfx950 };
const char* arch_name(Arch arch);

struct KernelArgument {
    uint32_t offset = 0, size = 0;
    std::string value_kind;  // global_buffer, by_value, hidden_*
};

// The fields of the 64-byte kernel descriptor the emulator honours.
struct KernelDescriptor {
    uint32_t group_segment_fixed_size = 0;
    uint32_t private_segment_fixed_size = 0;
    uint32_t kernarg_size = 0;
    int64_t entry_offset = 0;
    uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
    uint16_t code_properties = 0;
    uint16_t kernarg_preload = 0;
    // Derived.
    int total_vgprs = 0;    // arch VGPRs + AGPRs (gfx90a+ unified file)
    int accum_offset = 0;   // first AGPR's index in the unified file = number of arch VGPRs
    int user_sgpr_count = 0;
    bool workgroup_id[3] = {false, false, false};
    int workitem_id_dims = 0;  // 0: x only, 1: x,y, 2: x,y,z
};

struct Kernel {
    std::string name;
    uint64_t descriptor_address = 0;
    uint64_t entry = 0;
    KernelDescriptor descriptor;
    std::vector<KernelArgument> args;  // from the amdhsa.kernels metadata
    uint32_t kernarg_segment_size = 0;
    uint32_t max_flat_workgroup_size = 0;
};

class CodeObject {
public:
    // Parses the ELF and disassembles it with llvm-objdump-22; throws EmuError on failure.
    static std::shared_ptr<CodeObject> load(const void* data, size_t size);
    Arch arch() const { return arch_; }
    const Kernel* find_kernel(const std::string& name) const;
    const std::vector<Kernel>& kernels() const { return kernels_; }
    // The instruction starting at `address`, or nullptr.
    const Instruction* at(uint64_t address) const;
    const std::vector<Instruction>& instructions() const { return instructions_; }
    // Mnemonics in the text the emulator does not implement (executing one is an error).
    std::vector<std::string> unsupported_mnemonics() const;

private:
    Arch arch_ = Arch::Gfx950;
    std::vector<Kernel> kernels_;
    std::vector<Instruction> instructions_;
    std::map<uint64_t, size_t> by_address_;
};

}  // namespace emu
}  // namespace zyfa

#endif
