// zyfa-check: run a grid of FP8 and BF16 attention cases on the best GPU backend (HIP, then CUDA),
// compare each with the CPU backend, and print the time and TFLOP/s of each beside the emulator's
// estimate for that kernel on that arch (check_estimates.hpp), then the block to send back.
//   zyfa-check [--backend hip|cuda] [--device N] [--tiny] [--repeats N] [--require-gpu] [--estimates] [--help]
// Exit status: 0 every case within tolerance (or --help), 1 a case failed (wrong numbers, an
// error, or NOT_SUPPORTED for a case zyfa claims to support), 2 bad options, 77 no GPU backend on
// this machine (1 with --require-gpu, as CI runs it on the HIP stand-in, where a missing backend
// is a failure).
//
// The CPU comparison of a full-size case runs on a slice of it (the first sequence and the first
// kv head with its query heads; all of a varlen batch), since the CPU backend is a reference, not
// a fast path: the slice is the same problem with fewer heads, so the GPU's values for those
// heads must match it. --tiny compares everything.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check_cases.hpp"
#include "check_estimates.hpp"
#include "check_tolerances.hpp"
#include "core/validate.hpp"
#include "cpu/tensor_access.hpp"
#include "cuda/cuda_runtime.hpp"
#include "gpu/gpu_runtime.hpp"
#include "hip/hip_runtime.hpp"
#include "zyfa.h"

namespace {

using zyfa::gpu::GpuRuntime;
using zyfa_check::CheckCase;

constexpr int kSkipExitCode = 77;

struct Options {
    zyfa_backend backend = ZYFA_BACKEND_AUTO;  // AUTO: HIP, then CUDA
    int device = 0;
    bool tiny = false;
    int repeats = 5;
    bool require_gpu = false;
    bool estimates = false;
};

const char kUsage[] =
    "usage: zyfa-check [--backend hip|cuda] [--device N] [--tiny] [--repeats N] [--require-gpu] [--estimates]\n"
    "                  [--help]\n"
    "\n"
    "Runs a grid of FP8 and BF16 attention cases on the best GPU backend (HIP, then CUDA), compares\n"
    "each with the CPU backend and prints its time and TFLOP/s, one Markdown table row per case,\n"
    "beside the TFLOP/s that this project's AMD emulator estimates for the same kernel at the\n"
    "device's reported clock (AMD only; a model, not a measurement). Ends with the commands to run\n"
    "to send the results back.\n"
    "\n"
    "options:\n"
    "  --backend hip|cuda  use this GPU backend only (default: HIP, then CUDA)\n"
    "  --device N          device index (default 0)\n"
    "  --tiny              small cases, each compared with the CPU backend in full\n"
    "  --repeats N         timed launches per case after one warm-up; the median is shown (default 5)\n"
    "  --require-gpu       exit 1 instead of 77 when there is no GPU backend\n"
    "  --estimates         print the emulator's estimates table (every AMD kernel) and exit\n"
    "  --help              this text\n"
    "\n"
    "exit status: 0 all cases passed, 1 a case failed, 2 bad options, 77 no GPU backend here.\n";

enum class Parsed { run, help, bad };

// This run's command line as a shell would take it back: arguments other than plain words in
// single quotes, so the send-back block repeats exactly what the user ran.
std::string invocation(int argc, char** argv) {
    std::string line;
    for (int i = 0; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                  "0123456789_-./=:+,@%") == std::string::npos;
        std::string quoted = "'";
        for (char ch : arg) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
        line += (i ? " " : "") + (plain ? arg : quoted + "'");
    }
    return line;
}

// Unknown flags and bad values are reported on stderr (exit 2); --help goes to stdout (exit 0).
Parsed parse(int argc, char** argv, Options& o) {
    auto bad = [](const std::string& why) {
        std::fprintf(stderr, "zyfa-check: %s (see --help)\n", why.c_str());
        return Parsed::bad;
    };
    auto to_int = [](const std::string& text, int& value) {
        char* end = nullptr;
        const long parsed = std::strtol(text.c_str(), &end, 10);
        if (text.empty() || *end != '\0' || parsed < 0 || parsed > 1000000) return false;
        value = static_cast<int>(parsed);
        return true;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--help" || arg == "-h") {
            return Parsed::help;
        } else if (arg == "--tiny") {
            o.tiny = true;
        } else if (arg == "--require-gpu") {
            o.require_gpu = true;
        } else if (arg == "--estimates") {
            o.estimates = true;
        } else if ((arg == "--backend" || arg == "--device" || arg == "--repeats") && !has_value) {
            return bad(arg + " needs a value");
        } else if (arg == "--backend") {
            const std::string b = argv[++i];
            if (b != "hip" && b != "cuda") return bad("--backend: '" + b + "' is not one of hip|cuda");
            o.backend = b == "hip" ? ZYFA_BACKEND_HIP : ZYFA_BACKEND_CUDA;
        } else if (arg == "--device") {
            if (!to_int(argv[++i], o.device)) return bad("--device: '" + std::string(argv[i]) + "' is not an index");
        } else if (arg == "--repeats") {
            if (!to_int(argv[++i], o.repeats) || o.repeats < 1)
                return bad("--repeats: '" + std::string(argv[i]) + "' is not a count from 1");
        } else {
            return bad("unknown option '" + arg + "'");
        }
    }
    return Parsed::run;
}

// Device memory owned for one case.
class DeviceMemory {
public:
    explicit DeviceMemory(GpuRuntime& rt) : rt_(rt) {}
    ~DeviceMemory() {
        for (void* p : allocations_) rt_.free_device(p);
    }
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    template <class T>
    T* upload(const std::vector<T>& host) {
        if (host.empty()) return nullptr;
        void* p = rt_.malloc_device(host.size() * sizeof(T));
        allocations_.push_back(p);
        rt_.copy_to_device(p, host.data(), host.size() * sizeof(T));
        return static_cast<T*>(p);
    }

private:
    GpuRuntime& rt_;
    std::vector<void*> allocations_;
};

// The host side of one case: inputs, the request, and room for the outputs. Tensors are
// [batch, seq, heads, dim], or [total rows, heads, dim] when varlen.
struct HostCase {
    CheckCase c;
    int64_t rows_q = 0, rows_k = 0;
    std::vector<uint8_t> q, k, v, o;
    std::vector<float> q_descale, k_descale, v_descale, lse;
    std::vector<int32_t> cu_q, cu_k;
    zyfa_attn_params params;
    zyfa_tensor tq, tk, tv, to;

    static zyfa_tensor view(zyfa_dtype dtype, int64_t seqlen, int64_t heads, int64_t dim, bool varlen) {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof t);
        t.dtype = dtype;
        t.stride_head = dim;
        t.stride_seq = heads * dim;
        t.stride_batch = varlen ? 0 : seqlen * heads * dim;
        return t;
    }

    explicit HostCase(const CheckCase& check) : c(check) {
        const bool varlen = !c.lengths_q.empty();
        rows_q = c.batch * c.seqlen_q;
        rows_k = c.batch * c.seqlen_k;
        if (varlen) {
            cu_q = {0};
            cu_k = {0};
            for (size_t b = 0; b < c.lengths_q.size(); ++b) {
                cu_q.push_back(cu_q.back() + c.lengths_q[b]);
                cu_k.push_back(cu_k.back() + c.lengths_k[b]);
            }
            rows_q = cu_q.back();
            rows_k = cu_k.back();
        }
        std::mt19937_64 rng(20261129);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        auto fill = [&](std::vector<uint8_t>& buffer, int64_t count) {
            buffer.assign(static_cast<size_t>(count) * zyfa::cpu::dtype_size(c.dtype), 0);
            for (int64_t i = 0; i < count; ++i) zyfa::cpu::store_from_float(buffer.data(), c.dtype, i, normal(rng));
        };
        fill(q, rows_q * c.heads_q * c.head_dim_qk);
        fill(k, rows_k * c.heads_kv * c.head_dim_qk);
        fill(v, rows_k * c.heads_kv * c.head_dim_v);
        o.assign(static_cast<size_t>(rows_q * c.heads_q * c.head_dim_v) * zyfa::cpu::dtype_size(c.out_dtype), 0);
        lse.assign(static_cast<size_t>(rows_q * c.heads_q), 0.0f);
        if (c.dtype != ZYFA_DTYPE_BF16) {
            std::uniform_real_distribution<float> uniform(0.5f, 1.5f);
            for (int64_t i = 0; i < c.batch * c.heads_kv; ++i) {
                q_descale.push_back(uniform(rng));
                k_descale.push_back(uniform(rng));
                v_descale.push_back(uniform(rng));
            }
        }
        zyfa_attn_params_init(&params, sizeof params);
        params.mask = c.mask;
        params.softmax = c.softmax;
        params.batch = c.batch;
        params.seqlen_q = c.seqlen_q;
        params.seqlen_k = c.seqlen_k;
        params.heads_q = c.heads_q;
        params.heads_kv = c.heads_kv;
        params.head_dim_qk = c.head_dim_qk;
        params.head_dim_v = c.head_dim_v;
        tq = view(c.dtype, c.seqlen_q, c.heads_q, c.head_dim_qk, varlen);
        tk = view(c.dtype, c.seqlen_k, c.heads_kv, c.head_dim_qk, varlen);
        tv = view(c.dtype, c.seqlen_k, c.heads_kv, c.head_dim_v, varlen);
        to = view(c.out_dtype, c.seqlen_q, c.heads_q, c.head_dim_v, varlen);
    }
};

// The slice of `full` the CPU backend computes: sequences [0, batch) and kv heads [0, heads_kv)
// with their query heads, reading the same host buffers through the same strides.
struct CpuSlice {
    int64_t batch, heads_kv, heads_q;
    std::vector<uint8_t> o;
    std::vector<float> lse, q_descale, k_descale, v_descale;
};

CpuSlice slice_of(const HostCase& h, bool everything) {
    CpuSlice s;
    const bool varlen = !h.c.lengths_q.empty();
    s.batch = everything || varlen ? h.c.batch : 1;
    s.heads_kv = everything ? h.c.heads_kv : 1;
    s.heads_q = s.heads_kv * (h.c.heads_q / h.c.heads_kv);
    s.o.assign(h.o.size(), 0);
    const int64_t rows_q = varlen ? h.rows_q : s.batch * h.c.seqlen_q;
    s.lse.assign(static_cast<size_t>(rows_q * s.heads_q), 0.0f);
    for (int64_t b = 0; b < s.batch && !h.q_descale.empty(); ++b) {
        for (int64_t g = 0; g < s.heads_kv; ++g) {
            const size_t from = static_cast<size_t>(b * h.c.heads_kv + g);
            s.q_descale.push_back(h.q_descale[from]);
            s.k_descale.push_back(h.k_descale[from]);
            s.v_descale.push_back(h.v_descale[from]);
        }
    }
    return s;
}

zyfa_status run_cpu_slice(zyfa_context* cpu, HostCase& h, CpuSlice& s) {
    zyfa_attn_params p = h.params;
    p.batch = s.batch;
    p.heads_q = s.heads_q;
    p.heads_kv = s.heads_kv;
    p.cu_seqlens_q = h.cu_q.empty() ? nullptr : h.cu_q.data();
    p.cu_seqlens_k = h.cu_k.empty() ? nullptr : h.cu_k.data();
    p.q_descale = s.q_descale.empty() ? nullptr : s.q_descale.data();
    p.k_descale = s.k_descale.empty() ? nullptr : s.k_descale.data();
    p.v_descale = s.v_descale.empty() ? nullptr : s.v_descale.data();
    p.lse = s.lse.data();
    zyfa_tensor q = h.tq, k = h.tk, v = h.tv, o = h.to;
    q.data = h.q.data();
    k.data = h.k.data();
    v.data = h.v.data();
    o.data = s.o.data();
    return zyfa_attn_fwd(cpu, &p, &q, &k, &v, &o, nullptr);
}

struct Comparison {
    double rel_rms = 0.0;
    double lse_max_abs = 0.0;
    int64_t lse_infinity_mismatch = 0;
};

// O and lse of the GPU against the CPU slice, over the slice's rows and heads.
Comparison compare(const HostCase& h, const CpuSlice& s) {
    Comparison r;
    const CheckCase& c = h.c;
    const bool varlen = !c.lengths_q.empty();
    double err2 = 0.0, ref2 = 0.0;
    for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t first = varlen ? h.cu_q[static_cast<size_t>(b)] : b * c.seqlen_q;
        const int64_t length = varlen ? c.lengths_q[static_cast<size_t>(b)] : c.seqlen_q;
        for (int64_t row = 0; row < length; ++row) {
            for (int64_t head = 0; head < s.heads_q; ++head) {
                const int64_t base = ((first + row) * c.heads_q + head) * c.head_dim_v;
                for (int64_t d = 0; d < c.head_dim_v; ++d) {
                    const double g = zyfa::cpu::load_as_float(h.o.data(), c.out_dtype, base + d);
                    const double m = zyfa::cpu::load_as_float(s.o.data(), c.out_dtype, base + d);
                    err2 += (g - m) * (g - m);
                    ref2 += m * m;
                }
                // lse: [batch, heads_q, seqlen_q], or [heads_q, total rows] when varlen.
                const size_t gi = static_cast<size_t>(varlen ? head * h.rows_q + first + row
                                                             : (b * c.heads_q + head) * c.seqlen_q + row);
                const size_t ci = static_cast<size_t>(varlen ? head * h.rows_q + first + row
                                                             : (b * s.heads_q + head) * c.seqlen_q + row);
                const double lg = h.lse[gi], lc = s.lse[ci];
                if (std::isinf(lg) || std::isinf(lc) || std::isnan(lg)) {
                    r.lse_infinity_mismatch += !(lg == lc);
                } else {
                    r.lse_max_abs = std::max(r.lse_max_abs, std::fabs(lg - lc));
                }
            }
        }
    }
    if (std::isnan(err2)) err2 = INFINITY;
    r.rel_rms = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    return r;
}

// Runs one case: launches (1 warm-up + repeats, timed with events), checks, prints one row.
// Returns true when it passed.
bool run_case(zyfa_context* gpu, zyfa_context* cpu, GpuRuntime& rt, zyfa::gpu::StreamHandle stream,
              const CheckCase& c, const Options& opts) {
    HostCase h(c);
    const std::string label = c.name + " | " + zyfa_check::shape_label(c);
    DeviceMemory memory(rt);
    zyfa_attn_params params = h.params;
    zyfa_tensor q = h.tq, k = h.tk, v = h.tv, o = h.to;
    q.data = memory.upload(h.q);
    k.data = memory.upload(h.k);
    v.data = memory.upload(h.v);
    uint8_t* o_device = memory.upload(h.o);
    o.data = o_device;
    float* lse_device = memory.upload(h.lse);
    params.lse = lse_device;
    params.q_descale = memory.upload(h.q_descale);
    params.k_descale = memory.upload(h.k_descale);
    params.v_descale = memory.upload(h.v_descale);
    params.cu_seqlens_q = memory.upload(h.cu_q);
    params.cu_seqlens_k = memory.upload(h.cu_k);

    const char* kernel = zyfa_attn_kernel_name(gpu, &params, &q, &k, &v, &o);
    if (kernel == nullptr) {
        std::printf("| %s | - | - | - | - | - | - | - | FAIL: not supported: %s |\n", label.c_str(),
                    zyfa_last_error_message());
        return false;
    }
    zyfa_status st = zyfa_attn_fwd(gpu, &params, &q, &k, &v, &o, stream);  // warm-up, and the checked output
    if (st == ZYFA_SUCCESS) {
        rt.synchronize_stream(stream);
        rt.copy_to_host(h.o.data(), o_device, h.o.size());
        rt.copy_to_host(h.lse.data(), lse_device, h.lse.size() * sizeof(float));
    }
    std::vector<float> times_ms;
    zyfa::gpu::EventHandle start = rt.create_event(), end = rt.create_event();
    for (int i = 0; i < opts.repeats && st == ZYFA_SUCCESS; ++i) {
        rt.record_event(start, stream);
        st = zyfa_attn_fwd(gpu, &params, &q, &k, &v, &o, stream);
        rt.record_event(end, stream);
        if (st == ZYFA_SUCCESS) times_ms.push_back(rt.elapsed_ms(start, end));
    }
    rt.destroy_event(start);
    rt.destroy_event(end);
    if (st != ZYFA_SUCCESS) {
        std::printf("| %s | %s | - | - | - | - | - | - | FAIL: %s: %s |\n", label.c_str(), kernel, zyfa_status_string(st),
                    zyfa_last_error_message());
        return false;
    }
    std::sort(times_ms.begin(), times_ms.end());
    const double median_ms = times_ms[times_ms.size() / 2];
    const double flops = 2.0 * static_cast<double>(c.head_dim_qk + c.head_dim_v) *
                         static_cast<double>(zyfa_check::visible_pairs(c)) * static_cast<double>(c.heads_q);
    const double tflops = median_ms > 0.0 ? flops / (median_ms * 1e-3) / 1e12 : 0.0;

    CpuSlice slice = slice_of(h, opts.tiny);
    const auto cpu_start = std::chrono::steady_clock::now();
    st = run_cpu_slice(cpu, h, slice);
    const double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - cpu_start).count();
    if (st != ZYFA_SUCCESS) {
        std::printf("| %s | %s | - | - | - | - | - | - | FAIL: CPU backend: %s |\n", label.c_str(), kernel,
                    zyfa_last_error_message());
        return false;
    }
    const Comparison d = compare(h, slice);
    const double o_tol = zyfa_check::o_tolerance(c.dtype, c.out_dtype);
    const double lse_tol = zyfa_check::lse_tolerance(c.softmax);
    const bool pass = d.rel_rms <= o_tol && d.lse_max_abs <= lse_tol && d.lse_infinity_mismatch == 0;
    char tflops_text[32], estimate_text[64] = "no estimate", ratio_text[32] = "-";
    std::snprintf(tflops_text, sizeof tflops_text, tflops >= 1.0 ? "%.1f" : "%.2g", tflops);
    const zyfa::gpu::DeviceInfo& device = rt.device();
    const zyfa_check::Estimate est =
        zyfa_check::estimate(device.arch, kernel, c.dtype, device.multiprocessors, device.clock_khz);
    if (est.present) {
        std::snprintf(estimate_text, sizeof estimate_text, "%.0f (%.0f%% MFMA busy)", est.tflops, est.busy * 100.0);
        const double ratio = 100.0 * tflops / est.tflops;  // a percentage; tiny on the emulator
        std::snprintf(ratio_text, sizeof ratio_text, ratio >= 1.0 ? "%.0f%%" : "%.2g%%", ratio);
    } else {
        std::snprintf(estimate_text, sizeof estimate_text, "%s", est.why_none.c_str());
    }
    std::printf("| %s | %s | %.3f | %s | %s | %s | %.2e (%.0e) | %.1e (%.0e)%s | %s (CPU slice: %lld of %lld heads, "
                "%.1f s) |\n",
                label.c_str(), kernel, median_ms, tflops_text, estimate_text, ratio_text, d.rel_rms, o_tol,
                d.lse_max_abs, lse_tol,
                d.lse_infinity_mismatch ? " -inf mismatch" : "", pass ? "ok" : "FAIL", (long long)slice.heads_q,
                (long long)c.heads_q, cpu_s);
    std::fflush(stdout);
    return pass;
}

}  // namespace

int main(int argc, char** argv) {
    // Line-buffered into a pipe too: rows show as cases finish, not at exit.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Options opts;
    switch (parse(argc, argv, opts)) {
        case Parsed::help: std::fputs(kUsage, stdout); return 0;
        case Parsed::bad: return 2;
        case Parsed::run: break;
    }
    if (opts.estimates) {
        zyfa_check::print_estimates_table();
        return 0;
    }
    // Printed at every end of a run that tried a device, the SKIP included: "found no GPU" is a
    // result worth sending back too. Only a run on CUDA asks for nvidia-smi.
    const std::string command = invocation(argc, argv);
    auto send_back = [&](bool amd) { std::printf("\n%s", zyfa_check::send_back_block(command, amd).c_str()); };
    zyfa_context* gpu = nullptr;
    std::string why_none;
    for (zyfa_backend backend : {ZYFA_BACKEND_HIP, ZYFA_BACKEND_CUDA}) {
        if (opts.backend != ZYFA_BACKEND_AUTO && opts.backend != backend) continue;
        zyfa_context_options o;
        zyfa_context_options_init(&o, sizeof o);
        o.backend = backend;
        o.device = opts.device;
        if (zyfa_context_create(&o, &gpu) == ZYFA_SUCCESS) break;
        why_none += std::string(why_none.empty() ? "" : "; ") + (backend == ZYFA_BACKEND_HIP ? "HIP: " : "CUDA: ") +
                    zyfa_last_error_message();
        gpu = nullptr;
    }
    if (gpu == nullptr) {
        std::printf("%s zyfa-check: no GPU backend here (%s)\n", opts.require_gpu ? "FAIL" : "SKIP", why_none.c_str());
        send_back(opts.backend != ZYFA_BACKEND_CUDA);
        return opts.require_gpu ? 1 : kSkipExitCode;
    }
    const bool hip = zyfa_context_backend(gpu) == ZYFA_BACKEND_HIP;
    std::unique_ptr<GpuRuntime> rt;
    zyfa_context* cpu = nullptr;
    zyfa_context_options cpu_opts;
    zyfa_context_options_init(&cpu_opts, sizeof cpu_opts);
    cpu_opts.backend = ZYFA_BACKEND_CPU;
    try {
        rt = hip ? zyfa::hip::open_hip_runtime(opts.device) : zyfa::cuda::open_cuda_runtime(opts.device);
    } catch (const std::exception& e) {
        std::printf("FAIL zyfa-check: the %s runtime's memory helpers: %s\n", hip ? "HIP" : "CUDA", e.what());
        send_back(hip);
        return 1;
    }
    if (zyfa_context_create(&cpu_opts, &cpu) != ZYFA_SUCCESS) {
        std::printf("FAIL zyfa-check: CPU context: %s\n", zyfa_last_error_message());
        send_back(hip);
        return 1;
    }
    const std::string arch = zyfa_context_device_name(gpu);
    const zyfa_dtype fp8 = arch == "gfx942" ? ZYFA_DTYPE_FP8_E4M3FNUZ : ZYFA_DTYPE_FP8_E4M3FN;
    // zyfa_build_info() begins with "zyfa <version>", so it alone names the version.
    std::printf("zyfa-check: %s backend, device %d: %s (%s, %d CUs/SMs); %s\n", hip ? "HIP" : "CUDA", opts.device,
                rt->device().name.c_str(), arch.c_str(), rt->device().multiprocessors, zyfa_build_info());
    const int clock_khz = rt->device().clock_khz;
    if (clock_khz > 0) {
        std::printf("Clock: %d MHz, the peak %s reports (%s), not the clock under load: the commands at the end "
                    "query that.\n",
                    clock_khz / 1000, hip ? "HIP" : "the CUDA driver",
                    hip ? "hipDeviceAttributeClockRate" : "CU_DEVICE_ATTRIBUTE_CLOCK_RATE");
    } else {
        std::printf("Clock: not reported by the %s runtime.\n", hip ? "HIP" : "CUDA");
    }
    std::printf("Each case: 1 warm-up + %d timed launches (median); FP8 = %s LEAN, BF16 = EXACT, output BF16, with "
                "lse; error = relative RMS of O vs the CPU backend (tolerance), lse = max |difference|.\n",
                opts.repeats, zyfa::validation::dtype_name(fp8));
    std::printf("est. TFLOP/s = the MFMA-busy fraction this project's AMD ISA emulator estimates for that kernel "
                "(calibrated cycle model, 256 queries x 1,024 keys; a model, never measured on AMD hardware) x "
                "the arch's published dense peak per CU per clock x %d CUs x the clock above; "
                "\"no estimate\" where the model has none (NVIDIA, kernels it does not cover). "
                "zyfa-check --estimates lists them.\n\n",
                rt->device().multiprocessors);
    std::printf("| case | shape | kernel | time (ms) | TFLOP/s | est. TFLOP/s (model) | achieved / est. | "
                "O rel. RMS vs CPU (tol) | lse max abs (tol) | result |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n");
    zyfa::gpu::StreamHandle stream = rt->create_stream();
    int failed = 0, total = 0;
    for (const CheckCase& c : zyfa_check::check_grid(opts.tiny, fp8)) {
        ++total;
        try {
            failed += !run_case(gpu, cpu, *rt, stream, c, opts);
        } catch (const std::exception& e) {
            std::printf("| %s | %s | - | - | - | - | - | - | - | FAIL: %s |\n", c.name.c_str(),
                        zyfa_check::shape_label(c).c_str(), e.what());
            ++failed;
        }
    }
    rt->destroy_stream(stream);
    std::printf("\nzyfa-check: %d of %d cases passed%s\n", total - failed, total,
                failed ? "; see the FAIL rows" : "");
    send_back(hip);
    zyfa_context_destroy(cpu);
    zyfa_context_destroy(gpu);
    return failed ? 1 : 0;
}
