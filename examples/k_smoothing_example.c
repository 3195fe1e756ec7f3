/*
 * FP8 prefill with K smoothing (ZYFA_QUANT_SMOOTH) and the lse correction it needs. Keys carry a
 * per-channel offset shared by every token (as real keys do); zyfa_quantize_fp8 subtracts each kv
 * head's mean over the sequence before quantising K and returns it. Attention on the smoothed K
 * gives the same O (softmax ignores a shift shared by a row's scores), but its lse is that of the
 * smoothed scores:
 *     lse_unsmoothed[h, i] = lse[h, i] + softmax_scale * q[i, h, :] . mean_k[h / (HQ / HKV), :]
 * with q the original activations (not the FP8 codes: their rounding would multiply the mean).
 * Built and run by the test suite (tests/CMakeLists.txt, test example_k_smoothing); it prints the
 * lse error against fp64 before and after the correction and fails if the corrected one is not
 * small. GQA 4:2, causal, one sequence of 128 tokens, head dim 64, LEAN (AUTO).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zyfa.h>

enum { S = 128, HQ = 4, HKV = 2, D = 64, RATIO = HQ / HKV };

/* The correction, for lse [heads_q, seqlen] of one sequence and q [seqlen, heads_q, head_dim]. */
static void unsmooth_lse(float* lse, const float* q, const float* mean_k, float softmax_scale) {
    for (int h = 0; h < HQ; ++h)
        for (int i = 0; i < S; ++i) {
            double dot = 0.0;
            for (int d = 0; d < D; ++d) dot += (double)q[(i * HQ + h) * D + d] * mean_k[(h / RATIO) * D + d];
            lse[h * S + i] += (float)(softmax_scale * dot);
        }
}

static zyfa_status quantize(zyfa_context* ctx, int64_t head_dim, const float* x, uint8_t* codes, float* descale,
                            float* mean) {
    zyfa_quant_params qp;
    zyfa_quant_params_init(&qp, sizeof qp);
    qp.flags = mean ? ZYFA_QUANT_SMOOTH : 0u;
    qp.smooth_mean = mean; /* [batch, heads, head_dim] */
    qp.batch = 1;
    qp.seqlen = S;
    qp.heads = HKV; /* Q under GQA: HKV "heads" of RATIO * D values, one descale per kv head */
    qp.head_dim = head_dim;
    zyfa_tensor in = {(void*)x, ZYFA_DTYPE_FP32, 0, S * HKV * head_dim, HKV * head_dim, head_dim};
    zyfa_tensor out = {codes, ZYFA_DTYPE_FP8_E4M3FN, 0, S * HKV * head_dim, HKV * head_dim, head_dim};
    return zyfa_quantize_fp8(ctx, &qp, &in, &out, descale, NULL);
}

int main(void) {
    static float q[S * HQ * D], k[S * HKV * D], v[S * HKV * D], o[S * HQ * D], lse[HQ * S];
    static uint8_t q8[S * HQ * D], k8[S * HKV * D], v8[S * HKV * D];
    float qd[HKV], kd[HKV], vd[HKV], mean_k[HKV * D];
    unsigned seed = 7;
#define UNIFORM() ((float)((seed = seed * 1103515245u + 12345u) >> 8) / 8388608.0f - 1.0f) /* [-1, 1) */
    for (int i = 0; i < S * HQ * D; ++i) q[i] = 2.0f * UNIFORM();
    for (int i = 0; i < S * HKV * D; ++i) k[i] = UNIFORM() + 4.0f * (float)((i % D) % 7) - 12.0f; /* offsets */
    for (int i = 0; i < S * HKV * D; ++i) v[i] = UNIFORM();

    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU; /* host pointers */
    zyfa_context* ctx = NULL;
    zyfa_status st = zyfa_context_create(&opts, &ctx);
    if (st == ZYFA_SUCCESS) st = quantize(ctx, RATIO * D, q, q8, qd, NULL);
    if (st == ZYFA_SUCCESS) st = quantize(ctx, D, k, k8, kd, mean_k); /* K smoothed */
    if (st == ZYFA_SUCCESS) st = quantize(ctx, D, v, v8, vd, NULL);

    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p); /* softmax AUTO: LEAN for FP8 */
    p.mask = ZYFA_MASK_CAUSAL;
    p.batch = 1;
    p.seqlen_q = p.seqlen_k = S;
    p.heads_q = HQ;
    p.heads_kv = HKV;
    p.head_dim_qk = p.head_dim_v = D;
    p.q_descale = qd;
    p.k_descale = kd;
    p.v_descale = vd;
    p.lse = lse; /* [batch, heads_q, seqlen_q] */
    zyfa_tensor tq = {q8, ZYFA_DTYPE_FP8_E4M3FN, 0, S * HQ * D, HQ * D, D};
    zyfa_tensor tk = {k8, ZYFA_DTYPE_FP8_E4M3FN, 0, S * HKV * D, HKV * D, D};
    zyfa_tensor tv = {v8, ZYFA_DTYPE_FP8_E4M3FN, 0, S * HKV * D, HKV * D, D};
    zyfa_tensor to = {o, ZYFA_DTYPE_FP32, 0, S * HQ * D, HQ * D, D};
    if (st == ZYFA_SUCCESS) st = zyfa_attn_fwd(ctx, &p, &tq, &tk, &tv, &to, NULL);
    if (st != ZYFA_SUCCESS) {
        fprintf(stderr, "zyfa: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        zyfa_context_destroy(ctx);
        return 1;
    }
    const float scale = 1.0f / sqrtf((float)D); /* softmax_scale 0 means this */

    /* fp64 lse of the original activations, and the errors before and after the correction. */
    double before = 0.0, after = 0.0;
    static float corrected[HQ * S];
    for (int i = 0; i < HQ * S; ++i) corrected[i] = lse[i];
    unsmooth_lse(corrected, q, mean_k, scale);
    for (int h = 0; h < HQ; ++h)
        for (int i = 0; i < S; ++i) {
            double mx = -INFINITY, sum = 0.0, s[S];
            for (int j = 0; j <= i; ++j) {
                double dot = 0.0;
                for (int d = 0; d < D; ++d) dot += (double)q[(i * HQ + h) * D + d] * k[(j * HKV + h / RATIO) * D + d];
                s[j] = scale * dot;
                mx = fmax(mx, s[j]);
            }
            for (int j = 0; j <= i; ++j) sum += exp(s[j] - mx);
            const double want = mx + log(sum);
            before = fmax(before, fabs(lse[h * S + i] - want));
            after = fmax(after, fabs(corrected[h * S + i] - want));
        }
    printf("%s: max |lse - fp64 lse| %.3g as returned (smoothed scores), %.3g corrected\n",
           zyfa_attn_kernel_name(ctx, &p, &tq, &tk, &tv, &to), before, after);
    zyfa_context_destroy(ctx);
    return after < 0.25 && before > 1.0 ? 0 : 1;
}
