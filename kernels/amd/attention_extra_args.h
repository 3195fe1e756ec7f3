// The second parameter of every HIP C++ attention kernel (attention_fwd.h), one definition for the
// device code and the host launch plan (src/hip/attention_launch_plan.cpp). Plain fixed-width
// fields only.
//
// paged: the block table of the paged variants (zeros in the contiguous ones).
// split: split-KV (common/split_kv_args.h). num_splits <= 1: unsplit, the kernel writes the
//   problem's o and lse as always. num_splits = n >= 2: the grid's x holds n workgroups per query
//   tile (x = tile * n + split); split s visits the 64-key blocks split_key_range gives it and
//   writes fp32 O and lse (always) into workspace part s in that header's layouts; only split 0
//   folds in the sink, so that zyfa_attn_merge's kernel, merging the parts, counts it once.
//   row_tiles is unused on AMD (0).
// key_bias: zyfa_attn_params.key_bias (common/key_bias.h) or null: fp32 [batch, heads_q, seqlen_k]
//   (fixed-length or paged keys), or [heads_q, total_k] when cu_seqlens_k packs the keys. The
//   generated assembly kernels take none (the plan declines them).
#ifndef ZYFA_KERNELS_AMD_ATTENTION_EXTRA_ARGS_H
#define ZYFA_KERNELS_AMD_ATTENTION_EXTRA_ARGS_H

#include "amd/attention_tile_shape.h"
#include "common/paged_kv_args.h"
#include "common/split_kv_args.h"

namespace zyfa {
namespace amd {

struct AttnExtraArgs {
    PagedKvArgs paged;
    SplitKvArgs split;
    const float* key_bias;
};

static_assert(kSplitKeyBlock == kKeyBlock, "split boundaries fall on the AMD kernels' key blocks");

}  // namespace amd
}  // namespace zyfa

#endif
