// Split-KV for short query chunks and decode steps on AMD GPUs (gfx950, gfx942): into how many key
// ranges the HIP C++ attention kernels (kernels/amd/attention_fwd.h, attention_extra_args.h) split
// a problem. One pure function of the shape, the device's CU count, the caller's num_splits and
// workspace_bytes (tests/amd/hip_host_test.cpp), so that a given shape and workspace always
// split the same way: results are bitwise deterministic. The workspace layout and its bytes are
// the CUDA split's (common/split_kv_args.h, gpu/split_kv_workspace.hpp).
#pragma once

#include <cstdint>

#include "gpu/split_kv_workspace.hpp"

namespace zyfa {
namespace hip {

// Workgroups of the unsplit kernels per (query head, sequence): ceil(seqlen_q / 256).
int64_t split_kv_query_tiles(const gpu::SplitKvShape& shape);

// The split count, >= 1 (1 = unsplit). requested is zyfa_attn_params.num_splits (0 = heuristic,
// 1 = never, n > 1 = at most n); workspace_bytes what the caller passed, or -1 for no limit
// (zyfa_attn_fwd_workspace_size). Only problems with seqlen_q <= 128 split, into at most
// kSplitMaxParts (64) parts and at most one per kSplitMinBlocksPerSplit 64-key blocks. The
// heuristic splits when the unsplit workgroups (one per 256-query tile, query head and sequence;
// one resident per CU) are fewer than the CUs, into enough parts that the workgroups fill every CU
// about twice, at least 2; then as many as the workspace holds.
int64_t choose_split_count(const gpu::SplitKvShape& shape, int compute_units, int64_t requested,
                           int64_t workspace_bytes);

}  // namespace hip
}  // namespace zyfa
