// Where a request's buffers lie: the alignment each one's element type needs, and the rule that
// no output shares a byte with an input or with another output (zyfa never computes in place).
// Pure interval arithmetic on the views' pointers and strides: nothing is read or allocated.
#include <cstdio>
#include <string>

#include "errors.hpp"
#include "validate.hpp"

namespace zyfa {
namespace validation {
namespace {

std::string hex(uintptr_t address) {
    char text[32];
    std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(address));
    return text;
}

// [begin, begin + bytes), clamped at the top of the address space.
ByteRange make_range(const char* name, const void* data, uint64_t bytes) {
    ByteRange range;
    range.name = name;
    range.begin = reinterpret_cast<uintptr_t>(data);
    range.end = bytes > UINTPTR_MAX - range.begin ? UINTPTR_MAX : range.begin + static_cast<uintptr_t>(bytes);
    return range;
}

bool overlap(const ByteRange& a, const ByteRange& b) {
    return !a.empty() && !b.empty() && a.begin < b.end && b.begin < a.end;
}

}  // namespace

int64_t tensor_span_elements(const TensorView& t, const TensorShape& shape) {
    if (shape.batch <= 0 || shape.rows <= 0 || shape.heads <= 0 || shape.head_dim <= 0) return 0;
    // Packed rows whose total only the device knows: the first row is the one extent certain to be
    // the caller's (a bound would reject buffers that merely lie close together).
    const int64_t rows = shape.rows_known ? shape.rows : 1;
    const int64_t batches = shape.varlen ? 1 : shape.batch;
    // check_tensor_layout has already proven that this sum fits in int64.
    return shape.head_dim + (batches - 1) * t.stride_batch + (rows - 1) * t.stride_seq +
           (shape.heads - 1) * t.stride_head;
}

ByteRange tensor_range(const char* name, const TensorView& t, const TensorShape& shape) {
    const int64_t span = tensor_span_elements(t, shape);
    if (span == 0 || t.data == nullptr) return make_range(name, nullptr, 0);
    return make_range(name, t.data, static_cast<uint64_t>(span) * static_cast<uint64_t>(element_size(t.dtype)));
}

ByteRange array_range(const char* name, const void* data, int64_t count, int64_t element_bytes) {
    if (data == nullptr || count <= 0) return make_range(name, nullptr, 0);
    return make_range(name, data, static_cast<uint64_t>(count) * static_cast<uint64_t>(element_bytes));
}

void require_aligned(const char* field_name, const void* data, int64_t alignment, const char* what) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(data);
    if (alignment > 1 && address % static_cast<uintptr_t>(alignment) != 0) {
        throw_invalid(std::string(field_name) + " = " + hex(address) + " is not " + std::to_string(alignment) +
                      "-byte aligned, which " + what + " needs");
    }
}

void require_disjoint(const ByteRange* outputs, size_t output_count, const ByteRange* inputs, size_t input_count) {
    auto refuse = [](const ByteRange& out, const ByteRange& other) {
        throw_invalid(std::string(out.name) + " [" + hex(out.begin) + ", " + hex(out.end) + ") overlaps " +
                      other.name + " [" + hex(other.begin) + ", " + hex(other.end) +
                      "): zyfa does not compute in place, outputs must not share memory with any input or other output");
    };
    for (size_t i = 0; i < output_count; ++i) {
        for (size_t j = i + 1; j < output_count; ++j) {
            if (overlap(outputs[i], outputs[j])) refuse(outputs[i], outputs[j]);
        }
        for (size_t j = 0; j < input_count; ++j) {
            if (overlap(outputs[i], inputs[j])) refuse(outputs[i], inputs[j]);
        }
    }
}

}  // namespace validation
}  // namespace zyfa
