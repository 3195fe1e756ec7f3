// Tensor layout and packed-length checks shared by the attention and quantisation validators.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>

#include "errors.hpp"
#include "validate.hpp"

namespace zyfa {
namespace validation {
namespace {

// GPU kernels load FP8 and INT8 rows with 16-byte vector loads.
constexpr int64_t kGpuFp8Alignment = 16;

std::string field(const char* tensor, const char* member) { return std::string(tensor) + "." + member; }

std::string pointer_text(const void* pointer) {
    char text[32];
    std::snprintf(text, sizeof(text), "%p", pointer);
    return text;
}

struct Axis {
    const char* stride_name;  // "stride_seq"
    const char* items;        // what overlaps: "rows"
    int64_t stride;
    int64_t size;
};

}  // namespace

bool is_fp8(zyfa_dtype dtype) { return dtype == ZYFA_DTYPE_FP8_E4M3FN || dtype == ZYFA_DTYPE_FP8_E4M3FNUZ; }

bool is_known_dtype(zyfa_dtype dtype) { return dtype >= ZYFA_DTYPE_FP32 && dtype <= ZYFA_DTYPE_INT8; }

int64_t element_size(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return 4;
        case ZYFA_DTYPE_FP16:
        case ZYFA_DTYPE_BF16: return 2;
        case ZYFA_DTYPE_FP8_E4M3FN:
        case ZYFA_DTYPE_FP8_E4M3FNUZ:
        case ZYFA_DTYPE_INT8: return 1;
        default: throw Error(ZYFA_ERROR_INTERNAL, "element_size of unknown dtype " + std::to_string(dtype));
    }
}

const char* dtype_name(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return "FP32";
        case ZYFA_DTYPE_FP16: return "FP16";
        case ZYFA_DTYPE_BF16: return "BF16";
        case ZYFA_DTYPE_FP8_E4M3FN: return "FP8_E4M3FN";
        case ZYFA_DTYPE_FP8_E4M3FNUZ: return "FP8_E4M3FNUZ";
        case ZYFA_DTYPE_INT8: return "INT8";
        default: return "unknown";
    }
}

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
    int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) {
        throw_invalid(std::string(what) + " overflows int64 (" + std::to_string(a) + " * " + std::to_string(b) + ")");
    }
    return product;
}

TensorView check_tensor_layout(const zyfa_tensor& t, const char* name, const TensorShape& shape,
                               bool empty_problem, zyfa_backend backend) {
    if (t.reserved != 0) {
        throw_invalid(field(name, "reserved") + " = " + std::to_string(t.reserved) + ", must be 0");
    }
    if (!shape.varlen && t.stride_batch < 0) {
        throw_invalid(field(name, "stride_batch") + " = " + std::to_string(t.stride_batch) + " is negative");
    }
    if (t.stride_seq < 0) {
        throw_invalid(field(name, "stride_seq") + " = " + std::to_string(t.stride_seq) + " is negative");
    }
    if (t.stride_head < 0) {
        throw_invalid(field(name, "stride_head") + " = " + std::to_string(t.stride_head) + " is negative");
    }

    // Distinct elements must not share memory: the dim axis is contiguous (head_dim elements);
    // taking the other axes from the smallest stride up, each stride must step past everything
    // the smaller axes span. Axes of size 1 are never stepped, so their strides are free.
    Axis axes[3] = {
        {"stride_batch", shape.pages ? "pages" : "batches", shape.varlen ? 0 : t.stride_batch,
         shape.varlen ? 1 : shape.batch},
        {"stride_seq", "rows", t.stride_seq, shape.rows},
        {"stride_head", "heads", t.stride_head, shape.heads},
    };
    const bool has_elements = shape.batch > 0 && shape.rows > 0 && shape.heads > 0 && shape.head_dim > 0;
    int64_t span = 0;  // elements from the first to one past the last
    if (has_elements) {
        std::stable_sort(std::begin(axes), std::end(axes),
                         [](const Axis& a, const Axis& b) { return a.stride < b.stride; });
        span = shape.head_dim;
        bool only_dim_inside = true;
        for (const Axis& axis : axes) {
            if (axis.size <= 1) continue;
            if (axis.stride < span) {
                throw_invalid(field(name, axis.stride_name) + " = " + std::to_string(axis.stride) + " makes " +
                              axis.items + " overlap (" +
                              (only_dim_inside ? "row length " + std::to_string(span)
                                               : "the inner axes span " + std::to_string(span) + " elements") +
                              ")");
            }
            int64_t step = 0;
            if (__builtin_mul_overflow(axis.stride, axis.size - 1, &step) ||
                __builtin_add_overflow(span, step, &span)) {
                throw_invalid(field(name, axis.stride_name) + " = " + std::to_string(axis.stride) + " over " +
                              std::to_string(axis.size) + " " + axis.items + " overflows int64 offsets");
            }
            only_dim_inside = false;
        }
        int64_t bytes = 0;
        if (__builtin_mul_overflow(span, element_size(t.dtype), &bytes)) {
            throw_invalid(field(name, "stride_batch/stride_seq/stride_head") + " span " + std::to_string(span) +
                          " elements of " + std::to_string(element_size(t.dtype)) +
                          " bytes: byte offsets overflow int64");
        }
    }

    if (t.data == nullptr && !empty_problem && has_elements) {
        throw_invalid(field(name, "data") + " is NULL");
    }
    if (has_elements) {
        const std::string data_field = field(name, "data");
        const std::string what = std::string(dtype_name(t.dtype)) + " elements";
        require_aligned(data_field.c_str(), t.data, element_size(t.dtype), what.c_str());
    }

    if (backend != ZYFA_BACKEND_CPU && element_size(t.dtype) == 1) {
        const std::string kind = is_fp8(t.dtype) ? "FP8" : dtype_name(t.dtype);
        const uintptr_t address = reinterpret_cast<uintptr_t>(t.data);
        if (address % kGpuFp8Alignment != 0) {
            throw_invalid(field(name, "data") + " = " + pointer_text(t.data) + " is unaligned: " + kind +
                          " tensors need 16-byte alignment on GPU backends");
        }
        for (const Axis& axis : axes) {
            if (axis.size > 1 && axis.stride % kGpuFp8Alignment != 0) {
                throw_invalid(field(name, axis.stride_name) + " = " + std::to_string(axis.stride) + " is unaligned: " +
                              kind + " strides must be multiples of 16 elements on GPU backends");
            }
        }
    }

    TensorView view;
    view.data = t.data;
    view.dtype = t.dtype;
    view.stride_batch = shape.varlen ? 0 : t.stride_batch;
    view.stride_seq = t.stride_seq;
    view.stride_head = t.stride_head;
    return view;
}

int64_t checked_packed_rows(const int32_t* cu, const char* name, int64_t batch, int64_t max_len,
                            const char* max_len_name, zyfa_backend backend) {
    if (backend != ZYFA_BACKEND_CPU) {
        // Device memory: the kernel trusts it; bound the packed total for the overflow checks.
        int64_t bound = 0;
        if (__builtin_mul_overflow(batch, max_len, &bound) || bound > INT32_MAX) bound = INT32_MAX;
        return bound;
    }
    if (cu[0] != 0) {
        throw_invalid(std::string(name) + "[0] = " + std::to_string(cu[0]) + ", must be 0");
    }
    for (int64_t b = 0; b < batch; ++b) {
        const int64_t length = static_cast<int64_t>(cu[b + 1]) - cu[b];
        if (length < 0) {
            throw_invalid(std::string(name) + "[" + std::to_string(b + 1) + "] = " + std::to_string(cu[b + 1]) +
                          " is less than " + name + "[" + std::to_string(b) + "] = " + std::to_string(cu[b]));
        }
        if (length > max_len) {
            throw_invalid(std::string(name) + ": sequence " + std::to_string(b) + " has length " +
                          std::to_string(length) + " > " + max_len_name + " = " + std::to_string(max_len));
        }
    }
    return cu[batch];
}

}  // namespace validation
}  // namespace zyfa
