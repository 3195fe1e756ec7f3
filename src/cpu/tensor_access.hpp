// Reading and writing tensor elements of any zyfa dtype as fp32 on the CPU, through the shared
// codecs of kernels/common so the CPU backend sees exactly the values a GPU kernel sees.
#pragma once

#include <cstdint>

#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "zyfa.h"

namespace zyfa {
namespace cpu {

inline size_t dtype_size(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return 4;
        case ZYFA_DTYPE_FP16:
        case ZYFA_DTYPE_BF16: return 2;
        case ZYFA_DTYPE_FP8_E4M3FN:
        case ZYFA_DTYPE_FP8_E4M3FNUZ: return 1;
        default: return 0;
    }
}

inline bool dtype_is_fp8(zyfa_dtype dtype) {
    return dtype == ZYFA_DTYPE_FP8_E4M3FN || dtype == ZYFA_DTYPE_FP8_E4M3FNUZ;
}

inline numerics::Fp8Format fp8_format_of(zyfa_dtype dtype) {
    return dtype == ZYFA_DTYPE_FP8_E4M3FNUZ ? numerics::Fp8Format::E4M3FNUZ : numerics::Fp8Format::E4M3FN;
}

// Element `index` (in elements) of a buffer of the given dtype, as fp32 (exact for every dtype).
inline float load_as_float(const void* base, zyfa_dtype dtype, int64_t index) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return static_cast<const float*>(base)[index];
        case ZYFA_DTYPE_FP16: return numerics::fp16_to_float(static_cast<const uint16_t*>(base)[index]);
        case ZYFA_DTYPE_BF16: return numerics::bf16_to_float(static_cast<const uint16_t*>(base)[index]);
        case ZYFA_DTYPE_FP8_E4M3FN:
        case ZYFA_DTYPE_FP8_E4M3FNUZ:
            return numerics::fp8_decode(static_cast<const uint8_t*>(base)[index], fp8_format_of(dtype));
        default: return 0.0f;
    }
}

// Rounds to the dtype (nearest even; FP8 saturates) and stores element `index`.
inline void store_from_float(void* base, zyfa_dtype dtype, int64_t index, float value) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: static_cast<float*>(base)[index] = value; break;
        case ZYFA_DTYPE_FP16: static_cast<uint16_t*>(base)[index] = numerics::float_to_fp16(value); break;
        case ZYFA_DTYPE_BF16: static_cast<uint16_t*>(base)[index] = numerics::float_to_bf16(value); break;
        case ZYFA_DTYPE_FP8_E4M3FN:
        case ZYFA_DTYPE_FP8_E4M3FNUZ:
            static_cast<uint8_t*>(base)[index] = numerics::fp8_encode(value, fp8_format_of(dtype));
            break;
        default: break;
    }
}

}  // namespace cpu
}  // namespace zyfa
