// The manifest (manifest.json) beside the prebuilt gfx950 FP8 code objects: everything a program
// in any language needs to load one .co with a HIP binding (hipModuleLoadData /
// hipModuleGetFunction / hipModuleLaunchKernel) and launch it without libzyfa — symbol, variant,
// the kernel argument layout field by field, grid and workgroup mapping, LDS and registers.
#ifndef ZYFA_GFX950_FP8_MANIFEST_WRITER_HPP
#define ZYFA_GFX950_FP8_MANIFEST_WRITER_HPP

#include <string>
#include <vector>

#include "kernel_variant.hpp"

namespace zyfa {
namespace gfx950_fp8 {

// Deterministic JSON (fixed key order, kernels in the order given, "\n" line ends, trailing
// newline): the same kernels always give the same bytes, so CI can byte-compare the committed copy.
std::string manifest_json(const std::vector<EmittedKernel>& kernels);

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
