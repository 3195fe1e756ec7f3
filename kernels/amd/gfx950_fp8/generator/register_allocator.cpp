#include "register_allocator.hpp"

#include <stdexcept>

namespace zyfa {
namespace gfx950_fp8 {

Reg RegisterAllocator::allocate(const std::string& name, int count, int align) {
    const int limit = static_cast<int>(used_.size());
    for (int first = 0; first + count <= limit; first += align) {
        bool free = true;
        for (int i = 0; i < count && free; ++i) free = !used_[static_cast<size_t>(first + i)];
        if (free) return claim(name, first, count);
    }
    throw std::runtime_error("register allocator: no room for '" + name + "' (" + std::to_string(count) + " " +
                             (file_ == RegFile::Vgpr ? "VGPRs" : "SGPRs") + ")");
}

Reg RegisterAllocator::claim(const std::string& name, int first, int count) {
    for (int i = first; i < first + count; ++i) {
        if (used_.at(static_cast<size_t>(i))) throw std::logic_error("register allocator: '" + name + "' overlaps a live run");
        used_[static_cast<size_t>(i)] = true;
    }
    const Reg r(file_, first, count);
    history_.push_back(Entry{name, r});
    if (first + count > high_water_) high_water_ = first + count;
    return r;
}

void RegisterAllocator::release(const Reg& r) {
    for (int i = r.first; i < r.first + r.count; ++i) used_.at(static_cast<size_t>(i)) = false;
}

std::string RegisterAllocator::map_text(const char* comment_prefix) const {
    // Every run once, in allocation order (a scope's temporaries are allocated again and again).
    std::string text;
    std::vector<std::string> seen;
    for (const Entry& e : history_) {
        const std::string line = std::string(comment_prefix) + " " + e.reg.text() + " " + e.name + "\n";
        bool repeated = false;
        for (const std::string& s : seen) repeated = repeated || s == line;
        if (repeated) continue;
        seen.push_back(line);
        text += line;
    }
    return text;
}

}  // namespace gfx950_fp8
}  // namespace zyfa
