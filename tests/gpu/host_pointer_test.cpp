// Host pointers on a CUDA context, on the real driver: each pointer of a request in turn replaced
// by pageable host memory (the case's own host vectors) is INVALID_ARGUMENT naming the field,
// before anything is enqueued (unless the device reads pageable memory in place, HMM/ATS: then it
// runs); pinned and managed memory from the driver run and give the bits device memory gives.
// Also prints what the check costs: the pointer classification alone
// (GpuRuntime::locate_pointers over the problem's pointers) and the host time of one
// zyfa_attn_fwd, each the median of 20,000 calls (docs/reliability.md quotes them).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/cuda_driver.hpp"
#include "gpu_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

constexpr int kTimedCalls = 20000;
constexpr int kCallsPerSync = 512;  // well below the launch queue's depth: enqueues never wait

CaseShape small_shape(const DtypeMode& m) {
    CaseShape s = mode_shape(m);
    s.out_dtype = ZYFA_DTYPE_BF16;
    s.batch = 2;
    s.seqlen_q = s.seqlen_k = 128;
    s.heads_q = s.heads_kv = 2;
    s.head_dim_qk = s.head_dim_v = 128;
    return s;
}

CaseShape packed_shape(const DtypeMode& m) {
    CaseShape s = small_shape(m);
    s.lengths_q = {100, 28};
    s.lengths_k = {60, 128};
    return s;
}

bool pageable_accessible() { return session().runtime->device().pageable_memory_access; }

// zyfa_attn_fwd on c as it stands: INVALID_ARGUMENT naming `field` (or, with pageable memory
// access, success), and zyfa_attn_supported agrees.
void expect_refused(GpuCase& c, const char* field) {
    Session& s = session();
    const zyfa_status supported = zyfa_attn_supported(s.cuda, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
    const zyfa_status st = c.launch(s.cuda, s.stream);
    const std::string message = zyfa_last_error_message();
    std::printf("  host %-20s -> %s: %s\n", field, zyfa_status_string(st), st == ZYFA_SUCCESS ? "" : message.c_str());
    assert_int_equal(supported, st);
    if (pageable_accessible()) {
        assert_int_equal(st, ZYFA_SUCCESS);
        s.runtime->synchronize_stream(s.stream);
        return;
    }
    assert_int_equal(st, ZYFA_ERROR_INVALID_ARGUMENT);
    assert_true(message.find(std::string(field) + " = 0x") != std::string::npos);
    assert_true(message.find("is host memory; this context is CUDA device 0") != std::string::npos);
}

void test_host_tensors_and_lse(void**) {
    guarded([] {
        Session& s = session();
        GpuCase c(*s.runtime, small_shape(kBf16));
        assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
        zyfa_tensor* const views[] = {&c.tq, &c.tk, &c.tv, &c.to};
        std::vector<uint8_t>* const hosts[] = {&c.host.q, &c.host.k, &c.host.v, &c.host.o};
        const char* const fields[] = {"q.data", "k.data", "v.data", "o.data"};
        for (int t = 0; t < 4; ++t) {
            void* const device = views[t]->data;
            views[t]->data = hosts[t]->data();
            expect_refused(c, fields[t]);
            views[t]->data = device;
        }
        float* const lse = c.params.lse;
        c.params.lse = c.host.lse.data();
        expect_refused(c, "params.lse");
        c.params.lse = lse;
    });
}

void test_host_cu_seqlens_and_descales(void**) {
    guarded([] {
        Session& s = session();
        GpuCase c(*s.runtime, packed_shape(kE4m3fnLean));
        assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
        const zyfa_attn_params device = c.params;
        c.params.cu_seqlens_q = c.host.cu_q.data();
        expect_refused(c, "params.cu_seqlens_q");
        c.params = device;
        c.params.cu_seqlens_k = c.host.cu_k.data();
        expect_refused(c, "params.cu_seqlens_k");
        c.params = device;
        c.params.q_descale = c.host.q_descale.data();
        expect_refused(c, "params.q_descale");
        c.params = device;
        c.params.k_descale = c.host.k_descale.data();
        expect_refused(c, "params.k_descale");
        c.params = device;
        c.params.v_descale = c.host.v_descale.data();
        expect_refused(c, "params.v_descale");
        c.params = device;
    });
}

// Pinned (cuMemAllocHost) and managed (cuMemAllocManaged) memory straight from the driver: the
// runtime interface allocates device memory only.
class DriverMemory {
public:
    DriverMemory() {
        const zyfa::cuda::CudaDriver& driver = zyfa::cuda::CudaDriver::get();
        library_ = dlopen(driver.library.c_str(), RTLD_NOW | RTLD_NOLOAD);
        if (library_ == nullptr) throw std::runtime_error("the CUDA driver is not loaded");
        driver.check(entry<int (*)(void**, int)>("cuDevicePrimaryCtxRetain")(&context_, 0), "cuDevicePrimaryCtxRetain");
        driver.check(entry<int (*)(void*)>("cuCtxPushCurrent_v2")(context_), "cuCtxPushCurrent");
    }
    ~DriverMemory() {
        for (void* p : pinned_) entry<int (*)(void*)>("cuMemFreeHost")(p);
        for (void* p : managed_) entry<int (*)(unsigned long long)>("cuMemFree_v2")(reinterpret_cast<uintptr_t>(p));
        void* popped = nullptr;
        entry<int (*)(void**)>("cuCtxPopCurrent_v2")(&popped);
        entry<int (*)(int)>("cuDevicePrimaryCtxRelease_v2")(0);
    }
    DriverMemory(const DriverMemory&) = delete;
    DriverMemory& operator=(const DriverMemory&) = delete;

    void* pinned(const void* host, size_t bytes) {
        void* p = nullptr;
        zyfa::cuda::CudaDriver::get().check(entry<int (*)(void**, size_t)>("cuMemAllocHost_v2")(&p, bytes),
                                            "cuMemAllocHost");
        pinned_.push_back(p);
        std::memcpy(p, host, bytes);
        return p;
    }
    void* managed(const void* host, size_t bytes) {
        unsigned long long p = 0;
        constexpr unsigned kAttachGlobal = 1;
        zyfa::cuda::CudaDriver::get().check(
            entry<int (*)(unsigned long long*, size_t, unsigned)>("cuMemAllocManaged")(&p, bytes, kAttachGlobal),
            "cuMemAllocManaged");
        managed_.push_back(reinterpret_cast<void*>(static_cast<uintptr_t>(p)));
        std::memcpy(managed_.back(), host, bytes);
        return managed_.back();
    }

private:
    template <class Function>
    Function entry(const char* name) const {
        void* symbol = dlsym(library_, name);
        if (symbol == nullptr) throw std::runtime_error(std::string("the CUDA driver has no ") + name);
        return reinterpret_cast<Function>(symbol);
    }

    void* library_ = nullptr;
    void* context_ = nullptr;
    std::vector<void*> pinned_, managed_;
};

void test_pinned_and_managed_memory_run(void**) {
    guarded([] {
        Session& s = session();
        GpuCase c(*s.runtime, small_shape(kBf16));
        assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
        const std::vector<uint8_t> device_o = c.host.o;
        DriverMemory memory;
        void* const q = c.tq.data;
        void* const k = c.tk.data;
        c.tq.data = memory.pinned(c.host.q.data(), c.host.q.size());
        c.tk.data = memory.managed(c.host.k.data(), c.host.k.size());
        const zyfa_status st = c.run(s.cuda, *s.runtime, s.stream);
        std::printf("  pinned q, managed k -> %s %s\n", zyfa_status_string(st),
                    st == ZYFA_SUCCESS ? "" : zyfa_last_error_message());
        assert_int_equal(st, ZYFA_SUCCESS);
        assert_true(c.host.o == device_o);  // the same inputs, read in place: the same bits
        c.tq.data = q;
        c.tk.data = k;
    });
}

double median_us(std::vector<double>& seconds) {
    std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
    return seconds[seconds.size() / 2] * 1e6;
}

// The cost, printed (not asserted): locate_pointers over the problem's pointers, and one
// zyfa_attn_fwd's host time (which includes it), each the median of kTimedCalls calls.
void measure(const char* what, const CaseShape& shape) {
    Session& s = session();
    GpuCase c(*s.runtime, shape);
    assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
    const void* candidates[] = {c.tq.data,         c.tk.data,           c.tv.data,           c.to.data,
                                c.params.lse,      c.params.cu_seqlens_q, c.params.cu_seqlens_k, c.params.q_descale,
                                c.params.k_descale, c.params.v_descale};
    std::vector<const void*> pointers;
    for (const void* p : candidates)
        if (p != nullptr) pointers.push_back(p);
    std::vector<zyfa::gpu::PointerLocation> where(pointers.size());
    std::vector<double> seconds(kTimedCalls);
    using Clock = std::chrono::steady_clock;
    for (int i = 0; i < kTimedCalls; ++i) {
        const auto start = Clock::now();
        s.runtime->locate_pointers(pointers.data(), pointers.size(), where.data());
        seconds[i] = std::chrono::duration<double>(Clock::now() - start).count();
    }
    for (const zyfa::gpu::PointerLocation& w : where) {
        assert_int_equal(static_cast<int>(w.location), static_cast<int>(zyfa::gpu::MemoryLocation::ThisDevice));
    }
    const double check_us = median_us(seconds);
    for (int i = 0; i < kTimedCalls; ++i) {
        if (i % kCallsPerSync == 0) s.runtime->synchronize_stream(s.stream);  // untimed
        const auto start = Clock::now();
        const zyfa_status st = c.launch(s.cuda, s.stream);
        seconds[i] = std::chrono::duration<double>(Clock::now() - start).count();
        if (st != ZYFA_SUCCESS) {
            std::printf("  zyfa_attn_fwd: %s\n", zyfa_last_error_message());
            fail();
        }
    }
    s.runtime->synchronize_stream(s.stream);
    const double fwd_us = median_us(seconds);
    std::printf("pointer checks: %.3f us per call of %zu pointers; zyfa_attn_fwd host time %.3f us per call (%s, %s)\n",
                check_us, pointers.size(), fwd_us, what, s.runtime->device().name.c_str());
}

void test_measure_the_cost(void**) {
    guarded([] {
        measure("bf16 dense with lse", small_shape(kBf16));
        measure("e4m3fn lean packed, lse and descales", packed_shape(kE4m3fnLean));
    });
}

}  // namespace

int main(void) {
    if (const int rc = open_session_or_skip("gpu_host_pointers")) return rc;
    std::printf("pageable memory access (HMM/ATS): %s\n", pageable_accessible() ? "yes: host memory runs" : "no");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_tensors_and_lse),
        cmocka_unit_test(test_host_cu_seqlens_and_descales),
        cmocka_unit_test(test_pinned_and_managed_memory_run),
        cmocka_unit_test(test_measure_the_cost),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
