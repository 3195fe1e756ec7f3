// Split-KV on the CUDA backend (issue 22 item 4; label gpu, exits 77 without a CUDA device): short
// query chunks and decode steps against long keys, with the workspace zyfa_attn_fwd_workspace_size
// asks for, run by the sm_90a split kernels (kernels/nvidia/attention_fwd_split.cuh: pack GQA,
// 64-key splits, merged by zyfa_attn_merge's kernel). Checked:
//  - decode shapes (seqlen_q 1, 4, 64, 128; GQA 32/8 and 8/8; BF16 and FP16; head dims 128 and 64;
//    bottom-right causal, top-left causal and no mask; packed sequences) against the fp64
//    reference, the CPU backend and the unsplit CUDA call (num_splits = 1), with the bounds below;
//  - two identical calls give identical bits (the split count is a function of the shape and the
//    workspace only, and the merge order is fixed);
//  - a workspace too small for the requested split runs the largest split that fits: one byte
//    short of two parts is the unsplit kernel (bitwise num_splits = 1), exactly two parts' bytes
//    with num_splits = 8 is bitwise num_splits = 2;
//  - nothing is written past o, lse or the workspace (guard bands);
//  - paged K/V (pages 1, 16, 256; seqused_k shorter than a page, and 0; GQA 32/8 and 4/4; head
//    dims 128 and 64; BF16 and FP16): each shape's contiguous split call is checked as above, and
//    the same call on page pools (tests/support/paged_case.hpp: shuffled pages, padded rows, NaN in
//    every byte no key fills) through the block table gives it bit for bit (same workspace size,
//    same split kernel), so it is within the same bounds of the fp64 reference and the CPU backend;
//  - sinks (split 0 folds them in, the merge counts them once): decode, packed sequences with
//    rows that see only the sink, top-left causal with most splits keyless, head dim 64, paged,
//    checked as above (the fp64 reference and the CPU backend have the sink in the denominator
//    and lse); sinks of -inf give bitwise the call without sinks.
//
// Bounds (max |error| per element, relative to max |v|; u = 2^-24):
//  Against the fp64 reference on the same 16-bit inputs, every EXACT result (split or not, any
//  backend): each P is rounded to the input's 16-bit format (half an ulp: r = 2^-8 for BF16, 2^-11
//  for FP16) before P.V while the denominator sums the unrounded P, so O moves by at most
//  r * sum_j w_j |v_j| <= r max|v|; fp32 accumulation of at most n_keys products adds n_keys u
//  max|v| (generously 4 n_keys u); the merges (in the CTA over its 4 warps, then over the splits)
//  rescale by exp2 of lse differences: (16 (L + 2) + 4 parts) u max|v| as in
//  tests/support/merge_split_case.hpp (L = max |lse|). The fp32 output adds nothing.
//    o_bound = (r + (4 n_keys + 16 (L + 2) + 4 (parts + 4)) u) max|v| + 1e-6.
//  The lse: ln of an fp32 sum of unrounded fp32 exponentials, log2f and the merges:
//    lse_bound = (8 (L + 2) + 4 (parts + 4) + 4 n_keys) u.
//  Split against unsplit (CPU or CUDA): both within the bound of the reference, so within twice it.
//  The relative RMS against fp64: at most 1.5 times the CPU backend's own on the same inputs. The
//  gpu tier's relative-RMS bound against the CPU model (gpu_check.hpp) is for kernels that round P
//  at the model's maxima; these kernels round each warp's P at its 16-key slice's running maximum,
//  so BF16 P lands on other roundings (H200, 2026-12-03: 1.8e-3 against the CPU model at seqlen_q 1,
//  1.2e-3 against fp64).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/validate.hpp"
#include "cpu/attention_reference.hpp"
#include "gpu_check.hpp"
#include "gpu_session.hpp"
#include "paged_gpu_check.hpp"

using namespace zyfa_gpu_test;

namespace {

struct SplitResult {
    std::vector<uint8_t> o;
    std::vector<float> lse;
    std::string kernel;
    size_t workspace_query = 0;  // zyfa_attn_fwd_workspace_size's answer for the call's num_splits
    bool guards = true;
};

// Runs `c` (its inputs) on CUDA with num_splits and a workspace of workspace_bytes (-1: the size
// zyfa_attn_fwd_workspace_size returns), after filling the workspace with NaN bytes, so that a
// part the merge reads but no split wrote shows up.
SplitResult run_cuda(const CaseShape& shape, int32_t num_splits, int64_t workspace_bytes = -1) {
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
        std::printf("  zyfa_attn_fwd(CUDA) failed: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        fail();
    }
    r.o = gpu.host.o;
    r.lse = gpu.host.lse;
    r.guards = gpu.guards_intact() && (bytes == 0 || workspace.guard_intact());
    return r;
}

bool is_split_kernel(const std::string& name) { return name.find("_split_") != std::string::npos; }

double max_abs_of(const std::vector<float>& x) {
    double m = 0.0;
    for (float v : x)
        if (std::isfinite(v)) m = std::fmax(m, std::fabs(v));
    return m;
}

// max |a - b| over O (fp32 outputs) and over the finite lse; counts lse infinities that disagree.
struct Diff {
    double o = 0.0, lse = 0.0;
    int64_t lse_infinities = 0;
};
Diff diff(const std::vector<uint8_t>& a_o, const std::vector<float>& a_lse, const std::vector<uint8_t>& b_o,
          const std::vector<float>& b_lse) {
    Diff d;
    const float* a = reinterpret_cast<const float*>(a_o.data());
    const float* b = reinterpret_cast<const float*>(b_o.data());
    for (size_t i = 0; i < a_o.size() / 4; ++i) {
        const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
        d.o = std::isnan(e) ? INFINITY : std::fmax(d.o, e);
    }
    for (size_t i = 0; i < a_lse.size(); ++i) {
        if (std::isinf(a_lse[i]) || std::isinf(b_lse[i]) || std::isnan(a_lse[i]) || std::isnan(b_lse[i])) {
            if (!(a_lse[i] == b_lse[i])) ++d.lse_infinities;
            continue;
        }
        d.lse = std::fmax(d.lse, std::fabs(static_cast<double>(a_lse[i]) - b_lse[i]));
    }
    return d;
}

// One decode-shaped case: split (heuristic, or num_splits) against fp64, CPU and unsplit CUDA.
void check_split_case(const CaseShape& shape, int32_t num_splits, const std::string& label) {
    guarded([&] {
        Session& s = session();
        const SplitResult split = run_cuda(shape, num_splits);
        const SplitResult unsplit = run_cuda(shape, 1);
        AttentionCase cpu(shape);
        run_on_cpu(cpu);
        const zyfa::AttnProblem problem =
            zyfa::validate_attn(&cpu.params, &cpu.tq, &cpu.tk, &cpu.tv, &cpu.to, ZYFA_BACKEND_CPU);
        const zyfa::cpu::ReferenceOutput ref = zyfa::cpu::attention_reference_fp64(problem);

        // The bounds of the head comment.
        const double u = std::ldexp(1.0, -24);
        const double r = shape.dtype == ZYFA_DTYPE_BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
        double max_v = 0.0;
        for (size_t i = 0; i < cpu.v.size() / 2; ++i) {
            max_v = std::fmax(max_v, std::fabs(zyfa::cpu::load_as_float(cpu.v.data(), shape.dtype, static_cast<int64_t>(i))));
        }
        const double lse_mag = std::fmax(max_abs_of(split.lse), max_abs_of(unsplit.lse));
        const double parts = 64;  // the most splits: the bound holds for any count
        const double n_keys = static_cast<double>(shape.seqlen_k);
        const double o_bound = (r + (4 * n_keys + 16 * (lse_mag + 2) + 4 * (parts + 4)) * u) * max_v + 1e-6;
        const double lse_bound = (8 * (lse_mag + 2) + 4 * (parts + 4) + 4 * n_keys) * u;

        AttentionCase split_case(shape);  // the GPU results in a case, for the shared comparisons
        split_case.o = split.o;
        split_case.lse = split.lse;
        const zyfa_test::ErrorStats vs_ref = zyfa_test::compare(split_case, ref);
        double o_vs_ref = 0.0, lse_vs_ref = 0.0;
        int64_t ref_infinities = 0;
        const float* so = reinterpret_cast<const float*>(split.o.data());
        for (size_t i = 0; i < ref.o.size(); ++i) o_vs_ref = std::fmax(o_vs_ref, std::fabs(so[i] - ref.o[i]));
        if (std::isnan(o_vs_ref)) o_vs_ref = INFINITY;
        for (size_t i = 0; i < ref.lse.size(); ++i) {
            if (std::isinf(ref.lse[i]) || !std::isfinite(split.lse[i])) {
                if (!(ref.lse[i] == static_cast<double>(split.lse[i]))) ++ref_infinities;
                continue;
            }
            lse_vs_ref = std::fmax(lse_vs_ref, std::fabs(split.lse[i] - ref.lse[i]));
        }
        const CpuDiff vs_cpu_rms = compare_with_cpu(split_case, cpu);
        const Diff vs_cpu = diff(split.o, split.lse, cpu.o, cpu.lse);
        const Diff vs_unsplit = diff(split.o, split.lse, unsplit.o, unsplit.lse);
        const double cpu_rel_rms = zyfa_test::compare(cpu, ref).rel_rms;
        const double rms_tol = 1.5 * cpu_rel_rms + 1e-7;
        std::printf("  %-44s %s (%zu B): vs fp64 O %.2e lse %.2e (bounds %.2e, %.2e) rel_rms %.2e | vs cpu O %.2e "
                    "lse %.2e rel_rms %.2e | cpu vs fp64 rel_rms %.2e (split's bound %.2e) | vs unsplit O %.2e lse %.2e%s\n",
                    label.c_str(), split.kernel.c_str(), split.workspace_query, o_vs_ref, lse_vs_ref, o_bound,
                    lse_bound, vs_ref.rel_rms, vs_cpu.o, vs_cpu.lse, vs_cpu_rms.rel_rms, cpu_rel_rms, rms_tol, vs_unsplit.o,
                    vs_unsplit.lse, split.guards ? "" : "  GUARD BAND OVERWRITTEN");
        (void)s;
        assert_true(is_split_kernel(split.kernel));
        assert_false(is_split_kernel(unsplit.kernel));
        assert_true(split.workspace_query > 0);
        assert_true(split.guards);
        assert_true(o_vs_ref <= o_bound);
        assert_true(lse_vs_ref <= lse_bound);
        assert_int_equal(ref_infinities, 0);
        assert_true(vs_cpu.o <= 2 * o_bound);
        assert_true(vs_cpu.lse <= 2 * lse_bound);
        assert_int_equal(vs_cpu.lse_infinities, 0);
        assert_true(vs_ref.rel_rms <= rms_tol);
        assert_true(vs_unsplit.o <= 2 * o_bound);
        assert_true(vs_unsplit.lse <= 2 * lse_bound);
        assert_int_equal(vs_unsplit.lse_infinities, 0);
    });
}

CaseShape decode(zyfa_dtype dtype, int64_t seqlen_q, int64_t heads_q, int64_t heads_kv) {
    CaseShape s;
    s.dtype = dtype;
    s.out_dtype = ZYFA_DTYPE_FP32;
    s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.batch = 3;
    s.seqlen_q = seqlen_q;
    s.seqlen_k = 2000;  // not a multiple of 64: the last block is partial
    s.heads_q = heads_q;
    s.heads_kv = heads_kv;
    s.head_dim_qk = s.head_dim_v = 128;
    s.seed = static_cast<uint64_t>(seqlen_q * 1000 + heads_q);
    return s;
}

// Chunks of 64 and 128 queries against 1,000 keys in 2 sequences: the fp64 reference of every
// case runs on the host, so the large ones are kept small enough for the program's < 60 s.
CaseShape chunk(zyfa_dtype dtype, int64_t seqlen_q, int64_t heads_q, int64_t heads_kv) {
    CaseShape s = decode(dtype, seqlen_q, heads_q, heads_kv);
    if (seqlen_q >= 64) {
        s.batch = 2;
        s.seqlen_k = 1000;
    }
    return s;
}

void decode_shapes(void**) {
    for (int64_t sq : {1, 4, 64, 128})
        for (int64_t hq : {32, 8})
            check_split_case(chunk(ZYFA_DTYPE_BF16, sq, hq, 8), 0,
                             "bf16 sq " + std::to_string(sq) + " GQA " + std::to_string(hq) + "/8");
    for (int64_t sq : {1, 64})
        check_split_case(chunk(ZYFA_DTYPE_FP16, sq, 32, 8), 0, "fp16 sq " + std::to_string(sq) + " GQA 32/8");
}

// Explicit split counts (uneven shares of the 32 blocks), masks, head dim 64.
void split_counts_masks_dims(void**) {
    for (int32_t n : {2, 3, 7, 64}) check_split_case(decode(ZYFA_DTYPE_BF16, 1, 32, 8), n, "num_splits " + std::to_string(n));
    CaseShape none = decode(ZYFA_DTYPE_BF16, 4, 32, 8);
    none.mask = ZYFA_MASK_NONE;
    check_split_case(none, 0, "mask none sq 4");
    // Top-left causal: query i of 16 sees keys 0..i only, so most splits see no key (lse -inf).
    CaseShape top_left = decode(ZYFA_DTYPE_BF16, 16, 8, 8);
    top_left.mask = ZYFA_MASK_CAUSAL;
    check_split_case(top_left, 8, "top-left causal sq 16");
    CaseShape d64 = decode(ZYFA_DTYPE_FP16, 1, 32, 8);
    d64.head_dim_qk = d64.head_dim_v = 64;
    check_split_case(d64, 0, "d64 sq 1");
    CaseShape mqa = decode(ZYFA_DTYPE_BF16, 2, 16, 1);
    check_split_case(mqa, 0, "MQA 16/1 sq 2");
}

// Packed sequences: different query and key counts per sequence, one without queries, one
// without keys (its rows get O = 0, lse = -inf through every split).
void packed_sequences(void**) {
    CaseShape s = decode(ZYFA_DTYPE_BF16, 4, 32, 8);
    s.batch = 5;
    s.lengths_q = {1, 4, 0, 3, 2};
    s.lengths_k = {3000, 700, 50, 1, 0};
    s.seqlen_k = 3000;
    check_split_case(s, 0, "packed q 1,4,0,3,2 k 3000..0");
    check_split_case(s, 5, "packed, num_splits 5");
}

void repeatable_bitwise(void**) {
    guarded([] {
        const CaseShape s = decode(ZYFA_DTYPE_BF16, 1, 32, 8);
        const SplitResult a = run_cuda(s, 0), b = run_cuda(s, 0);
        assert_true(is_split_kernel(a.kernel));
        assert_memory_equal(a.o.data(), b.o.data(), a.o.size());
        assert_memory_equal(a.lse.data(), b.lse.data(), a.lse.size() * 4);
        // A larger workspace than needed changes nothing (same split count).
        const SplitResult c = run_cuda(s, 0, static_cast<int64_t>(a.workspace_query) + 4096);
        assert_memory_equal(a.o.data(), c.o.data(), a.o.size());
        std::printf("  two identical decode calls: bitwise equal O and lse (%s)\n", a.kernel.c_str());
    });
}

void small_workspace_fewer_splits(void**) {
    guarded([] {
        Session& s = session();
        const CaseShape shape = decode(ZYFA_DTYPE_BF16, 1, 32, 8);
        GpuCase probe(*s.runtime, shape);
        size_t two = 0, eight = 0;
        probe.params.num_splits = 2;
        assert_int_equal(zyfa_attn_fwd_workspace_size(s.cuda, &probe.params, &two), ZYFA_SUCCESS);
        probe.params.num_splits = 8;
        assert_int_equal(zyfa_attn_fwd_workspace_size(s.cuda, &probe.params, &eight), ZYFA_SUCCESS);
        assert_true(two > 0 && eight > two);
        const SplitResult unsplit = run_cuda(shape, 1);
        const SplitResult short_of_two = run_cuda(shape, 8, static_cast<int64_t>(two) - 1);
        const SplitResult none = run_cuda(shape, 8, 0);
        assert_false(is_split_kernel(short_of_two.kernel));
        assert_memory_equal(unsplit.o.data(), short_of_two.o.data(), unsplit.o.size());
        assert_memory_equal(unsplit.o.data(), none.o.data(), unsplit.o.size());
        const SplitResult split2 = run_cuda(shape, 2);
        const SplitResult eight_in_two = run_cuda(shape, 8, static_cast<int64_t>(two));
        assert_true(is_split_kernel(eight_in_two.kernel));
        assert_memory_equal(split2.o.data(), eight_in_two.o.data(), split2.o.size());
        assert_memory_equal(split2.lse.data(), eight_in_two.lse.data(), split2.lse.size() * 4);
        std::printf("  workspace of %zu B (2 parts; 8 need %zu B): num_splits 8 runs 2, bitwise; one byte less: "
                    "unsplit, bitwise\n", two, eight);
    });
}

// The paged twin of a split call: the contiguous split call on `shape`, then the same call with K
// and V in page pools (page_size) through the block table; O and lse must be the same bits.
void expect_paged_split_equals_contiguous(const CaseShape& shape, int32_t num_splits, int32_t page_size,
                                          const std::string& label) {
    guarded([&] {
        Session& s = session();
        GpuCase c(*s.runtime, shape);
        c.params.num_splits = num_splits;
        size_t bytes = 0;
        assert_int_equal(zyfa_attn_fwd_workspace_size(s.cuda, &c.params, &bytes), ZYFA_SUCCESS);
        assert_true(bytes > 0);
        DeviceBuffer workspace(*s.runtime, bytes);
        s.runtime->fill_device(workspace.data(), 0xFF, bytes);  // NaN floats
        c.params.workspace = workspace.data();
        c.params.workspace_bytes = bytes;
        const char* contiguous_name = zyfa_attn_kernel_name(s.cuda, &c.params, &c.tq, &c.tk, &c.tv, &c.to);
        assert_non_null(contiguous_name);
        const std::string contiguous_kernel = contiguous_name;
        assert_true(is_split_kernel(contiguous_kernel));
        assert_int_equal(c.run(s.cuda, *s.runtime, s.stream), ZYFA_SUCCESS);

        PagedLayout layout;
        layout.page_size = page_size;
        layout.row_padding = 16;
        DevicePaged paged(*s.runtime, c, layout);  // c's params: the same workspace and num_splits
        size_t paged_bytes = 0;
        assert_int_equal(zyfa_attn_fwd_workspace_size(s.cuda, &paged.params, &paged_bytes), ZYFA_SUCCESS);
        assert_int_equal(paged_bytes, bytes);
        s.runtime->fill_device(workspace.data(), 0xFF, bytes);
        const char* name = zyfa_attn_kernel_name(s.cuda, &paged.params, &c.tq, &paged.tk, &paged.tv, &paged.to);
        if (name == nullptr) std::printf("  %s: %s\n", label.c_str(), zyfa_last_error_message());
        assert_non_null(name);
        assert_string_equal(name, contiguous_kernel.c_str());
        expect_paged_run_matches(s, c, paged, page_size, label, name, &workspace);
    });
}

// A shape's contiguous split checked against fp64, the CPU backend and unsplit, then its paged
// twins at each page size bitwise against it.
void check_paged_split_case(const CaseShape& shape, int32_t num_splits, std::initializer_list<int32_t> page_sizes,
                            const std::string& label) {
    check_split_case(shape, num_splits, label + " (contiguous)");
    for (int32_t ps : page_sizes) expect_paged_split_equals_contiguous(shape, num_splits, ps, label);
}

CaseShape with_dims(CaseShape s, int64_t dim) {
    s.head_dim_qk = s.head_dim_v = dim;
    return s;
}

void paged_decode(void**) {
    for (int64_t dim : {128, 64}) {
        const std::string d = " d" + std::to_string(dim);
        check_paged_split_case(with_dims(decode(ZYFA_DTYPE_BF16, 1, 32, 8), dim), 0, {1, 16, 256},
                               "paged bf16 sq 1 GQA 32/8" + d);
        check_paged_split_case(with_dims(decode(ZYFA_DTYPE_FP16, 4, 4, 4), dim), 5, {16, 256},
                               "paged fp16 sq 4 GQA 4/4 num_splits 5" + d);
    }
    // A 64-query chunk (16 row tiles per kv head at GQA 32/8), explicit splits.
    check_paged_split_case(chunk(ZYFA_DTYPE_BF16, 64, 32, 8), 3, {16}, "paged bf16 sq 64 GQA 32/8 num_splits 3");
}

// seqused_k shorter than the pool's pages (and 0), per sequence: packed queries, each sequence
// with its own key count (the paged call's seqused_k, the contiguous call's cu_seqlens_k).
void paged_seqused(void**) {
    for (int64_t dim : {128, 64})
        for (int64_t hq : {32, 4}) {
            CaseShape s = with_dims(decode(ZYFA_DTYPE_BF16, 2, hq, hq == 32 ? 8 : 4), dim);
            s.batch = 5;
            s.lengths_q = {1, 2, 1, 2, 1};
            s.lengths_k = {2000, 17, 300, 0, 255};
            s.seqlen_q = 2;
            s.seqlen_k = 2000;
            check_paged_split_case(s, 4, {1, 16, 256},
                                   "paged seqused 2000,17,300,0,255 GQA " + std::to_string(hq) + "/" +
                                       std::to_string(s.heads_kv) + " d" + std::to_string(dim));
        }
}

std::vector<float> some_sinks(int64_t heads) {
    const float pattern[] = {0.5f, -2.0f, 3.0f, 30.0f, -0.75f, 6.0f, 2.0f, -5.0f};
    std::vector<float> s;
    for (int64_t h = 0; h < heads; ++h) s.push_back(pattern[h % 8]);
    return s;
}

void sinks(void**) {
    CaseShape dec = decode(ZYFA_DTYPE_BF16, 1, 32, 8);
    dec.sinks = some_sinks(32);
    check_split_case(dec, 0, "sinks bf16 sq 1 GQA 32/8");
    check_split_case(dec, 7, "sinks num_splits 7");
    CaseShape d64 = with_dims(decode(ZYFA_DTYPE_FP16, 4, 8, 8), 64);
    d64.sinks = some_sinks(8);
    check_split_case(d64, 0, "sinks fp16 sq 4 d64");
    // Top-left causal: most splits see no key; the sink is in split 0's part only.
    CaseShape top_left = decode(ZYFA_DTYPE_BF16, 16, 8, 8);
    top_left.mask = ZYFA_MASK_CAUSAL;
    top_left.sinks = some_sinks(8);
    check_split_case(top_left, 8, "sinks top-left causal sq 16");
    // Packed: a sequence without keys (its rows see only the sink: O = 0, lse = the sink).
    CaseShape packed = decode(ZYFA_DTYPE_BF16, 4, 32, 8);
    packed.batch = 5;
    packed.lengths_q = {1, 4, 0, 3, 2};
    packed.lengths_k = {3000, 700, 50, 1, 0};
    packed.seqlen_k = 3000;
    packed.sinks = some_sinks(32);
    check_split_case(packed, 5, "sinks packed, a sequence without keys");
    // Paged with sinks.
    check_paged_split_case(dec, 3, {16}, "sinks paged");
}

// Sinks of -inf are no sinks: bitwise the split call without them.
void sinks_of_minus_infinity(void**) {
    guarded([] {
        const CaseShape plain = decode(ZYFA_DTYPE_BF16, 1, 32, 8);
        CaseShape none = plain;
        none.sinks.assign(32, -INFINITY);
        const SplitResult a = run_cuda(plain, 4), b = run_cuda(none, 4);
        assert_true(is_split_kernel(a.kernel) && is_split_kernel(b.kernel));
        assert_memory_equal(a.o.data(), b.o.data(), a.o.size());
        assert_memory_equal(a.lse.data(), b.lse.data(), a.lse.size() * 4);
        std::printf("  sinks of -inf: bitwise the split call without sinks (%s)\n", a.kernel.c_str());
    });
}

}  // namespace

int main() {
    const int status = open_session_or_skip("gpu_split_kv");
    if (status != 0) return status;
    const CMUnitTest tests[] = {
        cmocka_unit_test(decode_shapes),
        cmocka_unit_test(split_counts_masks_dims),
        cmocka_unit_test(packed_sequences),
        cmocka_unit_test(repeatable_bitwise),
        cmocka_unit_test(small_workspace_fewer_splits),
        cmocka_unit_test(paged_decode),
        cmocka_unit_test(paged_seqused),
        cmocka_unit_test(sinks),
        cmocka_unit_test(sinks_of_minus_infinity),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    close_session();
    return failed;
}
