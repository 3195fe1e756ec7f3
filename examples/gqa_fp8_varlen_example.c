/*
 * FP8 attention from fp32 activations, as a serving stack calls it: three packed sequences (one with
 * a query row but no key), GQA 8:2, bottom-right causal mask, q/k/v quantised by zyfa_quantize_fp8
 * with one descale per (sequence, kv head), lse out. Built and run by the test suite
 * (tests/CMakeLists.txt, test example_gqa_fp8_varlen); docs/api.md explains each field.
 *
 * It checks the result against an fp64 attention of the fp32 activations (so the FP8 input
 * quantisation is part of the error) and the row without keys: O = 0, lse = -inf.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zyfa.h>

enum { BATCH = 3, HQ = 8, HKV = 2, D = 64, RATIO = HQ / HKV, MAX_K = 96 };

/* Quantises one packed [total, heads, head_dim] fp32 tensor to e4m3fn, one descale per (b, head). */
static zyfa_status quantize(zyfa_context* ctx, const int32_t* cu, int64_t max_len, int64_t heads,
                            int64_t head_dim, int64_t row_stride, const float* x, uint8_t* codes,
                            float* descale) {
    zyfa_quant_params qp;
    zyfa_quant_params_init(&qp, sizeof qp);
    qp.batch = BATCH;
    qp.seqlen = max_len;
    qp.heads = heads;
    qp.head_dim = head_dim;
    qp.cu_seqlens = cu;
    zyfa_tensor in = {(void*)x, ZYFA_DTYPE_FP32, 0, 0, row_stride, head_dim};
    zyfa_tensor out = {codes, ZYFA_DTYPE_FP8_E4M3FN, 0, 0, row_stride, head_dim};
    return zyfa_quantize_fp8(ctx, &qp, &in, &out, descale, NULL);
}

int main(void) {
    const int32_t cu_q[BATCH + 1] = {0, 40, 41, 105}; /* query lengths 40, 1, 64 */
    const int32_t cu_k[BATCH + 1] = {0, 40, 40, 136}; /* key lengths 40, 0, 96 */
    const int64_t max_q = 64, max_k = MAX_K, total_q = cu_q[BATCH], total_k = cu_k[BATCH];

    float* q = malloc(sizeof(float) * total_q * HQ * D);
    float* k = malloc(sizeof(float) * total_k * HKV * D);
    float* v = malloc(sizeof(float) * total_k * HKV * D);
    uint8_t* q8 = malloc((size_t)total_q * HQ * D);
    uint8_t* k8 = malloc((size_t)total_k * HKV * D);
    uint8_t* v8 = malloc((size_t)total_k * HKV * D);
    float* o = malloc(sizeof(float) * total_q * HQ * D);
    float* lse = malloc(sizeof(float) * HQ * total_q); /* [heads_q, total_q] when packed */
    float qd[BATCH * HKV], kd[BATCH * HKV], vd[BATCH * HKV]; /* [batch, heads_kv] */
    unsigned seed = 1;
#define UNIFORM() ((float)((seed = seed * 1103515245u + 12345u) >> 8) / 8388608.0f - 1.0f) /* [-1, 1) */
    for (int64_t i = 0; i < total_q * HQ * D; ++i) q[i] = 2.0f * UNIFORM();
    for (int64_t i = 0; i < total_k * HKV * D; ++i) k[i] = 2.0f * UNIFORM();
    for (int64_t i = 0; i < total_k * HKV * D; ++i) v[i] = UNIFORM();

    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU; /* host pointers */
    zyfa_context* ctx = NULL;
    zyfa_status st = zyfa_context_create(&opts, &ctx);
    /* Descales are per kv head, so Q is quantised as HKV "heads" of RATIO * D values each. */
    if (st == ZYFA_SUCCESS) st = quantize(ctx, cu_q, max_q, HKV, RATIO * D, HQ * D, q, q8, qd);
    if (st == ZYFA_SUCCESS) st = quantize(ctx, cu_k, max_k, HKV, D, HKV * D, k, k8, kd);
    if (st == ZYFA_SUCCESS) st = quantize(ctx, cu_k, max_k, HKV, D, HKV * D, v, v8, vd);

    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p); /* softmax AUTO (LEAN for FP8), no window */
    p.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    p.batch = BATCH;
    p.seqlen_q = max_q; /* the longest packed sequence */
    p.seqlen_k = max_k;
    p.heads_q = HQ;
    p.heads_kv = HKV;
    p.head_dim_qk = p.head_dim_v = D;
    p.cu_seqlens_q = cu_q;
    p.cu_seqlens_k = cu_k;
    p.q_descale = qd;
    p.k_descale = kd;
    p.v_descale = vd;
    p.lse = lse;
    /* Packed [total, head, dim]: stride_batch is ignored. */
    zyfa_tensor tq = {q8, ZYFA_DTYPE_FP8_E4M3FN, 0, 0, HQ * D, D};
    zyfa_tensor tk = {k8, ZYFA_DTYPE_FP8_E4M3FN, 0, 0, HKV * D, D};
    zyfa_tensor tv = {v8, ZYFA_DTYPE_FP8_E4M3FN, 0, 0, HKV * D, D};
    zyfa_tensor to = {o, ZYFA_DTYPE_FP32, 0, 0, HQ * D, D};
    if (st == ZYFA_SUCCESS) st = zyfa_attn_fwd(ctx, &p, &tq, &tk, &tv, &to, NULL);
    if (st != ZYFA_SUCCESS) {
        fprintf(stderr, "zyfa: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
        return 1;
    }

    /* fp64 reference on the fp32 activations: key j is visible to query i when j <= i + sk - sq. */
    double err2 = 0.0, ref2 = 0.0;
    int empty_rows_ok = 1;
    for (int b = 0; b < BATCH; ++b) {
        const int sq = cu_q[b + 1] - cu_q[b], sk = cu_k[b + 1] - cu_k[b];
        for (int h = 0; h < HQ; ++h) {
            const int hk = h / RATIO;
            for (int i = 0; i < sq; ++i) {
                const float* qi = q + ((int64_t)(cu_q[b] + i) * HQ + h) * D;
                const float* oi = o + ((int64_t)(cu_q[b] + i) * HQ + h) * D;
                double s[MAX_K], m = -INFINITY, l = 0.0, acc[D] = {0};
                int visible = i + sk - sq + 1; /* keys 0 .. visible - 1 */
                if (visible > sk) visible = sk;
                if (visible < 0) visible = 0;
                for (int j = 0; j < visible; ++j) {
                    const float* kj = k + ((int64_t)(cu_k[b] + j) * HKV + hk) * D;
                    s[j] = 0.0;
                    for (int d = 0; d < D; ++d) s[j] += (double)qi[d] * kj[d];
                    s[j] /= sqrt((double)D);
                    if (s[j] > m) m = s[j];
                }
                for (int j = 0; j < visible; ++j) {
                    const double w = exp(s[j] - m);
                    const float* vj = v + ((int64_t)(cu_k[b] + j) * HKV + hk) * D;
                    l += w;
                    for (int d = 0; d < D; ++d) acc[d] += w * vj[d];
                }
                for (int d = 0; d < D; ++d) {
                    const double ref = visible > 0 ? acc[d] / l : 0.0;
                    err2 += (oi[d] - ref) * (oi[d] - ref);
                    ref2 += ref * ref;
                    if (visible == 0 && oi[d] != 0.0f) empty_rows_ok = 0;
                }
                const float row_lse = lse[(int64_t)h * total_q + cu_q[b] + i];
                if (visible == 0 && !(isinf(row_lse) && row_lse < 0)) empty_rows_ok = 0;
            }
        }
    }
    const double rel_rms = sqrt(err2 / ref2);
    printf("%s on %s: relative RMS error vs fp64 on the fp32 inputs %.3g; row without keys: %s\n",
           zyfa_attn_kernel_name(ctx, &p, &tq, &tk, &tv, &to), zyfa_context_device_name(ctx), rel_rms,
           empty_rows_ok ? "O = 0, lse = -inf" : "WRONG");
    zyfa_context_destroy(ctx);
    free(q); free(k); free(v); free(q8); free(k8); free(v8); free(o); free(lse);
    return empty_rows_ok && rel_rms < 0.1 ? 0 : 1;
}
