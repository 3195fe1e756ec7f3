#include "device_buffers.hpp"

#include <stdexcept>
#include <string>

#include "cuda/cuda_runtime.hpp"

namespace zyfa_bench {

std::unique_ptr<zyfa::gpu::GpuRuntime> open_device_runtime(zyfa_backend backend, int device) {
    if (backend == ZYFA_BACKEND_CUDA) return zyfa::cuda::open_cuda_runtime(device);
    throw std::runtime_error("zyfa-bench cannot allocate device memory for backend " + std::to_string(backend) +
                             " yet");
}

DeviceCase::DeviceCase(zyfa::gpu::GpuRuntime& runtime, const CaseBuffers& host) : runtime_(runtime) {
    try {
        params_ = host.params;
        q_ = host.q.view;
        k_ = host.k.view;
        v_ = host.v.view;
        o_ = host.o.view;
        q_.data = upload(host.q.bytes.data(), host.q.bytes.size());
        k_.data = upload(host.k.bytes.data(), host.k.bytes.size());
        v_.data = upload(host.v.bytes.data(), host.v.bytes.size());
        o_bytes_ = host.o.bytes.size();
        o_.data = upload(host.o.bytes.data(), o_bytes_);  // zeros: a row the kernel skips shows as 0
        auto upload_floats = [&](const float* data, const std::vector<float>& values) -> const float* {
            return data == nullptr ? nullptr
                                   : static_cast<const float*>(upload(values.data(), values.size() * sizeof(float)));
        };
        params_.q_descale = upload_floats(host.params.q_descale, host.q_descale);
        params_.k_descale = upload_floats(host.params.k_descale, host.k_descale);
        params_.v_descale = upload_floats(host.params.v_descale, host.v_descale);
        params_.sinks = upload_floats(host.params.sinks, host.sinks);
        params_.q_descale_per_token = upload_floats(host.params.q_descale_per_token, host.q_descale);
        params_.k_descale_per_block = upload_floats(host.params.k_descale_per_block, host.k_descale);
        if (host.params.cu_seqlens_q != nullptr) {
            const size_t bytes = static_cast<size_t>(host.params.batch + 1) * sizeof(int32_t);
            params_.cu_seqlens_q = static_cast<const int32_t*>(upload(host.params.cu_seqlens_q, bytes));
            if (host.params.cu_seqlens_k != nullptr)  // null when paged
                params_.cu_seqlens_k = static_cast<const int32_t*>(upload(host.params.cu_seqlens_k, bytes));
        }
        if (host.params.block_table != nullptr) {  // --page-size: the block table and key counts
            params_.block_table = static_cast<const int32_t*>(
                upload(host.block_table.data(), host.block_table.size() * sizeof(int32_t)));
            params_.seqused_k =
                static_cast<const int32_t*>(upload(host.seqused_k.data(), host.seqused_k.size() * sizeof(int32_t)));
        }
        params_.lse = nullptr;  // the tool does not request lse
    } catch (...) {
        for (void* pointer : allocations_) runtime_.free_device(pointer);
        throw;
    }
}

DeviceCase::~DeviceCase() {
    for (void* pointer : allocations_) runtime_.free_device(pointer);
}

void* DeviceCase::upload(const void* data, size_t bytes) {
    void* pointer = runtime_.malloc_device(bytes);
    allocations_.push_back(pointer);
    runtime_.copy_to_device(pointer, data, bytes);
    return pointer;
}

void DeviceCase::copy_output_to(CaseBuffers& host) const {
    runtime_.copy_to_host(host.o.bytes.data(), o_.data, o_bytes_);
}

}  // namespace zyfa_bench
