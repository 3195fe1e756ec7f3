// Split-KV on the AMD path in the emulator (issue 22 item 4; libzyfa.so's HIP backend over the HIP
// stand-in, gfx950 and gfx942 by ZYFA_EMU_ARCH): decode-shaped calls with the workspace
// zyfa_attn_fwd_workspace_size asks for run the HIP C++ kernels (kernels/amd/attention_fwd.h) with
// a key range per workgroup (64-key blocks, common/split_kv_args.h's split_key_range) writing fp32
// parts into the workspace, merged by zyfa_attn_merge's HIP kernel. zyfa_attn_kernel_name reports
// "<symbol>+split_kv" for them; on gfx950 FP8 LEAN splits on the HIP C++ kernel, never the assembly.
// Checked, in every mode the HIP C++ kernels run (BF16 EXACT; FP8 EXACT and LEAN in the arch's
// format; INT8 Q/K LEAN), GQA, bottom-right and top-left causal, a window, packed sequences with
// sinks, paged K/V:
//  - the split against the fp64 reference within the gpu tier's bounds (tests/gpu/gpu_check.hpp:
//    relative RMS, max |lse| difference) and, as the CUDA split (split_kv_gpu_test.cpp), a
//    relative RMS at most 1.5 times the CPU backend's own: the gpu tier's RMS bound against the CPU
//    model is for kernels that round P at the model's maxima, and a split rounds each block's P at
//    its split's running maximum. Hence against the CPU backend and the unsplit HIP call (which is
//    within the tier's bound of fp64 too): relative RMS at most 2.6 times the CPU's against fp64
//    (1.5 + 1, and 4% for the normalisations), max |lse| difference within the tier's bound
//    against the CPU (twice it against the unsplit call);
//  - BF16 EXACT also within the max-abs bounds tests/gpu/split_kv_gpu_test.cpp derives for the CUDA
//    split (its head comment: P rounded to bf16 while the denominator sums unrounded P, fp32
//    accumulation over the keys, the merges' exp2 of lse differences), and split vs unsplit within
//    twice them: the AMD split rounds the same P per key (each 64-key block as the unsplit kernel,
//    at its split's running maximum) and merges once;
//  - paged K/V (page size 16) split gives the contiguous split's O and lse bit for bit;
//  - two identical calls give identical bits, a larger workspace changes nothing;
//  - a workspace one byte short of two parts runs unsplit (bitwise num_splits = 1), exactly two
//    parts with num_splits 3 is bitwise num_splits = 2;
//  - nothing is written past o, lse or the workspace (guard bands); the workspace starts as NaN,
//    so a part the merge reads but no split wrote shows up.
// Tiny shapes (the emulator runs every instruction): 800 keys (13 blocks, the last partial), one
// or two 256-query tiles' worth of workgroups.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/attention_reference.hpp"
#include "emulated_hip_session.hpp"
#include "gpu/gpu_check.hpp"
#include "gpu/paged_gpu_check.hpp"
#include "support/attention_modes.hpp"

using namespace zyfa_gpu_test;
using namespace zyfa_test;

namespace {

bool g_gfx942 = false;

struct SplitResult {
    std::vector<uint8_t> o;
    std::vector<float> lse;
    std::string kernel;
    size_t workspace_query = 0;  // zyfa_attn_fwd_workspace_size's answer for the call's num_splits
    bool guards = true;
};

// Runs the case on the HIP context with num_splits and a workspace of workspace_bytes (-1: the
// size zyfa_attn_fwd_workspace_size returns), filled with NaN bytes first.
SplitResult run_hip(const CaseShape& shape, int32_t num_splits, int64_t workspace_bytes = -1) {
    Session& s = session();
    GpuCase gpu(*s.runtime, shape);
    gpu.params.num_splits = num_splits;
    SplitResult r;
    if (zyfa_attn_fwd_workspace_size(s.cuda, &gpu.params, &r.workspace_query) != ZYFA_SUCCESS) {
        std::printf("  zyfa_attn_fwd_workspace_size: %s\n", zyfa_last_error_message());
        fail();
    }
    const size_t bytes = workspace_bytes < 0 ? r.workspace_query : static_cast<size_t>(workspace_bytes);
    DeviceBuffer workspace;
    if (bytes > 0) {
        workspace = DeviceBuffer(*s.runtime, bytes);
        s.runtime->fill_device(workspace.data(), 0xFF, bytes);  // NaN floats
        gpu.params.workspace = workspace.data();
        gpu.params.workspace_bytes = bytes;
    }
    const char* name = zyfa_attn_kernel_name(s.cuda, &gpu.params, &gpu.tq, &gpu.tk, &gpu.tv, &gpu.to);
    r.kernel = name ? name : "(none)";
    const zyfa_status st = gpu.run(s.cuda, *s.runtime, s.stream);
    if (st != ZYFA_SUCCESS) {
        std::printf("  zyfa_attn_fwd(HIP) failed: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
    r.o = gpu.host.o;
    r.lse = gpu.host.lse;
    r.guards = gpu.guards_intact() && (bytes == 0 || workspace.guard_intact());
    return r;
}

bool is_split(const std::string& name) { return name.find("+split_kv") != std::string::npos; }

// The HIP results in a case of the same inputs, for the shared comparisons.
void take_results(AttentionCase& c, const SplitResult& r) {
    c.o = r.o;
    c.lse = r.lse;
}

double max_finite_abs(const std::vector<float>& x) {
    double m = 0.0;
    for (float v : x)
        if (std::isfinite(v)) m = std::fmax(m, std::fabs(v));
    return m;
}

// max |a - b| over fp32 O and over lse finite on both sides; lse infinities that disagree counted.
struct MaxDiff {
    double o = 0.0, lse = 0.0;
    int64_t lse_infinities = 0;
};
MaxDiff max_diff(const std::vector<uint8_t>& a_o, const std::vector<float>& a_lse, const std::vector<uint8_t>& b_o,
                 const std::vector<float>& b_lse) {
    MaxDiff d;
    const float* a = reinterpret_cast<const float*>(a_o.data());
    const float* b = reinterpret_cast<const float*>(b_o.data());
    for (size_t i = 0; i < a_o.size() / 4; ++i) {
        const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
        d.o = std::isnan(e) ? INFINITY : std::fmax(d.o, e);
    }
    for (size_t i = 0; i < a_lse.size(); ++i) {
        if (!std::isfinite(a_lse[i]) || !std::isfinite(b_lse[i])) {
            if (!(a_lse[i] == b_lse[i])) ++d.lse_infinities;
            continue;
        }
        d.lse = std::fmax(d.lse, std::fabs(static_cast<double>(a_lse[i]) - b_lse[i]));
    }
    return d;
}

void check_split_case(const CaseShape& shape, int32_t num_splits, const std::string& label) {
    guarded([&] {
        const SplitResult split = run_hip(shape, num_splits);
        const SplitResult unsplit = run_hip(shape, 1);
        AttentionCase cpu(shape);
        run_on_cpu(cpu);
        const zyfa::AttnProblem problem =
            zyfa::validate_attn(&cpu.params, &cpu.tq, &cpu.tk, &cpu.tv, &cpu.to, ZYFA_BACKEND_CPU);
        const zyfa::cpu::ReferenceOutput ref = zyfa::cpu::attention_reference_fp64(problem);

        AttentionCase split_case(shape), unsplit_case(shape);
        take_results(split_case, split);
        take_results(unsplit_case, unsplit);
        const zyfa_softmax mode = resolved_softmax(shape);
        const ErrorStats vs_ref = compare(split_case, ref);
        const ErrorStats cpu_vs_ref = compare(cpu, ref);
        const CpuDiff vs_cpu = compare_with_cpu(split_case, cpu);
        const CpuDiff vs_unsplit = compare_with_cpu(split_case, unsplit_case);
        const double ref_tol = o_tolerance(shape.dtype, mode, shape.out_dtype);
        const double ref_lse_tol = lse_tolerance(mode);
        const ErrorStats unsplit_vs_ref = compare(unsplit_case, ref);
        // The split rounds P at its split's running maxima, not the CPU model's: held to 1.5 times
        // the CPU backend's own relative RMS against fp64, and so (triangle inequality, 4% for the
        // two normalisations) to 2.6 times it against the CPU backend and the unsplit call.
        const double rms_tol = 1.5 * cpu_vs_ref.rel_rms + 1e-7;
        const double pair_tol = 2.6 * cpu_vs_ref.rel_rms + 1e-7;
        const double cpu_lse_tol = lse_tolerance_vs_cpu(mode);
        std::printf("  %-34s %s (%zu B): vs fp64 rel_rms %.2e (cpu %.2e, tol %.1e) lse %.1e (tol %.0e) | vs cpu "
                    "rel_rms %.2e (tol %.1e) lse %.1e (tol %.0e) | vs unsplit rel_rms %.2e lse %.1e%s\n",
                    label.c_str(), split.kernel.c_str(), split.workspace_query, vs_ref.rel_rms, cpu_vs_ref.rel_rms,
                    std::fmin(ref_tol, rms_tol), vs_ref.lse_max_abs, ref_lse_tol, vs_cpu.rel_rms, pair_tol, vs_cpu.lse_max_abs, cpu_lse_tol,
                    vs_unsplit.rel_rms, vs_unsplit.lse_max_abs, split.guards ? "" : "  GUARD BAND OVERWRITTEN");
        assert_true(is_split(split.kernel));
        assert_false(is_split(unsplit.kernel));
        assert_true(split.workspace_query > 0);
        assert_true(split.guards);
        assert_true(vs_ref.rel_rms <= ref_tol);
        assert_true(vs_ref.rel_rms <= rms_tol);
        assert_true(vs_ref.lse_max_abs <= ref_lse_tol);
        assert_int_equal(vs_ref.lse_mismatched_infinities, 0);
        assert_true(unsplit_vs_ref.rel_rms <= ref_tol);
        assert_true(vs_cpu.rel_rms <= pair_tol);
        assert_true(vs_cpu.lse_max_abs <= cpu_lse_tol);
        assert_int_equal(vs_cpu.lse_mismatched_infinities, 0);
        assert_true(vs_unsplit.rel_rms <= pair_tol);
        assert_true(vs_unsplit.lse_max_abs <= 2 * cpu_lse_tol);
        assert_int_equal(vs_unsplit.lse_mismatched_infinities, 0);

        if (shape.dtype == ZYFA_DTYPE_BF16) {
            // tests/gpu/split_kv_gpu_test.cpp's bounds (max |error| per element; u = 2^-24).
            const double u = std::ldexp(1.0, -24), r = std::ldexp(1.0, -8);
            double max_v = 0.0;
            for (size_t i = 0; i < cpu.v.size() / 2; ++i) {
                max_v = std::fmax(max_v,
                                  std::fabs(zyfa::cpu::load_as_float(cpu.v.data(), shape.dtype, static_cast<int64_t>(i))));
            }
            const double lse_mag = std::fmax(max_finite_abs(split.lse), max_finite_abs(unsplit.lse));
            const double parts = 64, n_keys = static_cast<double>(shape.seqlen_k);
            const double o_bound = (r + (4 * n_keys + 16 * (lse_mag + 2) + 4 * (parts + 4)) * u) * max_v + 1e-6;
            const double lse_bound = (8 * (lse_mag + 2) + 4 * (parts + 4) + 4 * n_keys) * u;
            double o_vs_ref = 0.0, lse_vs_ref = 0.0;
            const float* so = reinterpret_cast<const float*>(split.o.data());
            for (size_t i = 0; i < ref.o.size(); ++i) o_vs_ref = std::fmax(o_vs_ref, std::fabs(so[i] - ref.o[i]));
            if (std::isnan(o_vs_ref)) o_vs_ref = INFINITY;
            for (size_t i = 0; i < ref.lse.size(); ++i) {
                if (std::isfinite(ref.lse[i]) && std::isfinite(split.lse[i]))
                    lse_vs_ref = std::fmax(lse_vs_ref, std::fabs(split.lse[i] - ref.lse[i]));
            }
            const MaxDiff su = max_diff(split.o, split.lse, unsplit.o, unsplit.lse);
            std::printf("  %-34s max-abs vs fp64 O %.2e lse %.2e (bounds %.2e, %.2e) | vs unsplit O %.2e lse %.2e\n", "",
                        o_vs_ref, lse_vs_ref, o_bound, lse_bound, su.o, su.lse);
            assert_true(o_vs_ref <= o_bound);
            assert_true(lse_vs_ref <= lse_bound);
            assert_true(su.o <= 2 * o_bound);
            assert_true(su.lse <= 2 * lse_bound);
            assert_int_equal(su.lse_infinities, 0);
        }
    });
}

CaseShape decode(const DtypeMode& m, int64_t seqlen_q) {
    CaseShape s = mode_shape(m);
    s.out_dtype = ZYFA_DTYPE_FP32;
    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.batch = 1;
    s.seqlen_q = seqlen_q;
    s.seqlen_k = 800;  // 13 blocks, the last partial
    s.heads_q = 2;
    s.heads_kv = 1;
    s.head_dim_qk = s.head_dim_v = 128;
    s.v_dtype_int8 = g_gfx942 ? ZYFA_DTYPE_FP8_E4M3FNUZ : ZYFA_DTYPE_FP8_E4M3FN;
    s.seed = static_cast<uint64_t>(seqlen_q * 100 + m.dtype);
    return s;
}

const DtypeMode& fp8_lean() { return g_gfx942 ? kE4m3fnuzLean : kE4m3fnLean; }
const DtypeMode& fp8_exact() { return g_gfx942 ? kE4m3fnuzExact : kE4m3fnExact; }

// Every mode, 3 splits (5, 5 and 3 blocks); the heuristic (num_splits 0) on BF16.
void decode_modes(void**) {
    for (const DtypeMode& m : {kBf16, fp8_lean(), fp8_exact(), kInt8qkLean})
        check_split_case(decode(m, 2), 3, std::string(m.name) + " sq 2 GQA 2/1, 3 splits");
    check_split_case(decode(kBf16, 1), 0, "bf16 sq 1, heuristic");
}

// Packed sequences (one without keys) with sinks; top-left causal (later splits see no key).
void packed_sinks_and_masks(void**) {
    for (const DtypeMode& m : {kBf16, fp8_lean()}) {
        CaseShape s = decode(m, 2);
        s.batch = 3;
        s.lengths_q = {2, 1, 1};
        s.lengths_k = {800, 260, 0};
        s.sinks = {0.5f, -1.0f};
        check_split_case(s, 3, std::string(m.name) + " packed k 800,260,0 + sinks");
    }
    CaseShape top_left = decode(kBf16, 2);
    top_left.mask = ZYFA_MASK_CAUSAL;
    check_split_case(top_left, 3, "bf16 top-left causal");
    // A window: the tile's keys start inside a block (499), the splits' blocks at its start (448).
    CaseShape window = decode(kBf16, 2);
    window.window_left = 300;
    window.window_right = 0;
    check_split_case(window, 3, "bf16 bottom-right, window (300, 0)");
}

// Paged K/V (page size 16) splits as the contiguous call does: bitwise the same O and lse.
void paged_split_equals_contiguous_split(void**) {
    guarded([] {
        for (const DtypeMode& m : {kBf16, fp8_lean()}) {
            Session& s = session();
            CaseShape shape = decode(m, 2);
            shape.batch = 2;
            shape.lengths_q = {2, 1};
            shape.lengths_k = {800, 300};
            GpuCase c(*s.runtime, shape);
            c.params.num_splits = 3;
            size_t bytes = 0;
            assert_int_equal(zyfa_attn_fwd_workspace_size(s.cuda, &c.params, &bytes), ZYFA_SUCCESS);
            assert_true(bytes > 0);
            DeviceBuffer workspace(*s.runtime, bytes);
            c.params.workspace = workspace.data();
            c.params.workspace_bytes = bytes;
            assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);
            PagedLayout layout;
            layout.page_size = 16;
            layout.row_padding = 16;
            DevicePaged paged(*s.runtime, c, layout);  // the same workspace and num_splits
            const char* name = zyfa_attn_kernel_name(s.cuda, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
            assert_non_null(name);
            assert_non_null(std::strstr(name, "_paged_"));
            assert_true(is_split(name));
            assert_int_equal(zyfa_attn_fwd(s.cuda, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to, s.stream),
                             ZYFA_SUCCESS);
            s.runtime->synchronize_stream(s.stream);
            std::vector<uint8_t> o(c.host.o.size());
            std::vector<float> lse(c.host.lse.size());
            paged.o.download(o.data());
            paged.lse.download(lse.data());
            std::printf("  %-34s %s: O %s, lse %s\n", m.name, name,
                        o == c.host.o ? "bitwise equal" : "DIFFERS", lse == c.host.lse ? "bitwise equal" : "DIFFERS");
            assert_true(o == c.host.o);
            assert_memory_equal(lse.data(), c.host.lse.data(), lse.size() * 4);
            assert_true(paged.o.guard_intact() && paged.lse.guard_intact() && workspace.guard_intact());
        }
    });
}

void repeatable_and_small_workspace(void**) {
    guarded([] {
        const CaseShape shape = decode(kBf16, 2);
        const SplitResult a = run_hip(shape, 3), b = run_hip(shape, 3);
        assert_true(is_split(a.kernel));
        assert_memory_equal(a.o.data(), b.o.data(), a.o.size());
        assert_memory_equal(a.lse.data(), b.lse.data(), a.lse.size() * 4);
        const SplitResult c = run_hip(shape, 3, static_cast<int64_t>(a.workspace_query) + 4096);
        assert_memory_equal(a.o.data(), c.o.data(), a.o.size());
        assert_memory_equal(a.lse.data(), c.lse.data(), a.lse.size() * 4);

        const SplitResult split2 = run_hip(shape, 2);
        const int64_t two = static_cast<int64_t>(split2.workspace_query);
        assert_true(two > 0 && static_cast<int64_t>(a.workspace_query) > two);
        const SplitResult unsplit = run_hip(shape, 1);
        const SplitResult short_of_two = run_hip(shape, 3, two - 1);
        const SplitResult none = run_hip(shape, 3, 0);
        assert_false(is_split(short_of_two.kernel));
        assert_memory_equal(unsplit.o.data(), short_of_two.o.data(), unsplit.o.size());
        assert_memory_equal(unsplit.lse.data(), short_of_two.lse.data(), unsplit.lse.size() * 4);
        assert_memory_equal(unsplit.o.data(), none.o.data(), unsplit.o.size());
        const SplitResult three_in_two = run_hip(shape, 3, two);
        assert_true(is_split(three_in_two.kernel));
        assert_memory_equal(split2.o.data(), three_in_two.o.data(), split2.o.size());
        assert_memory_equal(split2.lse.data(), three_in_two.lse.data(), split2.lse.size() * 4);
        assert_true(a.guards && b.guards && c.guards && split2.guards && short_of_two.guards && three_in_two.guards);
        std::printf("  repeat: bitwise; workspace of %lld B (2 parts; 3 need %zu B): num_splits 3 runs 2, bitwise; one "
                    "byte less: unsplit, bitwise\n", static_cast<long long>(two), a.workspace_query);
    });
}

}  // namespace

int main() {
    const char* arch = std::getenv("ZYFA_EMU_ARCH");
    g_gfx942 = arch && std::string(arch) == "gfx942";
    const int status = open_emulated_hip_session("amd_split_kv");
    if (status != 0) return status;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decode_modes),
        cmocka_unit_test(packed_sinks_and_masks),
        cmocka_unit_test(paged_split_equals_contiguous_split),
        cmocka_unit_test(repeatable_and_small_workspace),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
