// zyfa-bench on a GPU backend: a device copy of one case's buffers (through the library's own
// runtime helpers, src/gpu/gpu_runtime.hpp, so the tool links no GPU library), event timing on a
// stream of its own, and O copied back into the host buffers for the reference check.
#pragma once

#include <memory>
#include <vector>

#include "bench_inputs.hpp"
#include "gpu/gpu_runtime.hpp"

namespace zyfa_bench {

// The GPU runtime of a context's backend and device (CUDA now); throws std::runtime_error for a
// backend this tool cannot drive.
std::unique_ptr<zyfa::gpu::GpuRuntime> open_device_runtime(zyfa_backend backend, int device);

// The device mirror of a CaseBuffers: same views and params, device pointers. Frees on destruction.
class DeviceCase {
public:
    DeviceCase(zyfa::gpu::GpuRuntime& runtime, const CaseBuffers& host);
    ~DeviceCase();
    DeviceCase(const DeviceCase&) = delete;
    DeviceCase& operator=(const DeviceCase&) = delete;

    const zyfa_attn_params& params() const { return params_; }
    const zyfa_tensor& q() const { return q_; }
    const zyfa_tensor& k() const { return k_; }
    const zyfa_tensor& v() const { return v_; }
    const zyfa_tensor& o() const { return o_; }
    // Copies the device O into host.o (after the stream work finished).
    void copy_output_to(CaseBuffers& host) const;

private:
    void* upload(const void* data, size_t bytes);

    zyfa::gpu::GpuRuntime& runtime_;
    std::vector<void*> allocations_;
    zyfa_attn_params params_{};
    zyfa_tensor q_{}, k_{}, v_{}, o_{};
    size_t o_bytes_ = 0;
};

}  // namespace zyfa_bench
