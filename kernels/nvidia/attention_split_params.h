// The second kernel parameter of the NVIDIA split-KV kernels (attention_fwd_split.cuh), one
// definition for the kernels and the host launch plan (src/cuda/attention_launch_plan.cpp): the
// workspace parts (common/split_kv_args.h, shared with the AMD kernels' AttnExtraArgs) and, for
// paged K/V, the block table (common/paged_kv_args.h). Plain fixed-width fields only.
#ifndef ZYFA_KERNELS_NVIDIA_ATTENTION_SPLIT_PARAMS_H
#define ZYFA_KERNELS_NVIDIA_ATTENTION_SPLIT_PARAMS_H

#include "common/paged_kv_args.h"
#include "common/split_kv_args.h"

namespace zyfa {
namespace nvidia {

struct SplitParams {
    SplitKvArgs split;
    PagedKvArgs paged;  // block_table null: contiguous K/V; tma_box_rows unused (0)
};

}  // namespace nvidia
}  // namespace zyfa

#endif
