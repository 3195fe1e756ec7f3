// The NVIDIA split-KV plan from inside (links zyfa_internal; no GPU needed): the heuristic
// (src/cuda/split_kv_plan.hpp), the workspace it needs, and what the CUDA catalogue launches for a
// decode step with, without and with too little workspace. The kernels themselves:
// tests/gpu/split_kv_gpu_test.cpp on the H200.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "common/attention_mask.h"
#include "common/attn_merge_row.h"
#include "common/split_kv_args.h"
#include "core/errors.hpp"
#include "cuda/attention_launch_plan.hpp"
#include "cuda/split_kv_plan.hpp"
#include "gpu/gpu_backend.hpp"
#include "nvidia/attention_split_params.h"

namespace {

using zyfa::cuda::choose_split_count;
using zyfa::cuda::SplitKvShape;
using zyfa::cuda::split_kv_workspace_bytes;

constexpr int kH200Sms = 132;

SplitKvShape decode_shape(int64_t batch, int64_t seqlen_q, int64_t seqlen_k, int64_t heads_q = 32, int64_t heads_kv = 8) {
    SplitKvShape s;
    s.batch = batch;
    s.seqlen_q = seqlen_q;
    s.seqlen_k = seqlen_k;
    s.heads_q = heads_q;
    s.heads_kv = heads_kv;
    s.head_dim_v = 128;
    return s;
}

void test_heuristic_decode(void**) {
    // The bar's shape: 64 x 8 kv heads x 1 tile = 512 CTAs; 2 x 2 x 132 slots wants 2 splits.
    assert_int_equal(choose_split_count(decode_shape(64, 1, 8192), kH200Sms, 0, -1), 2);
    // One sequence: 8 CTAs, so the split count is capped at 64 parts (and 8192 / 64 / 4 = 32 blocks).
    assert_int_equal(choose_split_count(decode_shape(1, 1, 8192), kH200Sms, 0, -1), 32);
    assert_int_equal(choose_split_count(decode_shape(1, 1, 65536), kH200Sms, 0, -1), 64);
    // Eight sequences: 64 CTAs; ceil(528 / 64) = 9 splits.
    assert_int_equal(choose_split_count(decode_shape(8, 1, 8192), kH200Sms, 0, -1), 9);
    // Every split keeps >= 4 key blocks: 1024 keys = 16 blocks allow 4 splits at most.
    assert_int_equal(choose_split_count(decode_shape(1, 1, 1024), kH200Sms, 0, -1), 4);
    // Too few keys to split at all (fewer than 8 blocks), or none.
    assert_int_equal(choose_split_count(decode_shape(1, 1, 448), kH200Sms, 0, -1), 1);
    assert_int_equal(choose_split_count(decode_shape(1, 1, 0), kH200Sms, 0, -1), 1);
    // A long query chunk is not split; a 128-row chunk that fills the GPU (batch 64: 2048 tiles)
    // is not either; one that leaves SMs idle (batch 1: 32 tiles) is.
    assert_int_equal(choose_split_count(decode_shape(1, 129, 8192), kH200Sms, 0, -1), 1);
    assert_int_equal(choose_split_count(decode_shape(64, 128, 8192), kH200Sms, 0, -1), 1);
    assert_true(choose_split_count(decode_shape(1, 128, 8192), kH200Sms, 0, -1) >= 2);
    // Empty problems never split.
    assert_int_equal(choose_split_count(decode_shape(0, 1, 8192), kH200Sms, 0, -1), 1);
}

void test_requested_splits(void**) {
    const SplitKvShape bar = decode_shape(64, 1, 8192);
    assert_int_equal(choose_split_count(bar, kH200Sms, 1, -1), 1);    // never split
    assert_int_equal(choose_split_count(bar, kH200Sms, 5, -1), 5);    // at most 5, and 5 is allowed
    assert_int_equal(choose_split_count(bar, kH200Sms, 100, -1), 32);  // 128 blocks / 4
    // A request is honoured even where the heuristic would not split (it fills the GPU).
    assert_int_equal(choose_split_count(decode_shape(64, 128, 8192), kH200Sms, 3, -1), 3);
}

void test_workspace_limits_splits(void**) {
    const SplitKvShape bar = decode_shape(8, 1, 8192);
    const int64_t need9 = split_kv_workspace_bytes(bar, 9);
    const int64_t need4 = split_kv_workspace_bytes(bar, 4);
    // 8 x 32 rows x (128 + 1) floats, 256-byte aligned parts: 8 * 32 * 128 * 4 + 8 * 32 * 4 per part.
    assert_int_equal(split_kv_workspace_bytes(bar, 1), 0);
    assert_int_equal(need9, 9 * (8 * 32 * 128 * 4 + 1024));
    assert_int_equal(choose_split_count(bar, kH200Sms, 0, need9), 9);
    assert_int_equal(choose_split_count(bar, kH200Sms, 0, need9 - 1), 8);
    assert_int_equal(choose_split_count(bar, kH200Sms, 0, need4), 4);
    assert_int_equal(choose_split_count(bar, kH200Sms, 0, split_kv_workspace_bytes(bar, 2) - 1), 1);
    assert_int_equal(choose_split_count(bar, kH200Sms, 0, 0), 1);  // no workspace: unsplit
    // Deterministic: the same inputs, the same answer (a pure function of them).
    for (int i = 0; i < 3; ++i) assert_int_equal(choose_split_count(bar, kH200Sms, 0, need4), 4);
}

// The catalogue's launch for a BF16 decode step on an H200-like device.
struct DecodeRequest {
    zyfa::AttnProblem p;
    std::vector<float> workspace;
    explicit DecodeRequest(int64_t workspace_bytes, int32_t num_splits = 0) : workspace(workspace_bytes / 4 + 64) {
        p.batch = 64;
        p.seqlen_q = 1;
        p.seqlen_k = 8192;
        p.heads_q = 32;
        p.heads_kv = 8;
        p.head_dim_qk = p.head_dim_v = 128;
        p.softmax_scale = 0.088f;
        p.softmax = ZYFA_SOFTMAX_EXACT;
        p.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        p.num_splits = num_splits;
        // Device addresses are never dereferenced by the plan: host buffers stand in for them.
        alignas(256) static uint16_t data[4][16];
        auto view = [](void* d, int64_t heads, int64_t seq) {
            zyfa::TensorView t;
            t.data = d;
            t.dtype = ZYFA_DTYPE_BF16;
            t.stride_head = 128;
            t.stride_seq = heads * 128;
            t.stride_batch = seq * heads * 128;
            return t;
        };
        p.q = view(data[0], 32, 1);
        p.k = view(data[1], 8, 8192);
        p.v = view(data[2], 8, 8192);
        p.o = view(data[3], 32, 1);
        if (workspace_bytes > 0) {
            p.workspace = workspace.data();
            p.workspace_bytes = workspace_bytes;
        }
    }
};

zyfa::gpu::DeviceInfo h200() {
    zyfa::gpu::DeviceInfo d;
    d.arch = "sm_90";
    d.name = "test H200";
    d.image_archs = {"sm_90a", "sm_90"};
    d.compute_major = 9;
    d.multiprocessors = kH200Sms;
    d.max_shared_bytes_per_block = 227 * 1024;
    return d;
}

void test_catalogue_plans_split(void**) {
    const auto catalogue = zyfa::cuda::make_cuda_attn_catalogue();
    const zyfa::gpu::DeviceInfo device = h200();
    const SplitKvShape bar = decode_shape(64, 1, 8192);
    const int64_t need = split_kv_workspace_bytes(bar, 2);

    // The workspace query (shape only) and the launch with that workspace agree.
    DecodeRequest shape_only(0);
    assert_int_equal(catalogue->split_workspace_bytes(shape_only.p, device, "sm_90a"), static_cast<uint64_t>(need));
    assert_int_equal(catalogue->split_workspace_bytes(shape_only.p, device, "sm_80"), 0);

    DecodeRequest with(need);
    const zyfa::gpu::AttnLaunch split = catalogue->plan(with.p, device, "sm_90a");
    assert_int_equal(split.splits, 2);
    assert_string_equal(split.symbol, "zyfa_attn_fwd_split_bf16_d128");
    assert_int_equal(split.grid.x, 8);  // 1 row tile x 8 kv heads
    assert_int_equal(split.grid.y, 2);
    assert_int_equal(split.grid.z, 64);
    assert_int_equal(split.block.x, zyfa::kSplitThreads);
    assert_true(split.second_parameter);

    const zyfa::SplitKvLayout layout = zyfa::split_kv_layout(64, 1, 32, 128, 2);
    assert_int_equal(layout.total_bytes, need);

    // The merge launch reads the same parts and writes o.
    const zyfa::MergeKernelArgs merge = zyfa::gpu::make_split_merge_kernel_args(with.p, 2);
    assert_int_equal(merge.num_parts, 2);
    assert_ptr_equal(merge.parts[0].o, with.workspace.data());
    assert_ptr_equal(merge.parts[1].o, with.workspace.data() + layout.o_stride);
    assert_ptr_equal(merge.parts[1].lse, with.workspace.data() + 2 * layout.o_stride + layout.lse_stride);
    assert_int_equal(merge.parts[0].stride_seq, 32 * 128);
    assert_int_equal(merge.parts[0].stride_batch, 32 * 128);
    assert_int_equal(merge.o_dtype, ZYFA_DTYPE_BF16);

    // No workspace, one byte too little, or num_splits 1: today's unsplit kernel.
    for (const int64_t bytes : {int64_t{0}, need - 1}) {
        DecodeRequest without(bytes);
        const zyfa::gpu::AttnLaunch unsplit = catalogue->plan(without.p, device, "sm_90a");
        assert_int_equal(unsplit.splits, 1);
        assert_string_equal(unsplit.symbol, "zyfa_attn_fwd_ws_bf16_d128");
    }
    DecodeRequest never(need, 1);
    assert_int_equal(catalogue->plan(never.p, device, "sm_90a").splits, 1);

    // Problems the split kernels do not take run unsplit whatever the workspace: head dim 256, an
    // explicit key block.
    DecodeRequest d256(1 << 30);
    d256.p.head_dim_qk = d256.p.head_dim_v = 256;
    for (auto* t : {&d256.p.q, &d256.p.k, &d256.p.v, &d256.p.o}) t->stride_head = 256;
    assert_int_equal(catalogue->plan(d256.p, device, "sm_90a").splits, 1);
    // Sinks split (split 0 folds them in: attention_fwd_split.cuh).
    static const float sinks[32] = {};
    DecodeRequest sinked(need);
    sinked.p.sinks = sinks;
    assert_int_equal(catalogue->plan(sinked.p, device, "sm_90a").splits, 2);
    assert_int_equal(catalogue->split_workspace_bytes(sinked.p, device, "sm_90a"), static_cast<uint64_t>(need));
    DecodeRequest keyed(1 << 30);
    keyed.p.key_block = 128;
    try {
        (void)catalogue->plan(keyed.p, device, "sm_90a");
    } catch (const zyfa::Error&) {
        // The ws kernel's step may differ from 128: NOT_SUPPORTED is a valid answer too.
    }
}

// A GpuRuntime for second_parameter: the split launch's arguments need none of it.
class NoRuntime final : public zyfa::gpu::GpuRuntime {
public:
    const char* vendor() const noexcept override { return "nvidia"; }
    const zyfa::gpu::DeviceInfo& device() const noexcept override { return device_; }
    zyfa::gpu::ModuleHandle load_module(const void*, size_t) override {
        fail_msg("load_module");
        return nullptr;
    }
    void unload_module(zyfa::gpu::ModuleHandle) noexcept override {}
    zyfa::gpu::FunctionHandle get_function(zyfa::gpu::ModuleHandle, const char*) override {
        fail_msg("get_function");
        return nullptr;
    }
    void set_max_dynamic_shared_bytes(zyfa::gpu::FunctionHandle, uint32_t) override { fail_msg("shared bytes"); }
    zyfa::gpu::FunctionInfo function_info(zyfa::gpu::FunctionHandle) override {
        fail_msg("function_info");
        return {};
    }
    void launch(zyfa::gpu::FunctionHandle, zyfa::gpu::Dim3, zyfa::gpu::Dim3, uint32_t, zyfa::gpu::StreamHandle,
                void**) override {
        fail_msg("launch");
    }
    void locate_pointers(const void* const*, size_t, zyfa::gpu::PointerLocation*) override {
        fail_msg("locate_pointers");
    }
    void* malloc_device(size_t) override { fail_msg("malloc_device"); return nullptr; }
    void free_device(void*) noexcept override {}
    void copy_to_device(void*, const void*, size_t) override { fail_msg("copy_to_device"); }
    void copy_to_host(void*, const void*, size_t) override { fail_msg("copy_to_host"); }
    void fill_device(void*, uint8_t, size_t) override { fail_msg("fill_device"); }
    zyfa::gpu::StreamHandle create_stream() override { fail_msg("create_stream"); return nullptr; }
    void destroy_stream(zyfa::gpu::StreamHandle) noexcept override {}
    void synchronize_stream(zyfa::gpu::StreamHandle) override { fail_msg("synchronize_stream"); }
    void synchronize_device() override { fail_msg("synchronize_device"); }
    zyfa::gpu::EventHandle create_event() override { fail_msg("create_event"); return nullptr; }
    void destroy_event(zyfa::gpu::EventHandle) noexcept override {}
    void record_event(zyfa::gpu::EventHandle, zyfa::gpu::StreamHandle) override { fail_msg("record_event"); }
    float elapsed_ms(zyfa::gpu::EventHandle, zyfa::gpu::EventHandle) override { fail_msg("elapsed_ms"); return 0.0f; }
    void begin_capture(zyfa::gpu::StreamHandle) override { fail_msg("begin_capture"); }
    zyfa::gpu::GraphHandle end_capture(zyfa::gpu::StreamHandle) override {
        fail_msg("end_capture");
        return nullptr;
    }
    zyfa::gpu::GraphExecHandle instantiate_graph(zyfa::gpu::GraphHandle) override {
        fail_msg("instantiate");
        return nullptr;
    }
    void launch_graph(zyfa::gpu::GraphExecHandle, zyfa::gpu::StreamHandle) override { fail_msg("launch_graph"); }
    void destroy_graph(zyfa::gpu::GraphHandle) noexcept override {}
    void destroy_graph_exec(zyfa::gpu::GraphExecHandle) noexcept override {}

private:
    zyfa::gpu::DeviceInfo device_;
};

zyfa_status plan_status(const zyfa::gpu::AttnKernelCatalogue& catalogue, const zyfa::AttnProblem& p,
                        const zyfa::gpu::DeviceInfo& device) {
    try {
        (void)catalogue.plan(p, device, "sm_90a");
    } catch (const zyfa::Error& e) {
        return e.status();
    }
    return ZYFA_SUCCESS;
}

// The decode request with K and V in page pools [num_pages, page_size, 8, head_dim], read through
// a block table (the plan never dereferences it).
void make_paged(DecodeRequest& r, int64_t page_size, int64_t head_dim) {
    static const int32_t table[16] = {};
    static const int32_t seqused[64] = {};
    r.p.head_dim_qk = r.p.head_dim_v = head_dim;
    for (auto* t : {&r.p.q, &r.p.k, &r.p.v, &r.p.o}) {
        t->stride_head = head_dim;
        t->stride_seq = (t == &r.p.q || t == &r.p.o ? 32 : 8) * head_dim;
        t->stride_batch = t->stride_seq * (t == &r.p.q || t == &r.p.o ? 1 : page_size);
    }
    r.p.block_table = table;
    r.p.seqused_k = seqused;
    r.p.page_size = page_size;
    r.p.block_table_stride = (r.p.seqlen_k + page_size - 1) / page_size;
    r.p.num_pages = r.p.batch * r.p.block_table_stride;
}

// Paged K/V splits at both head dims and dtypes (the split kernel gathers rows through the block
// table); the launch's SplitParams carry the table. FP8 paged runs the ws_paged kernels, a paged
// problem without workspace at head dim 64 stays NOT_SUPPORTED, int32-overflowing page counts never split.
void test_catalogue_plans_paged_split(void**) {
    const auto catalogue = zyfa::cuda::make_cuda_attn_catalogue();
    const zyfa::gpu::DeviceInfo device = h200();
    NoRuntime runtime;
    const int64_t two_parts = split_kv_workspace_bytes(decode_shape(64, 1, 8192), 2);
    for (const int64_t dim : {int64_t{128}, int64_t{64}})
        for (const int64_t page_size : {int64_t{1}, int64_t{16}, int64_t{256}})
            for (const zyfa_dtype dtype : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
                SplitKvShape shape = decode_shape(64, 1, 8192);
                shape.head_dim_v = dim;
                const int64_t need = split_kv_workspace_bytes(shape, 2);
                DecodeRequest r(need);
                make_paged(r, page_size, dim);
                for (auto* t : {&r.p.q, &r.p.k, &r.p.v, &r.p.o}) t->dtype = dtype;
                assert_int_equal(catalogue->split_workspace_bytes(r.p, device, "sm_90a"), static_cast<uint64_t>(need));
                const zyfa::gpu::AttnLaunch launch = catalogue->plan(r.p, device, "sm_90a");
                assert_int_equal(launch.splits, 2);
                const std::string want = std::string("zyfa_attn_fwd_split_") +
                                         (dtype == ZYFA_DTYPE_FP16 ? "fp16" : "bf16") + (dim == 128 ? "_d128" : "_d64");
                assert_string_equal(launch.symbol, want.c_str());
                assert_true(launch.second_parameter);
                zyfa::gpu::SecondKernelParameter second{};
                catalogue->second_parameter(r.p, launch, runtime, second);
                zyfa::nvidia::SplitParams args;
                std::memcpy(&args, second.bytes, sizeof(args));
                assert_int_equal(args.split.num_splits, 2);
                assert_ptr_equal(args.split.part_o, r.workspace.data());
                assert_ptr_equal(args.paged.block_table, r.p.block_table);
                assert_ptr_equal(args.paged.seqused_k, r.p.seqused_k);
                assert_int_equal(args.paged.block_table_stride, r.p.block_table_stride);
                assert_int_equal(args.paged.page_size, page_size);
                assert_int_equal(args.paged.num_pages, r.p.num_pages);
                assert_int_equal(args.paged.tma_box_rows, 0);
            }
    // Contiguous: no table in the arguments.
    {
        DecodeRequest r(two_parts);
        const zyfa::gpu::AttnLaunch launch = catalogue->plan(r.p, device, "sm_90a");
        zyfa::gpu::SecondKernelParameter second{};
        catalogue->second_parameter(r.p, launch, runtime, second);
        zyfa::nvidia::SplitParams args;
        std::memcpy(&args, second.bytes, sizeof(args));
        assert_int_equal(args.split.num_splits, 2);
        assert_null(args.paged.block_table);
    }
    // Paged with sinks splits too.
    {
        static const float sinks[32] = {};
        DecodeRequest r(two_parts);
        make_paged(r, 16, 128);
        r.p.sinks = sinks;
        assert_true(catalogue->plan(r.p, device, "sm_90a").splits > 1);
    }
    // Paged at head dim 64 without a workspace: no paged kernel (NOT_SUPPORTED), as before.
    {
        DecodeRequest r(0);
        make_paged(r, 16, 64);
        assert_int_equal(plan_status(*catalogue, r.p, device), ZYFA_ERROR_NOT_SUPPORTED);
        assert_int_equal(catalogue->split_workspace_bytes(r.p, device, "sm_80"), 0);
    }
    // Paged FP8: the split kernels are 16-bit, so the ws_paged kernel runs, workspace untouched.
    {
        DecodeRequest r(two_parts);
        make_paged(r, 16, 128);
        for (auto* t : {&r.p.q, &r.p.k, &r.p.v}) t->dtype = ZYFA_DTYPE_FP8_E4M3FN;
        const zyfa::gpu::AttnLaunch launch = catalogue->plan(r.p, device, "sm_90a");
        assert_int_equal(launch.splits, 1);
        assert_non_null(std::strstr(launch.symbol, "ws_paged_e4m3"));
    }
    // More pages than int32 indices hold: never split; the unsplit paged kernels refuse it.
    {
        DecodeRequest r(two_parts);
        make_paged(r, 16, 128);
        r.p.num_pages = int64_t{INT32_MAX} + 1;
        assert_int_equal(catalogue->split_workspace_bytes(r.p, device, "sm_90a"), 0);
        assert_int_equal(plan_status(*catalogue, r.p, device), ZYFA_ERROR_NOT_SUPPORTED);
    }
}

// split_key_range: every block of a tile's visible range lies in exactly one split, in order,
// and no split reaches past the last visible key's block.
void test_split_key_ranges_cover_once(void**) {
    for (int32_t begin : {0, 1, 63, 64, 100, 700})
        for (int32_t length : {0, 1, 64, 65, 500, 4096})
            for (int32_t n : {1, 2, 3, 7, 64}) {
                const int32_t end = begin + length;
                const int32_t origin = begin - begin % zyfa::kSplitKeyBlock;
                int32_t next = origin, total = 0;
                for (int32_t s = 0; s < n; ++s) {
                    const zyfa::SplitKeyRange r = zyfa::split_key_range(begin, end, s, n);
                    assert_true(r.blocks >= 0);
                    if (r.blocks == 0) continue;
                    assert_int_equal(r.first_key, next);  // contiguous, in split order
                    next += r.blocks * zyfa::kSplitKeyBlock;
                    total += r.blocks;
                }
                const int32_t want = length > 0 ? (end - origin + zyfa::kSplitKeyBlock - 1) / zyfa::kSplitKeyBlock : 0;
                assert_int_equal(total, want);
                if (length > 0) {
                    assert_true(next >= end);
                    assert_true(next - zyfa::kSplitKeyBlock < end);
                }
            }
}

// The split kernel's workspace writes (common/split_kv_args.h: packed rows, key shares, part
// indices) filled here in fp64 split by split, then zyfa_attn_merge's row code with the merge
// launch's arguments (make_split_merge_kernel_args): the result must be plain attention. This
// checks on the host everything of the split path but the kernel's MMA arithmetic: that every
// visible key is in exactly one split, the GQA packing, and that the kernel writes each part
// where the merge reads it (dense and packed sequences, masks, windows, empty sequences).
struct HostSplitCase {
    int32_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, dim, splits;
    zyfa_mask mask;
    int32_t window_left;
    std::vector<int32_t> lengths_q, lengths_k;  // non-empty: packed
};

// sinks (non-empty, [heads_q]): split 0 folds each row's sink into its part as the CUDA split kernel
// does (attention_fwd_split.cuh), the others do not; the merge must then give attention with the
// sink in the denominator and the lse (rows without keys: O = 0, lse = the sink).
void run_host_split(const HostSplitCase& c, const std::vector<float>& sinks = {}) {
    const bool varlen = !c.lengths_q.empty();
    std::vector<int32_t> cu_q{0}, cu_k{0};
    for (size_t b = 0; b < c.lengths_q.size(); ++b) {
        cu_q.push_back(cu_q.back() + c.lengths_q[b]);
        cu_k.push_back(cu_k.back() + c.lengths_k[b]);
    }
    const int64_t rows_q = varlen ? cu_q.back() : int64_t{c.batch} * c.seqlen_q;
    const int64_t rows_k = varlen ? cu_k.back() : int64_t{c.batch} * c.seqlen_k;
    std::mt19937 rng(static_cast<uint32_t>(c.seqlen_q * 7 + c.splits));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> q(rows_q * c.heads_q * c.dim), k(rows_k * c.heads_kv * c.dim), v(k.size());
    for (float& x : q) x = normal(rng);
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    auto q_at = [&](int64_t row, int h) { return &q[(row * c.heads_q + h) * c.dim]; };
    auto kv_at = [&](const std::vector<float>& t, int64_t row, int h) { return &t[(row * c.heads_kv + h) * c.dim]; };
    const auto mask = static_cast<zyfa::numerics::MaskKind>(c.mask);
    const int32_t group = c.heads_q / c.heads_kv;
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.dim));

    zyfa::AttnProblem p;
    p.batch = c.batch;
    p.seqlen_q = c.seqlen_q;
    p.seqlen_k = c.seqlen_k;
    p.heads_q = c.heads_q;
    p.heads_kv = c.heads_kv;
    p.head_dim_qk = p.head_dim_v = c.dim;
    p.cu_seqlens_q = varlen ? cu_q.data() : nullptr;
    p.cu_seqlens_k = varlen ? cu_k.data() : nullptr;
    std::vector<float> out(rows_q * c.heads_q * c.dim, 12345.0f), lse(rows_q * c.heads_q, 12345.0f);
    p.o.data = out.data();
    p.o.dtype = ZYFA_DTYPE_FP32;
    p.o.stride_head = c.dim;
    p.o.stride_seq = int64_t{c.heads_q} * c.dim;
    p.o.stride_batch = varlen ? 0 : int64_t{c.seqlen_q} * p.o.stride_seq;
    p.lse = lse.data();
    const zyfa::SplitKvLayout layout = zyfa::split_kv_layout(c.batch, c.seqlen_q, c.heads_q, c.dim, c.splits);
    std::vector<float> workspace(static_cast<size_t>(layout.total_bytes / 4), std::nanf(""));
    p.workspace = workspace.data();
    float* part_o = workspace.data();
    float* part_lse = part_o + c.splits * layout.o_stride;
    const int64_t total_q = varlen ? cu_q.back() : 0;

    // What each CTA (row tile, kv head, split, sequence) of the kernel computes, in fp64.
    const int32_t row_tiles = static_cast<int32_t>(zyfa::cuda::split_kv_row_tiles(decode_shape(c.batch, c.seqlen_q, c.seqlen_k, c.heads_q, c.heads_kv)));
    for (int32_t b = 0; b < c.batch; ++b) {
        const int64_t first_q = varlen ? cu_q[b] : 0, first_k = varlen ? cu_k[b] : 0;
        const int32_t len_q = varlen ? c.lengths_q[b] : c.seqlen_q, len_k = varlen ? c.lengths_k[b] : c.seqlen_k;
        const int64_t batch_q = varlen ? 0 : int64_t{b} * c.seqlen_q, batch_k = varlen ? 0 : int64_t{b} * c.seqlen_k;
        for (int32_t hk = 0; hk < c.heads_kv; ++hk)
            for (int32_t tile = 0; tile < row_tiles; ++tile) {
                const int32_t packed0 = tile * zyfa::kSplitRows;
                if (packed0 >= group * len_q) continue;
                int32_t keys_begin = len_k, keys_end = 0;
                for (int32_t r = 0; r < zyfa::kSplitRows && packed0 + r < group * len_q; ++r) {
                    const auto range = zyfa::numerics::visible_keys(zyfa::packed_row(packed0 + r, hk, group).token, len_q,
                                                                    len_k, mask, c.window_left, -1);
                    if (range.begin < range.end) {
                        keys_begin = std::min(keys_begin, static_cast<int32_t>(range.begin));
                        keys_end = std::max(keys_end, static_cast<int32_t>(range.end));
                    }
                }
                for (int32_t split = 0; split < c.splits; ++split) {
                    const zyfa::SplitKeyRange share = zyfa::split_key_range(keys_begin, keys_end, split, c.splits);
                    for (int32_t r = 0; r < zyfa::kSplitRows && packed0 + r < group * len_q; ++r) {
                        const zyfa::PackedRow row = zyfa::packed_row(packed0 + r, hk, group);
                        const auto range = zyfa::numerics::visible_keys(row.token, len_q, len_k, mask, c.window_left, -1);
                        double m = -INFINITY, l = 0.0;
                        std::vector<double> scores, acc(c.dim, 0.0);
                        std::vector<int32_t> keys;
                        for (int32_t key = share.first_key; key < share.first_key + share.blocks * zyfa::kSplitKeyBlock; ++key) {
                            if (key < range.begin || key >= range.end) continue;
                            assert_true(key < len_k);
                            double dot = 0.0;
                            for (int d = 0; d < c.dim; ++d)
                                dot += double{q_at(batch_q + first_q + row.token, row.head)[d]} * kv_at(k, batch_k + first_k + key, hk)[d];
                            scores.push_back(dot * scale);
                            keys.push_back(key);
                            m = std::max(m, dot * scale);
                        }
                        for (size_t i = 0; i < scores.size(); ++i) {
                            const double w = std::exp(scores[i] - m);
                            l += w;
                            for (int d = 0; d < c.dim; ++d) acc[d] += w * kv_at(v, batch_k + first_k + keys[i], hk)[d];
                        }
                        if (split == 0 && !sinks.empty()) {  // the sink joins split 0's m, l (acc unchanged)
                            const double sink = sinks[row.head];
                            const double m_new = std::max(m, sink);
                            const double alpha = l > 0 ? std::exp(m - m_new) : 0.0;
                            l = l * alpha + std::exp(sink - m_new);
                            for (double& a : acc) a *= alpha;
                            m = m_new;
                        }
                        float* o_part = part_o + split * layout.o_stride +
                                        zyfa::split_part_o_index(varlen, first_q, b, c.seqlen_q, c.heads_q, c.dim, row.token, row.head);
                        for (int d = 0; d < c.dim; ++d) o_part[d] = l > 0 ? static_cast<float>(acc[d] / l) : 0.0f;
                        part_lse[split * layout.lse_stride + zyfa::split_part_lse_index(varlen, total_q, first_q, b, c.seqlen_q,
                                                                                        c.heads_q, row.token, row.head)] =
                            l > 0 ? static_cast<float>(m + std::log(l)) : -INFINITY;
                    }
                }
            }
    }
    // The merge launch, row by row on the host.
    const zyfa::MergeKernelArgs args = zyfa::gpu::make_split_merge_kernel_args(p, c.splits);
    for (int32_t b = 0; b < c.batch; ++b)
        for (int32_t h = 0; h < c.heads_q; ++h)
            for (int32_t s = 0; s < c.seqlen_q; ++s)
                for (int32_t t = 0; t < zyfa::kMergeThreads; ++t) zyfa::numerics::merge_kernel_row(args, s, h, b, t);
    // Against plain fp64 attention.
    double o_err = 0.0, lse_err = 0.0;
    for (int32_t b = 0; b < c.batch; ++b) {
        const int64_t first_q = varlen ? cu_q[b] : 0, first_k = varlen ? cu_k[b] : 0;
        const int32_t len_q = varlen ? c.lengths_q[b] : c.seqlen_q, len_k = varlen ? c.lengths_k[b] : c.seqlen_k;
        const int64_t batch_q = varlen ? 0 : int64_t{b} * c.seqlen_q, batch_k = varlen ? 0 : int64_t{b} * c.seqlen_k;
        for (int32_t t = 0; t < len_q; ++t)
            for (int32_t h = 0; h < c.heads_q; ++h) {
                const int32_t hk = h / group;
                double m = -INFINITY, l = 0.0;
                std::vector<double> scores(len_k, NAN), acc(c.dim, 0.0);
                for (int32_t j = 0; j < len_k; ++j) {
                    if (!zyfa::numerics::key_visible(t, j, len_q, len_k, mask, c.window_left, -1)) continue;
                    double dot = 0.0;
                    for (int d = 0; d < c.dim; ++d) dot += double{q_at(batch_q + first_q + t, h)[d]} * kv_at(k, batch_k + first_k + j, hk)[d];
                    scores[j] = dot * scale;
                    m = std::max(m, scores[j]);
                }
                if (!sinks.empty()) m = std::max(m, double{sinks[h]});
                for (int32_t j = 0; j < len_k; ++j) {
                    if (std::isnan(scores[j])) continue;
                    const double w = std::exp(scores[j] - m);
                    l += w;
                    for (int d = 0; d < c.dim; ++d) acc[d] += w * kv_at(v, batch_k + first_k + j, hk)[d];
                }
                if (!sinks.empty()) l += std::exp(sinks[h] - m);
                const int64_t row = batch_q + first_q + t;
                for (int d = 0; d < c.dim; ++d) {
                    const double want = l > 0 ? acc[d] / l : 0.0;
                    o_err = std::fmax(o_err, std::fabs(out[(row * c.heads_q + h) * c.dim + d] - want));
                    if (std::isnan(out[(row * c.heads_q + h) * c.dim + d])) o_err = INFINITY;
                }
                const double want_lse = l > 0 ? m + std::log(l) : -INFINITY;
                const float got = lse[zyfa::split_part_lse_index(varlen, total_q, first_q, b, c.seqlen_q, c.heads_q, t, h)];
                if (std::isinf(want_lse)) {
                    assert_true(got == -INFINITY);
                } else {
                    lse_err = std::fmax(lse_err, std::fabs(got - want_lse));
                    if (std::isnan(got)) lse_err = INFINITY;
                }
            }
    }
    // fp32 parts and an fp32 merge of fp64 values: a few ulp of O (|O| <~ 4) and of lse (<~ 10).
    assert_true(o_err <= 1e-5);
    assert_true(lse_err <= 1e-5);
}

void test_host_split_then_merge_is_attention(void**) {
    run_host_split({3, 1, 2000, 32, 8, 64, 2, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, -1, {}, {}});
    run_host_split({3, 4, 2000, 32, 8, 32, 7, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, -1, {}, {}});
    run_host_split({2, 64, 700, 8, 8, 32, 3, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, -1, {}, {}});
    run_host_split({1, 40, 700, 32, 8, 16, 5, ZYFA_MASK_NONE, -1, {}, {}});
    run_host_split({2, 16, 900, 8, 8, 32, 8, ZYFA_MASK_CAUSAL, -1, {}, {}});  // most splits see no key
    run_host_split({1, 5, 1500, 4, 1, 32, 6, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 100, {}, {}});  // window, MQA
    run_host_split({5, 4, 3000, 32, 8, 32, 5, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, -1, {1, 4, 0, 3, 2}, {3000, 700, 50, 1, 0}});
    run_host_split({5, 4, 3000, 32, 8, 16, 64, ZYFA_MASK_NONE, -1, {1, 4, 0, 3, 2}, {3000, 700, 50, 1, 0}});
    // Sinks in split 0 only: below, near and above the scores; top-left causal (later splits see
    // no key); a packed sequence without keys (its rows see only the sink).
    std::vector<float> sinks(32);
    const float pattern[] = {0.5f, -2.0f, 3.0f, 30.0f, -0.75f, 6.0f, 2.0f, -5.0f};
    for (size_t h = 0; h < sinks.size(); ++h) sinks[h] = pattern[h % 8];
    run_host_split({3, 1, 2000, 32, 8, 64, 2, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, -1, {}, {}}, sinks);
    run_host_split({2, 16, 900, 8, 8, 32, 8, ZYFA_MASK_CAUSAL, -1, {}, {}}, sinks);
    run_host_split({5, 4, 3000, 32, 8, 32, 5, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, -1, {1, 4, 0, 3, 2}, {3000, 700, 50, 1, 0}}, sinks);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heuristic_decode),
        cmocka_unit_test(test_requested_splits),
        cmocka_unit_test(test_workspace_limits_splits),
        cmocka_unit_test(test_catalogue_plans_split),
        cmocka_unit_test(test_catalogue_plans_paged_split),
        cmocka_unit_test(test_split_key_ranges_cover_once),
        cmocka_unit_test(test_host_split_then_merge_is_attention),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
