// zyfa_attn_merge on the CPU: per query row, the parts merged by lse with common/attn_merge.h.
#pragma once

#include "core/problem.hpp"
#include "worker_pool.hpp"

namespace zyfa {
namespace cpu {

void attention_merge(const MergeProblem& problem, WorkerPool& pool);

}  // namespace cpu
}  // namespace zyfa
