// FP8 V in the transposed layout on the CUDA backend (ZYFA_ATTN_V_TRANSPOSED: the sm_90a producer
// copies each 128-key block of V as one bulk copy instead of transposing it, sm90/producer.cuh):
// the same values read from the layout give the row-major call's O and lse bit for bit on the GPU,
// for FP8 EXACT and LEAN at head dims 128, 64 and 192/128, causal and bottom-right chunks, GQA,
// sinks, lengths that end inside a 16-key group (the tail block the producer completes itself), and
// padding keys that hold NaN (never multiplied); the CUDA quantiser writes the layout bit for bit
// as the CPU backend does (the layout is also what the kernel's P.V reads: a wrong byte order would
// show as a differing O here); what the kernels do not take is NOT_SUPPORTED. Exits 77 (skipped)
// without a CUDA device.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_session.hpp"
#include "support/attention_modes.hpp"
#include "v_transposed_gpu_check.hpp"

using namespace zyfa_gpu_test;

namespace {

void every_head_dim_and_tail(void**) {
    guarded([] {
        for (const zyfa_test::DtypeMode& m : {zyfa_test::kE4m3fnExact, zyfa_test::kE4m3fnLean}) {
            for (int64_t dqk : {128, 64, 192}) {
                for (int64_t keys : {5, 128, 333, 1000}) {
                    CaseShape s = zyfa_test::mode_shape(m);
                    s.head_dim_qk = dqk;
                    s.head_dim_v = dqk == 64 ? 64 : 128;
                    s.batch = 2;
                    s.seqlen_q = keys < 200 ? keys : 200;
                    s.seqlen_k = keys;
                    s.heads_q = 4;
                    s.heads_kv = 2;
                    s.descales = true;
                    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
                    VTransposedLayout nan_padding;
                    nan_padding.padding_byte = 0xFF;  // e4m3fn NaN: the tail block must not multiply it
                    expect_transposed_equals_row_major(
                        s, nan_padding,
                        std::string(m.name) + " " + zyfa_test::head_dims_label(s.head_dim_qk, s.head_dim_v) + " " +
                            std::to_string(keys) + " keys, NaN padding");
                }
            }
        }
    });
}

// The benchmark's shape, shorter: square causal, every block whole, with sinks.
void square_causal_with_sinks(void**) {
    guarded([] {
        for (const zyfa_test::DtypeMode& m : {zyfa_test::kE4m3fnExact, zyfa_test::kE4m3fnLean}) {
            CaseShape s = zyfa_test::mode_shape(m);
            s.head_dim_qk = s.head_dim_v = 128;
            s.seqlen_q = s.seqlen_k = 2048;
            s.heads_q = s.heads_kv = 2;
            s.sinks = {0.75f, -0.5f};
            expect_transposed_equals_row_major(s, VTransposedLayout(), std::string(m.name) + " square 2048, sinks");
        }
    });
}

// The CUDA quantiser's layout against the CPU backend's, bit for bit (codes, padding zeros,
// descales), from the same BF16 input; the device buffer starts as 0xEE so an unwritten byte shows.
void quantiser_matches_cpu(void**) {
    guarded([] {
        Session& s = session();
        zyfa_context* cpu = nullptr;
        zyfa_context_options opts;
        zyfa_context_options_init(&opts, sizeof opts);
        opts.backend = ZYFA_BACKEND_CPU;
        assert_int_equal(zyfa_context_create(&opts, &cpu), ZYFA_SUCCESS);
        for (int64_t seqlen : {7, 128, 1000}) {
            for (uint32_t extra : {0u, ZYFA_QUANT_HADAMARD}) {
                const int64_t batch = 2, heads = 3, dim = 128;
                std::vector<uint16_t> in(static_cast<size_t>(batch * seqlen * heads * dim));
                std::mt19937_64 rng(static_cast<uint64_t>(seqlen) + extra);
                std::normal_distribution<float> normal(0.0f, 3.0f);
                for (uint16_t& x : in) x = zyfa::numerics::float_to_bf16(normal(rng));
                const int64_t group_stride = 16 * dim, head_stride = zyfa::numerics::vt_groups(seqlen) * group_stride;
                const size_t out_bytes = static_cast<size_t>(batch * heads * head_stride);
                zyfa_quant_params p;
                zyfa_quant_params_init(&p, sizeof p);
                p.flags = ZYFA_QUANT_V_TRANSPOSED | extra;
                p.batch = batch;
                p.seqlen = seqlen;
                p.heads = heads;
                p.head_dim = dim;
                zyfa_tensor tin;
                std::memset(&tin, 0, sizeof tin);
                tin.dtype = ZYFA_DTYPE_BF16;
                tin.stride_head = dim;
                tin.stride_seq = heads * dim;
                tin.stride_batch = seqlen * heads * dim;
                zyfa_tensor tout;
                std::memset(&tout, 0, sizeof tout);
                tout.dtype = ZYFA_DTYPE_FP8_E4M3FN;
                tout.stride_seq = group_stride;
                tout.stride_head = head_stride;
                tout.stride_batch = heads * head_stride;
                // CPU
                std::vector<uint8_t> cpu_out(out_bytes, 0xEE);
                std::vector<float> cpu_descale(static_cast<size_t>(batch * heads));
                tin.data = in.data();
                tout.data = cpu_out.data();
                assert_int_equal(zyfa_quantize_fp8(cpu, &p, &tin, &tout, cpu_descale.data(), nullptr), ZYFA_SUCCESS);
                // CUDA
                DeviceBuffer din(*s.runtime, in.data(), bytes_of(in));
                DeviceBuffer dout(*s.runtime, std::vector<uint8_t>(out_bytes, 0xEE).data(), out_bytes);
                DeviceBuffer ddescale(*s.runtime, bytes_of(cpu_descale));
                tin.data = din.data();
                tout.data = dout.data();
                const zyfa_status st =
                    zyfa_quantize_fp8(s.cuda, &p, &tin, &tout, static_cast<float*>(ddescale.data()), s.stream);
                if (st != ZYFA_SUCCESS) std::printf("  quantize: %s\n", zyfa_last_error_message());
                assert_int_equal(st, ZYFA_SUCCESS);
                s.runtime->synchronize_stream(s.stream);
                std::vector<uint8_t> gpu_out(out_bytes);
                std::vector<float> gpu_descale(cpu_descale.size());
                dout.download(gpu_out.data());
                ddescale.download(gpu_descale.data());
                size_t differing = 0;
                for (size_t i = 0; i < out_bytes; ++i) differing += gpu_out[i] != cpu_out[i];
                const bool descales = std::memcmp(gpu_descale.data(), cpu_descale.data(), bytes_of(gpu_descale)) == 0;
                std::printf("  quantize transposed %s seqlen %4lld: %zu of %zu bytes differ from the CPU, descales %s%s\n",
                            extra ? "hadamard" : "plain   ", static_cast<long long>(seqlen), differing, out_bytes,
                            descales ? "equal" : "DIFFER", dout.guard_intact() ? "" : "  GUARD BAND OVERWRITTEN");
                assert_int_equal(differing, 0);
                assert_true(descales);
                assert_true(dout.guard_intact());
            }
        }
        zyfa_context_destroy(cpu);
    });
}

// What the NVIDIA kernels refuse: head dim 256 (64-key steps), groups not adjacent.
void refusals(void**) {
    guarded([] {
        Session& s = session();
        for (int64_t dim : {256, 128}) {
            CaseShape shape = zyfa_test::mode_shape(zyfa_test::kE4m3fnLean);
            shape.head_dim_qk = shape.head_dim_v = dim;
            shape.seqlen_k = 200;
            GpuCase c(*s.runtime, shape);
            VTransposedLayout layout;
            layout.group_padding = dim == 128 ? 16 : 0;  // dim 128: groups 16 bytes apart
            VTransposed vt(c.host, layout);
            DeviceBuffer v(*s.runtime, vt.v.data(), bytes_of(vt.v));
            zyfa_attn_params p = c.params;
            p.flags = ZYFA_ATTN_V_TRANSPOSED;
            zyfa_tensor tv = vt.tv;
            tv.data = v.data();
            const zyfa_status st = zyfa_attn_supported(s.cuda, &p, &c.tq, &c.tk, &tv, &c.to);
            std::printf("  head dim %lld%s: %s: %s\n", static_cast<long long>(dim), dim == 128 ? ", spaced groups" : "",
                        zyfa_status_string(st), zyfa_last_error_message());
            assert_int_equal(st, ZYFA_ERROR_NOT_SUPPORTED);
        }
    });
}

}  // namespace

int main() {
    const int status = open_session_or_skip("gpu_v_transposed");
    if (status != 0) return status;
    const CMUnitTest tests[] = {
        cmocka_unit_test(every_head_dim_and_tail),
        cmocka_unit_test(square_causal_with_sinks),
        cmocka_unit_test(quantiser_matches_cpu),
        cmocka_unit_test(refusals),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
