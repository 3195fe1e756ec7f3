/* The README's example: causal BF16 attention on host buffers, so on the CPU backend. With device
 * buffers, leave the backend AUTO (HIP, then CUDA, then CPU) and pass your stream. */
#include <stdio.h>
#include <stdlib.h>
#include <zyfa.h>

int main(void) {
    enum { B = 1, S = 256, H = 8, D = 128 };
    uint16_t* q = calloc((size_t)B * S * H * D, 2); /* BF16, [batch, seq, head, dim] */
    uint16_t* k = calloc((size_t)B * S * H * D, 2);
    uint16_t* v = calloc((size_t)B * S * H * D, 2);
    float* o = calloc((size_t)B * S * H * D, 4);
    for (size_t i = 0; i < (size_t)B * S * H * D; ++i) v[i] = 0x3F80; /* 1.0: every output is 1 */

    zyfa_context_options opts;
    zyfa_context_options_init(&opts, sizeof opts);
    opts.backend = ZYFA_BACKEND_CPU; /* host pointers */
    zyfa_context* ctx = NULL;
    zyfa_status st = zyfa_context_create(&opts, &ctx);
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL;
    p.batch = B; p.seqlen_q = p.seqlen_k = S; p.heads_q = p.heads_kv = H;
    p.head_dim_qk = p.head_dim_v = D;
    zyfa_tensor tq = {q, ZYFA_DTYPE_BF16, 0, S * H * D, H * D, D}, tk = tq, tv = tq, to = tq;
    tk.data = k; tv.data = v; to.data = o; to.dtype = ZYFA_DTYPE_FP32;
    if (st == ZYFA_SUCCESS) st = zyfa_attn_fwd(ctx, &p, &tq, &tk, &tv, &to, NULL);
    if (st != ZYFA_SUCCESS) fprintf(stderr, "zyfa: %s: %s\n", zyfa_status_string(st), zyfa_last_error_message());
    else printf("%s on %s: o[0] = %g\n", zyfa_attn_kernel_name(ctx, &p, &tq, &tk, &tv, &to),
                zyfa_context_device_name(ctx), o[0]);
    const int ok = st == ZYFA_SUCCESS && o[0] == 1.0f;
    zyfa_context_destroy(ctx);
    free(q); free(k); free(v); free(o);
    return ok ? 0 : 1;
}
