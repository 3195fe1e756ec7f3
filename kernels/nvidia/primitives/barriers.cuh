// PTX wrappers for the warp-specialised kernels (sm_90): shared-memory mbarriers, cp.async
// completion tracked by an mbarrier, named barriers, and the register reallocation between
// warpgroups (setmaxnreg, sm_90a).
#ifndef ZYFA_KERNELS_NVIDIA_PRIMITIVES_BARRIERS_CUH
#define ZYFA_KERNELS_NVIDIA_PRIMITIVES_BARRIERS_CUH

#include <stdint.h>

namespace zyfa {
namespace nvidia {

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes mbarrier.init visible to the other threads (and to the async proxy) before use.
__device__ __forceinline__ void mbarrier_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}

// `count` arrivals at once (the paged producer's lane 0 standing in for lanes that copied nothing
// of their own).
__device__ __forceinline__ void mbarrier_arrive_many(uint32_t bar, uint32_t count) {
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar), "r"(count)
                 : "memory");
}

// One arrival on bar once every cp.async this thread issued before has landed. .noinc: the
// arrival counts against the count the barrier was initialised with.
__device__ __forceinline__ void cp_async_arrive_on(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// Waits until the phase of parity `parity` of bar has completed. A fresh barrier counts its
// (non-existent) previous phase, parity 1, as completed: producers start waiting on parity 1.
__device__ __forceinline__ bool mbarrier_try_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
    while (!mbarrier_try_wait(bar, parity)) {
    }
}

// Raises the current phase's expected transaction bytes without arriving (the paged producer's
// tail block: its copies' bytes are announced first, the arrival follows its own writes).
__device__ __forceinline__ void mbarrier_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// The expected transaction bytes of the current phase (tensor copies below complete them) and
// this thread's arrival, in one.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}


// bar.sync on a named barrier (0 is __syncthreads'), `threads` a multiple of 32.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Register reallocation between warpgroups (every warp of a warpgroup executes the same one).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

}  // namespace nvidia
}  // namespace zyfa

#endif
