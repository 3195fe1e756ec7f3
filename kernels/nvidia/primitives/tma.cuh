// PTX wrappers of the tensor memory accelerator (sm_90): a tiled copy of one box of a tensor map
// and a bulk copy of contiguous bytes into shared memory, each completing an mbarrier's
// transaction bytes (barriers.cuh), and the map prefetch.
#ifndef ZYFA_KERNELS_NVIDIA_PRIMITIVES_TMA_CUH
#define ZYFA_KERNELS_NVIDIA_PRIMITIVES_TMA_CUH

#include <stdint.h>

namespace zyfa {
namespace nvidia {

// One box of a rank-4 tensor map (attention_ws_tma_params.h) into shared memory through the
// tensor memory accelerator, completing `bar`'s transaction bytes. `map` is the map's address in
// the kernel's parameter space (a __grid_constant__ parameter).
__device__ __forceinline__ void tma_load_4d(uint32_t smem_dst, const void* map, uint32_t bar, int c0, int c1, int c2,
                                            int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
        "[%6];\n" ::"r"(smem_dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
        : "memory");
}

// `bytes` contiguous bytes of global memory into shared memory through the tensor memory
// accelerator's bulk copy (no tensor map), completing `bar`'s transaction bytes; addresses and
// size multiples of 16.
__device__ __forceinline__ void bulk_copy_to_shared(uint32_t smem_dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_dst),
                 "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(bar)
                 : "memory");
}

__device__ __forceinline__ void tma_prefetch_map(const void* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

}  // namespace nvidia
}  // namespace zyfa

#endif
