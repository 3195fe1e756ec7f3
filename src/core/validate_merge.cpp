// validate_merge: zyfa_merge_params + the parts' views and lse arrays + the output view ->
// MergeProblem, or zyfa::Error. The rules are zyfa_attn_fwd's for its o and lse.
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "errors.hpp"
#include "validate.hpp"
#include "versioned_struct.hpp"

namespace zyfa {
namespace {

using namespace validation;

constexpr int64_t kMaxHeadDim = 512;  // as zyfa_attn_fwd's head_dim_v

// The caller's params with every field it did not pass (an older, smaller struct) at its default.
zyfa_merge_params read_params(const zyfa_merge_params* user) {
    const size_t min_size = offsetof(zyfa_merge_params, head_dim_v) + sizeof(user->head_dim_v);
    const size_t readable = checked_struct_size(user, sizeof(zyfa_merge_params), min_size, "params", "head_dim_v");
    zyfa_merge_params defaults;
    zyfa_merge_params_init(&defaults, sizeof(defaults));
    zyfa_merge_params params = defaults;
    std::memcpy(&params, user, readable);
    params.struct_size = sizeof(params);
    if (!field_within(readable, offsetof(zyfa_merge_params, cu_seqlens_q), sizeof(params.cu_seqlens_q))) {
        params.cu_seqlens_q = defaults.cu_seqlens_q;
    }
    if (!field_within(readable, offsetof(zyfa_merge_params, lse), sizeof(params.lse))) params.lse = defaults.lse;
    return params;
}

bool is_output_dtype(zyfa_dtype dtype) {
    return dtype == ZYFA_DTYPE_BF16 || dtype == ZYFA_DTYPE_FP16 || dtype == ZYFA_DTYPE_FP32;
}

void check_view_dtype(const zyfa_tensor& t, const std::string& name) {
    if (t.reserved != 0) throw_invalid(name + ".reserved = " + std::to_string(t.reserved) + ", must be 0");
    if (!is_output_dtype(t.dtype)) {
        throw_invalid(name + ".dtype = " + std::to_string(t.dtype) + " (" + dtype_name(t.dtype) +
                      ") is not an attention output dtype (BF16, FP16 or FP32)");
    }
}

}  // namespace

MergeProblem validate_merge(const zyfa_merge_params* user_params, const zyfa_tensor* part_o,
                            const float* const* part_lse, const zyfa_tensor* o, zyfa_backend backend) {
    if (user_params == nullptr) throw_invalid("params is NULL");
    if (part_o == nullptr) throw_invalid("part_o is NULL");
    if (part_lse == nullptr) throw_invalid("part_lse is NULL");
    if (o == nullptr) throw_invalid("o is NULL");
    const zyfa_merge_params p = read_params(user_params);

    if (p.num_parts < 1) throw_invalid("params.num_parts = " + std::to_string(p.num_parts) + ", must be >= 1");
    if (p.batch < 0) throw_invalid("params.batch = " + std::to_string(p.batch) + " is negative");
    if (p.seqlen_q < 0) throw_invalid("params.seqlen_q = " + std::to_string(p.seqlen_q) + " is negative");
    if (p.heads <= 0) throw_invalid("params.heads = " + std::to_string(p.heads) + ", must be > 0");
    if (p.head_dim_v <= 0 || p.head_dim_v > kMaxHeadDim) {
        throw_invalid("params.head_dim_v = " + std::to_string(p.head_dim_v) + " is outside [1, " +
                      std::to_string(kMaxHeadDim) + "]");
    }

    // Names are built per part as it is checked: memory stays independent of num_parts, beyond
    // the problem's own views.
    const size_t parts = static_cast<size_t>(p.num_parts);
    auto part_name = [](size_t i) { return "part_o[" + std::to_string(i) + "]"; };
    auto lse_name = [](size_t i) { return "part_lse[" + std::to_string(i) + "]"; };
    for (size_t i = 0; i < parts; ++i) check_view_dtype(part_o[i], part_name(i));
    check_view_dtype(*o, "o");

    const bool varlen = p.cu_seqlens_q != nullptr;
    int64_t rows = p.seqlen_q;
    if (varlen) {
        require_aligned("params.cu_seqlens_q", p.cu_seqlens_q, 4, "int32 cu_seqlens");  // before it is read
        rows = checked_packed_rows(p.cu_seqlens_q, "params.cu_seqlens_q", p.batch, p.seqlen_q, "params.seqlen_q",
                                   backend);
    }

    MergeProblem problem;
    problem.batch = p.batch;
    problem.seqlen_q = p.seqlen_q;
    problem.heads = p.heads;
    problem.head_dim = p.head_dim_v;
    problem.cu_seqlens_q = p.cu_seqlens_q;
    problem.lse = p.lse;
    const bool empty = problem.empty();
    const bool rows_known = !varlen || backend == ZYFA_BACKEND_CPU;
    const TensorShape shape{p.batch, rows, p.heads, p.head_dim_v, varlen, rows_known};
    problem.o = check_tensor_layout(*o, "o", shape, empty, backend);
    problem.part_o.reserve(parts);
    problem.part_lse.reserve(parts);
    for (size_t i = 0; i < parts; ++i) {
        problem.part_o.push_back(check_tensor_layout(part_o[i], part_name(i).c_str(), shape, empty, backend));
        problem.part_lse.push_back(part_lse[i]);
    }

    // Every lse array, the parts' and the output's: [batch, heads, seqlen_q] or [heads, total_q].
    const int64_t lse_rows = varlen ? rows : checked_mul(p.batch, p.seqlen_q, "lse size batch * seqlen_q");
    int64_t lse_count = checked_mul(lse_rows, p.heads, "lse size");
    checked_mul(lse_count, 4, "lse bytes");
    if (!rows_known && lse_count > 0) lse_count = 1;  // [heads, total_q]: only entry 0 is certain
    if (empty) lse_count = 0;

    for (size_t i = 0; lse_count > 0 && i < parts; ++i) {
        if (part_lse[i] == nullptr) {
            throw_invalid(lse_name(i) + " is NULL; every part needs its lse (the merge weights come from it)");
        }
        require_aligned(lse_name(i).c_str(), part_lse[i], 4, "an fp32 lse");
    }
    if (lse_count > 0 && p.lse != nullptr) require_aligned("params.lse", p.lse, 4, "the fp32 lse");

    // Not in place: the outputs overlap no input and not each other.
    if (!empty) {
        const ByteRange outputs[] = {
            tensor_range("o.data", problem.o, shape),
            array_range("params.lse", p.lse, p.lse != nullptr ? lse_count : 0, 4),
        };
        const ByteRange cu_range = array_range("params.cu_seqlens_q", p.cu_seqlens_q, varlen ? p.batch + 1 : 0, 4);
        require_disjoint(outputs, 2, &cu_range, 1);
        for (size_t i = 0; i < parts; ++i) {
            const std::string data_name = part_name(i) + ".data", lse_field = lse_name(i);
            const ByteRange inputs[] = {
                tensor_range(data_name.c_str(), problem.part_o[i], shape),
                array_range(lse_field.c_str(), part_lse[i], lse_count, 4),
            };
            require_disjoint(outputs, 2, inputs, 2);
        }
    }
    return problem;
}

}  // namespace zyfa
