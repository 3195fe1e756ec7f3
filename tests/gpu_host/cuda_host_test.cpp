// The host side of the NVIDIA backend without a GPU: what happens with no driver, with the real
// soname on a machine that has none, with a driver whose cuInit fails, and over a test double of
// libcuda.so.1 that records module loads, context switches and launches. argv[1] names the
// scenario; CTest runs each in its own process (the driver is loaded once per process).
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "common/attention_kernel_args.h"
#include "core/errors.hpp"
#include "core/validate.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/cuda_runtime.hpp"
#include "fake_cuda_state.h"
#include "gpu/gpu_backend.hpp"
#include "nvidia/attention_ws_tma_params.h"
#include "nvidia/quantize_fp8_args.h"
#include "support/cuda_context.hpp"
#include "zyfa.h"

namespace zyfa {
namespace gpu {
EmbeddedImageTable fixture_image_table() noexcept;
}
}  // namespace zyfa

namespace {

constexpr int kSkip = 77;

template <class Body>
void expect_error(Body&& body, zyfa_status status, const char* needle) {
    try {
        body();
        fail_msg("expected status %d, got success", status);
    } catch (const zyfa::Error& error) {
        if (error.status() != status || std::strstr(error.what(), needle) == nullptr) {
            fail_msg("expected status %d with \"%s\", got %d: %s", status, needle, error.status(), error.what());
        }
    }
}

// Public API: the CUDA backend fails with `status` and AUTO falls back to the CPU backend.
void expect_public_api_falls_back(zyfa_status cuda_status, const char* needle) {
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
#ifdef ZYFA_TEST_CUDA_COMPILED_IN
    assert_int_equal(zyfa_context_create(&options, &ctx), cuda_status);
    assert_non_null(std::strstr(zyfa_last_error_message(), needle));
#else
    (void)cuda_status;
    (void)needle;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_ERROR_NOT_SUPPORTED);
    assert_non_null(std::strstr(zyfa_last_error_message(), "not compiled into this build"));
#endif
    assert_null(ctx);
    options.backend = ZYFA_BACKEND_AUTO;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_SUCCESS);
    assert_int_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_CPU);
    zyfa_context_destroy(ctx);
}

// --- missing_library: ZYFA_CUDA_LIBRARY names a file that does not exist -----------------------
void missing_library_is_no_device(void**) {
    expect_error([] { zyfa::cuda::make_cuda_backend(0); }, ZYFA_ERROR_NO_DEVICE, "ZYFA_CUDA_LIBRARY");
    expect_error([] { zyfa::cuda::open_cuda_runtime(0); }, ZYFA_ERROR_NO_DEVICE, "no-such-dir/libcuda.so.1");
    expect_public_api_falls_back(ZYFA_ERROR_NO_DEVICE, "cannot load the CUDA driver");
}

// --- default_soname: no override; this machine's libcuda.so.1, if any --------------------------
void default_soname_without_driver(void**) {
    expect_error([] { zyfa::cuda::make_cuda_backend(0); }, ZYFA_ERROR_NO_DEVICE, "libcuda.so.1");
    expect_public_api_falls_back(ZYFA_ERROR_NO_DEVICE, "libcuda.so.1");
}

// --- init_errors: the double's cuInit fails ---------------------------------------------------
void init_errors_are_no_device_with_driver_text(void**) {
    setenv("FAKE_CUDA_INIT_ERROR", "100", 1);
    expect_error([] { zyfa::cuda::make_cuda_backend(0); }, ZYFA_ERROR_NO_DEVICE,
                 "cuInit");
    expect_error([] { zyfa::cuda::make_cuda_backend(0); }, ZYFA_ERROR_NO_DEVICE,
                 "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
    setenv("FAKE_CUDA_INIT_ERROR", "34", 1);  // the toolkit's stub library
    expect_error([] { zyfa::cuda::make_cuda_backend(0); }, ZYFA_ERROR_NO_DEVICE, "CUDA_ERROR_STUB_LIBRARY");
    expect_public_api_falls_back(ZYFA_ERROR_NO_DEVICE, "CUDA_ERROR_STUB_LIBRARY");
    setenv("FAKE_CUDA_INIT_ERROR", "999", 1);  // unknown to the driver's name table
    expect_error([] { zyfa::cuda::make_cuda_backend(0); }, ZYFA_ERROR_DEVICE, "CUresult 999");
    unsetenv("FAKE_CUDA_INIT_ERROR");
}

// --- fake_device: the double reports one device ------------------------------------------------
fake_cuda_state* fake_state() {
    void* handle = dlopen(std::getenv("ZYFA_CUDA_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(handle);
    auto get = reinterpret_cast<fake_cuda_state_fn>(dlsym(handle, "fake_cuda_state"));
    assert_non_null(reinterpret_cast<void*>(get));
    return get();
}

// A catalogue over the fixture images: sm_90a has fixture_a (two kernels) and fixture_c (one that
// needs more shared memory than some devices allow).
class TestCatalogue final : public zyfa::gpu::AttnKernelCatalogue {
public:
    std::vector<zyfa::gpu::KernelSpec> kernels(const std::string& image_arch) const override {
        if (image_arch == "sm_90a") {
            return {{"fixture_a", "attn_test", 100 * 1024}, {"fixture_a", "attn_small", 0},
                    {"fixture_c", "attn_huge", 200 * 1024}};
        }
        if (image_arch == "sm_80") return {{"fixture_b", "attn_test", 0}};
        return {};
    }
    zyfa::gpu::AttnLaunch plan(const zyfa::AttnProblem& problem, const zyfa::gpu::DeviceInfo&,
                               const std::string& image_arch) const override {
        if (problem.head_dim_qk == 64) zyfa::throw_not_supported("test catalogue: params.head_dim_qk = 64");
        zyfa::gpu::AttnLaunch launch;
        launch.variant = image_arch == "sm_80" ? "fixture_b" : problem.head_dim_qk == 256 ? "fixture_c" : "fixture_a";
        launch.symbol = problem.head_dim_qk == 256 ? "attn_huge" : "attn_test";
        launch.kernel_name = "test_kernel";
        launch.grid = {static_cast<uint32_t>((problem.seqlen_q + 63) / 64), static_cast<uint32_t>(problem.heads_q),
                       static_cast<uint32_t>(problem.batch)};
        launch.block = {128, 1, 1};
        launch.shared_bytes = image_arch == "sm_80" ? 0 : problem.head_dim_qk == 256 ? 200 * 1024 : 100 * 1024;
        return launch;
    }
    float lean_centre() const override { return 0.25f; }
};

struct Request {
    zyfa_attn_params params;
    zyfa_tensor q, k, v, o;
    float* lse_placeholder = reinterpret_cast<float*>(uintptr_t{0x800000});

    explicit Request(int64_t head_dim) {
        zyfa_attn_params_init(&params, sizeof(params));
        params.batch = 2;
        params.seqlen_q = 100;
        params.seqlen_k = 130;
        params.heads_q = 8;
        params.heads_kv = 2;
        params.head_dim_qk = params.head_dim_v = head_dim;
        params.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
        params.window_left = 17;
        params.lse = lse_placeholder;  // never dereferenced: the double does not run kernels
        q = view(0x100000, 8, head_dim, params.seqlen_q);
        k = view(0x200000, 2, head_dim, params.seqlen_k);
        v = view(0x300000, 2, head_dim, params.seqlen_k);
        o = view(0x400000, 8, head_dim, params.seqlen_q);
        o.dtype = ZYFA_DTYPE_FP16;
    }
    // Device pointers the double never touches (its device 0 window, fake_cuda_state.h).
    static zyfa_tensor view(uintptr_t address, int64_t heads, int64_t dim, int64_t seq) {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof(t));
        t.data = reinterpret_cast<void*>(address);
        t.dtype = ZYFA_DTYPE_BF16;
        t.stride_head = dim;
        t.stride_seq = heads * dim;
        t.stride_batch = seq * heads * dim;
        return t;
    }
    zyfa::AttnProblem problem() const { return zyfa::validate_attn(&params, &q, &k, &v, &o, ZYFA_BACKEND_CUDA); }
};

std::unique_ptr<zyfa::Backend> fixture_backend(const zyfa::gpu::KernelRegistry& registry) {
    return zyfa::cuda::make_cuda_backend(zyfa::cuda::open_cuda_runtime(0), std::make_unique<TestCatalogue>(),
                                         registry);
}

void device_info_from_the_driver(void**) {
    setenv("FAKE_CUDA_CC", "86", 1);
    std::unique_ptr<zyfa::gpu::GpuRuntime> runtime = zyfa::cuda::open_cuda_runtime(0);
    const zyfa::gpu::DeviceInfo& device = runtime->device();
    assert_string_equal(device.name.c_str(), "Fake CUDA Device");
    assert_string_equal(device.arch.c_str(), "sm_86");
    assert_int_equal(device.multiprocessors, 132);
    assert_int_equal(device.compute_major, 8);
    assert_int_equal(device.compute_minor, 6);
    // "a" cubins run only on their exact arch; plain cubins on the same major with minor <= ours.
    const char* expected[] = {"sm_86a", "sm_86", "sm_85", "sm_84", "sm_83", "sm_82", "sm_81", "sm_80"};
    assert_int_equal(device.image_archs.size(), 8);
    for (size_t i = 0; i < 8; ++i) assert_string_equal(device.image_archs[i].c_str(), expected[i]);
    const zyfa::gpu::KernelRegistry registry(zyfa::gpu::fixture_image_table());
    assert_string_equal(zyfa::gpu::select_image_arch(registry, "nvidia", device).c_str(), "sm_80");
    expect_error([] { zyfa::cuda::open_cuda_runtime(1); }, ZYFA_ERROR_NO_DEVICE, "sees 1 device");
    setenv("FAKE_CUDA_CC", "90", 1);
    runtime = zyfa::cuda::open_cuda_runtime(0);
    assert_string_equal(zyfa::gpu::select_image_arch(registry, "nvidia", runtime->device()).c_str(), "sm_90a");
}

void creation_loads_each_module_once_and_raises_shared_memory(void**) {
    setenv("FAKE_CUDA_CC", "90", 1);
    fake_cuda_state* state = fake_state();
    const zyfa::gpu::KernelRegistry registry(zyfa::gpu::fixture_image_table());
    const int loaded_before = state->modules_loaded;
    const int unloaded_before = state->modules_unloaded;
    {
        std::unique_ptr<zyfa::Backend> backend = fixture_backend(registry);
        assert_string_equal(backend->device_name(), "sm_90");
        assert_int_equal(backend->kind(), ZYFA_BACKEND_CUDA);
        // fixture_a holds two kernels, fixture_c one: two modules, each the embedded bytes.
        assert_int_equal(state->modules_loaded - loaded_before, 2);
        assert_ptr_equal(state->module_images[loaded_before], registry.find("nvidia", "sm_90a", "fixture_a")->data);
        assert_ptr_equal(state->module_images[loaded_before + 1], registry.find("nvidia", "sm_90a", "fixture_c")->data);
        assert_int_equal(state->max_dynamic_shared, 200 * 1024);
        assert_int_equal(state->calls_without_context, 0);
        assert_int_equal(state->context_depth, 0);  // the caller's (empty) context stack restored
    }
    assert_int_equal(state->modules_unloaded - unloaded_before, 2);
    assert_int_equal(state->primary_retains, 0);
}

void fwd_launches_the_plan_with_the_problem_as_arguments(void**) {
    setenv("FAKE_CUDA_CC", "90", 1);
    fake_cuda_state* state = fake_state();
    state->param_bytes = sizeof(zyfa::AttnKernelArgs);
    const zyfa::gpu::KernelRegistry registry(zyfa::gpu::fixture_image_table());
    std::unique_ptr<zyfa::Backend> backend = fixture_backend(registry);
    const Request request(128);
    const zyfa::AttnProblem problem = request.problem();
    backend->check_attn_supported(problem);
    assert_string_equal(backend->attn_kernel_name(problem), "test_kernel");

    const int launches_before = state->launches;
    const int syncs_before = state->synchronizations;
    int stream_marker = 0;
    backend->attn_fwd(problem, &stream_marker);
    assert_int_equal(state->launches - launches_before, 1);
    assert_int_equal(state->synchronizations, syncs_before);  // never synchronises
    assert_ptr_equal(state->stream, &stream_marker);          // the caller's stream
    assert_int_equal(state->grid[0], 2);
    assert_int_equal(state->grid[1], 8);
    assert_int_equal(state->grid[2], 2);
    assert_int_equal(state->block[0], 128);
    assert_int_equal(state->shared_bytes, 100 * 1024);
    assert_int_equal(state->calls_without_context, 0);
    assert_int_equal(state->context_depth, 0);

    zyfa::AttnKernelArgs args;
    std::memcpy(&args, state->param, sizeof(args));
    assert_ptr_equal(args.q, request.q.data);
    assert_ptr_equal(args.k, request.k.data);
    assert_ptr_equal(args.v, request.v.data);
    assert_ptr_equal(args.o, request.o.data);
    assert_ptr_equal(args.lse, request.lse_placeholder);
    assert_null(args.cu_seqlens_q);
    assert_null(args.q_descale);
    assert_int_equal(args.q_stride_seq, 8 * 128);
    assert_int_equal(args.k_stride_seq, 2 * 128);
    assert_int_equal(args.v_stride_batch, 130 * 2 * 128);
    assert_int_equal(args.o_stride_batch, 100 * 8 * 128);
    assert_int_equal(args.batch, 2);
    assert_int_equal(args.seqlen_q, 100);
    assert_int_equal(args.seqlen_k, 130);
    assert_int_equal(args.heads_q, 8);
    assert_int_equal(args.heads_kv, 2);
    assert_int_equal(args.head_dim_qk, 128);
    assert_int_equal(args.head_dim_v, 128);
    assert_int_equal(args.mask, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT);
    assert_int_equal(args.window_left, 17);
    assert_int_equal(args.window_right, -1);
    assert_int_equal(args.in_dtype, zyfa::kKernelBf16);
    assert_int_equal(args.out_dtype, zyfa::kKernelFp16);
    assert_int_equal(args.softmax, ZYFA_SOFTMAX_EXACT);
    assert_true(args.softmax_scale == problem.softmax_scale);
    assert_true(args.lean_centre == 0.25f);
    assert_null(args.sinks);

}

void unsupported_plans_and_devices_are_not_supported(void**) {
    setenv("FAKE_CUDA_CC", "90", 1);
    const zyfa::gpu::KernelRegistry registry(zyfa::gpu::fixture_image_table());
    {
        std::unique_ptr<zyfa::Backend> backend = fixture_backend(registry);
        const Request small(64);
        expect_error([&] { backend->check_attn_supported(small.problem()); }, ZYFA_ERROR_NOT_SUPPORTED,
                     "params.head_dim_qk = 64");
        // The test catalogue lists no quantize kernels.
        expect_error([&] { backend->check_quantize_supported(zyfa::QuantProblem()); }, ZYFA_ERROR_NOT_SUPPORTED,
                     "zyfa_quantize_fp8");
        // The INT8 quantiser neither, naming itself.
        zyfa::QuantProblem int8_quant;
        int8_quant.out.dtype = ZYFA_DTYPE_INT8;
        int8_quant.scale_rows = 1;
        expect_error([&] { backend->check_quantize_supported(int8_quant); }, ZYFA_ERROR_NOT_SUPPORTED,
                     "zyfa_quantize_int8 has no nvidia kernel for");
    }
    // A device whose opt-in shared memory is below what attn_huge needs: that kernel only.
    setenv("FAKE_CUDA_SHARED_OPTIN", "167936", 1);  // 164 KiB, as on sm_80
    {
        std::unique_ptr<zyfa::Backend> backend = fixture_backend(registry);
        const Request huge(256);
        expect_error([&] { backend->check_attn_supported(huge.problem()); }, ZYFA_ERROR_NOT_SUPPORTED,
                     "needs 204800 bytes of shared memory");
        backend->check_attn_supported(Request(128).problem());
    }
    unsetenv("FAKE_CUDA_SHARED_OPTIN");
    // A GPU without any embedded image: creation succeeds, every problem is NOT_SUPPORTED.
    setenv("FAKE_CUDA_CC", "75", 1);
    std::unique_ptr<zyfa::Backend> backend = fixture_backend(registry);
    assert_string_equal(backend->device_name(), "sm_75");
    expect_error([&] { backend->check_attn_supported(Request(128).problem()); }, ZYFA_ERROR_NOT_SUPPORTED,
                 "no nvidia kernels for sm_75 (Fake CUDA Device); embedded: sm_90a, sm_80");
    setenv("FAKE_CUDA_CC", "90", 1);
}

void runtime_helpers_reach_the_driver(void**) {
    std::unique_ptr<zyfa::gpu::GpuRuntime> runtime = zyfa::cuda::open_cuda_runtime(0);
    void* buffer = runtime->malloc_device(64);
    const char text[] = "zyfa";
    runtime->copy_to_device(buffer, text, sizeof(text));
    char back[sizeof(text)] = {};
    runtime->copy_to_host(back, buffer, sizeof(back));
    assert_string_equal(back, "zyfa");
    runtime->free_device(buffer);
    void* stream = runtime->create_stream();
    void* start = runtime->create_event();
    runtime->record_event(start, stream);
    assert_true(runtime->elapsed_ms(start, start) == 1.5f);  // the double's fixed answer
    runtime->begin_capture(stream);
    void* graph = runtime->end_capture(stream);
    void* exec = runtime->instantiate_graph(graph);
    runtime->launch_graph(exec, stream);
    runtime->synchronize_stream(stream);
    runtime->destroy_graph_exec(exec);
    runtime->destroy_graph(graph);
    runtime->destroy_event(start);
    runtime->destroy_stream(stream);
    assert_int_equal(fake_state()->calls_without_context, 0);
    assert_int_equal(fake_state()->context_depth, 0);
}

// CudaRuntime::encode_tensor_map passes a request through cuTensorMapEncodeTiled unchanged (rank
// 4, unit element strides, no interleave, no swizzle or the 128-byte one, zero fill) with its
// context current, and reports the driver's refusal; element sizes the maps do not use never
// reach the driver.
void runtime_encodes_tensor_maps_through_the_driver(void**) {
    std::unique_ptr<zyfa::gpu::GpuRuntime> runtime = zyfa::cuda::open_cuda_runtime(0);
    fake_cuda_state* state = fake_state();
    state->tma_encodes = state->tma_violations = state->tma_unnested = state->tma_encodes_without_context = 0;
    zyfa::gpu::TiledTensorMap4d request;
    request.base = reinterpret_cast<const void*>(uintptr_t{0x10000});
    request.element_bytes = 2;
    const uint64_t dims[4] = {64, 3, 50, 4};
    const uint64_t strides[3] = {128, 384, 19200};
    const uint32_t box[4] = {8, 1, 64, 1};
    std::memcpy(request.dims, dims, sizeof(dims));
    std::memcpy(request.strides_bytes, strides, sizeof(strides));
    std::memcpy(request.box, box, sizeof(box));
    alignas(64) unsigned char map[128] = {};
    assert_true(runtime->encode_tensor_map(map, request));
    assert_int_equal(state->tma_encodes, 1);
    assert_int_equal(state->tma_violations, 0);
    const fake_cuda_tma_request& r = state->tma_requests[0];
    assert_ptr_equal(r.map, map);
    assert_ptr_equal(r.global_address, request.base);
    assert_int_equal(r.data_type, 1);  // UINT16
    assert_int_equal(r.rank, 4);
    for (int d = 0; d < 4; ++d) {
        assert_int_equal(r.dims[d], dims[d]);
        assert_int_equal(r.box[d], box[d]);
        assert_int_equal(r.element_strides[d], 1);
        if (d < 3) assert_int_equal(r.strides[d], strides[d]);
    }
    assert_int_equal(r.interleave, 0);
    assert_int_equal(r.swizzle, 0);
    assert_int_equal(r.oob_fill, 0);
    uint64_t first_word;
    std::memcpy(&first_word, map, sizeof(first_word));
    assert_true(first_word == FAKE_CUDA_TMA_MAGIC);  // the driver wrote into the caller's map

    // A request the driver refuses (a stride that is not a multiple of 16 bytes): false.
    request.strides_bytes[0] = 120;
    assert_false(runtime->encode_tensor_map(map, request));
    assert_int_equal(state->tma_encodes, 2);
    assert_int_equal(state->tma_violations, 1);  // the double's check matches the documented bound
    request.strides_bytes[0] = 128;
    setenv("FAKE_CUDA_TMA_REJECT", "1", 1);
    assert_false(runtime->encode_tensor_map(map, request));
    unsetenv("FAKE_CUDA_TMA_REJECT");
    assert_int_equal(state->tma_encodes, 3);
    // The 128-byte swizzle (CU_TENSOR_MAP_SWIZZLE_128B = 3) over 128-byte rows of bytes.
    request.element_bytes = 1;
    request.box[0] = 128;
    request.swizzle_128b = true;
    assert_true(runtime->encode_tensor_map(map, request));
    assert_int_equal(state->tma_encodes, 4);
    assert_int_equal(state->tma_requests[3].data_type, 0);  // UINT8
    assert_int_equal(state->tma_requests[3].swizzle, 3);
    assert_int_equal(state->tma_requests[3].box[0], 128);
    request.box[0] = 256;  // rows wider than the swizzle span: the driver refuses
    assert_false(runtime->encode_tensor_map(map, request));
    assert_int_equal(state->tma_violations, 2);
    request.element_bytes = 4;  // not a data type the maps use: refused before the driver
    assert_false(runtime->encode_tensor_map(map, request));
    assert_int_equal(state->tma_encodes, 5);
    // The runtime makes its context current for the driver, and restores the caller's (none).
    assert_int_equal(state->tma_encodes_without_context, 0);
    assert_int_equal(state->context_depth, 0);
    state->tma_violations = 0;
}

// --- pointer_checks: where each pointer lives, from cuPointerGetAttributes over the double -----
const void* window(unsigned long long address) { return reinterpret_cast<const void*>(uintptr_t{address}); }

void expect_location(const zyfa::gpu::PointerLocation& where, zyfa::gpu::MemoryLocation location, int device) {
    assert_int_equal(static_cast<int>(where.location), static_cast<int>(location));
    assert_int_equal(where.device, device);
}

// CudaRuntime::locate_pointers: device memory (cuMemAlloc'd, also inside a block; the placeholder
// window), another device's, managed and pinned host memory (accepted), malloc'd and stack memory
// (the driver does not know them); with pageable memory access (HMM/ATS) any host memory.
void runtime_locates_pointers_through_the_driver(void**) {
    using zyfa::gpu::MemoryLocation;
    std::unique_ptr<zyfa::gpu::GpuRuntime> runtime = zyfa::cuda::open_cuda_runtime(0);
    assert_false(runtime->device().pageable_memory_access);
    fake_cuda_state* state = fake_state();
    void* device = runtime->malloc_device(256);
    std::vector<unsigned char> host(1 << 20);
    int on_stack = 0;
    const void* pointers[] = {device, static_cast<char*>(device) + 100, window(FAKE_CUDA_DEVICE0_BEGIN),
                              window(FAKE_CUDA_DEVICE1_BEGIN + 64), window(FAKE_CUDA_MANAGED_BEGIN),
                              window(FAKE_CUDA_PINNED_BEGIN), host.data(), &on_stack};
    zyfa::gpu::PointerLocation where[8];
    const int queries = state->pointer_queries, syncs = state->synchronizations, allocations = state->allocations;
    runtime->locate_pointers(pointers, 8, where);
    expect_location(where[0], MemoryLocation::ThisDevice, 0);
    expect_location(where[1], MemoryLocation::ThisDevice, 0);
    expect_location(where[2], MemoryLocation::ThisDevice, 0);
    expect_location(where[3], MemoryLocation::OtherDevice, 1);
    expect_location(where[4], MemoryLocation::AccessibleHost, -1);
    expect_location(where[5], MemoryLocation::AccessibleHost, -1);
    expect_location(where[6], MemoryLocation::InaccessibleHost, -1);
    expect_location(where[7], MemoryLocation::InaccessibleHost, -1);
    // One query per pointer, a second for pinned memory's device address; nothing else.
    assert_int_equal(state->pointer_queries - queries, 9);
    assert_int_equal(state->synchronizations, syncs);
    assert_int_equal(state->allocations, allocations);
    assert_int_equal(state->calls_without_context, 0);
    assert_int_equal(state->context_depth, 0);
    runtime->free_device(device);
    runtime->locate_pointers(pointers, 1, where);  // freed: the driver no longer knows it
    expect_location(where[0], MemoryLocation::InaccessibleHost, -1);

    setenv("FAKE_CUDA_PAGEABLE_ACCESS", "1", 1);
    runtime = zyfa::cuda::open_cuda_runtime(0);
    unsetenv("FAKE_CUDA_PAGEABLE_ACCESS");
    assert_true(runtime->device().pageable_memory_access);
    runtime->locate_pointers(pointers + 3, 5, where);
    expect_location(where[0], MemoryLocation::OtherDevice, 1);
    for (int i = 1; i < 5; ++i) expect_location(where[i], MemoryLocation::AccessibleHost, -1);
}

// Public API over the double: an sm_75 device has no embedded cubin in any build.
#ifdef ZYFA_TEST_CUDA_COMPILED_IN
void public_api_on_a_device_without_cubins(void**) {
    setenv("FAKE_CUDA_CC", "75", 1);
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_SUCCESS);
    assert_string_equal(zyfa_context_device_name(ctx), "sm_75");
    const Request request(128);
    assert_int_equal(zyfa_attn_supported(ctx, &request.params, &request.q, &request.k, &request.v, &request.o),
                     ZYFA_ERROR_NOT_SUPPORTED);
    assert_non_null(std::strstr(zyfa_last_error_message(), "sm_75"));
    assert_null(zyfa_attn_kernel_name(ctx, &request.params, &request.q, &request.k, &request.v, &request.o));
    zyfa_context_destroy(ctx);
    options.backend = ZYFA_BACKEND_AUTO;  // HIP is absent, the CUDA device is found
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_SUCCESS);
    assert_int_equal(zyfa_context_backend(ctx), ZYFA_BACKEND_CUDA);
    zyfa_context_destroy(ctx);
    setenv("FAKE_CUDA_CC", "90", 1);
}

// Public API over the double with this build's own cubins and launch plan (when it embeds sm_90a):
// zyfa_attn_fwd enqueues exactly one launch on the caller's stream, with the caller's pointers,
// and allocates, synchronises and leaves the caller's context stack as it was.
void public_api_fwd_enqueues_one_launch(void**) {
    setenv("FAKE_CUDA_CC", "90", 1);
    fake_cuda_state* state = fake_state();
    state->param_bytes = sizeof(zyfa::AttnKernelArgs);
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_SUCCESS);
    assert_string_equal(zyfa_context_device_name(ctx), "sm_90");

    Request request(128);
    request.params.lse = nullptr;
    if (!zyfa::gpu::KernelRegistry::embedded().has_arch("nvidia", "sm_90a")) {
        // A build without sm_90a cubins (ZYFA_CUDA_ARCHS): the same device is NOT_SUPPORTED.
        assert_int_equal(zyfa_attn_supported(ctx, &request.params, &request.q, &request.k, &request.v, &request.o),
                         ZYFA_ERROR_NOT_SUPPORTED);
        assert_non_null(std::strstr(zyfa_last_error_message(), "sm_90"));
        zyfa_context_destroy(ctx);
        return;
    }
    assert_int_equal(zyfa_attn_supported(ctx, &request.params, &request.q, &request.k, &request.v, &request.o),
                     ZYFA_SUCCESS);
    const int launches = state->launches, allocations = state->allocations, syncs = state->synchronizations;
    const int loads = state->modules_loaded;
    int stream_marker = 0;
    assert_int_equal(zyfa_attn_fwd(ctx, &request.params, &request.q, &request.k, &request.v, &request.o, &stream_marker),
                     ZYFA_SUCCESS);
    assert_int_equal(state->launches - launches, 1);
    assert_int_equal(state->allocations, allocations);
    assert_int_equal(state->synchronizations, syncs);
    assert_int_equal(state->modules_loaded, loads);  // everything was loaded at create time
    assert_ptr_equal(state->stream, &stream_marker);
    assert_int_equal(state->context_depth, 0);
    assert_int_equal(state->calls_without_context, 0);
    zyfa::AttnKernelArgs args;
    std::memcpy(&args, state->param, sizeof(args));
    assert_ptr_equal(args.q, request.q.data);
    assert_ptr_equal(args.o, request.o.data);
    assert_int_equal(args.seqlen_k, 130);

    request.params.batch = 0;  // an empty problem: success, no launch
    assert_int_equal(zyfa_attn_fwd(ctx, &request.params, &request.q, &request.k, &request.v, &request.o, nullptr),
                     ZYFA_SUCCESS);
    assert_int_equal(state->launches - launches, 1);
    zyfa_context_destroy(ctx);
    assert_int_equal(state->modules_unloaded, state->modules_loaded);
}

// Public API over the double with this build's quantize cubin: zyfa_quantize_fp8 enqueues exactly
// four launches (clear, amax, encode, finish) on the caller's stream, five with ZYFA_QUANT_SMOOTH
// (the mean after clear), allocates nothing (the caller's descale buffer is the amax scratch, its
// smooth_mean buffer the means') and never synchronises.
void public_api_quantize_enqueues_four_launches(void**) {
    setenv("FAKE_CUDA_CC", "90", 1);
    fake_cuda_state* state = fake_state();
    state->param_bytes = sizeof(zyfa::QuantFp8KernelArgs);
    state->second_param_bytes = 0;  // the quantize kernels take one parameter
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
    assert_int_equal(zyfa_context_create(&options, &ctx), ZYFA_SUCCESS);

    zyfa_quant_params params;
    zyfa_quant_params_init(&params, sizeof(params));
    params.flags = ZYFA_QUANT_HADAMARD;
    params.batch = 2;
    params.seqlen = 100;
    params.heads = 300;
    params.head_dim = 128;
    zyfa_tensor in = Request::view(0x100000, params.heads, params.head_dim, params.seqlen);
    zyfa_tensor out = Request::view(0x1000000, params.heads, params.head_dim, params.seqlen);  // past in's bytes
    out.dtype = ZYFA_DTYPE_FP8_E4M3FNUZ;
    float* descale = reinterpret_cast<float*>(uintptr_t{0x2000000});  // never dereferenced by the double
    const bool embedded = zyfa::gpu::KernelRegistry::embedded().find("nvidia", "sm_90a", "quantize_fp8") != nullptr ||
                          zyfa::gpu::KernelRegistry::embedded().find("nvidia", "sm_80", "quantize_fp8") != nullptr;
    int stream_marker = 0;
    if (!embedded) {  // a build without NVIDIA cubins for this device: NOT_SUPPORTED, nothing launched
        const int launches = state->launches;
        assert_int_equal(zyfa_quantize_fp8(ctx, &params, &in, &out, descale, &stream_marker), ZYFA_ERROR_NOT_SUPPORTED);
        assert_int_equal(state->launches, launches);
        zyfa_context_destroy(ctx);
        return;
    }
    const int launches = state->launches, allocations = state->allocations, syncs = state->synchronizations;
    const int loads = state->modules_loaded;
    assert_int_equal(zyfa_quantize_fp8(ctx, &params, &in, &out, descale, &stream_marker), ZYFA_SUCCESS);
    assert_int_equal(state->launches - launches, 4);
    assert_int_equal(state->allocations, allocations);
    assert_int_equal(state->synchronizations, syncs);
    assert_int_equal(state->modules_loaded, loads);
    assert_ptr_equal(state->stream, &stream_marker);
    assert_int_equal(state->context_depth, 0);
    assert_int_equal(state->calls_without_context, 0);
    // The last launch is finish: one thread per (batch, head) slice, 600 slices in blocks of 256.
    assert_int_equal(state->grid[0], 3);
    assert_int_equal(state->grid[1], 1);
    assert_int_equal(state->block[0], zyfa::kQuantThreads);
    zyfa::QuantFp8KernelArgs args;
    std::memcpy(&args, state->param, sizeof(args));
    assert_ptr_equal(args.in, in.data);
    assert_ptr_equal(args.out, out.data);
    assert_ptr_equal(args.descale, descale);
    assert_null(args.cu_seqlens);
    assert_int_equal(args.in_stride_seq, 300 * 128);
    assert_int_equal(args.out_stride_batch, 100 * 300 * 128);
    assert_int_equal(args.seqlen, 100);
    assert_int_equal(args.heads, 300);
    assert_int_equal(args.slices, 600);
    assert_int_equal(args.in_dtype, zyfa::kKernelBf16);
    assert_int_equal(args.out_dtype, zyfa::kKernelE4m3fnuz);
    assert_int_equal(args.hadamard_block, 128);
    assert_null(args.smooth_mean);

    // K smoothing: one more launch, the caller's mean buffer in the arguments.
    params.flags = ZYFA_QUANT_HADAMARD | ZYFA_QUANT_SMOOTH;
    params.smooth_mean = reinterpret_cast<float*>(uintptr_t{0x3000000});
    assert_int_equal(zyfa_quantize_fp8(ctx, &params, &in, &out, descale, &stream_marker), ZYFA_SUCCESS);
    assert_int_equal(state->launches - launches, 9);
    assert_int_equal(state->allocations, allocations);
    assert_int_equal(state->synchronizations, syncs);
    std::memcpy(&args, state->param, sizeof(args));
    assert_ptr_equal(args.smooth_mean, params.smooth_mean);
    params.flags = ZYFA_QUANT_HADAMARD;
    params.smooth_mean = nullptr;

    // zyfa_quantize_int8: one launch (zyfa_quantize_int8_groups over the row grid: 2 blocks of 64
    // rows per (head, batch)), two with smoothing; the scale rows and groups in the arguments.
    for (int32_t rows : {1, 64}) {
        params.scale_rows = rows;
        out.dtype = ZYFA_DTYPE_INT8;
        const int before = state->launches;
        assert_int_equal(zyfa_quantize_int8(ctx, &params, &in, &out, descale, &stream_marker), ZYFA_SUCCESS);
        assert_int_equal(state->launches - before, 1);
        assert_int_equal(state->grid[0], 2);
        assert_int_equal(state->grid[1], 300);
        assert_int_equal(state->grid[2], 2);
        std::memcpy(&args, state->param, sizeof(args));
        assert_int_equal(args.out_dtype, zyfa::kKernelInt8);
        assert_int_equal(args.scale_rows, rows);
        assert_int_equal(args.scale_groups, rows == 1 ? 100 : 2);
        params.flags = ZYFA_QUANT_HADAMARD | ZYFA_QUANT_SMOOTH;
        params.smooth_mean = reinterpret_cast<float*>(uintptr_t{0x3000000});
        assert_int_equal(zyfa_quantize_int8(ctx, &params, &in, &out, descale, &stream_marker), ZYFA_SUCCESS);
        assert_int_equal(state->launches - before, 3);
        assert_int_equal(state->allocations, allocations);
        assert_int_equal(state->synchronizations, syncs);
        params.flags = ZYFA_QUANT_HADAMARD;
        params.smooth_mean = nullptr;
    }
    params.scale_rows = 0;
    out.dtype = ZYFA_DTYPE_FP8_E4M3FNUZ;
    const int after_int8 = state->launches - launches - 9;
    assert_int_equal(after_int8, 6);

    // An empty problem: success, no launch.
    params.seqlen = 0;
    assert_int_equal(zyfa_quantize_fp8(ctx, &params, &in, &out, descale, &stream_marker), ZYFA_SUCCESS);
    assert_int_equal(state->launches - launches, 15);
    // A Hadamard block wider than the kernels' shared buffer: NOT_SUPPORTED, nothing launched.
    params.seqlen = 4;
    params.head_dim = 2048;
    in = Request::view(0x100000, params.heads, params.head_dim, params.seqlen);
    out = Request::view(0x1000000, params.heads, params.head_dim, params.seqlen);
    out.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    assert_int_equal(zyfa_quantize_fp8(ctx, &params, &in, &out, descale, &stream_marker), ZYFA_ERROR_NOT_SUPPORTED);
    assert_non_null(std::strstr(zyfa_last_error_message(), "params.head_dim = 2048"));
    assert_int_equal(state->launches - launches, 15);
    zyfa_context_destroy(ctx);
}

// --- tma_maps: the tensor maps of the sm_90a warp-specialised kernels ---------------------------
// Over the double with this build's launch plan: which launches get the second parameter
// (nvidia::WsTmaParams), what cuTensorMapEncodeTiled is asked for, and where each map lands.
using zyfa::nvidia::WsTmaParams;

// A context of the public API on the double's device (FAKE_CUDA_CC, `cc`).
zyfa_context* cuda_context(const char* cc) {
    setenv("FAKE_CUDA_CC", cc, 1);
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof(options));
    options.backend = ZYFA_BACKEND_CUDA;
    zyfa_context* ctx = nullptr;
    const zyfa_status status = zyfa_context_create(&options, &ctx);
    setenv("FAKE_CUDA_CC", "90", 1);
    assert_int_equal(status, ZYFA_SUCCESS);
    return ctx;
}
zyfa_context* sm90_context() { return cuda_context("90"); }

// FP8 e4m3fn, LEAN, top-left causal, no window, [batch, seq, heads, dim] (Request's layout).
Request fp8_lean_request(int64_t head_dim_qk, int64_t head_dim_v) {
    Request r(head_dim_qk);
    r.params.head_dim_v = head_dim_v;
    r.v = Request::view(0x300000, 2, head_dim_v, r.params.seqlen_k);
    r.o = Request::view(0x400000, 8, head_dim_v, r.params.seqlen_q);
    r.o.dtype = ZYFA_DTYPE_BF16;
    r.q.dtype = r.k.dtype = r.v.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    r.params.softmax = ZYFA_SOFTMAX_LEAN;
    r.params.mask = ZYFA_MASK_CAUSAL;
    r.params.window_left = -1;
    r.params.lse = nullptr;
    return r;
}

// Request's BF16 problem at head dims head_dim_qk / head_dim_v, without lse.
Request bf16_request(int64_t head_dim_qk, int64_t head_dim_v) {
    Request r(head_dim_qk);
    r.params.head_dim_v = head_dim_v;
    r.v = Request::view(0x300000, 2, head_dim_v, r.params.seqlen_k);
    r.o = Request::view(0x400000, 8, head_dim_v, r.params.seqlen_q);
    r.o.dtype = ZYFA_DTYPE_FP16;
    r.params.lse = nullptr;
    return r;
}

// [batch, heads, seq, dim]: the heads outside the sequence.
void heads_outer(zyfa_tensor& t, int64_t heads, int64_t dim, int64_t seq) {
    t.stride_seq = dim;
    t.stride_head = seq * dim;
    t.stride_batch = heads * seq * dim;
}

struct Launched {
    std::string kernel;
    int launches = 0;
    WsTmaParams second;
    zyfa::AttnKernelArgs args;
};

// One zyfa_attn_fwd on ctx, with the double's tensor-map record cleared first. `two_parameters`:
// the planned kernel takes the second parameter (the double copies it only then).
Launched run_fwd(zyfa_context* ctx, const Request& r, bool two_parameters) {
    fake_cuda_state* state = fake_state();
    state->param_bytes = sizeof(zyfa::AttnKernelArgs);
    state->second_param_bytes = two_parameters ? sizeof(WsTmaParams) : 0;
    std::memset(state->second_param, 0xA5, sizeof(state->second_param));  // a launch must overwrite it
    state->tma_encodes = state->tma_violations = state->tma_unnested = state->tma_encodes_without_context = 0;
    state->tma_violation[0] = '\0';
    Launched out;
    const char* name = zyfa_attn_kernel_name(ctx, &r.params, &r.q, &r.k, &r.v, &r.o);
    if (name == nullptr) fail_msg("zyfa_attn_kernel_name: %s", zyfa_last_error_message());
    out.kernel = name;
    assert_int_equal(state->tma_encodes, 0);  // planning alone encodes nothing
    const int launches = state->launches;
    int stream_marker = 0;
    assert_int_equal(zyfa_attn_fwd(ctx, &r.params, &r.q, &r.k, &r.v, &r.o, &stream_marker), ZYFA_SUCCESS);
    out.launches = state->launches - launches;
    assert_ptr_equal(state->stream, &stream_marker);
    std::memcpy(&out.second, state->second_param, sizeof(out.second));
    std::memcpy(&out.args, state->param, sizeof(out.args));
    state->second_param_bytes = 0;
    if (state->tma_violations != 0) fail_msg("an encode the driver would reject: %s", state->tma_violation);
    assert_int_equal(state->tma_unnested, 0);
    assert_int_equal(state->tma_encodes_without_context, 0);  // the driver refuses those
    assert_int_equal(state->calls_without_context, 0);
    assert_int_equal(state->context_depth, 0);
    return out;
}

// (a1) The warp-specialised grid (tiles x G, heads_q / G, batch): G = 2^g adjacent heads, the
// largest power of two dividing heads_q whose G x tiles 128-row tiles fit the 132 multiprocessors
// of the double's device (sm90/tile_context.cuh, locate_tile, decodes it).
void ws_grid_groups_heads_within_one_wave(void**) {
    zyfa_context* ctx = sm90_context();
    struct Case {
        int64_t seqlen, heads_q;
        uint32_t grid_x, grid_y;
    };
    const Case cases[] = {
        {300, 8, 3 * 8, 1},      // 3 tiles: every head (24 <= 132)
        {4096, 8, 32 * 4, 2},    // 32 tiles: 4 heads (128), 8 would be 256
        {8192, 8, 64 * 2, 4},    // 64 tiles: 2 heads
        {16384, 8, 128, 8},      // 128 tiles: one head at a time, as before
        {1024, 12, 8 * 4, 3},    // 12 heads: 4 divides 12, 8 does not
        {1024, 9, 8, 9},         // 9 heads: no power of two above 1 divides it
    };
    for (const Case& c : cases) {
        Request r = fp8_lean_request(128, 128);
        r.params.seqlen_q = r.params.seqlen_k = c.seqlen;
        r.params.heads_q = c.heads_q;
        r.params.heads_kv = c.heads_q % 2 == 0 ? 2 : 1;
        // Placeholders 32 MiB apart in the double's device 0 window (O at 16K: 32 MiB of BF16).
        r.q = Request::view(0x1000000, c.heads_q, 128, c.seqlen);
        r.k = Request::view(0x3000000, r.params.heads_kv, 128, c.seqlen);
        r.v = Request::view(0x5000000, r.params.heads_kv, 128, c.seqlen);
        r.o = Request::view(0x7000000, c.heads_q, 128, c.seqlen);
        r.q.dtype = r.k.dtype = r.v.dtype = ZYFA_DTYPE_FP8_E4M3FN;
        r.o.dtype = ZYFA_DTYPE_BF16;
        const Launched l = run_fwd(ctx, r, true);
        assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_lean_d128");
        if (fake_state()->grid[0] != c.grid_x || fake_state()->grid[1] != c.grid_y)
            fail_msg("seqlen %lld heads %lld: grid (%u, %u), expected (%u, %u)", static_cast<long long>(c.seqlen),
                     static_cast<long long>(c.heads_q), fake_state()->grid[0], fake_state()->grid[1], c.grid_x,
                     c.grid_y);
        assert_int_equal(fake_state()->grid[2], 2);
    }
}

// What one map's request must be: its tensor, element type (0 UINT8, 1 UINT16), extents and byte
// strides innermost first, box, and the dims (1..3) holding the sequence, head and batch axes.
struct ExpectedMap {
    const void* address;
    int data_type;
    uint64_t dims[4];
    uint64_t strides[3];
    uint32_t box[4];
    int32_t axis[3];  // sequence, head, batch
};

void expect_map(const Launched& launched, zyfa::nvidia::WsTmaMap which, const ExpectedMap& e) {
    const fake_cuda_state* state = fake_state();
    int index = -1;
    for (int i = 0; i < state->tma_encodes && i < FAKE_CUDA_MAX_TMA_REQUESTS; ++i) {
        if (state->tma_requests[i].global_address == e.address) {
            if (index >= 0) fail_msg("two encodes of the tensor at %p", e.address);
            index = i;
        }
    }
    if (index < 0) fail_msg("no encode of the tensor at %p (map %d)", e.address, which);
    const fake_cuda_tma_request& r = state->tma_requests[index];
    assert_int_equal(r.data_type, e.data_type);
    assert_int_equal(r.rank, 4);
    for (int d = 0; d < 4; ++d) {
        if (r.dims[d] != e.dims[d] || r.box[d] != e.box[d] || r.element_strides[d] != 1) {
            fail_msg("map %d dim %d: extent %llu box %u element stride %u, expected %llu, %u, 1", which, d,
                     r.dims[d], r.box[d], r.element_strides[d], static_cast<unsigned long long>(e.dims[d]), e.box[d]);
        }
    }
    for (int d = 0; d < 3; ++d) {
        if (r.strides[d] != e.strides[d]) {
            fail_msg("map %d stride %d: %llu bytes, expected %llu", which, d, r.strides[d],
                     static_cast<unsigned long long>(e.strides[d]));
        }
        if (d > 0) assert_true(r.strides[d] >= r.strides[d - 1]);  // nested: ascending
    }
    assert_int_equal(r.interleave, 0);
    assert_int_equal(r.swizzle, 3);     // 128 B: the swizzle of wgmma's K-major operands
    assert_int_equal(r.oob_fill, 0);    // zeros beyond the sequence
    assert_int_equal(r.l2_promotion, 2);  // 128 B (cuda_driver.hpp)
    assert_int_equal(r.result, 0);

    // The map the driver wrote for this request is the one in the parameter's slot `which`.
    const unsigned char* slot = which == zyfa::nvidia::kWsTmaQ   ? launched.second.q_map
                                : which == zyfa::nvidia::kWsTmaK ? launched.second.k_map
                                                                 : launched.second.v_map;
    uint64_t words[3];
    std::memcpy(words, slot, sizeof(words));
    assert_true(words[0] == FAKE_CUDA_TMA_MAGIC);
    assert_int_equal(words[1], index + 1);
    assert_true(words[2] == reinterpret_cast<uintptr_t>(e.address));

    // The axis table names the dims the request put each axis in.
    const int32_t* axis = launched.second.axis[which];
    for (int a = 0; a < 3; ++a) {
        if (axis[a] != e.axis[a]) fail_msg("map %d axis %d in dim %d, expected %d", which, a, axis[a], e.axis[a]);
    }
}

bool sm90a_embedded() { return zyfa::gpu::KernelRegistry::embedded().has_arch("nvidia", "sm_90a"); }

// (a) FP8 LEAN causal, head dim 128, [batch, seq, heads, dim]: three maps whose boxes are whole
// tiles of 128-byte rows (128 Q rows, 128 K or V rows: the 128-key step, nvidia::ws_key_block),
// the head axis (smallest stride) in dim 1
// and the sequence in dim 2.
void fp8_lean_ws_launch_encodes_three_maps(void**) {
    zyfa_context* ctx = sm90_context();
    const Request r = fp8_lean_request(128, 128);
    const Launched l = run_fwd(ctx, r, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_lean_d128");
    assert_int_equal(l.launches, 1);
    assert_int_equal(fake_state()->block[0], 384);  // producer + two consumer warpgroups
    // (one tile x 8 heads, 1 group, batch 2): all 8 heads in one group (ws_head_group_log2).
    assert_int_equal(fake_state()->grid[0], 8);
    assert_int_equal(fake_state()->grid[1], 1);
    assert_int_equal(fake_state()->grid[2], 2);
    assert_ptr_equal(l.args.q, r.q.data);            // the first parameter is still the problem
    assert_int_equal(fake_state()->tma_encodes, 3);
    assert_int_equal(l.second.enabled, 1);
    // Q: heads_q 8, seqlen_q 100; byte strides = element strides for e4m3.
    expect_map(l, zyfa::nvidia::kWsTmaQ,
               {r.q.data, 0, {128, 8, 100, 2}, {128, 8 * 128, 100 * 8 * 128}, {128, 1, 128, 1}, {2, 1, 3}});
    // K, V: heads_kv 2, seqlen_k 130, 128-row boxes.
    expect_map(l, zyfa::nvidia::kWsTmaK,
               {r.k.data, 0, {128, 2, 130, 2}, {128, 2 * 128, 130 * 2 * 128}, {128, 1, 128, 1}, {2, 1, 3}});
    expect_map(l, zyfa::nvidia::kWsTmaV,
               {r.v.data, 0, {128, 2, 130, 2}, {128, 2 * 128, 130 * 2 * 128}, {128, 1, 128, 1}, {2, 1, 3}});
    zyfa_context_destroy(ctx);
}

// (a') Paged K/V, FP8 LEAN head dim 128: the ws_paged kernel; K and V maps over the pools (dims: the
// head dim, the heads, a page's rows, the pages) with boxes of one page (page size 16) or of one
// 128-key block inside a page (page size 256); the block table in the parameter's paged fields.
// A page size the boxes cannot take (4: below 8; 24: not a power of two) or packed queries: no
// maps, the cp.async gather, the table still passed.
void paged_ws_launch_encodes_pool_maps(void**) {
    zyfa_context* ctx = sm90_context();
    for (int32_t page_size : {16, 256, 4, 24}) {
        Request r = fp8_lean_request(128, 128);
        const int64_t pages_per_seq = (r.params.seqlen_k + page_size - 1) / page_size;
        const int64_t num_pages = 2 * pages_per_seq + 1;
        r.params.block_table = reinterpret_cast<const int32_t*>(uintptr_t{0x500000});
        r.params.seqused_k = reinterpret_cast<const int32_t*>(uintptr_t{0x510000});
        r.params.block_table_stride = pages_per_seq;
        r.params.num_pages = num_pages;
        r.params.page_size = page_size;
        r.k.stride_batch = r.v.stride_batch = page_size * r.k.stride_seq;  // [pages, page_size, 2, 128]
        const Launched l = run_fwd(ctx, r, true);
        assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_paged_e4m3_lean_d128");
        assert_ptr_equal(l.second.paged.block_table, r.params.block_table);
        assert_ptr_equal(l.second.paged.seqused_k, r.params.seqused_k);
        assert_int_equal(l.second.paged.block_table_stride, pages_per_seq);
        assert_int_equal(l.second.paged.page_size, page_size);
        assert_int_equal(l.second.paged.num_pages, num_pages);
        const bool maps = page_size == 16 || page_size == 256;
        std::printf("  page size %d: %d encodes, enabled %d, box rows %d\n", page_size, fake_state()->tma_encodes,
                    l.second.enabled, l.second.paged.tma_box_rows);
        assert_int_equal(l.second.enabled, maps ? 1 : 0);
        if (!maps) {
            assert_int_equal(l.second.paged.tma_box_rows, 0);
            continue;
        }
        const uint32_t box = page_size < 128 ? static_cast<uint32_t>(page_size) : 128;
        assert_int_equal(l.second.paged.tma_box_rows, static_cast<int32_t>(box));
        assert_int_equal(fake_state()->tma_encodes, 3);
        const uint64_t ps = static_cast<uint64_t>(page_size), pages = static_cast<uint64_t>(num_pages);
        expect_map(l, zyfa::nvidia::kWsTmaK,
                   {r.k.data, 0, {128, 2, ps, pages}, {128, 2 * 128, ps * 2 * 128}, {128, 1, box, 1}, {2, 1, 3}});
        expect_map(l, zyfa::nvidia::kWsTmaV,
                   {r.v.data, 0, {128, 2, ps, pages}, {128, 2 * 128, ps * 2 * 128}, {128, 1, box, 1}, {2, 1, 3}});
    }
    // BF16 paged: the same pool maps (two 128-byte slices per row), boxes of the page's rows.
    {
        Request r = bf16_request(128, 128);
        const int32_t page_size = 16;
        const int64_t pages_per_seq = (r.params.seqlen_k + page_size - 1) / page_size;
        r.params.block_table = reinterpret_cast<const int32_t*>(uintptr_t{0x500000});
        r.params.block_table_stride = pages_per_seq;
        r.params.num_pages = 2 * pages_per_seq;
        r.params.page_size = page_size;
        r.k.stride_batch = r.v.stride_batch = page_size * r.k.stride_seq;
        const Launched l = run_fwd(ctx, r, true);
        assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_paged_bf16_d128");
        assert_int_equal(l.second.enabled, 1);
        assert_int_equal(l.second.paged.tma_box_rows, page_size);
    }
    zyfa_context_destroy(ctx);
}

// (b) The other warp-specialised kernels (ws_tma_layout): BF16 head dims 128, 192/128, 64 and 256
// (16-bit elements: boxes of 64 elements = one 128-byte slice, the kernel copies two, three, one
// or four per tile; K and V boxes of the kernel's key block, 128 rows but at 256), FP8
// head dims 192/128 (Q and K in two slices of 128 elements, the second half past the head dim),
// FP8 head dim 64 (one slice of 128 elements, wider than the tensor: its upper half reads as
// zero) and 256 (64-row K and V boxes).
// The map expected for a tensor of Request's layout [batch 2, seq, heads, dim]: element type
// 0 (UINT8) or 1 (UINT16), boxes of one 128-byte slice by `rows` rows, the head axis in dim 1.
ExpectedMap slice_map(const void* address, uint64_t element_bytes, uint64_t dim, uint64_t heads, uint64_t seq,
                      uint32_t rows) {
    const uint64_t row = dim * element_bytes;
    return {address,       element_bytes == 1 ? 0 : 1, {dim, heads, seq, 2}, {row, heads * row, seq * heads * row},
            {static_cast<uint32_t>(128 / element_bytes), 1, rows, 1}, {2, 1, 3}};
}

void ws_launches_of_other_kernels_encode_slices(void**) {
    zyfa_context* ctx = sm90_context();
    const struct {
        Request request;
        const char* kernel;
        uint64_t element_bytes;
        uint32_t kv_rows;  // the kernel's key block (nvidia::ws_key_block)
    } cases[] = {{bf16_request(128, 128), "zyfa_attn_fwd_ws_bf16_d128", 2, 128},
                 {bf16_request(192, 128), "zyfa_attn_fwd_ws_bf16_d192_128", 2, 128},
                 {bf16_request(64, 64), "zyfa_attn_fwd_ws_bf16_d64", 2, 128},
                 {bf16_request(256, 256), "zyfa_attn_fwd_ws_bf16_d256", 2, 64},
                 {fp8_lean_request(192, 128), "zyfa_attn_fwd_ws_e4m3_lean_d192_128", 1, 128},
                 {fp8_lean_request(64, 64), "zyfa_attn_fwd_ws_e4m3_lean_d64", 1, 128},
                 {fp8_lean_request(256, 256), "zyfa_attn_fwd_ws_e4m3_lean_d256", 1, 64}};
    for (const auto& c : cases) {
        const Request& r = c.request;
        const Launched l = run_fwd(ctx, r, true);
        assert_string_equal(l.kernel.c_str(), c.kernel);
        assert_int_equal(l.launches, 1);
        assert_int_equal(fake_state()->tma_encodes, 3);
        assert_int_equal(l.second.enabled, 1);
        const uint64_t dqk = static_cast<uint64_t>(r.params.head_dim_qk), dv = static_cast<uint64_t>(r.params.head_dim_v);
        expect_map(l, zyfa::nvidia::kWsTmaQ, slice_map(r.q.data, c.element_bytes, dqk, 8, 100, 128));
        expect_map(l, zyfa::nvidia::kWsTmaK, slice_map(r.k.data, c.element_bytes, dqk, 2, 130, c.kv_rows));
        expect_map(l, zyfa::nvidia::kWsTmaV, slice_map(r.v.data, c.element_bytes, dv, 2, 130, c.kv_rows));
    }
    zyfa_context_destroy(ctx);
}

// (c) Packed sequences: the maps' zero fill would not end a sequence, so no maps (cp.async).
void varlen_ws_launch_has_no_maps(void**) {
    zyfa_context* ctx = sm90_context();
    Request r = fp8_lean_request(128, 128);
    r.params.cu_seqlens_q = reinterpret_cast<const int32_t*>(uintptr_t{0x600000});  // never read on a GPU context
    r.params.cu_seqlens_k = reinterpret_cast<const int32_t*>(uintptr_t{0x700000});
    Launched l = run_fwd(ctx, r, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_lean_d128");
    assert_int_equal(l.launches, 1);
    assert_int_equal(fake_state()->tma_encodes, 0);
    assert_int_equal(l.second.enabled, 0);
    // One packed sequence (batch 1, where the ignored batch stride cannot rule the maps out).
    r.params.batch = 1;
    l = run_fwd(ctx, r, true);
    assert_int_equal(l.launches, 1);
    assert_int_equal(fake_state()->tma_encodes, 0);
    assert_int_equal(l.second.enabled, 0);
    zyfa_context_destroy(ctx);
}

// (d) A context of the tests' cp.async seam (CudaKernelChoice::CpAsync, tests/support/cuda_context.hpp):
// the same kernel, no maps, ever, and the driver is not asked. The public API has no such switch:
// ZYFA_NVIDIA_TMA=0, which chose this until 2026-12-02, is read by nothing, so a context created
// while it is set still has the maps.
void cp_async_seam_encodes_no_maps(void**) {
    setenv("FAKE_CUDA_CC", "90", 1);
    std::string error;
    zyfa_context* off = zyfa_test::cuda_context_with(zyfa::cuda::CudaKernelChoice::CpAsync, &error);
    if (off == nullptr) fail_msg("the cp.async seam: %s", error.c_str());
    setenv("ZYFA_NVIDIA_TMA", "0", 1);
    zyfa_context* on = sm90_context();
    unsetenv("ZYFA_NVIDIA_TMA");
    const Request r = fp8_lean_request(128, 128);
    const Launched l = run_fwd(off, r, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_lean_d128");
    assert_int_equal(l.launches, 1);
    assert_int_equal(l.second.enabled, 0);
    assert_int_equal(fake_state()->tma_encodes, 0);
    const Launched l_on = run_fwd(on, r, true);
    assert_string_equal(l_on.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_lean_d128");
    assert_int_equal(l_on.second.enabled, 1);
    assert_int_equal(fake_state()->tma_encodes, 3);
    zyfa_context_destroy(on);
    zyfa_context_destroy(off);
}

// (e) A driver that rejects the encode: the launch still happens, with cp.async.
void rejected_encode_falls_back_to_cp_async(void**) {
    zyfa_context* ctx = sm90_context();
    const Request r = fp8_lean_request(128, 128);
    setenv("FAKE_CUDA_TMA_REJECT", "1", 1);
    const Launched l = run_fwd(ctx, r, true);
    unsetenv("FAKE_CUDA_TMA_REJECT");
    assert_int_equal(l.launches, 1);
    assert_true(fake_state()->tma_encodes >= 1);
    assert_int_equal(l.second.enabled, 0);
    zyfa_context_destroy(ctx);
}

// (f) Other layouts: the request's dims follow the strides, and the axis table follows the dims.
void other_layouts_encode_nested_strides(void**) {
    zyfa_context* ctx = sm90_context();
    // [batch, heads, seq, dim]: the sequence in dim 1, heads in dim 2.
    Request r = fp8_lean_request(128, 128);
    heads_outer(r.q, 8, 128, 100);
    heads_outer(r.k, 2, 128, 130);
    heads_outer(r.v, 2, 128, 130);
    Launched l = run_fwd(ctx, r, true);
    assert_int_equal(fake_state()->tma_encodes, 3);
    assert_int_equal(l.second.enabled, 1);
    expect_map(l, zyfa::nvidia::kWsTmaQ,
               {r.q.data, 0, {128, 100, 8, 2}, {128, 100 * 128, 8 * 100 * 128}, {128, 128, 1, 1}, {1, 2, 3}});
    expect_map(l, zyfa::nvidia::kWsTmaK,
               {r.k.data, 0, {128, 130, 2, 2}, {128, 130 * 128, 2 * 130 * 128}, {128, 128, 1, 1}, {1, 2, 3}});
    expect_map(l, zyfa::nvidia::kWsTmaV,
               {r.v.data, 0, {128, 130, 2, 2}, {128, 130 * 128, 2 * 130 * 128}, {128, 128, 1, 1}, {1, 2, 3}});

    // MQA in the same layout: K and V's single head (extent 1) goes last, with the nested stride.
    r.params.heads_kv = 1;
    heads_outer(r.k, 1, 128, 130);
    heads_outer(r.v, 1, 128, 130);
    l = run_fwd(ctx, r, true);
    assert_int_equal(l.second.enabled, 1);
    expect_map(l, zyfa::nvidia::kWsTmaK,
               {r.k.data, 0, {128, 130, 2, 1}, {128, 130 * 128, 2 * 130 * 128}, {128, 128, 1, 1}, {1, 3, 2}});
    expect_map(l, zyfa::nvidia::kWsTmaV,
               {r.v.data, 0, {128, 130, 2, 1}, {128, 130 * 128, 2 * 130 * 128}, {128, 128, 1, 1}, {1, 3, 2}});

    // One sequence whose K and V batch stride is 0 (free for an axis of extent 1): that axis goes
    // last with the nested stride, as the driver needs a non-zero multiple of 16.
    Request one = fp8_lean_request(128, 128);
    one.params.batch = 1;
    one.k.stride_batch = one.v.stride_batch = 0;
    l = run_fwd(ctx, one, true);
    assert_int_equal(l.second.enabled, 1);
    expect_map(l, zyfa::nvidia::kWsTmaK,
               {one.k.data, 0, {128, 2, 130, 1}, {128, 2 * 128, 130 * 2 * 128}, {128, 1, 128, 1}, {2, 1, 3}});

    // [seq, batch, heads, dim]: the sequence outermost, in dim 3.
    Request s = fp8_lean_request(128, 128);
    for (zyfa_tensor* t : {&s.q, &s.k, &s.v}) {
        const int64_t heads = t == &s.q ? 8 : 2;
        t->stride_head = 128;
        t->stride_batch = heads * 128;
        t->stride_seq = 2 * heads * 128;
    }
    l = run_fwd(ctx, s, true);
    assert_int_equal(l.second.enabled, 1);
    expect_map(l, zyfa::nvidia::kWsTmaQ,
               {s.q.data, 0, {128, 8, 2, 100}, {128, 8 * 128, 2 * 8 * 128}, {128, 1, 1, 128}, {3, 1, 2}});
    expect_map(l, zyfa::nvidia::kWsTmaK,
               {s.k.data, 0, {128, 2, 2, 130}, {128, 2 * 128, 2 * 2 * 128}, {128, 1, 1, 128}, {3, 1, 2}});
    zyfa_context_destroy(ctx);
}

// (f') A stride the tensor memory accelerator cannot take (2^40 bytes): no maps, and no request
// the driver would refuse.
void strides_beyond_the_accelerator_fall_back(void**) {
    zyfa_context* ctx = sm90_context();
    Request r = fp8_lean_request(128, 128);
    r.q.stride_batch = int64_t{1} << 40;  // e4m3: bytes
    r.q.data = const_cast<void*>(window(0x8000000));  // above the other views: q's 2^40 bytes overlap none
    const Launched l = run_fwd(ctx, r, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_lean_d128");
    assert_int_equal(l.launches, 1);
    assert_int_equal(l.second.enabled, 0);
    const fake_cuda_state* state = fake_state();
    for (int i = 0; i < state->tma_encodes && i < FAKE_CUDA_MAX_TMA_REQUESTS; ++i) {
        assert_true(state->tma_requests[i].global_address != r.q.data);  // refused before the driver
    }
    zyfa_context_destroy(ctx);
}

// (g) On sm_90a every problem with an aligned O takes the second parameter, FP8 EXACT included;
// kernels without it (the mma.sync kernels, here sm_80's) encode nothing.
void only_ws_kernels_take_maps(void**) {
    zyfa_context* ctx = sm90_context();
    Request exact = fp8_lean_request(128, 128);
    exact.params.softmax = ZYFA_SOFTMAX_EXACT;
    Launched l = run_fwd(ctx, exact, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_exact_d128");
    assert_int_equal(l.launches, 1);
    assert_int_equal(fake_state()->tma_encodes, 3);
    assert_int_equal(l.second.enabled, 1);
    Request d256 = fp8_lean_request(256, 256);
    d256.params.softmax = ZYFA_SOFTMAX_EXACT;
    l = run_fwd(ctx, d256, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_exact_d256");
    assert_int_equal(l.second.enabled, 1);
    zyfa_context_destroy(ctx);
    if (!zyfa::gpu::KernelRegistry::embedded().has_arch("nvidia", "sm_80")) {
        std::printf("note: no sm_80 cubins in this build: the mma.sync case is skipped\n");
        return;
    }
    zyfa_context* sm80 = cuda_context("80");
    Request bf16(128);
    bf16.params.lse = nullptr;
    l = run_fwd(sm80, bf16, false);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_bf16_d128");
    assert_int_equal(l.launches, 1);
    assert_int_equal(fake_state()->block[0], 256);  // 8 warps of 16 query rows
    assert_int_equal(fake_state()->tma_encodes, 0);
    zyfa_context_destroy(sm80);
}

// (g') O's pairs: the warp-specialised kernels store two adjacent elements at once. An O with an
// odd base or an odd stride runs the mma.sync kernel of the same dims (one element at a time),
// without the second parameter and its maps; an aligned O, padded heads included, the ws kernel.
void misaligned_output_runs_mma_sync(void**) {
    zyfa_context* ctx = sm90_context();
    Request r = fp8_lean_request(128, 128);  // O: BF16 at 0x400000, even strides
    Launched l = run_fwd(ctx, r, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_e4m3_lean_d128");
    r.o.data = const_cast<void*>(window(0x400002));  // one BF16 element in: pairs 2 bytes off
    l = run_fwd(ctx, r, false);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_e4m3_lean_d128");
    assert_int_equal(l.launches, 1);
    assert_int_equal(fake_state()->block[0], 256);  // 8 warps of 16 query rows
    assert_int_equal(fake_state()->tma_encodes, 0);
    assert_ptr_equal(l.args.o, r.o.data);
    assert_int_equal(l.args.out_dtype, zyfa::kKernelBf16);
    Request f32(128);  // BF16 in, FP32 out with an odd head stride
    f32.params.lse = nullptr;
    f32.o.dtype = ZYFA_DTYPE_FP32;
    f32.o.stride_head = 129;
    f32.o.stride_seq = 8 * 129;
    f32.o.stride_batch = 100 * 8 * 129;
    l = run_fwd(ctx, f32, false);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_bf16_d128");
    assert_int_equal(fake_state()->tma_encodes, 0);
    f32.o.stride_head = 130;  // even again (a padded head): the ws kernel
    f32.o.stride_seq = 8 * 130;
    f32.o.stride_batch = 100 * 8 * 130;
    l = run_fwd(ctx, f32, true);
    assert_string_equal(l.kernel.c_str(), "zyfa_attn_fwd_ws_bf16_d128");
    assert_int_equal(l.second.enabled, 1);
    zyfa_context_destroy(ctx);
}

// The last error message holds every needle.
void expect_message(std::initializer_list<std::string> needles) {
    const char* message = zyfa_last_error_message();
    for (const std::string& needle : needles) {
        if (std::strstr(message, needle.c_str()) == nullptr) {
            fail_msg("message \"%s\" lacks \"%s\"", message, needle.c_str());
        }
    }
}

// (h) params.key_block: 0 and the kernel's own step (nvidia::ws_key_block) launch the same kernel
// with the same maps; the other step is NOT_SUPPORTED by all three calls, naming the field and
// the kernel's step, with nothing launched.
void key_block_is_the_kernels_own_or_refused(void**) {
    zyfa_context* ctx = sm90_context();
    fake_cuda_state* state = fake_state();
    const struct {
        Request request;
        const char* kernel;
        int32_t own, other;
    } cases[] = {{fp8_lean_request(128, 128), "zyfa_attn_fwd_ws_e4m3_lean_d128", 128, 64},
                 {fp8_lean_request(192, 128), "zyfa_attn_fwd_ws_e4m3_lean_d192_128", 128, 64},
                 {fp8_lean_request(256, 256), "zyfa_attn_fwd_ws_e4m3_lean_d256", 64, 128},
                 {Request(128), "zyfa_attn_fwd_ws_bf16_d128", 128, 64},
                 {bf16_request(64, 64), "zyfa_attn_fwd_ws_bf16_d64", 128, 64},
                 {bf16_request(192, 128), "zyfa_attn_fwd_ws_bf16_d192_128", 128, 64},
                 {bf16_request(256, 256), "zyfa_attn_fwd_ws_bf16_d256", 64, 128}};
    for (const auto& c : cases) {
        Request r = c.request;
        r.params.lse = nullptr;
        for (int32_t key_block : {0, c.own}) {
            r.params.key_block = key_block;
            const Launched l = run_fwd(ctx, r, true);
            assert_string_equal(l.kernel.c_str(), c.kernel);
            assert_int_equal(l.launches, 1);
            assert_int_equal(l.second.enabled, 1);
        }
        r.params.key_block = c.other;
        const int launches = state->launches;
        const std::string own = "steps " + std::to_string(c.own) + " keys";
        assert_int_equal(zyfa_attn_supported(ctx, &r.params, &r.q, &r.k, &r.v, &r.o), ZYFA_ERROR_NOT_SUPPORTED);
        expect_message({"params.key_block = " + std::to_string(c.other), own});
        assert_null(zyfa_attn_kernel_name(ctx, &r.params, &r.q, &r.k, &r.v, &r.o));
        assert_int_equal(zyfa_attn_fwd(ctx, &r.params, &r.q, &r.k, &r.v, &r.o, nullptr), ZYFA_ERROR_NOT_SUPPORTED);
        expect_message({"params.key_block = " + std::to_string(c.other), own});
        assert_int_equal(state->launches, launches);
    }
    zyfa_context_destroy(ctx);
}

// zyfa_attn_supported, zyfa_attn_kernel_name and zyfa_attn_fwd refuse r with INVALID_ARGUMENT
// naming `field` and saying `where`; nothing is launched, allocated or synchronised.
void expect_attn_refused(zyfa_context* ctx, const Request& r, const char* field, const std::string& where) {
    fake_cuda_state* state = fake_state();
    const int launches = state->launches, allocations = state->allocations, syncs = state->synchronizations;
    const std::string named = std::string(field) + " = 0x";
    assert_int_equal(zyfa_attn_supported(ctx, &r.params, &r.q, &r.k, &r.v, &r.o), ZYFA_ERROR_INVALID_ARGUMENT);
    expect_message({named, where});
    assert_null(zyfa_attn_kernel_name(ctx, &r.params, &r.q, &r.k, &r.v, &r.o));
    expect_message({named, where});
    assert_int_equal(zyfa_attn_fwd(ctx, &r.params, &r.q, &r.k, &r.v, &r.o, nullptr), ZYFA_ERROR_INVALID_ARGUMENT);
    expect_message({"zyfa_attn_fwd: " + named, where});
    assert_int_equal(state->launches, launches);
    assert_int_equal(state->allocations, allocations);
    assert_int_equal(state->synchronizations, syncs);
    assert_int_equal(state->context_depth, 0);
}

void expect_attn_launched(zyfa_context* ctx, const Request& r) {
    const int launches = fake_state()->launches;
    const zyfa_status status = zyfa_attn_fwd(ctx, &r.params, &r.q, &r.k, &r.v, &r.o, nullptr);
    if (status != ZYFA_SUCCESS) fail_msg("zyfa_attn_fwd: status %d: %s", status, zyfa_last_error_message());
    assert_int_equal(fake_state()->launches - launches, 1);
}

constexpr const char* kHostMemory = "is host memory; this context is CUDA device 0";

// Each pointer of a request in turn set to malloc'd host memory (pageable, unknown to the
// driver): INVALID_ARGUMENT naming the field, before anything is launched. Another device's
// memory is refused too; managed and pinned host memory run.
void public_api_refuses_host_pointers(void**) {
    zyfa_context* ctx = sm90_context();
    fake_state()->second_param_bytes = 0;
    std::vector<uint64_t> host_buffer(1 << 17);  // 1 MiB: mmap'd, 16-byte aligned
    void* host = host_buffer.data();

    const Request bf16(128);
    expect_attn_launched(ctx, bf16);
    const char* const tensor_fields[] = {"q.data", "k.data", "v.data", "o.data"};
    for (int t = 0; t < 4; ++t) {
        Request r = bf16;
        zyfa_tensor* views[] = {&r.q, &r.k, &r.v, &r.o};
        views[t]->data = host;
        expect_attn_refused(ctx, r, tensor_fields[t], kHostMemory);
    }
    Request r = bf16;
    r.params.lse = static_cast<float*>(host);
    expect_attn_refused(ctx, r, "params.lse", kHostMemory);

    Request packed = bf16;
    packed.params.cu_seqlens_q = reinterpret_cast<const int32_t*>(uintptr_t{0x600000});
    packed.params.cu_seqlens_k = reinterpret_cast<const int32_t*>(uintptr_t{0x700000});
    expect_attn_launched(ctx, packed);
    r = packed;
    r.params.cu_seqlens_q = static_cast<const int32_t*>(host);
    expect_attn_refused(ctx, r, "params.cu_seqlens_q", kHostMemory);
    r = packed;
    r.params.cu_seqlens_k = static_cast<const int32_t*>(host);
    expect_attn_refused(ctx, r, "params.cu_seqlens_k", kHostMemory);

    Request fp8 = fp8_lean_request(128, 128);
    fp8.params.q_descale = reinterpret_cast<const float*>(uintptr_t{0xA00000});
    fp8.params.k_descale = reinterpret_cast<const float*>(uintptr_t{0xA01000});
    fp8.params.v_descale = reinterpret_cast<const float*>(uintptr_t{0xA02000});
    expect_attn_launched(ctx, fp8);
    const float* const descale_host = static_cast<const float*>(host);
    r = fp8;
    r.params.q_descale = descale_host;
    expect_attn_refused(ctx, r, "params.q_descale", kHostMemory);
    r = fp8;
    r.params.k_descale = descale_host;
    expect_attn_refused(ctx, r, "params.k_descale", kHostMemory);
    r = fp8;
    r.params.v_descale = descale_host;
    expect_attn_refused(ctx, r, "params.v_descale", kHostMemory);

    r = bf16;
    r.k.data = const_cast<void*>(window(FAKE_CUDA_DEVICE1_BEGIN));
    expect_attn_refused(ctx, r, "k.data", "is memory of CUDA device 1; this context is CUDA device 0");
    r = bf16;
    r.q.data = const_cast<void*>(window(FAKE_CUDA_MANAGED_BEGIN));
    r.o.data = const_cast<void*>(window(FAKE_CUDA_PINNED_BEGIN));
    expect_attn_launched(ctx, r);
    zyfa_context_destroy(ctx);

    // A device with pageable memory access (HMM/ATS) reads malloc'd memory in place.
    setenv("FAKE_CUDA_PAGEABLE_ACCESS", "1", 1);
    ctx = sm90_context();
    unsetenv("FAKE_CUDA_PAGEABLE_ACCESS");
    r = bf16;
    r.q.data = host;
    expect_attn_launched(ctx, r);
    zyfa_context_destroy(ctx);
}

// zyfa_quantize_fp8 checks in.data, out.data, descale, params.cu_seqlens and params.smooth_mean
// the same way.
void public_api_quantize_refuses_host_pointers(void**) {
    zyfa_context* ctx = sm90_context();
    fake_cuda_state* state = fake_state();
    state->second_param_bytes = 0;
    if (zyfa::gpu::KernelRegistry::embedded().find("nvidia", "sm_90a", "quantize_fp8") == nullptr) {
        std::printf("  (no sm_90a quantize cubin in this build: not checked)\n");
        zyfa_context_destroy(ctx);
        return;
    }
    std::vector<uint64_t> host_buffer(1 << 17);
    zyfa_quant_params params;
    zyfa_quant_params_init(&params, sizeof(params));
    params.batch = 2;
    params.seqlen = 10;
    params.heads = 4;
    params.head_dim = 128;
    const zyfa_tensor in = Request::view(0x100000, params.heads, params.head_dim, params.seqlen);
    zyfa_tensor out = Request::view(0x200000, params.heads, params.head_dim, params.seqlen);
    out.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    float* const descale = reinterpret_cast<float*>(uintptr_t{0x300000});
    const int32_t* const cu_seqlens = reinterpret_cast<const int32_t*>(uintptr_t{0x400000});
    const int launches = state->launches;
    assert_int_equal(zyfa_quantize_fp8(ctx, &params, &in, &out, descale, nullptr), ZYFA_SUCCESS);
    params.cu_seqlens = cu_seqlens;
    params.flags = ZYFA_QUANT_SMOOTH;
    params.smooth_mean = reinterpret_cast<float*>(uintptr_t{0x500000});
    assert_int_equal(zyfa_quantize_fp8(ctx, &params, &in, &out, descale, nullptr), ZYFA_SUCCESS);
    assert_int_equal(state->launches - launches, 9);
    for (int field = 0; field < 5; ++field) {
        zyfa_tensor in_f = in, out_f = out;
        float* descale_f = descale;
        zyfa_quant_params params_f = params;
        static const char* const names[] = {"in.data", "out.data", "descale", "params.cu_seqlens", "params.smooth_mean"};
        void* host = host_buffer.data();
        if (field == 0) in_f.data = host;
        if (field == 1) out_f.data = host;
        if (field == 2) descale_f = static_cast<float*>(host);
        if (field == 3) params_f.cu_seqlens = static_cast<const int32_t*>(host);
        if (field == 4) params_f.smooth_mean = static_cast<float*>(host);
        assert_int_equal(zyfa_quantize_fp8(ctx, &params_f, &in_f, &out_f, descale_f, nullptr),
                         ZYFA_ERROR_INVALID_ARGUMENT);
        expect_message({std::string("zyfa_quantize_fp8: ") + names[field] + " = 0x", kHostMemory});
    }
    assert_int_equal(state->launches - launches, 9);
    zyfa_context_destroy(ctx);
}
#endif  // ZYFA_TEST_CUDA_COMPILED_IN

}  // namespace

int main(int argc, char** argv) {
    const std::string scenario = argc > 1 ? argv[1] : "";
    if (scenario == "missing_library") {
        const struct CMUnitTest tests[] = {cmocka_unit_test(missing_library_is_no_device)};
        return cmocka_run_group_tests(tests, nullptr, nullptr);
    }
    if (scenario == "default_soname") {
        unsetenv("ZYFA_CUDA_LIBRARY");
        if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
            dlclose(driver);
            std::printf("SKIP: this machine has a CUDA driver (libcuda.so.1); the no-driver path is not testable here\n");
            return kSkip;
        }
        const struct CMUnitTest tests[] = {cmocka_unit_test(default_soname_without_driver)};
        return cmocka_run_group_tests(tests, nullptr, nullptr);
    }
    if (scenario == "init_errors") {
        const struct CMUnitTest tests[] = {cmocka_unit_test(init_errors_are_no_device_with_driver_text)};
        return cmocka_run_group_tests(tests, nullptr, nullptr);
    }
    if (scenario == "fake_device") {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(device_info_from_the_driver),
            cmocka_unit_test(creation_loads_each_module_once_and_raises_shared_memory),
            cmocka_unit_test(fwd_launches_the_plan_with_the_problem_as_arguments),
            cmocka_unit_test(unsupported_plans_and_devices_are_not_supported),
            cmocka_unit_test(runtime_helpers_reach_the_driver),
            cmocka_unit_test(runtime_encodes_tensor_maps_through_the_driver),
#ifdef ZYFA_TEST_CUDA_COMPILED_IN  // without the CUDA slot the public API cannot reach the double
            cmocka_unit_test(public_api_on_a_device_without_cubins),
            cmocka_unit_test(public_api_fwd_enqueues_one_launch),
            cmocka_unit_test(public_api_quantize_enqueues_four_launches),
#endif
        };
        return cmocka_run_group_tests(tests, nullptr, nullptr);
    }
    if (scenario == "tma_maps") {
#ifdef ZYFA_TEST_CUDA_COMPILED_IN
        setenv("FAKE_CUDA_CC", "90", 1);
        if (!sm90a_embedded()) {
            std::printf("SKIP: this build embeds no sm_90a cubins (ZYFA_CUDA_ARCHS), so no warp-specialised kernel\n");
            return kSkip;
        }
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(fp8_lean_ws_launch_encodes_three_maps),
            cmocka_unit_test(ws_grid_groups_heads_within_one_wave),
            cmocka_unit_test(paged_ws_launch_encodes_pool_maps),
            cmocka_unit_test(ws_launches_of_other_kernels_encode_slices),
            cmocka_unit_test(varlen_ws_launch_has_no_maps),
            cmocka_unit_test(cp_async_seam_encodes_no_maps),
            cmocka_unit_test(rejected_encode_falls_back_to_cp_async),
            cmocka_unit_test(other_layouts_encode_nested_strides),
            cmocka_unit_test(strides_beyond_the_accelerator_fall_back),
            cmocka_unit_test(only_ws_kernels_take_maps),
            cmocka_unit_test(misaligned_output_runs_mma_sync),
            cmocka_unit_test(key_block_is_the_kernels_own_or_refused),
        };
        return cmocka_run_group_tests(tests, nullptr, nullptr);
#else
        std::printf("SKIP: the CUDA backend is not compiled into this build\n");
        return kSkip;
#endif
    }
    if (scenario == "pointer_checks") {
#ifdef ZYFA_TEST_CUDA_COMPILED_IN
        const bool public_api = sm90a_embedded();
        if (!public_api) std::printf("note: no sm_90a cubins in this build: the public API cases are skipped\n");
#else
        const bool public_api = false;
        (void)public_api;  // read only when CUDA is compiled in; -Werror builds without it too
#endif
        const struct CMUnitTest runtime_tests[] = {cmocka_unit_test(runtime_locates_pointers_through_the_driver)};
        int failed = cmocka_run_group_tests_name("runtime", runtime_tests, nullptr, nullptr);
#ifdef ZYFA_TEST_CUDA_COMPILED_IN
        if (public_api) {
            const struct CMUnitTest api_tests[] = {
                cmocka_unit_test(public_api_refuses_host_pointers),
                cmocka_unit_test(public_api_quantize_refuses_host_pointers),
            };
            failed += cmocka_run_group_tests_name("public_api", api_tests, nullptr, nullptr);
        }
#endif
        return failed;
    }
    std::fprintf(stderr, "usage: gpu_host_cuda missing_library|default_soname|init_errors|fake_device|tma_maps|"
                         "pointer_checks\n");
    return 2;
}
