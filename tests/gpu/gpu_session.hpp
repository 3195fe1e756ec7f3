// What every GPU test program shares: the decision to run or to skip (exit 77 with a one-line
// reason when there is no CUDA device or no CUDA backend in this build), a CUDA context and a
// CPU context, the GpuRuntime's test helpers (device memory, streams, graphs), and GpuCase: an
// AttentionCase (tests/support) whose buffers are mirrored on the device.
#pragma once

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/cuda_runtime.hpp"
#include "gpu/gpu_runtime.hpp"
#include "numerics/cmocka_cpp.hpp"
#include "support/attention_case.hpp"

namespace zyfa_gpu_test {

using zyfa::gpu::GpuRuntime;
using zyfa::gpu::StreamHandle;
using zyfa_test::AttentionCase;
using zyfa_test::CaseShape;

constexpr int kSkipExitCode = 77;  // CTest SKIP_RETURN_CODE of every gpu-tier test

// Everything a test needs, opened once per program before CMocka runs its tests.
struct Session {
    zyfa_context* cuda = nullptr;  // ZYFA_BACKEND_CUDA on device 0
    zyfa_context* cpu = nullptr;   // ZYFA_BACKEND_CPU, all hardware threads: the numerics model
    std::unique_ptr<GpuRuntime> runtime;  // the same device, for memory, streams and graphs
    StreamHandle stream = nullptr;        // a non-default stream every launch goes to
};

inline Session& session() {
    static Session s;
    return s;
}

// Null when the context has a kernel for a plain BF16 causal head-dim-128 problem; otherwise the
// library's message. zyfa_attn_supported reads no tensor data, so placeholder pointers do.
inline const char* probe_kernel_missing(zyfa_context* ctx) {
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL;
    p.batch = 1;
    p.seqlen_q = p.seqlen_k = 128;
    p.heads_q = p.heads_kv = 2;
    p.head_dim_qk = p.head_dim_v = 128;
    zyfa_tensor t;
    std::memset(&t, 0, sizeof t);
    t.data = reinterpret_cast<void*>(uintptr_t{1} << 20);
    t.dtype = ZYFA_DTYPE_BF16;
    t.stride_head = 128;
    t.stride_seq = 2 * 128;
    t.stride_batch = 128 * 2 * 128;
    const zyfa_status st = zyfa_attn_supported(ctx, &p, &t, &t, &t, &t);
    return st == ZYFA_ERROR_NOT_SUPPORTED ? zyfa_last_error_message() : nullptr;
}

// Returns 0 when the CUDA backend has a device (the session is open), kSkipExitCode after printing
// one line "SKIP <program>: <reason>" when this machine or build has none, and 1 on any other
// failure (a device that is there but broken is a failure, never a skip).
inline int open_session_or_skip(const char* program) {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CUDA;
    Session& s = session();
    const zyfa_status st = zyfa_context_create(&opts, &s.cuda);
    if (st == ZYFA_ERROR_NO_DEVICE || st == ZYFA_ERROR_NOT_SUPPORTED) {
        std::printf("SKIP %s: zyfa has no CUDA device here: %s: %s\n", program, zyfa_status_string(st),
                    zyfa_last_error_message());
        return kSkipExitCode;
    }
    if (st != ZYFA_SUCCESS) {
        std::printf("FAIL %s: zyfa_context_create(CUDA): %s: %s\n", program, zyfa_status_string(st),
                    zyfa_last_error_message());
        return 1;
    }
    // A device for which this build embeds no kernel still gets a context; its launches are
    // NOT_SUPPORTED. That is a skip with its reason, not a failure of the kernels (the device suite
    // script treats any skip on the GPU machine as a failed run).
    if (const char* reason = probe_kernel_missing(s.cuda)) {
        std::printf("SKIP %s: device %s has no zyfa kernel in this build (%s): %s\n", program,
                    zyfa_context_device_name(s.cuda), zyfa_build_info(), reason);
        return kSkipExitCode;
    }
    zyfa_context_options cpu_opts;
    zyfa_context_options_init(&cpu_opts, sizeof cpu_opts);
    cpu_opts.backend = ZYFA_BACKEND_CPU;
    if (zyfa_context_create(&cpu_opts, &s.cpu) != ZYFA_SUCCESS) {
        std::printf("FAIL %s: CPU context: %s\n", program, zyfa_last_error_message());
        return 1;
    }
    try {
        s.runtime = zyfa::cuda::open_cuda_runtime(opts.device);
        s.stream = s.runtime->create_stream();
    } catch (const std::exception& e) {
        std::printf("FAIL %s: the CUDA runtime's test helpers: %s\n", program, e.what());
        return 1;
    }
    std::printf("%s: CUDA device %s (%s, %d SMs); zyfa %s, built with: %s\n", program,
                s.runtime->device().name.c_str(), zyfa_context_device_name(s.cuda), s.runtime->device().multiprocessors,
                zyfa_version_string(), zyfa_build_info());
    return 0;
}

inline void close_session() {
    Session& s = session();
    if (s.runtime && s.stream) s.runtime->destroy_stream(s.stream);
    s.stream = nullptr;
    s.runtime.reset();
    zyfa_context_destroy(s.cuda);
    zyfa_context_destroy(s.cpu);
    s.cuda = s.cpu = nullptr;
}

// Device memory with a guard band after the payload: the band is filled with a known byte and
// checked after a launch, so a kernel that writes past the end of an output is caught here too,
// not only under compute-sanitizer.
class DeviceBuffer {
public:
    static constexpr size_t kGuardBytes = 4096;
    static constexpr uint8_t kGuardByte = 0x5A;

    DeviceBuffer() = default;
    DeviceBuffer(GpuRuntime& rt, size_t bytes) : rt_(&rt), bytes_(bytes) {
        data_ = rt.malloc_device(bytes_ + kGuardBytes);
        rt.fill_device(data_, kGuardByte, bytes_ + kGuardBytes);
    }
    DeviceBuffer(GpuRuntime& rt, const void* host, size_t bytes) : DeviceBuffer(rt, bytes) { upload(host); }
    ~DeviceBuffer() {
        if (rt_ && data_) rt_->free_device(data_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        std::swap(rt_, other.rt_);
        std::swap(data_, other.data_);
        std::swap(bytes_, other.bytes_);
        return *this;
    }

    void* data() const { return data_; }
    size_t size() const { return bytes_; }
    void upload(const void* host) {
        if (bytes_) rt_->copy_to_device(data_, host, bytes_);
    }
    void download(void* host) const {
        if (bytes_) rt_->copy_to_host(host, data_, bytes_);
    }
    // True when every guard byte still holds kGuardByte.
    bool guard_intact() const {
        std::vector<uint8_t> guard(kGuardBytes);
        rt_->copy_to_host(guard.data(), static_cast<const uint8_t*>(data_) + bytes_, kGuardBytes);
        for (uint8_t b : guard)
            if (b != kGuardByte) return false;
        return true;
    }

private:
    GpuRuntime* rt_ = nullptr;
    void* data_ = nullptr;
    size_t bytes_ = 0;
};

template <class T>
size_t bytes_of(const std::vector<T>& v) {
    return v.size() * sizeof(T);
}

// An attention case on the device. `host` holds the inputs (generated by AttentionCase from the
// shape and seed, then changed by `edit` if given) and, after run(), the GPU's o and lse. The
// device o starts with AttentionCase's 0xA5 sentinel and lse with 12345.0f, so an element the
// kernel never writes does not pass as a value.
class GpuCase {
public:
    using Edit = std::function<void(AttentionCase&)>;

    GpuCase(GpuRuntime& rt, const CaseShape& shape, const Edit& edit = {}) : host(shape) {
        if (edit) edit(host);
        q_ = DeviceBuffer(rt, host.q.data(), bytes_of(host.q));
        k_ = DeviceBuffer(rt, host.k.data(), bytes_of(host.k));
        v_ = DeviceBuffer(rt, host.v.data(), bytes_of(host.v));
        o_ = DeviceBuffer(rt, host.o.data(), bytes_of(host.o));
        lse_ = DeviceBuffer(rt, host.lse.data(), bytes_of(host.lse));
        params = host.params;
        if (!host.q_descale.empty()) {
            qd_ = DeviceBuffer(rt, host.q_descale.data(), bytes_of(host.q_descale));
            kd_ = DeviceBuffer(rt, host.k_descale.data(), bytes_of(host.k_descale));
            vd_ = DeviceBuffer(rt, host.v_descale.data(), bytes_of(host.v_descale));
            params.q_descale = static_cast<const float*>(qd_.data());
            params.k_descale = static_cast<const float*>(kd_.data());
            params.v_descale = static_cast<const float*>(vd_.data());
        }
        if (!host.q_descale_per_token.empty()) {  // the INT8 Q/K mode
            qd_ = DeviceBuffer(rt, host.q_descale_per_token.data(), bytes_of(host.q_descale_per_token));
            kd_ = DeviceBuffer(rt, host.k_descale_per_block.data(), bytes_of(host.k_descale_per_block));
            vd_ = DeviceBuffer(rt, host.v_descale.data(), bytes_of(host.v_descale));
            params.q_descale_per_token = static_cast<const float*>(qd_.data());
            params.k_descale_per_block = static_cast<const float*>(kd_.data());
            params.v_descale = static_cast<const float*>(vd_.data());
        }
        if (!host.cu_q.empty()) {
            cu_q_ = DeviceBuffer(rt, host.cu_q.data(), bytes_of(host.cu_q));
            cu_k_ = DeviceBuffer(rt, host.cu_k.data(), bytes_of(host.cu_k));
            params.cu_seqlens_q = static_cast<const int32_t*>(cu_q_.data());
            params.cu_seqlens_k = static_cast<const int32_t*>(cu_k_.data());
        }
        params.lse = host.shape.with_lse ? static_cast<float*>(lse_.data()) : nullptr;
        if (!host.sinks.empty()) {
            sinks_ = DeviceBuffer(rt, host.sinks.data(), bytes_of(host.sinks));
            params.sinks = static_cast<const float*>(sinks_.data());
        }
        if (!host.key_bias.empty()) {
            key_bias_ = DeviceBuffer(rt, host.key_bias.data(), bytes_of(host.key_bias));
            params.key_bias = static_cast<const float*>(key_bias_.data());
        }
        tq = host.tq;
        tk = host.tk;
        tv = host.tv;
        to = host.to;
        tq.data = q_.data();
        tk.data = k_.data();
        tv.data = v_.data();
        to.data = o_.data();
    }

    // Enqueues the attention on `stream`; asynchronous.
    zyfa_status launch(zyfa_context* ctx, StreamHandle stream) {
        return zyfa_attn_fwd(ctx, &params, &tq, &tk, &tv, &to, stream);
    }
    // Launches, waits, and copies o and lse into host.o / host.lse.
    zyfa_status run(zyfa_context* ctx, GpuRuntime& rt, StreamHandle stream) {
        const zyfa_status st = launch(ctx, stream);
        if (st != ZYFA_SUCCESS) return st;
        rt.synchronize_stream(stream);
        download();
        return st;
    }
    void download() {
        o_.download(host.o.data());
        lse_.download(host.lse.data());
    }
    // Replaces q, k, v (and the descales) in the device buffers with `src`'s, which must have the
    // same shape: what a caller does between replays of a captured graph.
    void upload_inputs(const AttentionCase& src) {
        q_.upload(src.q.data());
        k_.upload(src.k.data());
        v_.upload(src.v.data());
        if (!src.q_descale.empty()) {
            qd_.upload(src.q_descale.data());
            kd_.upload(src.k_descale.data());
            vd_.upload(src.v_descale.data());
        }
        if (!src.q_descale_per_token.empty()) {
            qd_.upload(src.q_descale_per_token.data());
            kd_.upload(src.k_descale_per_block.data());
            vd_.upload(src.v_descale.data());
        }
    }
    bool guards_intact() const { return o_.guard_intact() && lse_.guard_intact(); }
    void reset_outputs(const std::vector<uint8_t>& o_bytes, const std::vector<float>& lse_values) {
        o_.upload(o_bytes.data());
        lse_.upload(lse_values.data());
    }
    const DeviceBuffer& device_o() const { return o_; }

    AttentionCase host;
    zyfa_attn_params params;  // device pointers
    zyfa_tensor tq, tk, tv, to;

private:
    DeviceBuffer q_, k_, v_, o_, lse_, qd_, kd_, vd_, cu_q_, cu_k_, sinks_, key_bias_;
};

// Runs a test body, turning a zyfa::Error from the runtime's helpers (a failed capture, copy or
// allocation) into a CMocka failure of that test with the driver's message, not an abort.
template <class Body>
void guarded(Body body) {
    try {
        body();
    } catch (const std::exception& e) {
        std::printf("  device error: %s\n", e.what());
        fail();
    }
}

// The same inputs (same shape, seed and edit) on the CPU backend: the bit-level numerics model.
inline void run_on_cpu(AttentionCase& c) {
    const zyfa_status st = c.run(session().cpu);
    if (st != ZYFA_SUCCESS) {
        std::printf("CPU backend failed: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
}

}  // namespace zyfa_gpu_test
