// The tensor maps of the sm_90a warp-specialised kernels (kernels/nvidia/attention_ws_tma_params.h)
// for one problem: encoded on the host through the driver, passed as the kernels' second parameter.
#pragma once

#include "core/problem.hpp"
#include "gpu/gpu_runtime.hpp"
#include "nvidia/attention_ws_tma_params.h"

namespace zyfa {
namespace cuda {

// enabled = 1 with Q, K and V maps when the problem suits the tensor memory accelerator: a
// warp-specialised kernel's head dims (nvidia::ws_tma_layout: 128, 192/128; boxes of one 128-byte
// column slice, which the kernel copies once per slice); fixed length (varlen sequences
// would read their neighbours' rows where the maps' zero fill ends a padded one); seqlen_k > 0 (a
// map has no extent 0, and K and V may be NULL then); 16-byte aligned
// base addresses and strides; a driver that encodes all three. Otherwise enabled = 0 and the
// kernels copy with cp.async, with the same results.
// key_block: the kernel's keys per step (nvidia::ws_key_block), the K and V boxes' rows.
nvidia::WsTmaParams make_ws_tma_params(const AttnProblem& problem, int key_block, gpu::GpuRuntime& runtime);

}  // namespace cuda
}  // namespace zyfa
