// Split-KV pieces both GPU vendors' plans share (src/cuda/split_kv_plan.hpp,
// src/hip/split_kv_plan.hpp): the shape a split count depends on, the workspace bytes of
// common/split_kv_args.h's layout, and fitting a split count to the caller's workspace. Pure
// functions (tests/unit/split_kv_plan_test.cpp, tests/amd/hip_host_test.cpp).
#pragma once

#include <cstdint>

#include "core/problem.hpp"

namespace zyfa {
namespace gpu {

// Split only where every split gets at least this many 64-key blocks (256 keys): below it the
// merge's traffic and the ramp of the pipeline outweigh the parallelism gained.
constexpr int64_t kSplitMinBlocksPerSplit = 4;
// Queries per sequence up to which a problem counts as a short chunk (issue 22: 1-128).
constexpr int64_t kSplitMaxSeqlenQ = 128;

struct SplitKvShape {
    int64_t batch = 0;
    int64_t seqlen_q = 0;  // the longest sequence when varlen
    int64_t seqlen_k = 0;
    int64_t heads_q = 0;
    int64_t heads_kv = 0;
    int64_t head_dim_v = 0;
};

SplitKvShape split_kv_shape(const AttnProblem& problem);

// Bytes of workspace `splits` parts take (common/split_kv_args.h's layout); 0 for splits <= 1;
// -1 when the size overflows int64 (such a problem never splits).
int64_t split_kv_workspace_bytes(const SplitKvShape& shape, int64_t splits);

// `splits` lowered until its parts fit workspace_bytes (1 when none >= 2 does); workspace_bytes -1
// = no limit, where a size that overflows gives 1.
int64_t fit_split_count_to_workspace(const SplitKvShape& shape, int64_t splits, int64_t workspace_bytes);

}  // namespace gpu
}  // namespace zyfa
