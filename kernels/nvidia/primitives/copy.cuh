// PTX wrappers of the asynchronous global -> shared copies (cp.async, sm_80+) and the shared
// address of a generic pointer.
#ifndef ZYFA_KERNELS_NVIDIA_PRIMITIVES_COPY_CUH
#define ZYFA_KERNELS_NVIDIA_PRIMITIVES_COPY_CUH

#include <stdint.h>

namespace zyfa {
namespace nvidia {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared; src_bytes = 0 fills the destination with zeros and reads nothing.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Every cp.async this thread issued, committed or not (cp.async.wait_all = commit_group + wait_group
// 0). "wait_group 0" alone leaves uncommitted copies in flight: the paged producer's tail rows
// then raced the consumers (wrong 16-bit rows on the H200, 2026-12-03).
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace nvidia
}  // namespace zyfa

#endif
