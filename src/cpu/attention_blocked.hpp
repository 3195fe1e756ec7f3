// The CPU backend's attention: the GPU kernels' blocked algorithm (online softmax over key
// blocks, fp32 accumulation, P rounded to the input precision before P.V), run on host memory.
#pragma once

#include "core/problem.hpp"
#include "numerics_model.hpp"
#include "worker_pool.hpp"

namespace zyfa {
namespace cpu {

// Writes problem.o (and problem.lse when set). The problem must be validated and not empty.
void attention_blocked(const AttnProblem& problem, const NumericsModel& model, WorkerPool& pool);

}  // namespace cpu
}  // namespace zyfa
