#include "vector_alignment.hpp"

#include <string>

#include "core/errors.hpp"

namespace zyfa {
namespace gpu {

void require_vector_aligned(const TensorView& t, const char* name, int64_t elem_bytes, const char* vendor) {
    if (reinterpret_cast<uintptr_t>(t.data) % kVectorLoadBytes != 0) {
        throw_not_supported(std::string(name) + ".data is not 16-byte aligned: the " + vendor + " kernels load " +
                            name + " with 16-byte vector loads");
    }
    const int64_t strides[] = {t.stride_batch, t.stride_seq, t.stride_head};
    const char* stride_names[] = {"stride_batch", "stride_seq", "stride_head"};
    for (int i = 0; i < 3; ++i) {
        if ((strides[i] * elem_bytes) % kVectorLoadBytes != 0) {
            throw_not_supported(std::string(name) + "." + stride_names[i] + " = " + std::to_string(strides[i]) +
                                " elements is not a multiple of 16 bytes, which the " + vendor +
                                " kernels' vector loads need");
        }
    }
}

}  // namespace gpu
}  // namespace zyfa
