// The .s text of one kernel: a complete HSA code object source for gfx950, code object v5 — the
// program, the kernel descriptor with its resource counts, and the metadata note describing the
// single by-value argument (AttnKernelArgs at offset 0, no hidden arguments).
#ifndef ZYFA_GFX950_FP8_CODE_OBJECT_WRITER_HPP
#define ZYFA_GFX950_FP8_CODE_OBJECT_WRITER_HPP

#include <string>

#include "kernel_builder.hpp"

namespace zyfa {
namespace gfx950_fp8 {

std::string assembly_text(const KernelBuilder& kernel);

// SGPRs the descriptor reports: the allocator's high-water mark (VCC is reserved on top).
int descriptor_sgprs(const KernelBuilder& kernel);

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
