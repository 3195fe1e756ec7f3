// The NVIDIA split-KV plan from inside (links zyfa_internal; no GPU needed): the heuristic
// (src/cuda/split_kv_plan.hpp), the workspace it needs, and what the CUDA catalogue launches for a
// decode step with, without and with too little workspace. The kernels themselves:
// tests/gpu/split_kv_gpu_test.cpp on the H200.
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "common/split_kv_args.h"
#include "core/errors.hpp"
#include "cuda/attention_launch_plan.hpp"
#include "cuda/split_kv_plan.hpp"
#include "gpu/gpu_backend.hpp"

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

    // Problems the split kernels do not take run unsplit whatever the workspace: head dim 256,
    // sinks, an explicit key block.
    DecodeRequest d256(1 << 30);
    d256.p.head_dim_qk = d256.p.head_dim_v = 256;
    for (auto* t : {&d256.p.q, &d256.p.k, &d256.p.v, &d256.p.o}) t->stride_head = 256;
    assert_int_equal(catalogue->plan(d256.p, device, "sm_90a").splits, 1);
    static const float sinks[32] = {};
    DecodeRequest sinked(1 << 30);
    sinked.p.sinks = sinks;
    assert_int_equal(catalogue->plan(sinked.p, device, "sm_90a").splits, 1);
    DecodeRequest keyed(1 << 30);
    keyed.p.key_block = 128;
    try {
        (void)catalogue->plan(keyed.p, device, "sm_90a");
    } catch (const zyfa::Error&) {
        // The ws kernel's step may differ from 128: NOT_SUPPORTED is a valid answer too.
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heuristic_decode),
        cmocka_unit_test(test_requested_splits),
        cmocka_unit_test(test_workspace_limits_splits),
        cmocka_unit_test(test_catalogue_plans_split),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
