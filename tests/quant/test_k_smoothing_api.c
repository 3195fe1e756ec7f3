/* K smoothing (ZYFA_QUANT_SMOOTH) end to end through the public C API on the CPU backend: keys with
 * a large per-channel offset shared by every token (as real keys have) are quantised with and
 * without smoothing (and with the Hadamard rotation of Q and K on top), attention runs on the FP8
 * inputs in EXACT and LEAN, and the results are checked against fp64 attention of the original
 * values, computed here from the definitions:
 *   - O does not need the mean back (softmax is invariant to a shift shared by a row's scores:
 *     checked in fp64 on the FP8 operands, and the kernel's O against that attention within its
 *     FP8 tolerance), and smoothing makes it more accurate on such keys;
 *   - lse + softmax_scale * q . smooth_mean (q the original values) is the unsmoothed lse within
 *     max_j |s_ij(FP8) - s_ij(original, K - mean)| (lse is a smooth maximum: shifting every score
 *     by at most delta moves it by at most delta) plus the kernel's own lse error (EXACT 1e-4,
 *     LEAN 0.085: docs/api.md, lse);
 *   - per-sequence means of packed sequences, an empty one's 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "zyfa.h"
#include "quant_api_test_support.h"

enum { S = 96, H = 2, D = 64, N = S * H * D };

static zyfa_tensor view(void* data, zyfa_dtype dtype) {
    zyfa_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_head = D;
    t.stride_seq = (int64_t)H * D;
    t.stride_batch = (int64_t)S * H * D;
    return t;
}

/* The inputs (bf16 and their values), shared by every test. K's channel d of head h carries the
 * offset 3 * (1 + d % 5) * (-1)^(d + h): about 9 standard deviations. */
static uint16_t q_in[N], k_in[N], v_in[N];
static float q_val[N], k_val[N], v_val[N];

static void make_inputs(void) {
    uint32_t seed = 2026;
    for (int i = 0; i < N; ++i) {
        const int d = i % D, h = (i / D) % H;
        const float bias = 3.0f * (float)(1 + d % 5) * (((d + h) & 1) ? -1.0f : 1.0f);
        q_in[i] = to_bf16(pseudo_normal(&seed));
        k_in[i] = to_bf16(pseudo_normal(&seed) + bias);
        v_in[i] = to_bf16(pseudo_normal(&seed));
        q_val[i] = from_bf16(q_in[i]);
        k_val[i] = from_bf16(k_in[i]);
        v_val[i] = from_bf16(v_in[i]);
    }
}

/* fp64 causal attention of per-head row arrays q, k, v (element (s, h, d) at (s * H + h) * D + d):
 * o [S, H, D] and lse [H, S] (natural log), scale 1/sqrt(D). */
static void reference(const double* q, const double* k, const double* v, double* o, double* lse) {
    const double scale = 1.0 / sqrt((double)D);
    static double s[S];
    for (int h = 0; h < H; ++h)
        for (int i = 0; i < S; ++i) {
            double mx = -INFINITY;
            for (int j = 0; j <= i; ++j) {
                double dot = 0.0;
                for (int d = 0; d < D; ++d) dot += q[(i * H + h) * D + d] * k[(j * H + h) * D + d];
                s[j] = scale * dot;
                mx = fmax(mx, s[j]);
            }
            double sum = 0.0;
            for (int j = 0; j <= i; ++j) sum += exp(s[j] - mx);
            for (int d = 0; d < D; ++d) {
                double acc = 0.0;
                for (int j = 0; j <= i; ++j) acc += exp(s[j] - mx) * v[(j * H + h) * D + d];
                o[(i * H + h) * D + d] = acc / sum;
            }
            lse[h * S + i] = mx + log(sum);
        }
}

/* One FP8 run: Q and K quantised with `qk_flags` (plus ZYFA_QUANT_SMOOTH on K when smooth), V
 * plain; attention in `softmax`. Fills the codes' decoded values (descales applied), the mean, o
 * and lse. */
typedef struct fp8_run {
    uint8_t q8[N], k8[N], v8[N];
    float qd[H], kd[H], vd[H];
    float mean[H * D];
    float o[N], lse[H * S];
    double q_deq[N], k_deq[N], v_deq[N];
} fp8_run;

static void quantise(zyfa_context* ctx, const uint16_t* in, uint8_t* out, float* descale, uint32_t flags, float* mean) {
    zyfa_quant_params p;
    zyfa_quant_params_init(&p, sizeof p);
    p.flags = flags;
    p.batch = 1, p.seqlen = S, p.heads = H, p.head_dim = D;
    p.smooth_mean = mean;
    const zyfa_tensor tin = view((void*)in, ZYFA_DTYPE_BF16), tout = view(out, ZYFA_DTYPE_FP8_E4M3FN);
    const zyfa_status st = zyfa_quantize_fp8(ctx, &p, &tin, &tout, descale, NULL);
    if (st != ZYFA_SUCCESS) fail_msg("zyfa_quantize_fp8: %s", zyfa_last_error_message());
}

static void run_fp8(zyfa_context* ctx, fp8_run* r, uint32_t qk_flags, int smooth, zyfa_softmax softmax) {
    quantise(ctx, q_in, r->q8, r->qd, qk_flags, NULL);
    quantise(ctx, k_in, r->k8, r->kd, qk_flags | (smooth ? ZYFA_QUANT_SMOOTH : 0u), smooth ? r->mean : NULL);
    quantise(ctx, v_in, r->v8, r->vd, 0u, NULL);
    if (!smooth) memset(r->mean, 0, sizeof r->mean);
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL;
    p.softmax = softmax;
    p.batch = 1, p.seqlen_q = p.seqlen_k = S, p.heads_q = p.heads_kv = H, p.head_dim_qk = p.head_dim_v = D;
    p.q_descale = r->qd, p.k_descale = r->kd, p.v_descale = r->vd;
    p.lse = r->lse;
    const zyfa_tensor tq = view(r->q8, ZYFA_DTYPE_FP8_E4M3FN), tk = view(r->k8, ZYFA_DTYPE_FP8_E4M3FN),
                      tv = view(r->v8, ZYFA_DTYPE_FP8_E4M3FN), to = view(r->o, ZYFA_DTYPE_FP32);
    const zyfa_status st = zyfa_attn_fwd(ctx, &p, &tq, &tk, &tv, &to, NULL);
    if (st != ZYFA_SUCCESS) fail_msg("zyfa_attn_fwd: %s", zyfa_last_error_message());
    for (int i = 0; i < N; ++i) {
        const int h = (i / D) % H;
        r->q_deq[i] = decode_e4m3(r->q8[i], 7) * r->qd[h];
        r->k_deq[i] = decode_e4m3(r->k8[i], 7) * r->kd[h];
        r->v_deq[i] = decode_e4m3(r->v8[i], 7) * r->vd[h];
    }
}

static double rel_rms(const float* got, const double* want) {
    double err2 = 0.0, ref2 = 0.0;
    for (int i = 0; i < N; ++i) {
        err2 += (got[i] - want[i]) * (got[i] - want[i]);
        ref2 += want[i] * want[i];
    }
    return sqrt(err2 / ref2);
}

static double ref_o[N], ref_lse[H * S];
static double q_orig[N], k_orig[N], v_orig[N];

static int setup(void** state) {
    (void)state;
    make_inputs();
    for (int i = 0; i < N; ++i) q_orig[i] = q_val[i], k_orig[i] = k_val[i], v_orig[i] = v_val[i];
    reference(q_orig, k_orig, v_orig, ref_o, ref_lse);
    return 0;
}

/* q . mean for row i of head h, from the original q. */
static double q_dot_mean(const fp8_run* r, int i, int h) {
    double dot = 0.0;
    for (int d = 0; d < D; ++d) dot += q_orig[(i * H + h) * D + d] * r->mean[h * D + d];
    return dot;
}

/* max over visible j of |s_ij(FP8 codes) - s_ij(original q, original k - mean)|: with Hadamard both
 * FP8 operands are rotated, and a dot product does not see the rotation. */
static double score_error_bound(const fp8_run* r, int i, int h) {
    const double scale = 1.0 / sqrt((double)D);
    double worst = 0.0;
    for (int j = 0; j <= i; ++j) {
        double fp8 = 0.0, orig = 0.0;
        for (int d = 0; d < D; ++d) {
            fp8 += r->q_deq[(i * H + h) * D + d] * r->k_deq[(j * H + h) * D + d];
            orig += q_orig[(i * H + h) * D + d] * (k_orig[(j * H + h) * D + d] - r->mean[h * D + d]);
        }
        worst = fmax(worst, scale * fabs(fp8 - orig));
    }
    return worst;
}

static void check_variant(uint32_t qk_flags, zyfa_softmax softmax, const char* label) {
    zyfa_context* ctx = unit_cpu_context();
    static fp8_run plain, smoothed;
    run_fp8(ctx, &plain, qk_flags, 0, softmax);
    run_fp8(ctx, &smoothed, qk_flags, 1, softmax);
    const double kernel_lse = softmax == ZYFA_SOFTMAX_LEAN ? 0.085 : 1e-4;

    /* The mean is K's per-head channel mean over the sequence (fp64 here), within fp32 rounding. */
    for (int h = 0; h < H; ++h)
        for (int d = 0; d < D; ++d) {
            double sum = 0.0;
            for (int s = 0; s < S; ++s) sum += k_orig[(s * H + h) * D + d];
            assert_true(fabs(smoothed.mean[h * D + d] - sum / S) <= 1e-6 * fabs(sum / S) + 1e-9);
        }

    /* Softmax invariance on the data itself: fp64 attention of the FP8 operands with the mean
     * added back to every key gives the same O, and an lse higher by exactly scale * q . mean
     * (unrotated operands only: with the rotation the codes hold H (k - mean)). The kernel's O is
     * within its own FP8 tolerance of that attention (1/16 EXACT, 0.085 LEAN: reference_check.hpp). */
    if (qk_flags == 0) {
        static double k_back[N], o_deq[N], lse_deq[H * S], o_back[N], lse_back[H * S];
        for (int i = 0; i < N; ++i) k_back[i] = smoothed.k_deq[i] + smoothed.mean[((i / D) % H) * D + i % D];
        reference(smoothed.q_deq, smoothed.k_deq, smoothed.v_deq, o_deq, lse_deq);
        reference(smoothed.q_deq, k_back, smoothed.v_deq, o_back, lse_back);
        double worst_o = 0.0, worst_lse = 0.0;
        for (int i = 0; i < N; ++i) worst_o = fmax(worst_o, fabs(o_back[i] - o_deq[i]));
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < S; ++i) {
                double dot = 0.0;
                for (int d = 0; d < D; ++d) dot += smoothed.q_deq[(i * H + h) * D + d] * smoothed.mean[h * D + d];
                worst_lse = fmax(worst_lse, fabs(lse_back[h * S + i] - lse_deq[h * S + i] - dot / sqrt((double)D)));
            }
        assert_true(worst_o < 1e-9 && worst_lse < 1e-9);
        const double kernel_err = rel_rms(smoothed.o, o_deq);
        print_message("%s: O rel. RMS vs fp64 on the FP8 operands %.4f (invariance: O %.1e, lse %.1e)\n", label,
                      kernel_err, worst_o, worst_lse);
        assert_true(kernel_err <= (softmax == ZYFA_SOFTMAX_LEAN ? 0.085 : 1.0 / 16));
    }

    /* O: no correction needed; smoothing cuts the error on these keys. */
    const double err_plain = rel_rms(plain.o, ref_o), err_smooth = rel_rms(smoothed.o, ref_o);
    print_message("%s: O rel. RMS vs fp64: plain %.4f, smoothed %.4f\n", label, err_plain, err_smooth);
    assert_true(err_smooth < 0.08);
    assert_true(err_smooth < err_plain);

    /* lse: the corrected one is the unsmoothed lse within the bound; uncorrected it is far off. */
    double worst_corrected = 0.0, worst_slack = INFINITY, mean_uncorrected = 0.0;
    const double scale = 1.0 / sqrt((double)D);
    for (int h = 0; h < H; ++h)
        for (int i = 0; i < S; ++i) {
            const double corrected = smoothed.lse[h * S + i] + scale * q_dot_mean(&smoothed, i, h);
            const double err = fabs(corrected - ref_lse[h * S + i]);
            const double bound = score_error_bound(&smoothed, i, h) + kernel_lse;
            if (!(err <= bound)) fail_msg("%s: row %d head %d: |lse error| %g > bound %g", label, i, h, err, bound);
            worst_corrected = fmax(worst_corrected, err);
            worst_slack = fmin(worst_slack, bound - err);
            mean_uncorrected += fabs(smoothed.lse[h * S + i] - ref_lse[h * S + i]) / (H * S);
        }
    print_message("%s: max |corrected lse - fp64 lse| %.3g (least slack to the bound %.3g); uncorrected mean %.3g\n",
                  label, worst_corrected, worst_slack, mean_uncorrected);
    assert_true(mean_uncorrected > 1.0);
    zyfa_context_destroy(ctx);
}

static void test_smoothing_exact(void** state) {
    (void)state;
    check_variant(0u, ZYFA_SOFTMAX_EXACT, "smooth, EXACT");
}
static void test_smoothing_lean(void** state) {
    (void)state;
    check_variant(0u, ZYFA_SOFTMAX_LEAN, "smooth, LEAN");
}
/* Hadamard on Q and K with K smoothed: the mean stays in the unrotated basis, so the same
 * correction with the original q applies. */
static void test_smoothing_with_hadamard(void** state) {
    (void)state;
    check_variant(ZYFA_QUANT_HADAMARD, ZYFA_SOFTMAX_EXACT, "Hadamard + smooth, EXACT");
    check_variant(ZYFA_QUANT_HADAMARD, ZYFA_SOFTMAX_LEAN, "Hadamard + smooth, LEAN");
}

/* Packed sequences of lengths 30, 0, 66: one mean per (sequence, head), 0 for the empty one. */
static void test_varlen_means_per_sequence(void** state) {
    (void)state;
    zyfa_context* ctx = unit_cpu_context();
    const int32_t cu[4] = {0, 30, 30, 96};
    static uint8_t codes[N];
    float descale[3 * H], mean[3 * H * D];
    zyfa_quant_params p;
    zyfa_quant_params_init(&p, sizeof p);
    p.flags = ZYFA_QUANT_SMOOTH;
    p.batch = 3, p.seqlen = 66, p.heads = H, p.head_dim = D, p.cu_seqlens = cu;
    p.smooth_mean = mean;
    zyfa_tensor in = view(k_in, ZYFA_DTYPE_BF16), out = view(codes, ZYFA_DTYPE_FP8_E4M3FN);
    in.stride_batch = out.stride_batch = 0;
    assert_int_equal(zyfa_quantize_fp8(ctx, &p, &in, &out, descale, NULL), ZYFA_SUCCESS);
    for (int b = 0; b < 3; ++b)
        for (int h = 0; h < H; ++h)
            for (int d = 0; d < D; ++d) {
                double sum = 0.0;
                for (int r = cu[b]; r < cu[b + 1]; ++r) sum += k_orig[(r * H + h) * D + d];
                const float got = mean[(b * H + h) * D + d];
                if (cu[b + 1] == cu[b]) {
                    assert_true(got == 0.0f);
                } else {
                    const double want = sum / (cu[b + 1] - cu[b]);
                    assert_true(fabs(got - want) <= 1e-6 * fabs(want) + 1e-9);
                }
            }
    zyfa_context_destroy(ctx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_smoothing_exact),
        cmocka_unit_test(test_smoothing_lean),
        cmocka_unit_test(test_smoothing_with_hadamard),
        cmocka_unit_test(test_varlen_means_per_sequence),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
