// validate_quant: zyfa_quant_params + input/output views + descale -> QuantProblem, or zyfa::Error.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "errors.hpp"
#include "common/hadamard.h"
#include "common/v_transposed.h"
#include "validate.hpp"
#include "versioned_struct.hpp"

namespace zyfa {
namespace {

constexpr int64_t kMaxQuantHeadDim = 65536;

using namespace validation;

constexpr uint32_t kKnownQuantFlags =
    ZYFA_QUANT_HADAMARD | ZYFA_QUANT_SMOOTH | ZYFA_QUANT_V_TRANSPOSED | ZYFA_QUANT_KEY_BIAS;

// The caller's params with every field it did not pass (an older, smaller struct) at its default.
zyfa_quant_params read_params(const zyfa_quant_params* user) {
    const size_t min_size = offsetof(zyfa_quant_params, head_dim) + sizeof(user->head_dim);
    const size_t readable = checked_struct_size(user, sizeof(zyfa_quant_params), min_size, "params", "head_dim");

    zyfa_quant_params defaults;
    zyfa_quant_params_init(&defaults, sizeof(defaults));
    zyfa_quant_params params = defaults;
    std::memcpy(&params, user, readable);
    params.struct_size = sizeof(params);
    if (!field_within(readable, offsetof(zyfa_quant_params, cu_seqlens), sizeof(params.cu_seqlens))) {
        params.cu_seqlens = defaults.cu_seqlens;
    }
    if (!field_within(readable, offsetof(zyfa_quant_params, smooth_mean), sizeof(params.smooth_mean))) {
        params.smooth_mean = defaults.smooth_mean;
    }
    if (!field_within(readable, offsetof(zyfa_quant_params, scale_rows), sizeof(params.scale_rows))) {
        params.scale_rows = defaults.scale_rows;
    }
    if (!field_within(readable, offsetof(zyfa_quant_params, reserved), sizeof(params.reserved))) {
        params.reserved = defaults.reserved;
    }
#define ZYFA_DEFAULT_BEYOND(member)                                                                     \
    if (!field_within(readable, offsetof(zyfa_quant_params, member), sizeof(params.member))) {         \
        params.member = defaults.member;                                                                \
    }
    ZYFA_DEFAULT_BEYOND(query_mean)
    ZYFA_DEFAULT_BEYOND(key_bias)
    ZYFA_DEFAULT_BEYOND(query_heads)
    ZYFA_DEFAULT_BEYOND(key_bias_scale)
    ZYFA_DEFAULT_BEYOND(reserved2)
#undef ZYFA_DEFAULT_BEYOND
    return params;
}

}  // namespace

QuantProblem validate_quant(const zyfa_quant_params* user_params, const zyfa_tensor* in, const zyfa_tensor* out,
                            float* descale, zyfa_backend backend, QuantEntry entry) {
    if (user_params == nullptr) throw_invalid("params is NULL");
    if (in == nullptr) throw_invalid("in is NULL");
    if (out == nullptr) throw_invalid("out is NULL");
    if (descale == nullptr) throw_invalid("descale is NULL");
    const zyfa_quant_params p = read_params(user_params);
    const bool int8 = entry == QuantEntry::Int8;
    const char* const function = int8 ? "zyfa_quantize_int8" : "zyfa_quantize_fp8";

    if (p.reserved != 0) {
        throw_not_supported("params.reserved = " + std::to_string(p.reserved) +
                            " is not 0 (a field of a newer zyfa is set there)");
    }
    if (p.reserved2 != 0) {
        throw_not_supported("params.reserved2 = " + std::to_string(p.reserved2) +
                            " is not 0 (a field of a newer zyfa is set there)");
    }
    if (int8 && p.scale_rows != 1 && p.scale_rows != ZYFA_INT8_KEY_BLOCK) {
        throw_invalid("params.scale_rows = " + std::to_string(p.scale_rows) +
                      ": zyfa_quantize_int8 takes 1 (one scale per token, for Q) or 64 (one per 64 keys, for K)");
    }

    if ((p.flags & ~kKnownQuantFlags) != 0) {
        throw_invalid("params.flags = " + std::to_string(p.flags) +
                      " has bits other than ZYFA_QUANT_HADAMARD, ZYFA_QUANT_SMOOTH, ZYFA_QUANT_V_TRANSPOSED and "
                      "ZYFA_QUANT_KEY_BIAS");
    }
    const bool v_transposed = (p.flags & ZYFA_QUANT_V_TRANSPOSED) != 0;
    if (v_transposed && int8) {
        throw_invalid("params.flags has ZYFA_QUANT_V_TRANSPOSED, a layout of FP8 V: zyfa_quantize_int8 writes Q and K");
    }
    if (v_transposed && p.cu_seqlens != nullptr) {
        throw_invalid("params.flags has ZYFA_QUANT_V_TRANSPOSED and params.cu_seqlens is set (fixed-length V only)");
    }
    // Q smoothing's key bias: its four fields go with the flag, as smooth_mean goes with its own.
    const bool key_bias = (p.flags & ZYFA_QUANT_KEY_BIAS) != 0;
    if (key_bias) {
        if (p.query_mean == nullptr) {
            throw_invalid("params.query_mean is NULL; params.flags has ZYFA_QUANT_KEY_BIAS, which reads Q's mean there");
        }
        if (p.key_bias == nullptr) {
            throw_invalid("params.key_bias is NULL; params.flags has ZYFA_QUANT_KEY_BIAS, which writes the bias there");
        }
        if (!std::isfinite(p.key_bias_scale)) {
            throw_invalid("params.key_bias_scale = " + std::to_string(p.key_bias_scale) + " is not finite");
        }
    } else {
        const char* set_field = p.query_mean != nullptr ? "params.query_mean"
                                : p.key_bias != nullptr ? "params.key_bias"
                                : p.query_heads != 0    ? "params.query_heads"
                                : p.key_bias_scale != 0.0f ? "params.key_bias_scale"
                                                           : nullptr;
        if (set_field != nullptr) {
            throw_invalid(std::string(set_field) + " is set but params.flags lacks ZYFA_QUANT_KEY_BIAS");
        }
    }
    // The mean buffer and the flag go together: a buffer without the flag would stay unwritten
    // while its owner corrects an lse with it.
    const bool smooth = (p.flags & ZYFA_QUANT_SMOOTH) != 0;
    if (smooth && p.smooth_mean == nullptr) {
        throw_invalid("params.smooth_mean is NULL; params.flags has ZYFA_QUANT_SMOOTH, which writes the mean there");
    }
    if (!smooth && p.smooth_mean != nullptr) {
        throw_invalid("params.smooth_mean is set but params.flags lacks ZYFA_QUANT_SMOOTH");
    }
    if (p.batch < 0) throw_invalid("params.batch = " + std::to_string(p.batch) + " is negative");
    if (p.seqlen < 0) throw_invalid("params.seqlen = " + std::to_string(p.seqlen) + " is negative");
    if (p.heads <= 0) throw_invalid("params.heads = " + std::to_string(p.heads) + ", must be > 0");
    if (p.head_dim <= 0) throw_invalid("params.head_dim = " + std::to_string(p.head_dim) + ", must be > 0");
    if (v_transposed && p.seqlen > INT32_MAX) {  // its padding to 128 keys stays far from overflow
        throw_invalid("params.seqlen = " + std::to_string(p.seqlen) + " exceeds 2^31-1 with ZYFA_QUANT_V_TRANSPOSED");
    }
    if (key_bias && (p.query_heads <= 0 || p.query_heads % p.heads != 0)) {
        throw_invalid("params.query_heads = " + std::to_string(p.query_heads) +
                      " is not a positive multiple of params.heads = " + std::to_string(p.heads) +
                      " (the attention's heads_q; K has heads_kv = params.heads)");
    }
    // A row is rotated in a scratch row of head_dim floats: bound it, as attention bounds its head dims.
    if (p.head_dim > kMaxQuantHeadDim) {
        throw_invalid("params.head_dim = " + std::to_string(p.head_dim) + ", must be <= " +
                      std::to_string(kMaxQuantHeadDim));
    }

    if (in->reserved != 0) throw_invalid("in.reserved = " + std::to_string(in->reserved) + ", must be 0");
    if (out->reserved != 0) throw_invalid("out.reserved = " + std::to_string(out->reserved) + ", must be 0");
    if (in->dtype != ZYFA_DTYPE_FP32 && in->dtype != ZYFA_DTYPE_FP16 && in->dtype != ZYFA_DTYPE_BF16) {
        throw_invalid("in.dtype = " + std::to_string(in->dtype) + " (" + dtype_name(in->dtype) +
                      ") is not an input dtype of " + function + " (FP32, FP16 or BF16)");
    }
    if (int8 && out->dtype != ZYFA_DTYPE_INT8) {
        throw_invalid("out.dtype = " + std::to_string(out->dtype) + " (" + dtype_name(out->dtype) +
                      ") is not INT8 (zyfa_quantize_int8 writes ZYFA_DTYPE_INT8; FP8 is zyfa_quantize_fp8's)");
    }
    if (!int8 && !is_fp8(out->dtype)) {
        throw_invalid("out.dtype = " + std::to_string(out->dtype) + " (" + dtype_name(out->dtype) +
                      ") is not FP8 (FP8_E4M3FN or FP8_E4M3FNUZ)");
    }

    const bool varlen = p.cu_seqlens != nullptr;
    if (varlen) require_aligned("params.cu_seqlens", p.cu_seqlens, 4, "int32 cu_seqlens");  // before it is read
    const int64_t rows = varlen ? checked_packed_rows(p.cu_seqlens, "params.cu_seqlens", p.batch, p.seqlen,
                                                      "params.seqlen", backend)
                                : p.seqlen;

    QuantProblem problem;
    problem.hadamard = (p.flags & ZYFA_QUANT_HADAMARD) != 0;
    problem.smooth = smooth;
    problem.v_transposed = v_transposed;
    problem.smooth_mean = p.smooth_mean;
    problem.batch = p.batch;
    problem.seqlen = p.seqlen;
    problem.heads = p.heads;
    problem.head_dim = p.head_dim;
    problem.cu_seqlens = p.cu_seqlens;
    problem.descale = descale;
    problem.scale_rows = int8 ? p.scale_rows : 0;
    if (key_bias) {
        problem.query_mean = p.query_mean;
        problem.key_bias = p.key_bias;
        problem.query_heads = p.query_heads;
        problem.key_bias_scale = p.key_bias_scale != 0.0f
                                     ? p.key_bias_scale
                                     : static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)));
    }

    const TensorShape shape{p.batch, rows, p.heads, p.head_dim, varlen, !varlen || backend == ZYFA_BACKEND_CPU};
    // Transposed out: rows are its 16-key groups (seqlen padded to 128 keys), each 16 * head_dim bytes.
    const TensorShape out_shape = v_transposed ? TensorShape{p.batch, numerics::vt_groups(p.seqlen), p.heads,
                                                             numerics::kVtGroupKeys * p.head_dim, false, true}
                                               : shape;
    problem.in = check_tensor_layout(*in, "in", shape, problem.empty(), backend);
    problem.out = check_tensor_layout(*out, "out", out_shape, problem.empty(), backend);
    const int64_t groups = problem.scale_groups();
    const int64_t descale_count =
        checked_mul(checked_mul(p.batch, p.heads, "descale size batch * heads"), groups, "descale size");
    checked_mul(descale_count, 4, "descale bytes");
    const int64_t mean_count =
        smooth ? checked_mul(p.batch * p.heads, p.head_dim, "params.smooth_mean size batch * heads * head_dim") : 0;
    checked_mul(mean_count, 4, "params.smooth_mean bytes");
    // Q's mean [batch, query_heads, head_dim] and the bias [batch, query_heads, seqlen] or
    // [query_heads, total]; with packed rows on a GPU backend only the first is certain.
    int64_t query_mean_count = 0, key_bias_count = 0;
    if (key_bias) {
        query_mean_count = checked_mul(checked_mul(p.batch, p.query_heads, "params.query_mean size"), p.head_dim,
                                       "params.query_mean size");
        checked_mul(query_mean_count, 4, "params.query_mean bytes");
        key_bias_count = checked_mul(p.query_heads, varlen ? rows : checked_mul(p.batch, p.seqlen, "params.key_bias size"),
                                     "params.key_bias size");
        checked_mul(key_bias_count, 4, "params.key_bias bytes");
        if (!shape.rows_known && key_bias_count > 0) key_bias_count = 1;
    }

    if (!problem.empty()) {
        require_aligned("descale", descale, 4, "the fp32 descale");
        if (smooth) require_aligned("params.smooth_mean", p.smooth_mean, 4, "the fp32 smooth_mean");
        if (key_bias) {
            require_aligned("params.query_mean", p.query_mean, 4, "the fp32 query_mean");
            require_aligned("params.key_bias", p.key_bias, 4, "the fp32 key_bias");
        }
        // Outputs never share memory with the inputs or with each other.
        const ByteRange outputs[] = {
            tensor_range("out.data", problem.out, out_shape),
            array_range("descale", descale, descale_count, 4),
            array_range("params.smooth_mean", p.smooth_mean, mean_count, 4),
            array_range("params.key_bias", p.key_bias, key_bias_count, 4),
        };
        const ByteRange inputs[] = {
            tensor_range("in.data", problem.in, shape),
            array_range("params.cu_seqlens", p.cu_seqlens, varlen ? p.batch + 1 : 0, 4),
            array_range("params.query_mean", p.query_mean, query_mean_count, 4),
        };
        require_disjoint(outputs, 4, inputs, 3);
    }

    // Well-formed but without a kernel: checked last (see validate_attn).
    if (!int8 && p.scale_rows != 0) {
        throw_not_supported("params.scale_rows = " + std::to_string(p.scale_rows) +
                            ": zyfa_quantize_fp8 writes one scale per (batch, head) only (0); per-token and "
                            "per-block scales are zyfa_quantize_int8's");
    }
    if (key_bias && int8) {
        throw_not_supported("params.flags has ZYFA_QUANT_KEY_BIAS: the INT8 Q/K mode takes no key bias "
                            "(zyfa_quantize_fp8 writes it)");
    }
    if (problem.hadamard && !numerics::hadamard_supported(p.head_dim)) {
        throw_not_supported("params.head_dim = " + std::to_string(p.head_dim) +
                            " with ZYFA_QUANT_HADAMARD: needs a power of two or a multiple of 64");
    }
    return problem;
}

}  // namespace zyfa
