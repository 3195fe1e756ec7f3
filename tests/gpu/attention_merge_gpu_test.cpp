// zyfa_attn_merge on the CUDA backend (label gpu; exits 77 without a CUDA device):
//  - the merge kernel against the CPU backend on the same parts (merge_gpu_check.hpp): dtypes,
//    head dims 1..512, packed sequences, 16-bit outputs, the special rows, 64 parts, refusals;
//  - split keys on the GPU, merged on the GPU, against the unsplit GPU call, FP8 EXACT and LEAN,
//    mask NONE and bottom-right causal chunks, with the bounds of tests/support/merge_split_case.hpp
//    (as tests/cpu/attention_merge_test.cpp on the CPU backend); the CUDA FP8 head-dim-128 kernels
//    step 128 keys (docs/api.md, key_block), so the shared-row-maximum split cuts at multiples of 128.
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/validate.hpp"
#include "cpu/attention_reference.hpp"
#include "merge_gpu_check.hpp"
#include "support/merge_split_case.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

void merge_kernel_vs_cpu(void**) {
    MergeGpuShape s;
    check_merge_case(s, "fp32 parts, d128");
    for (int64_t d : {1, 64, 129, 192, 512}) {
        MergeGpuShape t;
        t.head_dim = d;
        t.seed = static_cast<uint64_t>(d);
        check_merge_case(t, "d" + std::to_string(d));
    }
    MergeGpuShape packed;
    packed.lengths = {4, 0, 9};
    packed.batch = 3;
    check_merge_case(packed, "packed 4, 0, 9");
    for (zyfa_dtype out : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16}) {
        MergeGpuShape t;
        t.out_dtype = out;
        check_merge_case(t, out == ZYFA_DTYPE_BF16 ? "bf16 output" : "fp16 output");
    }
    MergeGpuShape many;
    many.parts = 64;
    check_merge_case(many, "64 parts");
}

void merge_refusals(void**) { check_merge_refusals(); }

struct DeviceSplit {
    std::vector<float> o_full, lse_full, o_merged, lse_merged;
    double max_abs_lse = 0.0;  // over the unsplit call and every part
};

DeviceSplit run_split_on_gpu(const MergeSplitShape& s, const MergeSplitInputs& in) {
    Session& ss = session();
    GpuRuntime& rt = *ss.runtime;
    assert_true(split_is_valid(s));
    DeviceBuffer q(rt, in.q.data(), in.q.size()), k(rt, in.k.data(), in.k.size()), v(rt, in.v.data(), in.v.size());
    const size_t o_bytes = static_cast<size_t>(s.o_elems()) * 4, lse_bytes = static_cast<size_t>(s.lse_elems()) * 4;
    DeviceBuffer o_full(rt, o_bytes), lse_full(rt, lse_bytes), o_merged(rt, o_bytes), lse_merged(rt, lse_bytes);
    std::vector<DeviceBuffer> o_parts, lse_parts;
    for (int64_t p = 0; p < s.parts(); ++p) {
        o_parts.emplace_back(rt, o_bytes);
        lse_parts.emplace_back(rt, lse_bytes);
    }
    auto launch = [&](AttnRequest r, const char* what) {
        const zyfa_status st = zyfa_attn_fwd(ss.cuda, &r.params, &r.q, &r.k, &r.v, &r.o, ss.stream);
        if (st != ZYFA_SUCCESS) {
            std::printf("%s: %s: %s\n", what, zyfa_status_string(st), zyfa_last_error_message());
            fail();
        }
    };
    launch(split_request(s, q.data(), k.data(), v.data(), static_cast<float*>(o_full.data()),
                         static_cast<float*>(lse_full.data()), 0, s.seqlen_k),
           "unsplit");
    std::vector<float*> part_o, part_lse;
    for (int64_t p = 0; p < s.parts(); ++p) {
        launch(split_request(s, q.data(), k.data(), v.data(), static_cast<float*>(o_parts[p].data()),
                             static_cast<float*>(lse_parts[p].data()), s.cuts[p], s.cuts[p + 1]),
               "part");
        part_o.push_back(static_cast<float*>(o_parts[p].data()));
        part_lse.push_back(static_cast<float*>(lse_parts[p].data()));
    }
    MergeRequest m = merge_request(s, part_o, part_lse, static_cast<float*>(o_merged.data()),
                                   static_cast<float*>(lse_merged.data()));
    const zyfa_status st = zyfa_attn_merge(ss.cuda, &m.params, m.part_o.data(), m.part_lse.data(), &m.o, ss.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("merge: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
    rt.synchronize_stream(ss.stream);
    DeviceSplit r;
    r.o_full.resize(s.o_elems());
    r.o_merged.resize(s.o_elems());
    r.lse_full.resize(s.lse_elems());
    r.lse_merged.resize(s.lse_elems());
    o_full.download(r.o_full.data());
    o_merged.download(r.o_merged.data());
    lse_full.download(r.lse_full.data());
    lse_merged.download(r.lse_merged.data());
    assert_true(o_merged.guard_intact());
    assert_true(lse_merged.guard_intact());
    std::vector<float> part(s.lse_elems());
    for (float x : r.lse_full) r.max_abs_lse = std::fmax(r.max_abs_lse, std::fabs(x));
    for (const DeviceBuffer& l : lse_parts) {
        l.download(part.data());
        for (float x : part)
            if (std::isfinite(x)) r.max_abs_lse = std::fmax(r.max_abs_lse, std::fabs(x));
    }
    return r;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0.0;
    for (size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(static_cast<double>(a[i]) - b[i]));
    return m;
}

const char* mode_name(zyfa_softmax softmax) { return softmax == ZYFA_SOFTMAX_LEAN ? "LEAN" : "EXACT"; }

void split_merged_vs_unsplit_on_gpu(void**) {
    for (zyfa_softmax softmax : {ZYFA_SOFTMAX_EXACT, ZYFA_SOFTMAX_LEAN})
        for (zyfa_mask mask : {ZYFA_MASK_NONE, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT}) {
            // Shared row maximum, cuts on the kernel's 128-key blocks: fp32 rounding only.
            MergeSplitShape s;
            s.softmax = softmax;
            s.mask = mask;
            s.head_dim = 128;
            s.seqlen_k = 512;
            s.seqlen_q = 64;
            s.key_block = 0;  // the kernel's own step: 128 here
            s.cuts = {0, 128, 384, 512};
            s.shared_row_max = true;
            MergeSplitInputs in(s);
            DeviceSplit r = run_split_on_gpu(s, in);
            const double lse_mag = r.max_abs_lse;
            const int64_t blocks = s.seqlen_k / 128;
            // On the GPU the FP8 kernels add P.V in the e4m3 wgmma's adder, narrower than fp32
            // (docs/hopper-kernel-notes.md: about 13 mantissa bits kept; O 1.9e-4 rel_rms off the
            // fp32 CPU model in gpu_p_code_agreement), and the unsplit call accumulates over other
            // k-steps than the parts do: each result may move by 2^-13 max|v| per 32-key k-step
            // accumulated into O, so their difference by twice that. (Measured 2026-12-03 on the
            // H200: 5.1e-4 for EXACT, NONE mask, where the fp32-only bound was 4.9e-5.)
            const double adder = 2.0 * static_cast<double>(s.seqlen_k / 32) * std::ldexp(1.0, -13) * in.max_abs_v();
            const double o_bound = shared_max_o_bound(lse_mag, s.parts(), blocks, in.max_abs_v()) + adder;
            const double lse_bound = shared_max_lse_bound(lse_mag, s.parts(), blocks);
            const double o_err = max_diff(r.o_merged, r.o_full), lse_err = max_diff(r.lse_merged, r.lse_full);
            std::printf("  GPU shared row max %s mask %d: |O merged - unsplit| %.2e (bound %.2e), |lse| %.2e (bound %.2e)\n",
                        mode_name(softmax), mask, o_err, o_bound, lse_err, lse_bound);
            assert_true(o_err <= o_bound);
            assert_true(lse_err <= lse_bound);

            // Any split: both within the fp64 bounds, and within their sum of each other.
            MergeSplitShape a = s;
            a.shared_row_max = false;
            a.seed = 21;
            a.cuts = {0, 100, 300, 449, 512};
            MergeSplitInputs ain(a);
            DeviceSplit ar = run_split_on_gpu(a, ain);
            std::vector<uint8_t> q = ain.q, k = ain.k, v = ain.v;
            AttnRequest full = split_request(a, q.data(), k.data(), v.data(), ar.o_full.data(), nullptr, 0, a.seqlen_k);
            const zyfa::AttnProblem problem =
                zyfa::validate_attn(&full.params, &full.q, &full.k, &full.v, &full.o, ZYFA_BACKEND_CPU);
            const zyfa::cpu::ReferenceOutput ref = zyfa::cpu::attention_reference_fp64(problem);
            const double bound = reference_o_bound(softmax, a.seqlen_k, ain.max_abs_v());
            double merged = 0.0, unsplit = 0.0;
            for (size_t i = 0; i < ref.o.size(); ++i) {
                merged = std::fmax(merged, std::fabs(ar.o_merged[i] - ref.o[i]));
                unsplit = std::fmax(unsplit, std::fabs(ar.o_full[i] - ref.o[i]));
            }
            // FP8 EXACT on the sm_90a kernels takes its scores from the e4m3 wgmma, whose adder moves
            // them by ~1e-3 of their size: its lse is held to LEAN's bound against fp64, as in the
            // rest of the gpu tier (gpu_check.hpp, ws_fp8_exact_lse_bound_vs_ref).
            constexpr double kFp8ExactLseVsRef = 0.085;
            const double lo = softmax == ZYFA_SOFTMAX_LEAN ? kLeanLseLow - 1e-4 : -kFp8ExactLseVsRef;
            const double hi = softmax == ZYFA_SOFTMAX_LEAN ? kLeanLseHigh + 1e-4 : kFp8ExactLseVsRef;
            double lse_low = 0.0, lse_high = 0.0;
            for (size_t i = 0; i < ref.lse.size(); ++i) {
                const double dm = ar.lse_merged[i] - ref.lse[i], du = ar.lse_full[i] - ref.lse[i];
                lse_low = std::fmin(lse_low, std::fmin(dm, du));
                lse_high = std::fmax(lse_high, std::fmax(dm, du));
            }
            std::printf("  GPU split %s mask %d: |O - fp64| merged %.2e unsplit %.2e (bound %.2e), between %.2e; "
                        "lse - fp64 in [%.2e, %.2e] (bound [%.2e, %.2e])\n",
                        mode_name(softmax), mask, merged, unsplit, bound, max_diff(ar.o_merged, ar.o_full), lse_low,
                        lse_high, lo, hi);
            assert_true(lse_low >= lo && lse_high <= hi);
            assert_true(merged <= bound);
            assert_true(unsplit <= bound);
            assert_true(max_diff(ar.o_merged, ar.o_full) <= 2 * bound);
        }
}

}  // namespace

int main() {
    const int status = open_session_or_skip("gpu_attention_merge");
    if (status != 0) return status;
    const CMUnitTest tests[] = {
        cmocka_unit_test(merge_kernel_vs_cpu),
        cmocka_unit_test(merge_refusals),
        cmocka_unit_test(split_merged_vs_unsplit_on_gpu),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
