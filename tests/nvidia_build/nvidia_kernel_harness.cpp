// A device check of the NVIDIA kernels without CMocka (the device machine has none): runs a set of
// attention problems through zyfa_attn_fwd on the CUDA backend and on the CPU backend (the bit-level
// model) and prints, per case, the max and RMS difference of O and lse and the fraction of
// bit-identical outputs. Exit status 1 when a case fails, 77 when there is no CUDA device.
// Build: links zyfa_internal (tests/nvidia_build/CMakeLists.txt: target nvidia_kernel_harness).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/fp8_e4m3.h"
#include "common/half_types.h"
#include "cuda/cuda_runtime.hpp"
#include "zyfa.h"

namespace {

struct Case {
    const char* name;
    zyfa_dtype in;
    zyfa_dtype out;
    zyfa_softmax softmax;
    zyfa_mask mask;
    int batch, sq, sk, hq, hkv, dqk, dv;
    int window_left, window_right;
    bool varlen;
    bool descales;
};

size_t dtype_bytes(zyfa_dtype d) { return d == ZYFA_DTYPE_FP32 ? 4 : (d == ZYFA_DTYPE_FP8_E4M3FN ? 1 : 2); }

void store(std::vector<uint8_t>& buf, zyfa_dtype d, size_t i, float x) {
    using namespace zyfa::numerics;
    if (d == ZYFA_DTYPE_FP8_E4M3FN) buf[i] = fp8_encode(x, Fp8Format::E4M3FN);
    else if (d == ZYFA_DTYPE_BF16) { uint16_t h = float_to_bf16(x); std::memcpy(&buf[2 * i], &h, 2); }
    else if (d == ZYFA_DTYPE_FP16) { uint16_t h = float_to_fp16(x); std::memcpy(&buf[2 * i], &h, 2); }
    else std::memcpy(&buf[4 * i], &x, 4);
}
float load(const std::vector<uint8_t>& buf, zyfa_dtype d, size_t i) {
    using namespace zyfa::numerics;
    uint16_t h;
    float x;
    if (d == ZYFA_DTYPE_FP8_E4M3FN) return fp8_decode(buf[i], Fp8Format::E4M3FN);
    if (d == ZYFA_DTYPE_FP32) { std::memcpy(&x, &buf[4 * i], 4); return x; }
    std::memcpy(&h, &buf[2 * i], 2);
    return d == ZYFA_DTYPE_BF16 ? bf16_to_float(h) : fp16_to_float(h);
}

struct Host {
    std::vector<uint8_t> q, k, v, o;
    std::vector<float> lse, qd, kd, vd;
    std::vector<int32_t> cu_q, cu_k;
};

int run_case(const Case& c, zyfa_context* gpu, zyfa_context* cpu, zyfa::gpu::GpuRuntime& rt, std::mt19937& rng) {
    std::vector<int32_t> lens_q(c.batch, c.sq), lens_k(c.batch, c.sk);
    if (c.varlen) {
        std::uniform_int_distribution<int> lq(1, c.sq), lk(1, c.sk);
        for (int b = 0; b < c.batch; ++b) { lens_q[b] = lq(rng); lens_k[b] = lk(rng); }
        lens_q[0] = c.sq;
        lens_k[0] = c.sk;
    }
    Host h;
    h.cu_q.assign(1, 0);
    h.cu_k.assign(1, 0);
    for (int b = 0; b < c.batch; ++b) { h.cu_q.push_back(h.cu_q.back() + lens_q[b]); h.cu_k.push_back(h.cu_k.back() + lens_k[b]); }
    const int64_t rows_q = c.varlen ? h.cu_q.back() : int64_t(c.batch) * c.sq;
    const int64_t rows_k = c.varlen ? h.cu_k.back() : int64_t(c.batch) * c.sk;
    const size_t nq = rows_q * c.hq * c.dqk, nk = rows_k * c.hkv * c.dqk, nv = rows_k * c.hkv * c.dv, no = rows_q * c.hq * c.dv;
    const size_t eb = dtype_bytes(c.in);
    h.q.resize(nq * eb); h.k.resize(nk * eb); h.v.resize(nv * eb); h.o.resize(no * dtype_bytes(c.out));
    std::normal_distribution<float> g(0.0f, 1.0f);
    const float amp = c.in == ZYFA_DTYPE_FP8_E4M3FN ? 24.0f : 1.0f;  // FP8: use the e4m3 range; descales undo it
    for (size_t i = 0; i < nq; ++i) store(h.q, c.in, i, amp * g(rng) * (i % 7 == 0 ? 2.5f : 1.0f));
    for (size_t i = 0; i < nk; ++i) store(h.k, c.in, i, amp * g(rng));
    for (size_t i = 0; i < nv; ++i) store(h.v, c.in, i, amp * g(rng));
    const size_t nd = size_t(c.batch) * c.hkv;
    std::uniform_real_distribution<float> ud(0.5f / amp, 1.5f / amp);
    for (size_t i = 0; i < nd; ++i) { h.qd.push_back(ud(rng)); h.kd.push_back(ud(rng)); h.vd.push_back(ud(rng)); }
    const size_t nlse = size_t(rows_q) * c.hq;
    h.lse.assign(nlse, 0.0f);

    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = c.mask; p.batch = c.batch; p.seqlen_q = c.sq; p.seqlen_k = c.sk; p.heads_q = c.hq; p.heads_kv = c.hkv;
    p.head_dim_qk = c.dqk; p.head_dim_v = c.dv; p.softmax = c.softmax; p.window_left = c.window_left; p.window_right = c.window_right;
    auto view = [&](void* data, zyfa_dtype d, int heads, int dim, int seq) {
        zyfa_tensor t; std::memset(&t, 0, sizeof t);
        t.data = data; t.dtype = d; t.stride_head = dim; t.stride_seq = int64_t(heads) * dim;
        t.stride_batch = c.varlen ? 0 : int64_t(seq) * heads * dim;
        return t;
    };
    // CPU
    zyfa_attn_params pc = p;
    if (c.varlen) { pc.cu_seqlens_q = h.cu_q.data(); pc.cu_seqlens_k = h.cu_k.data(); }
    if (c.descales) { pc.q_descale = h.qd.data(); pc.k_descale = h.kd.data(); pc.v_descale = h.vd.data(); }
    pc.lse = h.lse.data();
    zyfa_tensor tq = view(h.q.data(), c.in, c.hq, c.dqk, c.sq), tk = view(h.k.data(), c.in, c.hkv, c.dqk, c.sk),
                tv = view(h.v.data(), c.in, c.hkv, c.dv, c.sk), to = view(h.o.data(), c.out, c.hq, c.dv, c.sq);
    zyfa_status st = zyfa_attn_fwd(cpu, &pc, &tq, &tk, &tv, &to, nullptr);
    if (st != ZYFA_SUCCESS) { std::printf("FAIL %s: CPU: %s\n", c.name, zyfa_last_error_message()); return 1; }
    // GPU
    auto up = [&](const void* src, size_t bytes) { void* d = rt.malloc_device(bytes ? bytes : 1); if (bytes) rt.copy_to_device(d, src, bytes); return d; };
    void* dq = up(h.q.data(), h.q.size()); void* dk = up(h.k.data(), h.k.size()); void* dv = up(h.v.data(), h.v.size());
    void* dout = rt.malloc_device(h.o.size()); rt.fill_device(dout, 0xFF, h.o.size());
    void* dlse = rt.malloc_device(nlse * 4); rt.fill_device(dlse, 0xFF, nlse * 4);
    void* dcq = up(h.cu_q.data(), h.cu_q.size() * 4); void* dck = up(h.cu_k.data(), h.cu_k.size() * 4);
    void* dqd = up(h.qd.data(), nd * 4); void* dkd = up(h.kd.data(), nd * 4); void* dvd = up(h.vd.data(), nd * 4);
    zyfa_attn_params pg = p;
    if (c.varlen) { pg.cu_seqlens_q = static_cast<int32_t*>(dcq); pg.cu_seqlens_k = static_cast<int32_t*>(dck); }
    if (c.descales) { pg.q_descale = static_cast<float*>(dqd); pg.k_descale = static_cast<float*>(dkd); pg.v_descale = static_cast<float*>(dvd); }
    pg.lse = static_cast<float*>(dlse);
    zyfa_tensor gq = view(dq, c.in, c.hq, c.dqk, c.sq), gk = view(dk, c.in, c.hkv, c.dqk, c.sk),
                gv = view(dv, c.in, c.hkv, c.dv, c.sk), go = view(dout, c.out, c.hq, c.dv, c.sq);
    const char* kname = zyfa_attn_kernel_name(gpu, &pg, &gq, &gk, &gv, &go);
    st = zyfa_attn_fwd(gpu, &pg, &gq, &gk, &gv, &go, nullptr);
    int failed = 0;
    if (st != ZYFA_SUCCESS) { std::printf("FAIL %s: GPU: %s: %s\n", c.name, zyfa_status_string(st), zyfa_last_error_message()); failed = 1; }
    std::vector<uint8_t> o(h.o.size()); std::vector<float> lse(nlse);
    if (!failed) {
        rt.synchronize_device();
        rt.copy_to_host(o.data(), dout, o.size());
        rt.copy_to_host(lse.data(), dlse, nlse * 4);
        double max_err = 0, sum2 = 0, ref2 = 0, lse_max = 0; size_t same = 0, lse_same = 0, bad = 0;
        for (size_t i = 0; i < no; ++i) {
            const float a = load(o, c.out, i), b = load(h.o, c.out, i);
            if (!std::isfinite(a)) ++bad;
            const double d = std::fabs(double(a) - b);
            max_err = std::max(max_err, d); sum2 += d * d; ref2 += double(b) * b;
            same += std::memcmp(&o[i * dtype_bytes(c.out)], &h.o[i * dtype_bytes(c.out)], dtype_bytes(c.out)) == 0;
        }
        for (size_t i = 0; i < nlse; ++i) {
            if (std::isinf(h.lse[i]) && lse[i] == h.lse[i]) { ++lse_same; continue; }
            const double d = std::fabs(double(lse[i]) - h.lse[i]);
            if (!(d == d)) ++bad;
            lse_max = std::max(lse_max, d); lse_same += lse[i] == h.lse[i];
        }
        const double rel_rms = std::sqrt(sum2 / std::max(ref2, 1e-30));
        // Pass bar: the only differences from the model come from MMA/row-sum accumulation order
        // and exp2f/log2f ulps; they move O by a few output ulps (fp8: a few P-rounding steps).
        const double tol = c.in == ZYFA_DTYPE_FP8_E4M3FN ? 2e-2 : 1e-2;
        failed = bad > 0 || rel_rms > tol || lse_max > 1e-3;
        std::printf("%s %-28s %-34s O: max|d| %.3g rel-rms %.3g bit-identical %.1f%%  lse: max|d| %.3g identical %.1f%%  nonfinite %zu\n",
                    failed ? "FAIL" : "ok  ", c.name, kname ? kname : "?", max_err, rel_rms, 100.0 * same / no, lse_max,
                    100.0 * lse_same / nlse, bad);
    }
    for (void* d : {dq, dk, dv, dout, dlse, dcq, dck, dqd, dkd, dvd}) rt.free_device(d);
    return failed;
}

}  // namespace

int main() {
    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* gpu = nullptr;
    zyfa_status st = zyfa_context_create(&opts, &gpu);
    if (st != ZYFA_SUCCESS) {
        std::printf("SKIP: no CUDA context: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        return 77;
    }
    std::printf("device: %s\n", zyfa_context_device_name(gpu));
    opts.backend = ZYFA_BACKEND_CPU;
    zyfa_context* cpu = nullptr;
    if (zyfa_context_create(&opts, &cpu) != ZYFA_SUCCESS) return 1;
    auto rt = zyfa::cuda::open_cuda_runtime(0);
    const zyfa_dtype B = ZYFA_DTYPE_BF16, H = ZYFA_DTYPE_FP16, F8 = ZYFA_DTYPE_FP8_E4M3FN, F32 = ZYFA_DTYPE_FP32;
    const zyfa_softmax E = ZYFA_SOFTMAX_EXACT, L = ZYFA_SOFTMAX_LEAN;
    const zyfa_mask N = ZYFA_MASK_NONE, C = ZYFA_MASK_CAUSAL, BR = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    const Case cases[] = {
        {"bf16 causal d128 gqa", B, B, E, C, 2, 300, 300, 4, 2, 128, 128, -1, -1, false, false},
        {"fp16 none d64 sq<sk", H, F32, E, N, 2, 100, 200, 3, 3, 64, 64, -1, -1, false, false},
        {"bf16 br d256 window", B, H, E, BR, 1, 77, 333, 2, 1, 256, 256, 50, -1, false, false},
        {"bf16 causal 192/128 mqa", B, B, E, C, 1, 257, 257, 8, 1, 192, 128, -1, -1, false, false},
        {"bf16 varlen causal d128", B, F32, E, C, 3, 200, 200, 2, 2, 128, 128, -1, -1, true, false},
        {"fp16 window l/r d128", H, H, E, N, 1, 190, 190, 2, 2, 128, 128, 33, 17, false, false},
        {"e4m3 exact causal d128", F8, B, E, C, 2, 300, 300, 4, 2, 128, 128, -1, -1, false, true},
        {"e4m3 lean causal d128", F8, B, L, C, 2, 300, 300, 4, 2, 128, 128, -1, -1, false, true},
        {"e4m3 lean none d64 varlen", F8, F32, L, N, 3, 150, 260, 2, 1, 64, 64, -1, -1, true, true},
        {"e4m3 exact d256 window", F8, H, E, C, 1, 200, 200, 2, 2, 256, 256, 70, -1, false, true},
        {"e4m3 lean 192/128 br", F8, B, L, BR, 1, 130, 400, 4, 2, 192, 128, -1, -1, false, true},
        {"e4m3 lean d256 long", F8, F32, L, C, 1, 1100, 1100, 1, 1, 256, 256, -1, -1, false, true},
        {"bf16 br sq>sk (empty rows)", B, F32, E, BR, 1, 200, 90, 2, 2, 64, 64, -1, -1, false, false},
    };
    std::mt19937 rng(1234);
    int failures = 0;
    for (const Case& c : cases) failures += run_case(c, gpu, cpu, *rt, rng);
    std::printf("%d of %zu cases failed\n", failures, sizeof cases / sizeof cases[0]);
    zyfa_context_destroy(cpu);
    zyfa_context_destroy(gpu);
    return failures ? 1 : 0;
}
