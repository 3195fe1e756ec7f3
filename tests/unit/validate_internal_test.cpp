// The validators seen from inside (links the zyfa_internal archive): the normalised problem they
// produce, and the rules that only GPU backends trigger, which no backend of a CPU-only build
// can reach through the public API (16-byte FP8 alignment, FP32 inputs, device cu_seqlens).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "core/errors.hpp"
#include "core/validate.hpp"

namespace {

constexpr int64_t kBatch = 2, kSeq = 8, kHeads = 2, kDim = 64;

struct Request {
    zyfa_attn_params params;
    zyfa_tensor q, k, v, o;
    // Room for FP32 views: the no-overlap rule sees a view reach its dtype's bytes.
    alignas(64) uint8_t inputs[3][4 * kBatch * kSeq * kHeads * kDim + 64];
    alignas(64) uint16_t output[kBatch * kSeq * kHeads * kDim];
    float descale[kBatch * kHeads];
    int32_t cu[kBatch + 1] = {0, kSeq, 2 * kSeq};

    explicit Request(zyfa_dtype input) {
        zyfa_attn_params_init(&params, sizeof(params));
        params.batch = kBatch;
        params.seqlen_q = params.seqlen_k = kSeq;
        params.heads_q = params.heads_kv = kHeads;
        params.head_dim_qk = params.head_dim_v = kDim;
        q = view(inputs[0], input);
        k = view(inputs[1], input);
        v = view(inputs[2], input);
        o = view(output, ZYFA_DTYPE_BF16);
        for (float& d : descale) d = 1.0f;
    }
    static zyfa_tensor view(void* data, zyfa_dtype dtype) {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof(t));
        t.data = data;
        t.dtype = dtype;
        t.stride_head = kDim;
        t.stride_seq = kHeads * kDim;
        t.stride_batch = kSeq * kHeads * kDim;
        return t;
    }
    zyfa::AttnProblem validate(zyfa_backend backend) const {
        return zyfa::validate_attn(&params, &q, &k, &v, &o, backend);
    }
};

// Runs f, which must throw zyfa::Error with `status` and a message containing `needle`.
template <class F>
void expect_error(F&& f, zyfa_status status, const char* needle) {
    try {
        f();
    } catch (const zyfa::Error& error) {
        if (error.status() != status || std::strstr(error.what(), needle) == nullptr) {
            fail_msg("got status %d \"%s\", expected %d with \"%s\"", error.status(), error.what(), status, needle);
        }
        return;
    }
    fail_msg("no error, expected %d with \"%s\"", status, needle);
}

void test_normalised_problem(void**) {
    Request fp8(ZYFA_DTYPE_FP8_E4M3FN);
    zyfa::AttnProblem p = fp8.validate(ZYFA_BACKEND_CPU);
    assert_int_equal(p.softmax, ZYFA_SOFTMAX_LEAN);
    assert_true(p.softmax_scale == static_cast<float>(1.0 / std::sqrt(64.0)));
    assert_int_equal(p.q.stride_batch, kSeq * kHeads * kDim);
    assert_true(p.fp8());

    Request bf16(ZYFA_DTYPE_BF16);
    bf16.params.softmax_scale = 0.3f;
    bf16.params.cu_seqlens_q = bf16.params.cu_seqlens_k = bf16.cu;
    p = bf16.validate(ZYFA_BACKEND_CPU);
    assert_int_equal(p.softmax, ZYFA_SOFTMAX_EXACT);
    assert_true(p.softmax_scale == 0.3f);
    assert_true(p.varlen());
    assert_int_equal(p.q.stride_batch, 0);  // recorded as 0 when packed
    assert_int_equal(p.o.stride_batch, 0);
    assert_int_equal(p.total_q(), 2 * kSeq);
}

void test_gpu_fp8_alignment(void**) {
    for (zyfa_backend gpu : {ZYFA_BACKEND_HIP, ZYFA_BACKEND_CUDA}) {
        Request aligned(ZYFA_DTYPE_FP8_E4M3FN);
        aligned.validate(gpu);  // 64-byte aligned buffers, strides multiples of 16: accepted

        Request r(ZYFA_DTYPE_FP8_E4M3FN);
        r.k.data = r.inputs[1] + 8;
        expect_error([&] { r.validate(gpu); }, ZYFA_ERROR_INVALID_ARGUMENT, "k.data");
        expect_error([&] { r.validate(gpu); }, ZYFA_ERROR_INVALID_ARGUMENT, "unaligned");
        r.validate(ZYFA_BACKEND_CPU);  // the CPU backend takes any address

        Request s(ZYFA_DTYPE_FP8_E4M3FNUZ);
        s.q.stride_seq = kHeads * kDim + 8;
        s.q.stride_batch = kSeq * s.q.stride_seq;  // validation only: nothing is read
        expect_error([&] { s.validate(gpu); }, ZYFA_ERROR_INVALID_ARGUMENT, "q.stride_seq = 136 is unaligned");
        s.validate(ZYFA_BACKEND_CPU);

        Request h(ZYFA_DTYPE_FP8_E4M3FN);
        h.params.head_dim_qk = h.params.head_dim_v = 56;  // rows of 56 inside 64-element slots
        h.v.stride_head = 56;
        h.v.stride_seq = kHeads * 56;
        h.v.stride_batch = kSeq * kHeads * 56;
        expect_error([&] { h.validate(gpu); }, ZYFA_ERROR_INVALID_ARGUMENT, "v.stride_");

        Request b(ZYFA_DTYPE_BF16);  // 16-bit inputs are not held to the FP8 rule
        b.k.data = reinterpret_cast<uint8_t*>(b.inputs[1]) + 2;
        b.validate(gpu);
    }
}

void test_gpu_rejects_fp32_inputs(void**) {
    Request r(ZYFA_DTYPE_FP32);
    r.validate(ZYFA_BACKEND_CPU);
    expect_error([&] { r.validate(ZYFA_BACKEND_HIP); }, ZYFA_ERROR_NOT_SUPPORTED, "q.dtype = FP32");
    expect_error([&] { r.validate(ZYFA_BACKEND_CUDA); }, ZYFA_ERROR_NOT_SUPPORTED, "CPU backend only");
}

// On GPU backends cu_seqlens is device memory: never read (here: values that would be refused).
void test_gpu_does_not_read_cu_seqlens(void**) {
    Request r(ZYFA_DTYPE_BF16);
    int32_t device_like[kBatch + 1] = {7, -3, 99};
    r.params.cu_seqlens_q = r.params.cu_seqlens_k = device_like;
    expect_error([&] { r.validate(ZYFA_BACKEND_CPU); }, ZYFA_ERROR_INVALID_ARGUMENT, "params.cu_seqlens_q[0] = 7");
    const zyfa::AttnProblem p = r.validate(ZYFA_BACKEND_HIP);
    assert_true(p.varlen());
}

void test_gpu_quant_output_alignment(void**) {
    std::vector<uint16_t> in(kBatch * kSeq * kHeads * kDim);
    alignas(64) static uint8_t out[kBatch * kSeq * kHeads * kDim + 16];
    float descale[kBatch * kHeads];
    zyfa_quant_params params;
    zyfa_quant_params_init(&params, sizeof(params));
    params.batch = kBatch;
    params.seqlen = kSeq;
    params.heads = kHeads;
    params.head_dim = kDim;
    zyfa_tensor tin = Request::view(in.data(), ZYFA_DTYPE_BF16);
    zyfa_tensor tout = Request::view(out, ZYFA_DTYPE_FP8_E4M3FN);
    zyfa::validate_quant(&params, &tin, &tout, descale, ZYFA_BACKEND_HIP);
    tout.data = out + 4;
    expect_error([&] { zyfa::validate_quant(&params, &tin, &tout, descale, ZYFA_BACKEND_HIP); },
                 ZYFA_ERROR_INVALID_ARGUMENT, "out.data");
    zyfa::validate_quant(&params, &tin, &tout, descale, ZYFA_BACKEND_CPU);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalised_problem),
        cmocka_unit_test(test_gpu_fp8_alignment),
        cmocka_unit_test(test_gpu_rejects_fp32_inputs),
        cmocka_unit_test(test_gpu_does_not_read_cu_seqlens),
        cmocka_unit_test(test_gpu_quant_output_alignment),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
