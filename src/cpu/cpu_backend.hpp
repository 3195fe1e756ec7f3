// The CPU backend: host pointers, the blocked model of the GPU numerics, worker threads.
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace zyfa {
namespace cpu {

std::unique_ptr<Backend> make_cpu_backend(int num_threads);  // 0 = all hardware threads

}  // namespace cpu
}  // namespace zyfa
