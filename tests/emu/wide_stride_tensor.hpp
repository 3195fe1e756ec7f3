// A tensor whose rows (tokens) lie far apart in device memory: the compact host tensor of an
// AttentionCase placed row by row at a caller-chosen stride_seq, in one allocation that the HIP
// stand-in makes sparse (docs/emulator.md: from 256 MiB on, pages are mapped on first touch), so
// rows more than 4 GiB apart cost only the bytes written. Heads keep their compact spacing inside
// a row. For the asm kernels' 64-bit K/V addressing (kernels/amd/gfx950_fp8/README.md).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/gpu_runtime.hpp"
#include "zyfa.h"

namespace zyfa_emu_test {

class WideStrideTensor {
public:
    // `compact` describes `host` (data ignored); the device copy has stride_seq = row_stride
    // elements and stride_batch = rows * row_stride; only the batch's rows are written.
    WideStrideTensor(zyfa::gpu::GpuRuntime& rt, const zyfa_tensor& compact, const std::vector<uint8_t>& host,
                     int64_t batch, int64_t rows, int64_t heads, int64_t head_dim, size_t elem_bytes,
                     int64_t row_stride)
        : rt_(rt), compact_(compact), batch_(batch), rows_(rows), heads_(heads), row_bytes_(head_dim * elem_bytes),
          elem_(elem_bytes) {
        tensor = compact;
        tensor.stride_seq = row_stride;
        tensor.stride_batch = rows * row_stride;
        bytes_ = size_t(batch * rows * row_stride) * elem_bytes;
        tensor.data = rt.malloc_device(bytes_);
        for_each_head_row([&](size_t host_offset, size_t device_offset) {
            rt.copy_to_device(static_cast<uint8_t*>(tensor.data) + device_offset, host.data() + host_offset, row_bytes_);
        });
    }
    ~WideStrideTensor() { rt_.free_device(tensor.data); }
    WideStrideTensor(const WideStrideTensor&) = delete;
    WideStrideTensor& operator=(const WideStrideTensor&) = delete;

    // The device rows back into the compact host layout (an output).
    void download(std::vector<uint8_t>& host) const {
        for_each_head_row([&](size_t host_offset, size_t device_offset) {
            rt_.copy_to_host(host.data() + host_offset, static_cast<const uint8_t*>(tensor.data) + device_offset,
                             row_bytes_);
        });
    }
    size_t bytes() const { return bytes_; }

    zyfa_tensor tensor;

private:
    template <class F>
    void for_each_head_row(F f) const {
        for (int64_t b = 0; b < batch_; ++b)
            for (int64_t r = 0; r < rows_; ++r)
                for (int64_t h = 0; h < heads_; ++h)
                    f(size_t(b * compact_.stride_batch + r * compact_.stride_seq + h * compact_.stride_head) * elem_,
                      size_t(b * tensor.stride_batch + r * tensor.stride_seq + h * tensor.stride_head) * elem_);
    }

    zyfa::gpu::GpuRuntime& rt_;
    zyfa_tensor compact_;
    int64_t batch_, rows_, heads_;
    size_t row_bytes_, elem_;
    size_t bytes_ = 0;
};

}  // namespace zyfa_emu_test
