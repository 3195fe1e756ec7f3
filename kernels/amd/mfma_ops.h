// The 32x32 matrix instruction each AMD kernel family uses, and its operand geometry.
//
//   target  family  instruction                          elements per lane per step (E)  step K
//   gfx950  BF16    v_mfma_f32_32x32x16_bf16             8 bf16   (4 VGPRs)               16
//   gfx950  FP8     v_mfma_scale_f32_32x32x64_f8f6f4     32 e4m3fn (8 VGPRs)              64
//   gfx942  BF16    v_mfma_f32_32x32x8bf16_1k            4 bf16   (2 VGPRs)               8
//   gfx942  FP8     v_mfma_f32_32x32x16_fp8_fp8          8 e4m3fnuz (2 VGPRs)             16
//   gfx950  INT8    v_mfma_i32_32x32x32_i8               16 int8 (4 VGPRs)                32
//   gfx942  INT8    v_mfma_i32_32x32x16_i8               8 int8 (2 VGPRs)                 16
//
// INT8 (MfmaInt8, the INT8 Q/K mode's scores only): signed bytes, int32 accumulators in the f32
// forms' C/D layout, D = C + A.B exact (|S| <= 2^22 for head_dim_qk <= 256: no overflow). P.V
// stays on the FP8 instruction of the arch (Mfma<true>), whose format is then V's. Both i8 forms
// run at the arch's FP8 rate (8 passes: LLVM SISchedule, rocRoller's pass table), 32x32x32 being
// gfx950's double-K form (the arch's 32x32x16 runs at half its rate there).
//
// Operand convention (docs/emulator.md, operand layouts): lane l supplies row l % 32 of A (column
// l % 32 of B) and, for K, the E elements of "half" h = l / 32. Every one of these instructions
// maps (h, element e) to the same K index for A and for B, so any assignment of real K positions
// to (h, e) that A and B share gives the same product. The kernels use: K position of (step st,
// h, e) = st * 2E + h * E + e for Q.K^T (so a lane reads E contiguous elements), and for P.V the
// order in which the S^T accumulator already holds P (attention_fwd.h).
//
// Scaled MFMA (gfx950 FP8): D = C + sum_k (A * 2^(sa-127)) (B * 2^(sb-127)) with one E8M0 scale
// byte per 32 K positions; both 32-position halves of a column get the same scale here, so the
// scale-lane mapping (lane i + 32*blk) needs no care: every lane passes its own column's scale.
#ifndef ZYFA_KERNELS_AMD_MFMA_OPS_H
#define ZYFA_KERNELS_AMD_MFMA_OPS_H

#include "amd/hip_device.h"
#include "common/fp8_e4m3.h"

namespace zyfa {
namespace amd {

constexpr int kE8m0One = 127;  // E8M0 scale byte of 2^0

template <bool FP8>
struct Mfma;

#if defined(__gfx950__)

template <>
struct Mfma<false> {
    static constexpr int kElems = 8;
    static constexpr bool kScaled = false;
    typedef u32x4 Operand;
    __device__ static f32x16 mac(Operand a, Operand b, f32x16 c, int, int) {
        return __builtin_amdgcn_mfma_f32_32x32x16_bf16(__builtin_bit_cast(bf16x8, a), __builtin_bit_cast(bf16x8, b), c,
                                                       0, 0, 0);
    }
};

template <>
struct Mfma<true> {
    static constexpr int kElems = 32;
    static constexpr bool kScaled = true;  // the block scale rides in the E8M0 operand
    static constexpr numerics::Fp8Format kFormat = numerics::Fp8Format::E4M3FN;
    typedef u32x8 Operand;
    // cbsz = blgp = 0: A and B are fp8 e4m3 (OCP); op_sel 0: byte 0 of each scale VGPR.
    __device__ static f32x16 mac(Operand a, Operand b, f32x16 c, int scale_a, int scale_b) {
        return __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(__builtin_bit_cast(i32x8, a),
                                                                __builtin_bit_cast(i32x8, b), c, 0, 0, 0, scale_a,
                                                                0, scale_b);
    }
};

struct MfmaInt8 {
    static constexpr int kElems = 16;
    typedef u32x4 Operand;
    __device__ static i32x16 mac(Operand a, Operand b, i32x16 c) {
        return __builtin_amdgcn_mfma_i32_32x32x32_i8(__builtin_bit_cast(i32x4, a), __builtin_bit_cast(i32x4, b), c, 0,
                                                     0, 0);
    }
};

#elif defined(__gfx942__)

template <>
struct Mfma<false> {
    static constexpr int kElems = 4;
    static constexpr bool kScaled = false;
    typedef u32x2 Operand;
    __device__ static f32x16 mac(Operand a, Operand b, f32x16 c, int, int) {
        return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(__builtin_bit_cast(i16x4, a), __builtin_bit_cast(i16x4, b), c,
                                                        0, 0, 0);
    }
};

template <>
struct Mfma<true> {
    static constexpr int kElems = 8;
    static constexpr bool kScaled = false;  // the block scale multiplies the fp32 partial product
    static constexpr numerics::Fp8Format kFormat = numerics::Fp8Format::E4M3FNUZ;
    typedef u32x2 Operand;
    __device__ static f32x16 mac(Operand a, Operand b, f32x16 c, int, int) {
        return __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b), c,
                                                          0, 0, 0);
    }
};

struct MfmaInt8 {
    static constexpr int kElems = 8;
    typedef u32x2 Operand;
    __device__ static i32x16 mac(Operand a, Operand b, i32x16 c) {
        return __builtin_amdgcn_mfma_i32_32x32x16_i8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b), c, 0, 0,
                                                     0);
    }
};

#else
#error "kernels/amd supports --offload-arch=gfx950 and gfx942"
#endif

// The instruction of the scores S^T = K Q^T: the input family's (Mfma<FP8>), or MfmaInt8 for the
// INT8 Q/K mode.
template <bool INT8, class InputMfma>
struct ScoreMfma {
    using type = InputMfma;
};
template <class InputMfma>
struct ScoreMfma<true, InputMfma> {
    using type = MfmaInt8;
};

// An operand of `BYTES` bytes from 16-byte-aligned memory (LDS or global), in 16-byte pieces
// where it is larger (32-byte vectors would claim 32-byte alignment).
template <class Operand>
__device__ inline Operand load_operand(const unsigned char* p) {
    if constexpr (sizeof(Operand) == 32) {
        const u32x4 lo = *reinterpret_cast<const u32x4*>(p);
        const u32x4 hi = *reinterpret_cast<const u32x4*>(p + 16);
        return Operand{lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    } else {
        return *reinterpret_cast<const Operand*>(p);
    }
}

template <class Operand>
__device__ inline Operand load_global_operand(const unsigned char* p) {
    if constexpr (sizeof(Operand) == 32) {
        const u32x4 lo = *global_ptr<u32x4>(p);
        const u32x4 hi = *global_ptr<u32x4>(p + 16);
        return Operand{lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    } else {
        return *global_ptr<Operand>(p);
    }
}

// Every byte of the operand is `byte` (the FP8 code of 1.0 for the row-sum MFMA).
template <class Operand>
__device__ inline Operand splat_bytes(uint32_t byte) {
    Operand r;
    const uint32_t word = byte * 0x01010101u;
    for (int i = 0; i < (int)(sizeof(Operand) / 4); ++i) r[i] = word;
    return r;
}

}  // namespace amd
}  // namespace zyfa

#endif
