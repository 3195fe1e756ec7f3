// Names what lives where: every register run of the kernel is allocated here under a name, so the
// schedule code never spells a register number. Runs can be released and reused (a scope's
// temporaries); the allocator keeps the high-water mark that the kernel descriptor reports, and a
// map of names for the .s file's header comment.
#ifndef ZYFA_GFX950_FP8_REGISTER_ALLOCATOR_HPP
#define ZYFA_GFX950_FP8_REGISTER_ALLOCATOR_HPP

#include <string>
#include <vector>

#include "instruction.hpp"

namespace zyfa {
namespace gfx950_fp8 {

class RegisterAllocator {
public:
    // `limit`: registers of this file a wave may use; `reserved`: the first ones the hardware
    // fills at entry (claimed separately with claim()).
    RegisterAllocator(RegFile file, int limit) : file_(file), used_(static_cast<size_t>(limit), false) {}

    // `count` consecutive registers whose first index is a multiple of `align`.
    Reg allocate(const std::string& name, int count, int align = 1);
    // A fixed run (entry state: kernarg pointer, workgroup ids, work-item id).
    Reg claim(const std::string& name, int first, int count);
    void release(const Reg& r);

    int high_water() const { return high_water_; }  // one past the highest register ever used
    std::string map_text(const char* comment_prefix) const;

private:
    struct Entry {
        std::string name;
        Reg reg;
    };
    RegFile file_;
    std::vector<bool> used_;
    std::vector<Entry> history_;
    int high_water_ = 0;
};

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
