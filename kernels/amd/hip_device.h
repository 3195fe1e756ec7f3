// What HIP device code needs when compiled without ROCm headers (clang -x hip -nogpuinc
// -nogpulib --cuda-device-only): the __device__/__global__ qualifiers, the few libm functions
// kernels/common calls (as device overloads of the host declarations, lowered to single
// instructions), vector types, and wrappers over the AMDGPU builtins (ids, barrier, lane swap).
// Only Debian's clang-22 (or ROCm's clang) is needed to build the AMD code objects.
#ifndef ZYFA_KERNELS_AMD_HIP_DEVICE_H
#define ZYFA_KERNELS_AMD_HIP_DEVICE_H

#if !defined(__HIP__) || !defined(__AMDGCN__)
#error "kernels/amd is device code: compile with clang++ -x hip --cuda-device-only --offload-arch=gfx9xx"
#endif

#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#define ZYFA_SHARED __attribute__((shared))

#include <math.h>
#include <stdint.h>

// The host declarations of <math.h> are not callable from device code; these device overloads
// are (clang resolves host/device overloads by target). Each is one VALU instruction.
__device__ inline float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__device__ inline float floorf(float x) { return __builtin_floorf(x); }
__device__ inline float truncf(float x) { return __builtin_truncf(x); }

namespace zyfa {
namespace amd {

typedef uint32_t u32x2 __attribute__((ext_vector_type(2)));
typedef uint32_t u32x4 __attribute__((ext_vector_type(4)));
typedef uint32_t u32x8 __attribute__((ext_vector_type(8)));
typedef int32_t i32x4 __attribute__((ext_vector_type(4)));
typedef int32_t i32x8 __attribute__((ext_vector_type(8)));
typedef int32_t i32x16 __attribute__((ext_vector_type(16)));
typedef int16_t i16x4 __attribute__((ext_vector_type(4)));
typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
typedef float f32x16 __attribute__((ext_vector_type(16)));

// Pointers as the global address space (global_load/store rather than flat instructions).
template <class T>
__device__ inline const __attribute__((address_space(1))) T* global_ptr(const void* p) {
    return (const __attribute__((address_space(1))) T*)p;
}
template <class T>
__device__ inline __attribute__((address_space(1))) T* global_ptr_mut(void* p) {
    return (__attribute__((address_space(1))) T*)p;
}

__device__ inline int thread_id() { return (int)__builtin_amdgcn_workitem_id_x(); }
__device__ inline int block_id_x() { return (int)__builtin_amdgcn_workgroup_id_x(); }
__device__ inline int block_id_y() { return (int)__builtin_amdgcn_workgroup_id_y(); }
__device__ inline int block_id_z() { return (int)__builtin_amdgcn_workgroup_id_z(); }

// Workgroup barrier with LDS release/acquire (what HIP's __syncthreads is).
__device__ inline void sync_workgroup() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// The value of lane (lane ^ 32): the other half of a 32x32 MFMA accumulator's column. ds_bpermute
// exists on gfx942 and gfx950 alike.
__device__ inline float other_half(float value, int lane) {
    return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ 32) << 2, __builtin_bit_cast(int, value)));
}

}  // namespace amd
}  // namespace zyfa

#endif
