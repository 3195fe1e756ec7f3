// zyfa-bench: times zyfa_attn_fwd on one problem shape for one or more (dtype, softmax) cases
// and reports TFLOP/s and the error against the fp64 reference. `zyfa-bench --help` explains it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "attention_flops.hpp"
#include "common/split_kv_args.h"
#include "bench_inputs.hpp"
#include "bench_options.hpp"
#include "device_buffers.hpp"
#include "core/errors.hpp"
#include "reference_check.hpp"
#include "zyfa.h"

namespace zyfa_bench {
namespace {

struct ContextHandle {
    zyfa_context* ctx = nullptr;
    ~ContextHandle() { zyfa_context_destroy(ctx); }
};

struct ResultRow {
    std::string label, backend, kernel, shape;
    double time_ms = 0.0, tflops = 0.0;
    bool checked = false;
    ReferenceCheck check;
};

std::string case_label(const BenchCase& c) {
    return std::string(dtype_label(c.dtype)) + " " + softmax_label(c.softmax);
}

std::string shape_label(const BenchOptions& o) {
    std::string s = "b" + std::to_string(o.batch) + " h" + std::to_string(o.heads_q) + "/" + std::to_string(o.heads_kv) +
                    " s" + std::to_string(o.seqlen_q) + "/" + std::to_string(o.seqlen_k) + " d" +
                    std::to_string(o.head_dim_qk) + "/" + std::to_string(o.head_dim_v) + " " + mask_label(o.mask);
    if (o.window_left >= 0 || o.window_right >= 0)
        s += " w" + std::to_string(o.window_left) + "," + std::to_string(o.window_right);
    if (o.varlen) s += " varlen";
    if (o.sinks) {
        char sink[32];
        std::snprintf(sink, sizeof sink, " sinks %g", static_cast<double>(o.sink_value));
        s += sink;
    }
    if (o.page_size > 0) s += " paged" + std::to_string(o.page_size);
    if (o.v_transposed) s += " v-transposed";
    return s;
}

std::string heads_list(const std::vector<int64_t>& heads) {
    std::string s;
    for (int64_t h : heads) s += (s.empty() ? "" : ", ") + std::to_string(h);
    return s;
}

// One warm-up call, calls back to back for sustain_ms (the clock's steady state under the power
// cap), then `repeats` calls each between two events on a stream of the tool's own; returns seconds
// per call. The stream, events and synchronisation are the tool's: zyfa_attn_fwd itself only enqueues.
template <class Call>
std::vector<double> time_on_device(zyfa::gpu::GpuRuntime& runtime, int repeats, int64_t sustain_ms, Call&& call) {
    struct Resources {
        zyfa::gpu::GpuRuntime& runtime;
        void* stream = nullptr;
        void* start = nullptr;
        void* end = nullptr;
        ~Resources() {
            runtime.destroy_event(end);
            runtime.destroy_event(start);
            runtime.destroy_stream(stream);
        }
    } r{runtime};
    r.stream = runtime.create_stream();
    r.start = runtime.create_event();
    r.end = runtime.create_event();
    call(r.stream);
    runtime.synchronize_stream(r.stream);
    const auto sustain_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(sustain_ms);
    while (std::chrono::steady_clock::now() < sustain_end) {
        for (int i = 0; i < 4; ++i) call(r.stream);
        runtime.synchronize_stream(r.stream);
    }
    std::vector<double> seconds;
    for (int i = 0; i < repeats; ++i) {
        runtime.record_event(r.start, r.stream);
        call(r.stream);
        runtime.record_event(r.end, r.stream);
        seconds.push_back(1e-3 * static_cast<double>(runtime.elapsed_ms(r.start, r.end)));
    }
    runtime.synchronize_stream(r.stream);
    return seconds;
}

// Progress on stderr, so stdout keeps only the table. At a terminal one line is rewritten in
// place and cleared before each result row; with --progress elsewhere (a log) each step is a
// line of its own. A CPU run of the default shape takes tens of seconds per case.
class Progress {
public:
    explicit Progress(bool forced) : terminal_(isatty(fileno(stderr)) != 0), enabled_(terminal_ || forced) {}
    ~Progress() { clear(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    void start_case(size_t index, size_t count, const std::string& label) {
        prefix_ = "zyfa-bench: [" + std::to_string(index + 1) + "/" + std::to_string(count) + "] " + label + ": ";
        case_start_ = std::chrono::steady_clock::now();
    }
    void show(const std::string& step) {
        if (!enabled_) return;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start_).count();
        std::fprintf(stderr, terminal_ ? "\r\033[K%s%s (%.0f s)" : "%s%s (%.0f s)\n", prefix_.c_str(), step.c_str(),
                     elapsed);
        std::fflush(stderr);
        shown_ = terminal_;
    }
    void clear() {
        if (!shown_) return;
        std::fputs("\r\033[K", stderr);
        std::fflush(stderr);
        shown_ = false;
    }

private:
    bool terminal_, enabled_, shown_ = false;
    std::string prefix_;
    std::chrono::steady_clock::time_point case_start_ = std::chrono::steady_clock::now();
};

// Table column widths: sized to this run's labels (one shape for every row), the kernel column
// to the longest kernel symbol the library has (36 characters: zyfa_attn_fwd_ws_e4m3_exact_d192_128).
struct Columns {
    int label = 4, kernel = 36, shape = 5;
};

Columns columns_for(const BenchOptions& options, const std::string& shape) {
    Columns c;
    for (const BenchCase& bench_case : options.cases)
        c.label = std::max(c.label, static_cast<int>(case_label(bench_case).size()));
    c.shape = std::max(c.shape, static_cast<int>(shape.size()));
    return c;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void print_row(const ResultRow& r, bool csv, const Columns& w) {
    char errors[64];
    if (r.checked) {
        std::snprintf(errors, sizeof errors, csv ? "%.6e,%.6e" : "%9.3e  %9.3e", r.check.relative_rms, r.check.max_abs);
    } else {
        std::snprintf(errors, sizeof errors, csv ? "," : "%9s  %9s", "-", "-");
    }
    if (csv) {
        std::printf("%s,%s,%s,%s,%.4f,%.6f,%s\n", r.label.c_str(), r.backend.c_str(), r.kernel.c_str(), r.shape.c_str(),
                    r.time_ms, r.tflops, errors);
    } else {
        std::printf("%-*s %-7s %-*s %-*s %10.2f %9.4f  %s\n", w.label, r.label.c_str(), r.backend.c_str(), w.kernel,
                    r.kernel.c_str(), w.shape, r.shape.c_str(), r.time_ms, r.tflops, errors);
    }
    std::fflush(stdout);
}

int run(const BenchOptions& options) {
    ContextHandle context;
    zyfa_context_options context_options;
    zyfa_context_options_init(&context_options, sizeof context_options);
    context_options.backend = options.backend;
    context_options.num_threads = options.threads;
    check_status("zyfa_context_create", zyfa_context_create(&context_options, &context.ctx));
    const zyfa_backend backend = zyfa_context_backend(context.ctx);
    const bool on_device = backend != ZYFA_BACKEND_CPU;
    // GPU runs: device buffers and event timing through the library's runtime helpers; FP8 inputs
    // are quantised on the host by a CPU context (the same codes and descales the GPU then reads).
    std::unique_ptr<zyfa::gpu::GpuRuntime> runtime;
    ContextHandle host_context;
    zyfa_context* quantise_ctx = context.ctx;
    if (on_device) {
        runtime = open_device_runtime(backend, context_options.device);
        zyfa_context_options cpu_options = context_options;
        cpu_options.backend = ZYFA_BACKEND_CPU;
        check_status("zyfa_context_create", zyfa_context_create(&cpu_options, &host_context.ctx));
        quantise_ctx = host_context.ctx;
    }
    const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());

    const Activations activations = make_activations(options);
    const int64_t pairs = visible_pairs(activations.lengths_q, activations.lengths_k, options.mask,
                                        options.window_left, options.window_right);
    const double flops = attention_flops(pairs, options.heads_q, options.head_dim_qk, options.head_dim_v);
    std::vector<int64_t> checked_heads;
    if (options.check) checked_heads = reference_heads(options, pairs, activations);
    const std::string shape = shape_label(options);
    const Columns widths = columns_for(options, shape);

    if (!options.csv) {
        double all_pairs = 0.0;
        for (size_t b = 0; b < activations.lengths_q.size(); ++b)
            all_pairs += static_cast<double>(activations.lengths_q[b]) * static_cast<double>(activations.lengths_k[b]);
        // zyfa_build_info() begins with "zyfa <version>": print the version once.
        const std::string version = std::string("zyfa ") + zyfa_version_string();
        const std::string info = zyfa_build_info();
        if (info.rfind(version, 0) == 0) {
            std::printf("%s\n", info.c_str());
        } else {
            std::printf("%s | %s\n", version.c_str(), info.c_str());
        }
        std::printf("context: backend %s, device %s, threads %d\n", backend_label(backend),
                    zyfa_context_device_name(context.ctx), threads);
        std::printf("problem: batch %lld, heads %lld/%lld (%s), seqlen %lld/%lld%s, head_dim %lld/%lld, mask %s, "
                    "window %d,%d, random normal inputs (seed %llu), O in %s\n",
                    (long long)options.batch, (long long)options.heads_q, (long long)options.heads_kv,
                    options.heads_kv == options.heads_q ? "MHA" : (options.heads_kv == 1 ? "MQA" : "GQA"),
                    (long long)options.seqlen_q, (long long)options.seqlen_k,
                    options.varlen ? " (longest; varlen)" : "", (long long)options.head_dim_qk,
                    (long long)options.head_dim_v, mask_label(options.mask), options.window_left,
                    options.window_right, (unsigned long long)options.seed,
                    options.cases.size() == 1 && options.cases[0].dtype == ZYFA_DTYPE_FP32 ? "FP32" : "BF16");
        std::printf("FLOPs per call: 2 * (%lld + %lld) * %lld visible pairs * %lld heads = %.4g (%.2f%% of all pairs)\n",
                    (long long)options.head_dim_qk, (long long)options.head_dim_v, (long long)pairs,
                    (long long)options.heads_q, flops, all_pairs > 0 ? 100.0 * static_cast<double>(pairs) / all_pairs : 0.0);
        if (on_device) {
            std::printf("timing: median of %d calls after 1 warm-up call and %lld ms of calls back to back, each "
                        "timed by device events on its own stream (%s, %d SMs)\n",
                        options.repeats, (long long)options.sustain_ms, runtime->device().name.c_str(),
                        runtime->device().multiprocessors);
        } else {
            std::printf("timing: median of %d calls after 1 warm-up call\n", options.repeats);
        }
        if (!options.check) {
            std::printf("reference: skipped (--no-check)\n");
        } else if (static_cast<int64_t>(checked_heads.size()) == options.heads_q) {
            std::printf("reference: fp64 on all %lld query heads, all rows, same quantised inputs and descales\n",
                        (long long)options.heads_q);
        } else {
            std::printf("reference: fp64 on query heads %s of %lld (a subset, to keep the run short), all rows, same "
                        "quantised inputs and descales\n",
                        heads_list(checked_heads).c_str(), (long long)options.heads_q);
        }
        std::printf("\n%-*s %-7s %-*s %-*s %10s %9s  %9s  %9s\n", widths.label, "case", "backend", widths.kernel,
                    "kernel", widths.shape, "shape", "time_ms", "TFLOP/s", "rel_rms", "max_abs");
    } else {
        std::printf("case,backend,kernel,shape,time_ms,tflops,rel_rms,max_abs\n");
    }

    Progress progress(options.progress);
    for (size_t case_index = 0; case_index < options.cases.size(); ++case_index) {
        const BenchCase& bench_case = options.cases[case_index];
        progress.start_case(case_index, options.cases.size(), case_label(bench_case));
        progress.show("preparing inputs");
        auto buffers = std::make_unique<CaseBuffers>();
        make_case_buffers(quantise_ctx, options, bench_case, activations, *buffers);
        std::unique_ptr<DeviceCase> device_case;
        if (on_device) device_case = std::make_unique<DeviceCase>(*runtime, *buffers);
        zyfa_attn_params p = on_device ? device_case->params() : buffers->params;
        // Split-KV: the caller's request and, on a GPU, the workspace the library asks for.
        p.num_splits = options.num_splits;
        size_t workspace_bytes = 0;
        check_status("zyfa_attn_fwd_workspace_size", zyfa_attn_fwd_workspace_size(context.ctx, &p, &workspace_bytes));
        if (options.no_workspace) workspace_bytes = 0;
        struct Workspace {
            zyfa::gpu::GpuRuntime* runtime = nullptr;
            void* data = nullptr;
            ~Workspace() {
                if (runtime && data) runtime->free_device(data);
            }
        } workspace;
        if (on_device && workspace_bytes > 0) {
            workspace.runtime = runtime.get();
            workspace.data = runtime->malloc_device(workspace_bytes);
            p.workspace = workspace.data;
            p.workspace_bytes = workspace_bytes;
        } else {
            workspace_bytes = 0;
        }
        const zyfa_tensor* q = on_device ? &device_case->q() : &buffers->q.view;
        const zyfa_tensor* k = on_device ? &device_case->k() : &buffers->k.view;
        const zyfa_tensor* v = on_device ? &device_case->v() : &buffers->v.view;
        const zyfa_tensor* o = on_device ? &device_case->o() : &buffers->o.view;

        const char* kernel = zyfa_attn_kernel_name(context.ctx, &p, q, k, v, o);
        const bool split = kernel != nullptr && std::string(kernel).find("_split_") != std::string::npos;
        if (kernel == nullptr) throw LibraryError("zyfa_attn_kernel_name", zyfa_attn_supported(context.ctx, &p, q, k, v, o));

        std::vector<double> seconds;
        if (on_device) {
            progress.show("1 warm-up, " + std::to_string(options.sustain_ms) + " ms of calls, " + std::to_string(options.repeats) + " timed calls on the device");
            seconds = time_on_device(*runtime, options.repeats, options.sustain_ms, [&](void* stream) {
                check_status("zyfa_attn_fwd", zyfa_attn_fwd(context.ctx, &p, q, k, v, o, stream));
            });
            device_case->copy_output_to(*buffers);
        } else {
            progress.show("warm-up call");
            check_status("zyfa_attn_fwd", zyfa_attn_fwd(context.ctx, &p, q, k, v, o, nullptr));  // warm-up
            for (int r = 0; r < options.repeats; ++r) {
                progress.show("timed call " + std::to_string(r + 1) + " of " + std::to_string(options.repeats));
                const auto start = std::chrono::steady_clock::now();
                check_status("zyfa_attn_fwd", zyfa_attn_fwd(context.ctx, &p, q, k, v, o, nullptr));
                seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            }
        }

        ResultRow row;
        row.label = case_label(bench_case);
        row.backend = backend_label(backend);
        row.kernel = kernel;
        row.shape = shape;
        const double time_s = median(seconds);
        row.time_ms = 1e3 * time_s;
        row.tflops = time_s > 0.0 ? flops / time_s * 1e-12 : 0.0;
        if (options.check && !checked_heads.empty()) {
            progress.show("fp64 reference on query heads " + heads_list(checked_heads));
            row.check = check_against_reference(*buffers, checked_heads, options.threads);
            row.checked = true;
        }
        progress.clear();
        print_row(row, options.csv, widths);
        if (options.kv_report && !options.csv) {
            // The bar of issue 22: bytes of K and V of every sequence's keys over the time.
            const double elem = bench_case.dtype == ZYFA_DTYPE_FP32 ? 4.0
                                : (bench_case.dtype == ZYFA_DTYPE_BF16 || bench_case.dtype == ZYFA_DTYPE_FP16) ? 2.0
                                                                                                               : 1.0;
            double keys = 0.0;
            for (int64_t len : activations.lengths_k) keys += static_cast<double>(len);
            const double kv_bytes =
                keys * static_cast<double>(options.heads_kv) * static_cast<double>(options.head_dim_qk + options.head_dim_v) * elem;
            const double rate = time_s > 0.0 ? kv_bytes / time_s : 0.0;
            constexpr double kCopyRate = 4.3e12;  // the H200's measured device copy rate (issue 22)
            const int64_t per_split =
                zyfa::split_kv_layout(options.batch, options.seqlen_q, options.heads_q, options.head_dim_v, 1).total_bytes;
            const int64_t splits = split && per_split > 0 ? static_cast<int64_t>(workspace_bytes) / per_split : 1;
            std::printf("  K/V read: %.4g GB in %.4f ms = %.3f TB/s = %.1f%% of 4.3 TB/s; %s (num_splits %d, "
                        "workspace %zu bytes)\n",
                        kv_bytes * 1e-9, row.time_ms, rate * 1e-12, 100.0 * rate / kCopyRate,
                        split ? ("split " + std::to_string(splits) + " ways").c_str() : "unsplit", options.num_splits,
                        workspace_bytes);
        }
    }
    return 0;
}

}  // namespace
}  // namespace zyfa_bench

int main(int argc, char** argv) {
    using namespace zyfa_bench;
    // Line-buffered even into a pipe or a file, so the header shows before the first case's
    // (long) run rather than with its row.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    BenchOptions options;
    try {
        options = parse_options(argc, argv);
    } catch (const UsageError& error) {
        std::fprintf(stderr, "zyfa-bench: %s (see --help)\n", error.what());
        return 2;
    }
    if (options.help) {
        std::fputs(usage_text().c_str(), stdout);
        return 0;
    }
    try {
        return run(options);
    } catch (const LibraryError& error) {
        std::fprintf(stderr, "zyfa-bench: %s\n", error.what());
        return 1;
    } catch (const zyfa::Error& error) {  // from the internal reference's argument checks
        std::fprintf(stderr, "zyfa-bench: reference: %s: %s\n", zyfa_status_string(error.status()), error.what());
        return 1;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "zyfa-bench: %s\n", error.what());
        return 1;
    }
}
