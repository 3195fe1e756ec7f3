// The alignment the GPU attention kernels' global loads need, checked by each vendor's launch
// plan (src/cuda, src/hip) before it picks a kernel.
#pragma once

#include <cstdint>

#include "core/problem.hpp"

namespace zyfa {
namespace gpu {

// The kernels read q, k and v rows with 16-byte vector loads (cp.async on NVIDIA, global_load
// dwordx4 on AMD).
constexpr uint32_t kVectorLoadBytes = 16;

// Throws Error(NOT_SUPPORTED) naming `name` unless t's base and every stride keep 16-byte
// alignment. `vendor` ("NVIDIA", "AMD") names the kernels in the message.
void require_vector_aligned(const TensorView& t, const char* name, int64_t elem_bytes, const char* vendor);

}  // namespace gpu
}  // namespace zyfa
