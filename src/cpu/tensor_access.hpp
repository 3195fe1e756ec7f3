// Reading and writing tensor elements of any zyfa dtype as fp32 on the CPU, through the shared
// codecs of kernels/common so the CPU backend sees exactly the values a GPU kernel sees.
#pragma once

#include <cstdint>

#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "common/v_transposed.h"
#include "core/problem.hpp"
#include "zyfa.h"

namespace zyfa {
namespace cpu {

inline size_t dtype_size(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return 4;
        case ZYFA_DTYPE_FP16:
        case ZYFA_DTYPE_BF16: return 2;
        case ZYFA_DTYPE_FP8_E4M3FN:
        case ZYFA_DTYPE_FP8_E4M3FNUZ:
        case ZYFA_DTYPE_INT8: return 1;
        default: return 0;
    }
}

inline bool dtype_is_fp8(zyfa_dtype dtype) {
    return dtype == ZYFA_DTYPE_FP8_E4M3FN || dtype == ZYFA_DTYPE_FP8_E4M3FNUZ;
}

inline numerics::Fp8Format fp8_format_of(zyfa_dtype dtype) {
    return dtype == ZYFA_DTYPE_FP8_E4M3FNUZ ? numerics::Fp8Format::E4M3FNUZ : numerics::Fp8Format::E4M3FN;
}

// All 256 values of an FP8 format, decoded once by the shared codec: a table load is what the
// CPU's hot loops can afford per element, and it holds exactly fp8_decode's values.
struct Fp8DecodeTable {
    float value[256];
    explicit Fp8DecodeTable(numerics::Fp8Format f) {
        for (int code = 0; code < 256; ++code) value[code] = numerics::fp8_decode(static_cast<uint8_t>(code), f);
    }
};

inline const float* fp8_values(zyfa_dtype dtype) {
    static const Fp8DecodeTable e4m3fn(numerics::Fp8Format::E4M3FN);
    static const Fp8DecodeTable e4m3fnuz(numerics::Fp8Format::E4M3FNUZ);
    return dtype == ZYFA_DTYPE_FP8_E4M3FNUZ ? e4m3fnuz.value : e4m3fn.value;
}

// Element `index` (in elements) of a buffer of the given dtype, as fp32 (exact for every dtype).
inline float load_as_float(const void* base, zyfa_dtype dtype, int64_t index) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return static_cast<const float*>(base)[index];
        case ZYFA_DTYPE_FP16: return numerics::fp16_to_float(static_cast<const uint16_t*>(base)[index]);
        case ZYFA_DTYPE_BF16: return numerics::bf16_to_float(static_cast<const uint16_t*>(base)[index]);
        case ZYFA_DTYPE_FP8_E4M3FN:
        case ZYFA_DTYPE_FP8_E4M3FNUZ: return fp8_values(dtype)[static_cast<const uint8_t*>(base)[index]];
        case ZYFA_DTYPE_INT8: return static_cast<float>(static_cast<const int8_t*>(base)[index]);
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

// Element offset of [key j, kv head hk, 0] of sequence b in K or V (`t` is p.k or p.v): the
// sequence's rows of a contiguous or packed tensor, or, paged, row j % page_size of page
// block_table[b * block_table_stride + j / page_size] of the pool (stride_batch = the page
// stride). The one place the CPU model and the fp64 reference find a key.
inline int64_t key_offset(const AttnProblem& p, const TensorView& t, int64_t b, int64_t j, int64_t hk) {
    if (p.paged()) {
        const int64_t page = p.block_table[b * p.block_table_stride + j / p.page_size];
        return page * t.stride_batch + (j % p.page_size) * t.stride_seq + hk * t.stride_head;
    }
    return AttnProblem::offset(t, p.first_k(b), b, j, hk);
}

// V's row of key j (sequence b, kv head hk) as fp32 into row[0, head_dim_v): contiguous, packed,
// paged, or FP8 in the transposed layout (ZYFA_ATTN_V_TRANSPOSED: kernels/common/v_transposed.h).
inline void load_v_row(const AttnProblem& p, int64_t b, int64_t j, int64_t hk, float* row) {
    const int64_t dv = p.head_dim_v;
    if (p.v_transposed) {
        const int64_t slice = b * p.v.stride_batch + hk * p.v.stride_head;
        for (int64_t d = 0; d < dv; ++d) {
            row[d] = load_as_float(p.v.data, p.v.dtype, slice + numerics::vt_offset(j, d, p.v.stride_seq));
        }
        return;
    }
    const int64_t offset = key_offset(p, p.v, b, j, hk);
    for (int64_t d = 0; d < dv; ++d) row[d] = load_as_float(p.v.data, p.v.dtype, offset + d);
}

}  // namespace cpu
}  // namespace zyfa
