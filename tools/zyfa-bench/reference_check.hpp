// The accuracy columns: zyfa_attn_fwd's O against the fp64 reference (zyfa::cpu::
// attention_reference_fp64) on the same inputs and descales, over all query heads or, when that
// would be slow, an evenly spread subset of them (every row of each).
#pragma once

#include <cstdint>
#include <vector>

#include "bench_inputs.hpp"

namespace zyfa_bench {

struct ReferenceCheck {
    double relative_rms = 0.0;       // sqrt(sum (O - O_ref)^2 / sum O_ref^2)
    double max_abs = 0.0;            // max |O - O_ref|
    std::vector<int64_t> heads;      // the query heads compared
};

// Threads the reference runs on: `threads`, or all hardware threads for 0.
int reference_threads(int threads);

// The query heads to compare: all of them while the reference's work (about visible_pairs *
// (head_dim_qk + head_dim_v) multiply-adds plus one mask test per (query, key), per head) stays
// within a budget per reference thread (--threads) that keeps the default run short, else an
// evenly spread subset (at least one).
std::vector<int64_t> reference_heads(const BenchOptions& options, int64_t visible_pairs_per_head,
                                     const Activations& activations);

// Runs the reference for `heads` on `threads` threads (0 = all cores) and compares.
ReferenceCheck check_against_reference(const CaseBuffers& buffers, const std::vector<int64_t>& heads, int threads);

}  // namespace zyfa_bench
