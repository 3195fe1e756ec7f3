/*
 * One program, built twice: against tests/abi/older_header/zyfa.h (structs that end earlier, as an
 * older caller's) and against include/zyfa.h. Both run on the current libzyfa.so and print one
 * line per request: status and an FNV-1a hash of every output byte. The test
 * abi_older_header_caller requires the two outputs to be identical: the library reads only the
 * older caller's struct_size bytes and the missing fields take their defaults. Each struct is
 * allocated with exactly sizeof bytes, so under AddressSanitizer a read or write past an older
 * caller's struct fails too. Uses only fields that the older header has.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zyfa.h"

static uint64_t fnv1a(uint64_t hash, const void* data, size_t bytes) {
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
    return hash;
}

static void fill(unsigned char* data, size_t count, int dtype, uint32_t seed) {
    uint32_t state = seed;
    for (size_t i = 0; i < count; ++i) {
        state = state * 1664525u + 1013904223u;
        if (dtype == ZYFA_DTYPE_BF16) {
            /* bf16 in [-1, 1): exponent 121..126, random mantissa and sign */
            const uint16_t v = (uint16_t)(((state >> 31) << 15) | ((121u + (state >> 16) % 6u) << 7) | ((state >> 8) & 0x7Fu));
            memcpy(data + 2 * i, &v, 2);
        } else {
            data[i] = (uint8_t)(0x20 + ((state >> 24) & 0x3F) + ((state >> 16) & 0x80));
        }
    }
}

static zyfa_tensor view(void* data, zyfa_dtype dtype, int64_t seq, int64_t heads, int64_t dim) {
    zyfa_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_head = dim;
    t.stride_seq = heads * dim;
    t.stride_batch = seq * heads * dim;
    return t;
}

static int attention(zyfa_context* ctx, const char* name, zyfa_dtype input, zyfa_mask mask) {
    enum { B = 2, SQ = 33, SK = 47, HQ = 4, HKV = 2, D = 64 };
    const size_t esize = input == ZYFA_DTYPE_BF16 ? 2 : 1;
    unsigned char* q = (unsigned char*)malloc((size_t)B * SQ * HQ * D * esize);
    unsigned char* k = (unsigned char*)malloc((size_t)B * SK * HKV * D * esize);
    unsigned char* v = (unsigned char*)malloc((size_t)B * SK * HKV * D * esize);
    unsigned char* o = (unsigned char*)calloc((size_t)B * SQ * HQ * D, 2);
    /* exactly this header's struct: nothing beyond it is the caller's */
    zyfa_attn_params* p = (zyfa_attn_params*)malloc(sizeof(zyfa_attn_params));
    if (!q || !k || !v || !o || !p) return 1;
    fill(q, (size_t)B * SQ * HQ * D, input, 1);
    fill(k, (size_t)B * SK * HKV * D, input, 2);
    fill(v, (size_t)B * SK * HKV * D, input, 3);
    zyfa_attn_params_init(p, sizeof(zyfa_attn_params));
    p->mask = mask;
    p->batch = B;
    p->seqlen_q = SQ;
    p->seqlen_k = SK;
    p->heads_q = HQ;
    p->heads_kv = HKV;
    p->head_dim_qk = D;
    p->head_dim_v = D;
    const zyfa_tensor tq = view(q, input, SQ, HQ, D), tk = view(k, input, SK, HKV, D), tv = view(v, input, SK, HKV, D);
    const zyfa_tensor to = view(o, ZYFA_DTYPE_BF16, SQ, HQ, D);
    const zyfa_status status = zyfa_attn_fwd(ctx, p, &tq, &tk, &tv, &to, NULL);
    const char* kernel = zyfa_attn_kernel_name(ctx, p, &tq, &tk, &tv, &to);
    printf("%s status %d kernel %s hash %016llx\n", name, (int)status, kernel ? kernel : "NULL",
           (unsigned long long)fnv1a(1469598103934665603ull, o, (size_t)B * SQ * HQ * D * 2));
    fprintf(stderr, "%s: struct_size %u\n", name, p->struct_size);
    free(q), free(k), free(v), free(o), free(p);
    return status == ZYFA_SUCCESS ? 0 : 1;
}

static int quantize(zyfa_context* ctx) {
    enum { B = 2, S = 19, H = 3, D = 128 };
    unsigned char* in = (unsigned char*)malloc((size_t)B * S * H * D * 2);
    unsigned char* out = (unsigned char*)calloc((size_t)B * S * H * D, 1);
    float descale[B * H];
    zyfa_quant_params* p = (zyfa_quant_params*)malloc(sizeof(zyfa_quant_params));
    if (!in || !out || !p) return 1;
    fill(in, (size_t)B * S * H * D, ZYFA_DTYPE_BF16, 4);
    zyfa_quant_params_init(p, sizeof(zyfa_quant_params));
    p->flags = ZYFA_QUANT_HADAMARD;
    p->batch = B;
    p->seqlen = S;
    p->heads = H;
    p->head_dim = D;
    const zyfa_tensor tin = view(in, ZYFA_DTYPE_BF16, S, H, D), tout = view(out, ZYFA_DTYPE_FP8_E4M3FN, S, H, D);
    const zyfa_status status = zyfa_quantize_fp8(ctx, p, &tin, &tout, descale, NULL);
    uint64_t hash = fnv1a(1469598103934665603ull, out, (size_t)B * S * H * D);
    hash = fnv1a(hash, descale, sizeof descale);
    printf("quantize_hadamard status %d hash %016llx\n", (int)status, (unsigned long long)hash);
    fprintf(stderr, "quantize: struct_size %u\n", p->struct_size);
    free(in), free(out), free(p);
    return status == ZYFA_SUCCESS ? 0 : 1;
}

int main(void) {
    zyfa_context_options* options = (zyfa_context_options*)malloc(sizeof(zyfa_context_options));
    if (options == NULL) return 1;
    zyfa_context_options_init(options, sizeof(zyfa_context_options));
    options->backend = ZYFA_BACKEND_CPU;
    zyfa_context* ctx = NULL;
    if (zyfa_context_create(options, &ctx) != ZYFA_SUCCESS) {
        fprintf(stderr, "zyfa_context_create: %s\n", zyfa_last_error_message());
        return 1;
    }
    fprintf(stderr, "context options: struct_size %u\n", options->struct_size);
    free(options);
    int failures = 0;
    failures += attention(ctx, "attention_bf16_causal_gqa", ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL);
    failures += attention(ctx, "attention_fp8_bottom_right", ZYFA_DTYPE_FP8_E4M3FN, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT);
    failures += quantize(ctx);
    zyfa_context_destroy(ctx);
    return failures == 0 ? 0 : 1;
}
