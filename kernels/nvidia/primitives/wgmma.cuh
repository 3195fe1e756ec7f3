// PTX wrappers for the Hopper warpgroup MMA (wgmma, sm_90a only): shared-memory matrix
// descriptors, the fences and waits, and the shapes the attention kernels use:
//   S = Q K^T:  m64n64 (k16 BF16/FP16, k32 e4m3; A from shared memory or registers, K-major B),
//               m64n128 (the 128-key steps; A from registers or shared memory);
//   O += P V:   m64n128 / m64n64 (k16 BF16/FP16 with V MN-major, k32 e4m3 with Vt K-major), A (P)
//               from registers in the accumulator-derived layout;
//   row sums:   m64n8k16 FP16 against a tile of ones (FP8 LEAN);
// wgmma_scores / wgmma_pv pick the shared-memory S and the m64n128 P.V wrapper of an input kind,
// wgmma_rs_n128 / wgmma_ss_n128 the m64n128 S of the 128-key steps.
// The accumulator layout of m64nN (per warp w of the warpgroup, lane = 4 * g + t): tile i of 8
// columns holds d[4i + 0..1] = row 16w + g, columns 8i + 2t + {0,1}, and d[4i + 2..3] = row
// 16w + g + 8: the mma.sync m16n8 layout, repeated. The A-from-registers layout is mma.sync's
// m16n8k16 (16-bit) / m16n8k32 (e4m3) A fragment of the warp's 16 rows.
#ifndef ZYFA_KERNELS_NVIDIA_PRIMITIVES_WGMMA_CUH
#define ZYFA_KERNELS_NVIDIA_PRIMITIVES_WGMMA_CUH

#include <stdint.h>

#include "nvidia/input_kind.h"

namespace zyfa {
namespace nvidia {

// Descriptor of a no-swizzle operand at shared address addr (bytes, 16-byte aligned).
__device__ __forceinline__ uint64_t wgmma_descriptor(uint32_t addr, uint32_t leading_bytes, uint32_t stride_bytes) {
    return static_cast<uint64_t>((addr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(leading_bytes >> 4) << 16) |
           (static_cast<uint64_t>(stride_bytes >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// Generic-proxy writes to shared memory (cp.async, st.shared) before async-proxy reads (wgmma).
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Keeps the compiler from moving accesses of accumulator registers across wgmma issue / wait.
template <int N>
__device__ __forceinline__ void pin_registers(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void pin_registers(uint32_t (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// The accumulator operands of the wrappers below, written once: the "{%0, ..., %N}" register
// list and the matching "+f"(d[i]) outputs of an m64n64 (32 floats) and m64n128 (64 floats) wgmma.
#define ZYFA_WGMMA_D32_REGS                                                                           \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define ZYFA_WGMMA_D64_REGS                                                                           \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define ZYFA_WGMMA_D32_OUTPUTS                                                                        \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),   \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),         \
    "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),       \
    "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),       \
    "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define ZYFA_WGMMA_D64_OUTPUTS                                                                        \
    ZYFA_WGMMA_D32_OUTPUTS, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),         \
    "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),       \
    "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),       \
    "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]),       \
    "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// S = Q K^T, A and B from shared memory: operands 32 and 33 are the descriptors, 34 scale_d.
// The trailing immediates: scale-a, scale-b (1), and for 16-bit types tnspA, tnspB (0: K-major).
__device__ __forceinline__ void wgmma_ss_n64_bf16(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " ZYFA_WGMMA_D32_REGS ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : ZYFA_WGMMA_D32_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_ss_n64_f16(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " ZYFA_WGMMA_D32_REGS ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : ZYFA_WGMMA_D32_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_ss_n64_e4m3(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " ZYFA_WGMMA_D32_REGS ", %32, %33, p, 1, 1;\n}\n"
                 : ZYFA_WGMMA_D32_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// m64n128 with A and B from shared memory (S at 128-key steps where Q stays in shared memory):
// operands 64 and 65 are the descriptors, 66 scale_d; 16-bit types end with tnspA, tnspB (0: Q
// and K K-major).
__device__ __forceinline__ void wgmma_ss_n128_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " ZYFA_WGMMA_D64_REGS ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : ZYFA_WGMMA_D64_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_ss_n128_f16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " ZYFA_WGMMA_D64_REGS ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : ZYFA_WGMMA_D64_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_ss_n128_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " ZYFA_WGMMA_D64_REGS ", %64, %65, p, 1, 1;\n}\n"
                 : ZYFA_WGMMA_D64_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// O += P V, and S = Q K^T at 128-key steps with Q's fragments in registers: A from registers,
// operands 64..67 its fragment, 68 the B descriptor, 69 scale_d. The trailing immediates:
// scale-a, scale-b (1), and for 16-bit types tnspB (70: 1 for P.V, V MN-major; 0 for S, K
// K-major).
template <bool TRANS_B>
__device__ __forceinline__ void wgmma_rs_n128_bf16(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " ZYFA_WGMMA_D64_REGS
                 ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
                 : ZYFA_WGMMA_D64_OUTPUTS
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B ? 1 : 0));
}

template <bool TRANS_B>
__device__ __forceinline__ void wgmma_rs_n128_f16(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " ZYFA_WGMMA_D64_REGS
                 ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
                 : ZYFA_WGMMA_D64_OUTPUTS
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B ? 1 : 0));
}

__device__ __forceinline__ void wgmma_rs_n128_e4m3(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " ZYFA_WGMMA_D64_REGS
                 ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : ZYFA_WGMMA_D64_OUTPUTS
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

#undef ZYFA_WGMMA_D32_REGS
#undef ZYFA_WGMMA_D64_REGS
#undef ZYFA_WGMMA_D32_OUTPUTS
#undef ZYFA_WGMMA_D64_OUTPUTS

// The shared-memory S = Q K^T (m64n64) and the register-A O += P V (m64n128) of an input kind.
template <InKind IN>
__device__ __forceinline__ void wgmma_scores(float (&s)[32], uint64_t desc_q, uint64_t desc_k, int accumulate) {
    if constexpr (IN == InKind::Bf16) {
        wgmma_ss_n64_bf16(s, desc_q, desc_k, accumulate);
    } else if constexpr (IN == InKind::Fp16) {
        wgmma_ss_n64_f16(s, desc_q, desc_k, accumulate);
    } else {
        wgmma_ss_n64_e4m3(s, desc_q, desc_k, accumulate);
    }
}

// m64n128 with A from registers, B K-major (S = Q K^T; TRANS_B: V MN-major for P.V, 16-bit only).
template <InKind IN, bool TRANS_B = false>
__device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    static_assert(!(TRANS_B && IN == InKind::E4m3), "the e4m3 wgmma reads B K-major");
    if constexpr (IN == InKind::Bf16) {
        wgmma_rs_n128_bf16<TRANS_B>(d, a, desc_b, scale_d);
    } else if constexpr (IN == InKind::Fp16) {
        wgmma_rs_n128_f16<TRANS_B>(d, a, desc_b, scale_d);
    } else {
        wgmma_rs_n128_e4m3(d, a, desc_b, scale_d);
    }
}

template <InKind IN>
__device__ __forceinline__ void wgmma_pv(float (&d)[64], const uint32_t (&p)[4], uint64_t desc_v, int accumulate) {
    wgmma_rs_n128<IN, IN != InKind::E4m3>(d, p, desc_v, accumulate);
}

// m64n128 with A and B from shared memory, both K-major (S = Q K^T at 128-key steps).
template <InKind IN>
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    if constexpr (IN == InKind::Bf16) {
        wgmma_ss_n128_bf16(d, desc_a, desc_b, scale_d);
    } else if constexpr (IN == InKind::Fp16) {
        wgmma_ss_n128_f16(d, desc_a, desc_b, scale_d);
    } else {
        wgmma_ss_n128_e4m3(d, desc_a, desc_b, scale_d);
    }
}

// m64n64 with A from registers and B from shared memory: S = Q K^T (K K-major), and P.V at head
// dim 64 (FP8 Vt K-major; 16-bit V MN-major, TRANS_B). Operands 32..35 the A fragment, 36 the B
// descriptor, 37 scale_d; 16-bit types end with tnspB (the e4m3 wgmma reads B K-major only).
#define ZYFA_WS_D32_REGS                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define ZYFA_WS_D32_OUTPUTS                                                                           \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),   \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),         \
    "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),       \
    "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),       \
    "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
template <InKind IN, bool TRANS_B = false>
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b, int scale_d) {
    static_assert(!(TRANS_B && IN == InKind::E4m3), "the e4m3 wgmma reads B K-major");
    if constexpr (IN == InKind::E4m3) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " ZYFA_WS_D32_REGS
                     ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
                     : ZYFA_WS_D32_OUTPUTS
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
    } else if constexpr (IN == InKind::Bf16) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " ZYFA_WS_D32_REGS
                     ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                     : ZYFA_WS_D32_OUTPUTS
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B ? 1 : 0));
    } else {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " ZYFA_WS_D32_REGS
                     ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                     : ZYFA_WS_D32_OUTPUTS
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TRANS_B ? 1 : 0));
    }
}
#undef ZYFA_WS_D32_REGS
#undef ZYFA_WS_D32_OUTPUTS

// S = Q K^T of the INT8 Q/K mode: s8 x s8 -> s32 (k = 32, the e4m3 fragment layouts), exact; the
// accumulators are uint32 registers ("+r": an .s32 operand cannot be an .f32 register). Integer
// wgmma takes no scale-a/b immediates. m64n128 and m64n64, A from registers or shared memory.
#define ZYFA_S8_D32_REGS                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define ZYFA_S8_D64_REGS                                                                              \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                         \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define ZYFA_S8_OUT8(i)                                                                               \
    "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]),       \
        "+r"(d[i + 6]), "+r"(d[i + 7])
#define ZYFA_S8_D32_OUTPUTS ZYFA_S8_OUT8(0), ZYFA_S8_OUT8(8), ZYFA_S8_OUT8(16), ZYFA_S8_OUT8(24)
#define ZYFA_S8_D64_OUTPUTS ZYFA_S8_D32_OUTPUTS, ZYFA_S8_OUT8(32), ZYFA_S8_OUT8(40), ZYFA_S8_OUT8(48), ZYFA_S8_OUT8(56)
__device__ __forceinline__ void wgmma_rs_n128_s8(uint32_t (&d)[64], const uint32_t (&a)[4], uint64_t desc_b,
                                                 int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 " ZYFA_S8_D64_REGS
                 ", {%64, %65, %66, %67}, %68, p;\n}\n"
                 : ZYFA_S8_D64_OUTPUTS
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}
__device__ __forceinline__ void wgmma_ss_n128_s8(uint32_t (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 " ZYFA_S8_D64_REGS ", %64, %65, p;\n}\n"
                 : ZYFA_S8_D64_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
__device__ __forceinline__ void wgmma_rs_n64_s8(uint32_t (&d)[32], const uint32_t (&a)[4], uint64_t desc_b,
                                                int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 " ZYFA_S8_D32_REGS
                 ", {%32, %33, %34, %35}, %36, p;\n}\n"
                 : ZYFA_S8_D32_OUTPUTS
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}
__device__ __forceinline__ void wgmma_ss_n64_s8(uint32_t (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 " ZYFA_S8_D32_REGS ", %32, %33, p;\n}\n"
                 : ZYFA_S8_D32_OUTPUTS
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
#undef ZYFA_S8_D32_REGS
#undef ZYFA_S8_D64_REGS
#undef ZYFA_S8_OUT8
#undef ZYFA_S8_D32_OUTPUTS
#undef ZYFA_S8_D64_OUTPUTS

// Row sums of P (FP8 and INT8 LEAN, WsTileShape::kOnesTile): d (+)= P * B over 32 keys, m64n8k32 on
// P.V's own A fragment (no conversion), B a ones tile. The e4m3 wgmma adds in an adder narrower than
// fp32, so the sum of codes far below their k-step's largest loses low bits (lse within 1.2e-3 of
// the exact sum on exact scores, measured: docs/hopper-kernel-notes.md). A thread's d[0], d[1] are
// row g's columns 2 (lane % 4) and 2 (lane % 4) + 1, d[2], d[3] row g + 8's.
__device__ __forceinline__ void wgmma_rs_row_sums_e4m3(float (&d)[4], const uint32_t (&a)[4], uint64_t desc_ones,
                                                       int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %9, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_ones), "r"(accumulate));
}

// Layout type of a wgmma shared-memory descriptor (bits 62-63): 1 = 128-byte swizzle, 2 = 64-byte.
constexpr uint64_t kSwizzle128Bits = uint64_t{1} << 62;
constexpr uint64_t kSwizzle64Bits = uint64_t{2} << 62;

// desc with `add` (16-byte units) added to its start address: 32-bit arithmetic on the low word,
// which never carries into the high one (the 14-bit address field spans 256 KB of shared memory).
__device__ __forceinline__ uint64_t descriptor_plus(uint64_t desc, uint32_t add) {
    return (desc & 0xFFFFFFFF00000000ull) | static_cast<uint32_t>(static_cast<uint32_t>(desc) + add);
}

template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

}  // namespace nvidia
}  // namespace zyfa

#endif
