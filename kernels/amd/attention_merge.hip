// zyfa_attn_merge on AMD GPUs (gfx950, gfx942): one workgroup of kMergeThreads per (query row,
// head, sequence), the row body of common/attn_merge_row.h, as the CUDA kernel. Built with
// -ffp-contract=off, so its results differ from the CPU backend's only by exp2 / log2 rounding.
#include "amd/hip_device.h"
#include "common/attn_merge_row.h"

extern "C" __global__ void __attribute__((amdgpu_flat_work_group_size(zyfa::kMergeThreads, zyfa::kMergeThreads)))
zyfa_attn_merge(const zyfa::MergeKernelArgs args) {
    zyfa::numerics::merge_kernel_row(args, zyfa::amd::block_id_x(), zyfa::amd::block_id_y(), zyfa::amd::block_id_z(),
                                     zyfa::amd::thread_id());
}
