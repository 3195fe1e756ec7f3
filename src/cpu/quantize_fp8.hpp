// zyfa_quantize_fp8 on the CPU: per-(batch, head) amax scaling to the e4m3 range, optional
// normalised Hadamard rotation of the head dimension.
#pragma once

#include "core/problem.hpp"
#include "worker_pool.hpp"

namespace zyfa {
namespace cpu {

void quantize_fp8(const QuantProblem& problem, WorkerPool& pool);

}  // namespace cpu
}  // namespace zyfa
