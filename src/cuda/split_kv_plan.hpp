// Split-KV for short query chunks and decode steps on NVIDIA GPUs: when the split kernels
// (kernels/nvidia/attention_fwd_split.cuh) run a problem and into how many key ranges, and the
// workspace that takes. One pure function of the shape, the device's SM count, the caller's
// num_splits and workspace_bytes (tests/unit/split_kv_plan_test.cpp), so that a given shape and
// workspace always splits the same way: results are bitwise deterministic.
#pragma once

#include <cstdint>

#include "core/problem.hpp"
#include "gpu/split_kv_workspace.hpp"

namespace zyfa {
namespace cuda {

// CTAs of the split kernel resident per SM (~106 KiB of shared memory each at head dim 128).
constexpr int64_t kSplitCtasPerSm = 2;
// The shape, the workspace bytes, the workspace fit and the two limits below are shared with the
// HIP plan (gpu/split_kv_workspace.hpp).
using gpu::kSplitMaxSeqlenQ;
using gpu::kSplitMinBlocksPerSplit;
using gpu::SplitKvShape;
using gpu::split_kv_shape;
using gpu::split_kv_workspace_bytes;

// CTAs per kv head of the split kernel: ceil(heads_q / heads_kv * seqlen_q / 16).
int64_t split_kv_row_tiles(const SplitKvShape& shape);

// The split count, >= 1 (1 = the unsplit kernels). requested is zyfa_attn_params.num_splits
// (0 = heuristic, 1 = never, n > 1 = at most n); workspace_bytes what the caller passed, or -1 for
// no limit (zyfa_attn_fwd_workspace_size). The heuristic splits a problem with seqlen_q <= 128
// when the unsplit kernels waste it (seqlen_q <= 16: 128-row tiles at most 1/8 full) or leave SMs
// idle (fewer 128-row tiles than SMs), into enough parts that the split kernel's CTAs fill every
// SM's kSplitCtasPerSm slots about twice, at least 2, at most 64 and at most one per
// kSplitMinBlocksPerSplit key blocks; then as many as the workspace holds.
int64_t choose_split_count(const SplitKvShape& shape, int multiprocessors, int64_t requested, int64_t workspace_bytes);

}  // namespace cuda
}  // namespace zyfa
