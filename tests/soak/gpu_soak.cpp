// GPU soak (issue 10, item 3): many launches of mixed attention problems on one CUDA context
// through the public API only, with device memory, host memory and results checked:
//   - device free memory (cuMemGetInfo) and process RSS do not grow after the warm-up launches
//     (zyfa_attn_fwd allocates nothing on the launch path);
//   - every problem's output and lse after the last launch are bitwise equal to its first launch
//     (no drift, no corruption between problems sharing the stream);
//   - every call returns SUCCESS and the stream synchronises without error.
//   soak_gpu [launches = 100000] [deadline seconds = 240]
// Device memory comes from the CUDA driver API loaded with dlopen (no CUDA headers or link
// dependency), as a serving stack would bring its own. Exits 77 (skipped) without libcuda, a
// device, or the CUDA backend in this build.
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "../concurrency/concurrency_problems.hpp"
#include "zyfa.h"

namespace {

constexpr int kSkip = 77;

// The few CUDA driver entry points used, by their ABI (cuda.h is not needed).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;

struct Driver {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
    CUresult (*cuMemFree)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
    CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
    CUresult (*cuMemGetInfo)(size_t*, size_t*);
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuStreamDestroy)(CUstream);
};

template <class F>
bool load(void* lib, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
}

bool load_driver(Driver& d) {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return false;
    return load(lib, "cuInit", d.cuInit) && load(lib, "cuDeviceGet", d.cuDeviceGet) &&
           load(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain) &&
           load(lib, "cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease) &&
           load(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent) && load(lib, "cuMemAlloc_v2", d.cuMemAlloc) &&
           load(lib, "cuMemFree_v2", d.cuMemFree) && load(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD) &&
           load(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH) && load(lib, "cuMemGetInfo_v2", d.cuMemGetInfo) &&
           load(lib, "cuStreamCreate", d.cuStreamCreate) && load(lib, "cuStreamSynchronize", d.cuStreamSynchronize) &&
           load(lib, "cuStreamDestroy_v2", d.cuStreamDestroy);
}

Driver g_cu;
int g_failures = 0;

#define CU_CHECK(call)                                                                  \
    do {                                                                                \
        const CUresult result_ = (call);                                                \
        if (result_ != 0) {                                                             \
            std::fprintf(stderr, "FAIL: %s returned CUDA error %d\n", #call, result_);  \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

long rss_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
    }
    return -1;
}

CUdeviceptr upload(const void* host, size_t bytes) {
    CUdeviceptr p = 0;
    CU_CHECK(g_cu.cuMemAlloc(&p, bytes > 0 ? bytes : 16));
    if (bytes > 0) CU_CHECK(g_cu.cuMemcpyHtoD(p, host, bytes));
    return p;
}

void* device(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

struct Shape {
    const char* name;
    zyfa_dtype dtype, out;
    zyfa_mask mask;
    zyfa_softmax softmax;
    int64_t batch, seq_q, seq_k, heads_q, heads_kv, dqk, dv;
    int32_t window_left;
    bool varlen, descales;
};

// A problem on the device: inputs uploaded once, its own output and lse.
struct DeviceProblem {
    Shape shape;
    zyfa_attn_params params{};
    zyfa_tensor q{}, k{}, v{}, o{};
    std::vector<CUdeviceptr> allocations;
    CUdeviceptr o_dev = 0, lse_dev = 0;
    size_t o_bytes = 0, lse_bytes = 0;
    std::vector<uint8_t> first_o, first_lse;

    explicit DeviceProblem(const Shape& s, uint32_t seed) : shape(s) {
        zyfa_attn_params_init(&params, sizeof params);
        params.mask = s.mask;
        params.softmax = s.softmax;
        params.batch = s.batch;
        params.seqlen_q = s.seq_q;
        params.seqlen_k = s.seq_k;
        params.heads_q = s.heads_q;
        params.heads_kv = s.heads_kv;
        params.head_dim_qk = s.dqk;
        params.head_dim_v = s.dv;
        params.window_left = s.window_left;
        int64_t rows_q = s.batch * s.seq_q, rows_k = s.batch * s.seq_k;
        if (s.varlen) {
            std::vector<int32_t> cu_q{0}, cu_k{0};
            for (int64_t b = 0; b < s.batch; ++b) {
                cu_q.push_back(cu_q.back() + static_cast<int32_t>(s.seq_q - 37 * b % s.seq_q));
                cu_k.push_back(cu_k.back() + static_cast<int32_t>(s.seq_k - 53 * b % s.seq_k));
            }
            rows_q = cu_q.back();
            rows_k = cu_k.back();
            params.cu_seqlens_q = static_cast<const int32_t*>(device(keep(upload(cu_q.data(), cu_q.size() * 4))));
            params.cu_seqlens_k = static_cast<const int32_t*>(device(keep(upload(cu_k.data(), cu_k.size() * 4))));
        }
        std::vector<uint8_t> host;
        auto tensor = [&](zyfa_dtype dtype, int64_t rows, int64_t heads, int64_t dim, uint32_t fill_seed) {
            zyfa_concurrency::fill(host, dtype, static_cast<size_t>(rows * heads * dim), fill_seed);
            zyfa_tensor t{};
            t.data = device(keep(upload(host.data(), host.size())));
            t.dtype = dtype;
            t.stride_head = dim;
            t.stride_seq = heads * dim;
            t.stride_batch = s.varlen ? 0 : (rows / s.batch) * heads * dim;
            return t;
        };
        q = tensor(s.dtype, rows_q, s.heads_q, s.dqk, seed + 1);
        k = tensor(s.dtype, rows_k, s.heads_kv, s.dqk, seed + 2);
        v = tensor(s.dtype, rows_k, s.heads_kv, s.dv, seed + 3);
        o_bytes = static_cast<size_t>(rows_q * s.heads_q * s.dv) * zyfa_concurrency::dtype_size(s.out);
        CU_CHECK(g_cu.cuMemAlloc(&o_dev, o_bytes));
        keep(o_dev);
        o = q;
        o.data = device(o_dev);
        o.dtype = s.out;
        o.stride_head = s.dv;
        o.stride_seq = s.heads_q * s.dv;
        o.stride_batch = s.varlen ? 0 : s.seq_q * s.heads_q * s.dv;
        lse_bytes = static_cast<size_t>(rows_q * s.heads_q) * sizeof(float);
        CU_CHECK(g_cu.cuMemAlloc(&lse_dev, lse_bytes));
        keep(lse_dev);
        params.lse = static_cast<float*>(device(lse_dev));
        if (s.descales) {
            std::vector<float> descale(static_cast<size_t>(s.batch * s.heads_kv), 0.75f);
            void* d = device(keep(upload(descale.data(), descale.size() * sizeof(float))));
            params.q_descale = params.k_descale = params.v_descale = static_cast<const float*>(d);
        }
    }

    CUdeviceptr keep(CUdeviceptr p) {
        allocations.push_back(p);
        return p;
    }

    void release() {
        for (CUdeviceptr p : allocations) g_cu.cuMemFree(p);
        allocations.clear();
    }

    void read_back(std::vector<uint8_t>& out, std::vector<uint8_t>& lse) const {
        out.resize(o_bytes);
        lse.resize(lse_bytes);
        CU_CHECK(g_cu.cuMemcpyDtoH(out.data(), o_dev, o_bytes));
        CU_CHECK(g_cu.cuMemcpyDtoH(lse.data(), lse_dev, lse_bytes));
    }
};

}  // namespace

int main(int argc, char** argv) {
    const long launches = argc > 1 ? std::atol(argv[1]) : 100000;
    const double deadline_s = argc > 2 ? std::atof(argv[2]) : 240.0;

    if (!load_driver(g_cu) || g_cu.cuInit(0) != 0) {
        std::printf("SKIP soak_gpu: no usable libcuda.so.1 (no NVIDIA driver on this machine)\n");
        return kSkip;
    }
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof options);
    options.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
    const zyfa_status created = zyfa_context_create(&options, &ctx);
    if (created == ZYFA_ERROR_NO_DEVICE || created == ZYFA_ERROR_NOT_SUPPORTED) {
        std::printf("SKIP soak_gpu: %s: %s\n", zyfa_status_string(created), zyfa_last_error_message());
        return kSkip;
    }
    if (created != ZYFA_SUCCESS) {
        std::printf("FAIL soak_gpu: zyfa_context_create(CUDA): %s\n", zyfa_last_error_message());
        return 1;
    }
    // The primary context of device 0: the one the CUDA runtime (and zyfa's backend) uses.
    CUdevice dev = 0;
    CUcontext cu_ctx = nullptr;
    CU_CHECK(g_cu.cuDeviceGet(&dev, 0));
    CU_CHECK(g_cu.cuDevicePrimaryCtxRetain(&cu_ctx, dev));
    CU_CHECK(g_cu.cuCtxSetCurrent(cu_ctx));
    CUstream stream = nullptr;
    CU_CHECK(g_cu.cuStreamCreate(&stream, 1 /* non-blocking */));

    const Shape shapes[] = {
        {"fp8 lean causal d128", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, ZYFA_SOFTMAX_LEAN, 2, 512, 512, 8, 8, 128, 128, -1, false, true},
        {"fp8 exact gqa d128", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_FP16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, ZYFA_SOFTMAX_EXACT, 1, 300, 700, 8, 2, 128, 128, -1, false, false},
        {"bf16 causal d128", ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, ZYFA_SOFTMAX_AUTO, 2, 384, 384, 4, 4, 128, 128, -1, false, false},
        {"fp16 no mask d64", ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32, ZYFA_MASK_NONE, ZYFA_SOFTMAX_AUTO, 1, 256, 320, 4, 4, 64, 64, -1, false, false},
        {"bf16 mla 192/128", ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, ZYFA_SOFTMAX_AUTO, 1, 256, 256, 4, 1, 192, 128, -1, false, false},
        {"bf16 varlen causal", ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, ZYFA_SOFTMAX_AUTO, 3, 200, 260, 4, 2, 128, 128, -1, true, false},
        {"fp8 windowed d64", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, ZYFA_SOFTMAX_AUTO, 1, 512, 512, 4, 4, 64, 64, 128, false, true},
        {"bf16 d256", ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, ZYFA_SOFTMAX_AUTO, 1, 128, 256, 2, 2, 256, 256, -1, false, false},
    };
    std::vector<DeviceProblem*> problems;
    uint32_t seed = 1;
    for (const Shape& s : shapes) {
        auto* p = new DeviceProblem(s, seed += 10);
        if (zyfa_attn_supported(ctx, &p->params, &p->q, &p->k, &p->v, &p->o) != ZYFA_SUCCESS) {
            std::printf("note: %s not supported here: %s\n", s.name, zyfa_last_error_message());
            p->release();
            delete p;
            continue;
        }
        problems.push_back(p);
    }
    if (problems.empty()) {
        std::printf("FAIL soak_gpu: the CUDA context supports none of the soak problems\n");
        return 1;
    }

    // First launch of each problem: the reference its later launches must reproduce bit for bit.
    for (DeviceProblem* p : problems) {
        if (zyfa_attn_fwd(ctx, &p->params, &p->q, &p->k, &p->v, &p->o, stream) != ZYFA_SUCCESS) {
            std::printf("FAIL soak_gpu: %s: %s\n", p->shape.name, zyfa_last_error_message());
            return 1;
        }
    }
    CU_CHECK(g_cu.cuStreamSynchronize(stream));
    for (DeviceProblem* p : problems) p->read_back(p->first_o, p->first_lse);

    // Warm-up, then the baselines for memory growth.
    for (int i = 0; i < 200; ++i) {
        DeviceProblem* p = problems[static_cast<size_t>(i) % problems.size()];
        zyfa_attn_fwd(ctx, &p->params, &p->q, &p->k, &p->v, &p->o, stream);
    }
    CU_CHECK(g_cu.cuStreamSynchronize(stream));
    size_t free_start = 0, total = 0;
    CU_CHECK(g_cu.cuMemGetInfo(&free_start, &total));
    const long rss_start = rss_kib();
    size_t free_min = free_start;
    long rss_max = rss_start;

    const auto begin = std::chrono::steady_clock::now();
    long done = 0;
    bool deadline_hit = false;
    for (; done < launches; ++done) {
        DeviceProblem* p = problems[static_cast<size_t>(done) % problems.size()];
        const zyfa_status st = zyfa_attn_fwd(ctx, &p->params, &p->q, &p->k, &p->v, &p->o, stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("FAIL soak_gpu: launch %ld (%s): %s\n", done, p->shape.name, zyfa_last_error_message());
            return 1;
        }
        if ((done + 1) % 10000 == 0) {
            CU_CHECK(g_cu.cuStreamSynchronize(stream));
            size_t free_now = 0;
            CU_CHECK(g_cu.cuMemGetInfo(&free_now, &total));
            if (free_now < free_min) free_min = free_now;
            const long rss = rss_kib();
            if (rss > rss_max) rss_max = rss;
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
            if (elapsed > deadline_s) {
                deadline_hit = true;
                ++done;
                break;
            }
        }
    }
    CU_CHECK(g_cu.cuStreamSynchronize(stream));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

    // No drift: the last result of every problem equals its first.
    std::vector<uint8_t> o, lse;
    for (DeviceProblem* p : problems) {
        p->read_back(o, lse);
        if (o != p->first_o || lse != p->first_lse) {
            std::printf("FAIL soak_gpu: %s: the result after %ld launches differs from the first launch\n",
                        p->shape.name, done);
            ++g_failures;
        }
    }
    size_t free_end = 0;
    CU_CHECK(g_cu.cuMemGetInfo(&free_end, &total));
    if (free_end < free_min) free_min = free_end;
    // Device memory is shared with any other process on the GPU; zyfa's launches allocate nothing,
    // so any drop beyond 2 MiB (driver bookkeeping) is counted as growth.
    const size_t kDeviceSlack = size_t{2} << 20;
    if (free_start - (free_min < free_start ? free_min : free_start) > kDeviceSlack) {
        std::printf("FAIL soak_gpu: device free memory fell by %zu bytes during the launches\n", free_start - free_min);
        ++g_failures;
    }
    // Host: the launch path allocates nothing either; 4 MiB absorbs allocator and driver noise.
    if (rss_max - rss_start > 4096) {
        std::printf("FAIL soak_gpu: RSS grew from %ld KiB to %ld KiB during the launches\n", rss_start, rss_max);
        ++g_failures;
    }
    std::printf("soak_gpu: %ld launches of %zu problems in %.1f s (%.0f launches/s)%s; device free memory %zu -> %zu "
                "MiB (min %zu), RSS %ld -> %ld KiB; results bitwise equal to the first launch: %s\n",
                done, problems.size(), seconds, static_cast<double>(done) / seconds,
                deadline_hit ? " [stopped at the deadline]" : "", free_start >> 20, free_end >> 20, free_min >> 20,
                rss_start, rss_max, g_failures == 0 ? "yes" : "NO");

    for (DeviceProblem* p : problems) {
        p->release();
        delete p;
    }
    g_cu.cuStreamDestroy(stream);
    zyfa_context_destroy(ctx);
    g_cu.cuDevicePrimaryCtxRelease(dev);
    return g_failures == 0 ? 0 : 1;
}
