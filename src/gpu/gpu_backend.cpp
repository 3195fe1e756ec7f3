#include "gpu_backend.hpp"

#include <climits>
#include <cstdio>
#include <cstring>

#include "common/block_scale.h"
#include "common/hadamard.h"
#include "common/v_transposed.h"
#include "core/errors.hpp"

namespace zyfa {
namespace gpu {
namespace {

int32_t fit_int32(int64_t value, const char* name) {
    if (value < 0 || value > INT32_MAX) {
        throw_not_supported(std::string("params.") + name + " = " + std::to_string(value) +
                            " exceeds the GPU kernels' int32 range");
    }
    return static_cast<int32_t>(value);
}

// A loaded kernel: the function handle, or why it cannot run on this device.
struct LoadedKernel {
    std::string variant;
    std::string symbol;
    FunctionHandle function = nullptr;
    uint32_t max_shared_bytes = 0;
    std::string unavailable;  // empty when runnable
};

// The quantize kernels' function handles; all null when the catalogue has none for the arch.
struct QuantKernels {
    FunctionHandle clear = nullptr;
    FunctionHandle mean = nullptr;  // K smoothing's launch 1b
    FunctionHandle amax = nullptr;
    FunctionHandle encode = nullptr;
    FunctionHandle finish = nullptr;
    FunctionHandle int8 = nullptr;  // zyfa_quantize_int8
    bool v_transposed = false;      // ZYFA_QUANT_V_TRANSPOSED (QuantKernelSpec)
    FunctionHandle key_bias = nullptr;  // ZYFA_QUANT_KEY_BIAS; null where the image has none
};

// The quantize launches (quantize_fp8_args.h): their one argument struct and grids, per slice,
// per (channel chunk, head, batch) and per (row chunk, head, batch).
struct QuantLaunch {
    QuantFp8KernelArgs args;
    Dim3 slices;
    Dim3 channels;
    Dim3 rows;
    Dim3 keys;  // the key-bias launch: (row chunks of 256, query heads, batch)
};

// A pointer the kernels dereference, named as the C API spells its field.
struct NamedPointer {
    const char* field;
    const void* pointer;
};

// Copies a tensor's three strides into the kernel argument fields of that tensor.
void set_strides(const TensorView& t, int64_t& stride_batch, int64_t& stride_seq, int64_t& stride_head) {
    stride_batch = t.stride_batch;
    stride_seq = t.stride_seq;
    stride_head = t.stride_head;
}

class GpuBackend final : public Backend {
public:
    GpuBackend(zyfa_backend kind, std::unique_ptr<GpuRuntime> runtime, std::unique_ptr<AttnKernelCatalogue> catalogue,
               const KernelRegistry& registry)
        : kind_(kind), runtime_(std::move(runtime)), catalogue_(std::move(catalogue)) {
        const DeviceInfo& device = runtime_->device();
        image_arch_ = select_image_arch(registry, runtime_->vendor(), device);
        if (image_arch_.empty()) {
            no_image_reason_ = std::string("this build of zyfa has no ") + runtime_->vendor() + " kernels for " +
                               device.arch + " (" + device.name + "); embedded: " +
                               registry.list_archs(runtime_->vendor());
            return;
        }
        try {
            load_kernels(registry);
        } catch (...) {
            unload_modules();
            throw;
        }
    }

    ~GpuBackend() override { unload_modules(); }

    zyfa_backend kind() const override { return kind_; }
    const char* device_name() const override { return runtime_->device().arch.c_str(); }

    // The pointer checks live here, not in attn_fwd: zyfa_attn_fwd calls this first, so it pays for
    // them once, and zyfa_attn_supported and zyfa_attn_kernel_name give the same answer.
    void check_attn_supported(const AttnProblem& problem) const override {
        resolve(problem);
        const NamedPointer pointers[] = {
            {"q.data", problem.q.data},
            {"k.data", problem.k.data},
            {"v.data", problem.v.data},
            {"o.data", problem.o.data},
            {"params.lse", problem.lse},
            {"params.cu_seqlens_q", problem.cu_seqlens_q},
            {"params.cu_seqlens_k", problem.cu_seqlens_k},
            {"params.q_descale", problem.q_descale},
            {"params.k_descale", problem.k_descale},
            {"params.v_descale", problem.v_descale},
            {"params.sinks", problem.sinks},
            {"params.block_table", problem.block_table},
            {"params.seqused_k", problem.seqused_k},
            {"params.q_descale_per_token", problem.q_descale_per_token},
            {"params.k_descale_per_block", problem.k_descale_per_block},
            {"params.workspace", problem.workspace},
            {"params.key_bias", problem.key_bias},
        };
        check_device_reachable(pointers);
    }

    const char* attn_kernel_name(const AttnProblem& problem) const override { return resolve(problem).first.kernel_name; }

    void attn_fwd(const AttnProblem& problem, void* stream) override {
        const std::pair<AttnLaunch, const LoadedKernel*> planned = resolve(problem);
        AttnKernelArgs args = make_attn_kernel_args(problem, catalogue_->lean_centre());
        SecondKernelParameter second{};
        if (planned.first.second_parameter) catalogue_->second_parameter(problem, planned.first, *runtime_, second);
        void* parameters[] = {&args, &second};
        runtime_->launch(planned.second->function, planned.first.grid, planned.first.block,
                         planned.first.shared_bytes, stream, parameters);
        if (planned.first.splits > 1) {
            // The parts in the workspace, merged by lse into o and lse: zyfa_attn_merge's kernel.
            MergeKernelArgs merge = make_split_merge_kernel_args(problem, planned.first.splits);
            void* merge_parameters[] = {&merge};
            Dim3 grid;
            grid.x = static_cast<uint32_t>(problem.seqlen_q);
            grid.y = static_cast<uint32_t>(problem.heads_q);
            grid.z = static_cast<uint32_t>(problem.batch);
            Dim3 block;
            block.x = static_cast<uint32_t>(kMergeThreads);
            runtime_->launch(merge_, grid, block, 0, stream, merge_parameters);
        }
    }

    uint64_t attn_workspace_bytes(const AttnProblem& shape) const override {
        if (!no_image_reason_.empty() || merge_ == nullptr || shape.empty()) return 0;
        return catalogue_->split_workspace_bytes(shape, runtime_->device(), image_arch_);
    }

    void check_merge_supported(const MergeProblem& problem) const override {
        plan_merge(problem);
        std::vector<NamedPointer> pointers;
        std::vector<std::string> names;
        names.reserve(2 * problem.part_o.size());
        for (size_t i = 0; i < problem.part_o.size(); ++i) {
            names.push_back("part_o[" + std::to_string(i) + "].data");
            names.push_back("part_lse[" + std::to_string(i) + "]");
        }
        for (size_t i = 0; i < problem.part_o.size(); ++i) {
            pointers.push_back({names[2 * i].c_str(), problem.part_o[i].data});
            pointers.push_back({names[2 * i + 1].c_str(), problem.part_lse[i]});
        }
        pointers.push_back({"o.data", problem.o.data});
        pointers.push_back({"params.lse", problem.lse});
        pointers.push_back({"params.cu_seqlens_q", problem.cu_seqlens_q});
        // Any number of parts up to kMergeMaxParts: host scratch sized for them.
        std::vector<const void*> scratch(pointers.size());
        std::vector<const char*> fields(pointers.size());
        std::vector<PointerLocation> where(pointers.size());
        check_device_reachable(pointers.data(), pointers.size(), scratch.data(), fields.data(), where.data());
    }

    // One launch; the parts' descriptors travel in the kernel parameter (attn_merge_kernel_args.h).
    void attn_merge(const MergeProblem& problem, void* stream) override {
        Dim3 grid = plan_merge(problem);
        if (problem.empty()) return;
        MergeKernelArgs args = make_merge_kernel_args(problem);
        void* parameters[] = {&args};
        Dim3 block;
        block.x = static_cast<uint32_t>(kMergeThreads);
        runtime_->launch(merge_, grid, block, 0, stream, parameters);
    }

    void check_quantize_supported(const QuantProblem& problem) const override {
        plan_quantize(problem);
        const NamedPointer pointers[] = {
            {"in.data", problem.in.data},
            {"out.data", problem.out.data},
            {"descale", problem.descale},
            {"params.cu_seqlens", problem.cu_seqlens},
            {"params.smooth_mean", problem.smooth_mean},
            {"params.query_mean", problem.query_mean},
            {"params.key_bias", problem.key_bias},
        };
        check_device_reachable(pointers);
    }

    // Four launches in stream order, five with K smoothing (INT8: one, two with K smoothing); the
    // non-finite input the CPU backend rejects is not checked here (that needs a
    // synchronisation): it shows as a NaN or +inf descale (quantize_fp8.cu, quantize_fp8.hip).
    void quantize_fp8(const QuantProblem& problem, void* stream) override {
        QuantLaunch planned = plan_quantize(problem);
        if (problem.empty()) return;
        void* parameters[] = {&planned.args};
        Dim3 block;
        block.x = static_cast<uint32_t>(kQuantThreads);
        if (problem.int8()) {
            if (problem.smooth) runtime_->launch(quant_.mean, planned.channels, block, 0, stream, parameters);
            runtime_->launch(quant_.int8, planned.rows, block, 0, stream, parameters);
            return;
        }
        runtime_->launch(quant_.clear, planned.slices, block, 0, stream, parameters);
        if (problem.smooth) runtime_->launch(quant_.mean, planned.channels, block, 0, stream, parameters);
        runtime_->launch(quant_.amax, planned.rows, block, 0, stream, parameters);
        runtime_->launch(quant_.encode, planned.rows, block, 0, stream, parameters);
        runtime_->launch(quant_.finish, planned.slices, block, 0, stream, parameters);
        if (problem.key_bias) runtime_->launch(quant_.key_bias, planned.keys, block, 0, stream, parameters);
    }

private:
    void load_kernels(const KernelRegistry& registry) {
        const DeviceInfo& device = runtime_->device();
        for (const KernelSpec& spec : catalogue_->kernels(image_arch_)) {
            LoadedKernel kernel;
            kernel.variant = spec.variant;
            kernel.symbol = spec.symbol;
            kernel.max_shared_bytes = spec.max_shared_bytes;
            ModuleHandle module = module_for(registry, spec.variant);
            kernel.function = runtime_->get_function(module, spec.symbol);
            if (device.max_shared_bytes_per_block > 0 &&
                spec.max_shared_bytes > static_cast<uint32_t>(device.max_shared_bytes_per_block)) {
                kernel.unavailable = std::string("kernel ") + spec.symbol + " needs " +
                                     std::to_string(spec.max_shared_bytes) + " bytes of shared memory, " +
                                     device.arch + " allows " + std::to_string(device.max_shared_bytes_per_block);
            } else if (spec.max_shared_bytes > 0) {
                runtime_->set_max_dynamic_shared_bytes(kernel.function, spec.max_shared_bytes);
            }
            kernels_.push_back(std::move(kernel));
        }
        const MergeKernelSpec merge = catalogue_->merge_kernel(image_arch_);
        if (merge.variant != nullptr) merge_ = runtime_->get_function(module_for(registry, merge.variant), merge.symbol);
        const QuantKernelSpec quant = catalogue_->quantize_kernels(image_arch_);
        if (quant.variant != nullptr) {
            ModuleHandle module = module_for(registry, quant.variant);
            quant_.clear = runtime_->get_function(module, quant.clear);
            quant_.mean = runtime_->get_function(module, quant.mean);
            quant_.amax = runtime_->get_function(module, quant.amax);
            quant_.encode = runtime_->get_function(module, quant.encode);
            quant_.finish = runtime_->get_function(module, quant.finish);
            quant_.int8 = runtime_->get_function(module, quant.int8);
            quant_.v_transposed = quant.v_transposed;
            if (quant.key_bias != nullptr) quant_.key_bias = runtime_->get_function(module, quant.key_bias);
        }
    }

    // Loads each variant's image once.
    ModuleHandle module_for(const KernelRegistry& registry, const char* variant) {
        for (const auto& loaded : modules_) {
            if (loaded.first == variant) return loaded.second;
        }
        const EmbeddedImage* image = registry.find(runtime_->vendor(), image_arch_.c_str(), variant);
        if (image == nullptr) {
            throw Error(ZYFA_ERROR_INTERNAL, std::string("the kernel catalogue lists variant ") + variant + " for " +
                                                 image_arch_ + " but this build embeds no such image");
        }
        ModuleHandle module = runtime_->load_module(image->data, image->size);
        modules_.emplace_back(variant, module);
        return module;
    }

    void unload_modules() noexcept {
        for (auto& loaded : modules_) runtime_->unload_module(loaded.second);
        modules_.clear();
    }

    std::pair<AttnLaunch, const LoadedKernel*> resolve(const AttnProblem& problem) const {
        if (!no_image_reason_.empty()) throw_not_supported(no_image_reason_);
        AttnLaunch launch = catalogue_->plan(problem, runtime_->device(), image_arch_);
        if (launch.variant == nullptr || launch.symbol == nullptr || launch.kernel_name == nullptr) {
            throw Error(ZYFA_ERROR_INTERNAL, "the kernel plan named no kernel");
        }
        if (launch.splits > 1 && (merge_ == nullptr || launch.splits > kMergeMaxParts || problem.workspace == nullptr ||
                                  problem.seqlen_q > 65535 || problem.heads_q > 65535 || problem.batch > 65535)) {
            throw Error(ZYFA_ERROR_INTERNAL, "the kernel plan split a problem the merge launch cannot take");
        }
        for (const LoadedKernel& kernel : kernels_) {
            if (kernel.variant != launch.variant || kernel.symbol != launch.symbol) continue;
            if (!kernel.unavailable.empty()) throw_not_supported(kernel.unavailable);
            if (launch.shared_bytes > kernel.max_shared_bytes && launch.shared_bytes > kDefaultSharedBytes) {
                throw Error(ZYFA_ERROR_INTERNAL, std::string("the plan for ") + launch.symbol + " asks for " +
                                                     std::to_string(launch.shared_bytes) +
                                                     " bytes of shared memory, more than its catalogue entry's " +
                                                     std::to_string(kernel.max_shared_bytes));
            }
            return {launch, &kernel};
        }
        throw Error(ZYFA_ERROR_INTERNAL, std::string("the kernel plan chose ") + launch.variant + "/" + launch.symbol +
                                             ", which the catalogue does not list for " + image_arch_);
    }

    QuantLaunch plan_quantize(const QuantProblem& problem) const {
        if (!no_image_reason_.empty()) throw_not_supported(no_image_reason_);
        if (quant_.clear == nullptr || (problem.int8() && quant_.int8 == nullptr)) {
            throw_not_supported(std::string(problem.int8() ? "zyfa_quantize_int8" : "zyfa_quantize_fp8") + " has no " +
                                runtime_->vendor() + " kernel for " + image_arch_ +
                                "; quantise with the CPU backend or on the host");
        }
        if (problem.v_transposed && !quant_.v_transposed) {
            throw_not_supported(std::string("zyfa_quantize_fp8 with ZYFA_QUANT_V_TRANSPOSED has no ") + runtime_->vendor() +
                                " kernel (the layout is the NVIDIA kernels'); quantise with the CPU backend");
        }
        if (problem.key_bias != nullptr && quant_.key_bias == nullptr) {
            throw_not_supported(std::string("params.flags has ZYFA_QUANT_KEY_BIAS: no ") + runtime_->vendor() +
                                " kernel writes the key bias on " + image_arch_ + " yet (the CPU and HIP backends do)");
        }
        QuantLaunch launch;
        launch.args = make_quant_kernel_args(problem);  // also the int32 and Hadamard checks
        const QuantFp8KernelArgs& args = launch.args;
        if (problem.heads > 65535 || problem.batch > 65535) {
            throw_not_supported("zyfa_quantize_fp8: params.heads = " + std::to_string(problem.heads) +
                                ", params.batch = " + std::to_string(problem.batch) +
                                " exceed the GPU grid limit of 65535");
        }
        launch.slices.x = static_cast<uint32_t>((int64_t{args.slices} + kQuantThreads - 1) / kQuantThreads);
        launch.channels.x = static_cast<uint32_t>((int64_t{args.head_dim} + kQuantMeanChannels - 1) / kQuantMeanChannels);
        launch.channels.y = static_cast<uint32_t>(args.heads);
        launch.channels.z = static_cast<uint32_t>(args.batch);
        // Transposed V: the encode launch also zeroes the padding keys (a multiple of 128 rows).
        const int64_t rows = args.v_transposed ? numerics::vt_padded_keys(args.seqlen) : int64_t{args.seqlen};
        launch.rows.x = static_cast<uint32_t>((rows + kQuantRowsPerBlock - 1) / kQuantRowsPerBlock);
        launch.rows.y = static_cast<uint32_t>(args.heads);
        launch.rows.z = static_cast<uint32_t>(args.batch);
        if (problem.key_bias != nullptr) {
            if (problem.query_heads > 65535) {
                throw_not_supported("zyfa_quantize_fp8: params.query_heads = " + std::to_string(problem.query_heads) +
                                    " exceeds the GPU grid limit of 65535");
            }
            launch.keys.x = static_cast<uint32_t>((int64_t{args.seqlen} + kQuantThreads - 1) / kQuantThreads);
            launch.keys.y = static_cast<uint32_t>(args.query_heads);
            launch.keys.z = static_cast<uint32_t>(args.batch);
        }
        return launch;
    }

    // The merge grid (one block per row, head, sequence), or NOT_SUPPORTED.
    Dim3 plan_merge(const MergeProblem& problem) const {
        if (!no_image_reason_.empty()) throw_not_supported(no_image_reason_);
        if (merge_ == nullptr) {
            throw_not_supported(std::string("zyfa_attn_merge has no ") + runtime_->vendor() + " kernel for " +
                                image_arch_ + "; merge with the CPU backend");
        }
        make_merge_kernel_args(problem);  // the part count and int32 checks
        if (problem.heads > 65535 || problem.batch > 65535) {
            throw_not_supported("zyfa_attn_merge: params.heads = " + std::to_string(problem.heads) +
                                ", params.batch = " + std::to_string(problem.batch) +
                                " exceed the GPU grid limit of 65535");
        }
        Dim3 grid;
        grid.x = static_cast<uint32_t>(problem.seqlen_q);
        grid.y = static_cast<uint32_t>(problem.heads);
        grid.z = static_cast<uint32_t>(problem.batch);
        return grid;
    }

    // INVALID_ARGUMENT naming the first non-null pointer the device cannot use in place (host
    // memory it cannot reach, another device's memory): a kernel would fault on it, or worse. One
    // runtime call for all of them; no allocation, no synchronisation.
    // The attention and quantisation calls name a fixed set: their scratch is on the stack, so the
    // launch path allocates nothing.
    template <size_t N>
    void check_device_reachable(const NamedPointer (&named)[N]) const {
        const void* pointers[N];
        const char* fields[N];
        PointerLocation where[N];
        check_device_reachable(named, N, pointers, fields, where);
    }

    // `pointers`, `fields` and `where` are scratch of n entries each.
    void check_device_reachable(const NamedPointer* named, size_t n, const void** pointers, const char** fields,
                                PointerLocation* where) const {
        size_t count = 0;
        for (size_t i = 0; i < n; ++i) {
            if (named[i].pointer == nullptr) continue;
            pointers[count] = named[i].pointer;
            fields[count++] = named[i].field;
        }
        runtime_->locate_pointers(pointers, count, where);
        const char* backend = kind_ == ZYFA_BACKEND_CUDA ? "CUDA" : "HIP";
        for (size_t i = 0; i < count; ++i) {
            const MemoryLocation location = where[i].location;
            if (location == MemoryLocation::ThisDevice || location == MemoryLocation::AccessibleHost) continue;
            char address[32];
            std::snprintf(address, sizeof(address), "%p", pointers[i]);
            const std::string context =
                std::string("this context is ") + backend + " device " + std::to_string(runtime_->device().ordinal);
            if (location == MemoryLocation::OtherDevice) {
                throw_invalid(std::string(fields[i]) + " = " + address + " is memory of " + backend + " device " +
                              std::to_string(where[i].device) + "; " + context);
            }
            throw_invalid(std::string(fields[i]) + " = " + address + " is host memory; " + context +
                          " (pass device memory or pinned host memory, or use a ZYFA_BACKEND_CPU context for host "
                          "buffers)");
        }
    }

    // Dynamic shared memory every kernel may use without raising its limit (CUDA and HIP).
    static constexpr uint32_t kDefaultSharedBytes = 48 * 1024;

    zyfa_backend kind_;
    std::unique_ptr<GpuRuntime> runtime_;
    std::unique_ptr<AttnKernelCatalogue> catalogue_;
    std::string image_arch_;
    std::string no_image_reason_;
    std::vector<std::pair<std::string, ModuleHandle>> modules_;
    std::vector<LoadedKernel> kernels_;
    QuantKernels quant_;
    FunctionHandle merge_ = nullptr;
};

}  // namespace

AttnKernelArgs make_attn_kernel_args(const AttnProblem& problem, float lean_centre) {
    AttnKernelArgs args;
    std::memset(&args, 0, sizeof(args));  // reserved fields are zero
    args.q = problem.q.data;
    args.k = problem.k.data;
    args.v = problem.v.data;
    args.o = problem.o.data;
    args.lse = problem.lse;
    args.cu_seqlens_q = problem.cu_seqlens_q;
    args.cu_seqlens_k = problem.cu_seqlens_k;
    // The INT8 Q/K mode's per-token and per-64-key-block descales travel in the same two fields
    // (attention_kernel_args.h).
    args.q_descale = problem.int8_qk() ? problem.q_descale_per_token : problem.q_descale;
    args.k_descale = problem.int8_qk() ? problem.k_descale_per_block : problem.k_descale;
    args.v_descale = problem.v_descale;
    set_strides(problem.q, args.q_stride_batch, args.q_stride_seq, args.q_stride_head);
    set_strides(problem.k, args.k_stride_batch, args.k_stride_seq, args.k_stride_head);
    set_strides(problem.v, args.v_stride_batch, args.v_stride_seq, args.v_stride_head);
    set_strides(problem.o, args.o_stride_batch, args.o_stride_seq, args.o_stride_head);
    args.batch = fit_int32(problem.batch, "batch");
    args.seqlen_q = fit_int32(problem.seqlen_q, "seqlen_q");
    args.seqlen_k = fit_int32(problem.seqlen_k, "seqlen_k");
    args.heads_q = fit_int32(problem.heads_q, "heads_q");
    args.heads_kv = fit_int32(problem.heads_kv, "heads_kv");
    args.head_dim_qk = fit_int32(problem.head_dim_qk, "head_dim_qk");
    args.head_dim_v = fit_int32(problem.head_dim_v, "head_dim_v");
    args.mask = problem.mask;
    args.window_left = problem.window_left;
    args.window_right = problem.window_right;
    args.in_dtype = problem.q.dtype;
    args.out_dtype = problem.o.dtype;
    args.softmax = problem.softmax;
    args.max_block_exponent = numerics::kBlockScaleMaxExponent;
    args.softmax_scale = problem.softmax_scale;
    args.lean_centre = lean_centre;
    args.sinks = problem.sinks;
    return args;
}

namespace {

// The merge's output side (o, lse, rows and shape) and its part count, the parts left to the caller.
MergeKernelArgs merge_kernel_output_args(const TensorView& o, float* lse, const int32_t* cu_seqlens_q, int64_t batch,
                                         int64_t seqlen_q, int64_t heads, const char* heads_field, int64_t head_dim,
                                         int64_t num_parts) {
    MergeKernelArgs args;
    std::memset(&args, 0, sizeof(args));
    args.o = o.data;
    args.lse = lse;
    args.cu_seqlens_q = cu_seqlens_q;
    set_strides(o, args.o_stride_batch, args.o_stride_seq, args.o_stride_head);
    args.batch = fit_int32(batch, "batch");
    args.seqlen_q = fit_int32(seqlen_q, "seqlen_q");
    args.heads = fit_int32(heads, heads_field);
    args.head_dim = fit_int32(head_dim, "head_dim_v");
    args.num_parts = static_cast<int32_t>(num_parts);
    args.o_dtype = o.dtype;
    return args;
}

}  // namespace

MergeKernelArgs make_split_merge_kernel_args(const AttnProblem& problem, int64_t splits) {
    MergeKernelArgs args =
        merge_kernel_output_args(problem.o, problem.lse, problem.cu_seqlens_q, problem.batch, problem.seqlen_q,
                                 problem.heads_q, "heads_q", problem.head_dim_v, splits);
    const SplitKvLayout layout =
        split_kv_layout(problem.batch, problem.seqlen_q, problem.heads_q, problem.head_dim_v, splits);
    float* part_o = static_cast<float*>(problem.workspace);
    float* part_lse = part_o + splits * layout.o_stride;
    for (int64_t i = 0; i < splits; ++i) {
        MergePartArgs& part = args.parts[i];
        part.o = part_o + i * layout.o_stride;
        part.lse = part_lse + i * layout.lse_stride;
        // [batch, seqlen_q, heads_q, head_dim_v] fp32, or packed rows (the batch stride unused).
        part.stride_head = problem.head_dim_v;
        part.stride_seq = problem.heads_q * problem.head_dim_v;
        part.stride_batch = problem.varlen() ? 0 : problem.seqlen_q * part.stride_seq;
        part.dtype = kKernelFp32;
    }
    return args;
}

QuantFp8KernelArgs make_quant_kernel_args(const QuantProblem& problem) {
    QuantFp8KernelArgs args;
    std::memset(&args, 0, sizeof(args));
    args.in = problem.in.data;
    args.out = problem.out.data;
    args.descale = problem.descale;
    args.cu_seqlens = problem.cu_seqlens;
    args.smooth_mean = problem.smooth ? problem.smooth_mean : nullptr;
    set_strides(problem.in, args.in_stride_batch, args.in_stride_seq, args.in_stride_head);
    set_strides(problem.out, args.out_stride_batch, args.out_stride_seq, args.out_stride_head);
    args.batch = fit_int32(problem.batch, "batch");
    args.seqlen = fit_int32(problem.seqlen, "seqlen");
    args.heads = fit_int32(problem.heads, "heads");
    args.head_dim = fit_int32(problem.head_dim, "head_dim");
    int64_t slices = 0;
    if (__builtin_mul_overflow(problem.batch, problem.heads, &slices)) slices = -1;
    args.slices = fit_int32(slices, "batch * params.heads");
    args.in_dtype = problem.in.dtype;
    args.out_dtype = problem.out.dtype;
    args.scale_rows = problem.scale_rows;
    args.scale_groups = fit_int32(problem.scale_groups(), "the descale count per (batch, head)");
    args.v_transposed = problem.v_transposed ? 1 : 0;
    if (problem.key_bias != nullptr) {
        args.query_mean = problem.query_mean;
        args.key_bias = problem.key_bias;
        args.query_heads = fit_int32(problem.query_heads, "query_heads");
        args.key_bias_scale = problem.key_bias_scale;
    }
    if (problem.hadamard) {
        const int64_t block = numerics::hadamard_block_size(problem.head_dim);
        if (block > kQuantMaxHadamardBlock) {
            throw_not_supported("params.head_dim = " + std::to_string(problem.head_dim) +
                                " with ZYFA_QUANT_HADAMARD: the GPU kernels rotate blocks of at most " +
                                std::to_string(kQuantMaxHadamardBlock) + " channels (power-of-two head dims are one block)");
        }
        args.hadamard_block = static_cast<int32_t>(block);
    }
    return args;
}

MergeKernelArgs make_merge_kernel_args(const MergeProblem& problem) {
    if (problem.num_parts() > kMergeMaxParts) {
        throw_not_supported("params.num_parts = " + std::to_string(problem.num_parts()) +
                            ": the GPU kernels merge at most " + std::to_string(kMergeMaxParts) +
                            " parts per call (merge groups into FP32 outputs with lse, then merge those)");
    }
    MergeKernelArgs args =
        merge_kernel_output_args(problem.o, problem.lse, problem.cu_seqlens_q, problem.batch, problem.seqlen_q,
                                 problem.heads, "heads", problem.head_dim, problem.num_parts());
    for (size_t i = 0; i < problem.part_o.size(); ++i) {
        MergePartArgs& part = args.parts[i];
        part.o = problem.part_o[i].data;
        part.lse = problem.part_lse[i];
        set_strides(problem.part_o[i], part.stride_batch, part.stride_seq, part.stride_head);
        part.dtype = problem.part_o[i].dtype;
    }
    return args;
}

std::string select_image_arch(const KernelRegistry& registry, const char* vendor, const DeviceInfo& device) {
    for (const std::string& arch : device.image_archs) {
        if (registry.has_arch(vendor, arch.c_str())) return arch;
    }
    return "";
}

std::unique_ptr<Backend> make_gpu_backend(zyfa_backend kind, std::unique_ptr<GpuRuntime> runtime,
                                          std::unique_ptr<AttnKernelCatalogue> catalogue,
                                          const KernelRegistry& registry) {
    if (!runtime || !catalogue) throw Error(ZYFA_ERROR_INTERNAL, "make_gpu_backend: no runtime or catalogue");
    return std::make_unique<GpuBackend>(kind, std::move(runtime), std::move(catalogue), registry);
}

}  // namespace gpu
}  // namespace zyfa
