// Every fault the emulator detects (unknown instruction, hazard, early read, out of bounds,
// malformed code object) is an EmuError whose message names the cause and, where there is one,
// the instruction address.
#ifndef ZYFA_AMDGPU_EMU_EMU_ERROR_HPP
#define ZYFA_AMDGPU_EMU_EMU_ERROR_HPP

#include <stdexcept>
#include <string>

namespace zyfa {
namespace emu {

class EmuError : public std::runtime_error {
public:
    explicit EmuError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace emu
}  // namespace zyfa

#endif
