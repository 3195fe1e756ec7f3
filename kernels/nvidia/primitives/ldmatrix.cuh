// PTX wrappers of the warp-wide 8x8 matrix loads and stores of 16-bit elements between shared
// memory and registers (ldmatrix sm_75+, stmatrix sm_90), four matrices at a time; lane l gives
// the address of row l % 8 of matrix l / 8.
#ifndef ZYFA_KERNELS_NVIDIA_PRIMITIVES_LDMATRIX_CUH
#define ZYFA_KERNELS_NVIDIA_PRIMITIVES_LDMATRIX_CUH

#include <stdint.h>

namespace zyfa {
namespace nvidia {

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, const uint32_t (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]),
                 "r"(r[2]), "r"(r[3])
                 : "memory");
}

}  // namespace nvidia
}  // namespace zyfa

#endif
