// zyfa_attn_merge on NVIDIA GPUs: one block of kMergeThreads per (query row, head, sequence), the
// row body of common/attn_merge_row.h. Built with -fmad=false, so its results differ from the CPU
// backend's only by exp2f / log2f rounding. Elementwise and memory-bound: each part element is
// read once; no shared memory, no synchronisation, no allocation.
#include "common/attn_merge_row.h"

// __grid_constant__: the parts are indexed by a loop variable; this keeps them in parameter space
// instead of a 3 KiB per-thread local copy.
extern "C" __global__ void __launch_bounds__(zyfa::kMergeThreads)
    zyfa_attn_merge(const __grid_constant__ zyfa::MergeKernelArgs args) {
    zyfa::numerics::merge_kernel_row(args, blockIdx.x, blockIdx.y, blockIdx.z, static_cast<int32_t>(threadIdx.x));
}
