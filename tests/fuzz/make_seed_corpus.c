/*
 * Writes the seed corpus of the fuzz target (tests/fuzz/corpus/seed): the requests of the unit and
 * cpu tiers (GQA, MLA 192/128, packed sequences, descales, windows, every dtype, older and newer
 * struct sizes, padded and head-major layouts, quantisation with and without Hadamard) plus a few
 * malformed ones, encoded in the format of fuzz_input.h.
 *
 *   cmake --build <build> --target fuzz_make_seed_corpus
 *   <build>/tests/fuzz/fuzz_make_seed_corpus tests/fuzz/corpus/seed
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_input.h"
#include "zyfa.h"

static int g_failures;

static void write_seed(const char* dir, const char* name, const fuzz_choice* c) {
    uint8_t bytes[4096];
    const size_t size = fuzz_encode(c, bytes, sizeof bytes);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = fopen(path, "wb");
    if (f == NULL || size > sizeof bytes || fwrite(bytes, 1, size, f) != size) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        g_failures++;
    }
    if (f != NULL) fclose(f);
}

static fuzz_choice attn(int64_t dtype, int64_t out, int64_t mask, int64_t batch, int64_t sq, int64_t sk,
                        int64_t hq, int64_t hkv, int64_t dqk, int64_t dv) {
    fuzz_choice c;
    memset(&c, 0, sizeof c);
    c.op = FUZZ_OP_ATTN;
    c.data = FUZZ_DATA_SMOOTH;
    c.seed = 12345;
    fuzz_attn_choice* a = &c.attn;
    a->size.kind = FUZZ_SIZE_CURRENT;
    a->mask = mask;
    a->batch = batch;
    a->seqlen_q = sq;
    a->seqlen_k = sk;
    a->heads_q = hq;
    a->heads_kv = hkv;
    a->head_dim_qk = dqk;
    a->head_dim_v = dv;
    a->softmax = ZYFA_SOFTMAX_AUTO;
    a->window_left = -1;
    a->window_right = -1;
    a->q.dtype = dtype; /* k and v: 0 = as q */
    a->o.dtype = out;
    a->lse = 1;
    return c;
}

static fuzz_choice quant(int64_t in, int64_t out, uint32_t flags, int64_t batch, int64_t seqlen, int64_t heads,
                         int64_t dim) {
    fuzz_choice c;
    memset(&c, 0, sizeof c);
    c.op = FUZZ_OP_QUANT;
    c.data = FUZZ_DATA_SMOOTH;
    c.seed = 777;
    fuzz_quant_choice* q = &c.quant;
    q->size.kind = FUZZ_SIZE_CURRENT;
    q->flags = flags;
    q->batch = batch;
    q->seqlen = seqlen;
    q->heads = heads;
    q->head_dim = dim;
    q->in.dtype = in;
    q->out.dtype = out;
    return c;
}

static fuzz_choice merge(int64_t parts, int64_t part_dtype, int64_t out, int64_t batch, int64_t seqlen, int64_t heads,
                         int64_t dim) {
    fuzz_choice c;
    memset(&c, 0, sizeof c);
    c.op = FUZZ_OP_MERGE;
    c.data = FUZZ_DATA_SMOOTH;
    c.seed = 4242;
    fuzz_merge_choice* m = &c.merge;
    m->size.kind = FUZZ_SIZE_CURRENT;
    m->num_parts = parts;
    m->batch = batch;
    m->seqlen_q = seqlen;
    m->heads = heads;
    m->head_dim = dim;
    for (int i = 0; i < FUZZ_MAX_MERGE_PARTS; ++i) m->part[i].dtype = part_dtype;
    m->o.dtype = out;
    m->lse = 1;
    return c;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
        return 2;
    }
    const char* dir = argv[1];
    fuzz_choice c;

    /* The unit tier's base problem: GQA 4/2, seqlen_q != seqlen_k, bottom-right causal. */
    c = attn(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 2, 4, 5, 4, 2, 16, 16);
    write_seed(dir, "attn_fp8_gqa_bottom_right", &c);
    c.attn.descales = 7;
    c.attn.softmax = ZYFA_SOFTMAX_EXACT;
    write_seed(dir, "attn_fp8_descales_exact", &c);

    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32, ZYFA_MASK_CAUSAL, 1, 64, 64, 2, 2, 64, 64);
    write_seed(dir, "attn_bf16_causal_d64", &c);
    c = attn(ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP16, ZYFA_MASK_NONE, 1, 8, 24, 2, 1, 192, 128);
    write_seed(dir, "attn_fp16_mla_192_128", &c);
    c = attn(ZYFA_DTYPE_FP8_E4M3FNUZ, ZYFA_DTYPE_FP32, ZYFA_MASK_CAUSAL, 1, 40, 70, 3, 1, 32, 32);
    c.attn.softmax = ZYFA_SOFTMAX_LEAN;
    c.attn.window_left = 8;
    c.attn.window_right = 0;
    c.attn.descales = 5;
    write_seed(dir, "attn_fnuz_lean_window", &c);

    /* Packed sequences, one of them empty. */
    c = attn(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 3, 9, 12, 2, 2, 32, 32);
    c.attn.varlen = FUZZ_VARLEN_LENGTHS;
    c.attn.cu_q[0] = 3, c.attn.cu_q[1] = 0, c.attn.cu_q[2] = 9;
    c.attn.cu_k[0] = 5, c.attn.cu_k[1] = 2, c.attn.cu_k[2] = 12;
    write_seed(dir, "attn_fp8_varlen", &c);
    c.attn.varlen = FUZZ_VARLEN_RAW;
    c.attn.cu_q[0] = 0, c.attn.cu_q[1] = 5, c.attn.cu_q[2] = 3, c.attn.cu_q[3] = 9; /* decreasing */
    c.attn.cu_k[0] = 0, c.attn.cu_k[1] = 5, c.attn.cu_k[2] = 7, c.attn.cu_k[3] = 19;
    write_seed(dir, "attn_varlen_decreasing", &c);

    /* Layouts: padded rows and head-major. */
    c = attn(ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP32, ZYFA_MASK_NONE, 2, 7, 9, 2, 2, 24, 40);
    c.attn.q.layout = FUZZ_LAYOUT_PADDED, c.attn.q.pad = 3;
    c.attn.k.layout = FUZZ_LAYOUT_HEAD_MAJOR, c.attn.k.pad = 5;
    c.attn.v.layout = FUZZ_LAYOUT_HEAD_MAJOR;
    c.attn.o.layout = FUZZ_LAYOUT_PADDED, c.attn.o.pad = 8;
    write_seed(dir, "attn_fp32_padded_head_major", &c);
    c.attn.o.layout = FUZZ_LAYOUT_RAW;
    c.attn.o.stride[0] = 7 * 2 * 40, c.attn.o.stride[1] = 2 * 40, c.attn.o.stride[2] = 20; /* heads overlap */
    write_seed(dir, "attn_overlapping_heads", &c);

    /* An older caller (struct ends after softmax) and a newer one (zero and non-zero tail). */
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, 1, 16, 16, 2, 2, 64, 64);
    c.attn.size.kind = FUZZ_SIZE_BOUNDARY, c.attn.size.value = 2;
    write_seed(dir, "attn_older_struct", &c);
    c.attn.size.kind = FUZZ_SIZE_ANY, c.attn.size.value = 200;
    write_seed(dir, "attn_newer_struct_zero_tail", &c);
    c.attn.size.tail_byte = 1, c.attn.size.tail_pos = 3;
    write_seed(dir, "attn_newer_struct_field_set", &c);
    c.attn.size.kind = FUZZ_SIZE_GARBAGE;
    write_seed(dir, "attn_uninitialised_struct_size", &c);

    /* Empty problems with NULL data, and malformed requests. */
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, 0, 16, 16, 2, 2, 64, 64);
    c.attn.q.null_data = c.attn.k.null_data = c.attn.v.null_data = c.attn.o.null_data = 1;
    write_seed(dir, "attn_empty_null_data", &c);
    c = attn(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, 1, 8, 8, 3, 2, 16, 16);
    write_seed(dir, "attn_heads_not_divisible", &c);
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, 2, 8, 8, 2, 2, 16, 16);
    c.attn.k.layout = FUZZ_LAYOUT_RAW;
    c.attn.k.stride[0] = INT64_MAX / 2, c.attn.k.stride[1] = 32, c.attn.k.stride[2] = 16;
    write_seed(dir, "attn_stride_overflow", &c);
    c.attn.k.stride[0] = 256, c.attn.k.stride[1] = -32;
    write_seed(dir, "attn_negative_stride", &c);
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, 1, 8, 8, 2, 2, 16, 16);
    c.attn.softmax = ZYFA_SOFTMAX_LEAN; /* LEAN needs FP8: NOT_SUPPORTED */
    write_seed(dir, "attn_lean_bf16", &c);
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN, ZYFA_MASK_CAUSAL, 1, 8, 8, 2, 2, 16, 16);
    write_seed(dir, "attn_fp8_output", &c);
    c = attn(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL, 1, 8, 8, 2, 2, 16, 16);
    c.data = FUZZ_DATA_BITS; /* every e4m3 code, NaN included */
    write_seed(dir, "attn_fp8_any_bits", &c);

    /* Issue 18: rows without keys, misaligned and aliased buffers, a planted NaN. */
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32, ZYFA_MASK_CAUSAL, 2, 8, 0, 2, 1, 16, 16);
    c.attn.lse = 1;
    c.attn.k.null_data = c.attn.v.null_data = 1;
    write_seed(dir, "attn_no_keys_null_kv", &c);
    c = attn(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 3, 9, 12, 2, 2, 32, 32);
    c.attn.lse = 1;
    c.attn.varlen = FUZZ_VARLEN_LENGTHS; /* lengths value % 13: every key sequence 0 */
    c.attn.cu_q[0] = 3, c.attn.cu_q[1] = 0, c.attn.cu_q[2] = 9;
    c.attn.cu_k[0] = 13, c.attn.cu_k[1] = 26, c.attn.cu_k[2] = 0;
    write_seed(dir, "attn_varlen_empty_keys", &c);
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32, ZYFA_MASK_CAUSAL, 1, 8, 8, 2, 2, 16, 16);
    c.attn.lse = 1;
    const char* twist_names[] = {NULL, "attn_q_odd_address", "attn_lse_odd_address", "attn_o_is_k", "attn_lse_in_o",
                                 "attn_nan_in_q"};
    for (int twist = 1; twist < FUZZ_ATTN_TWIST_COUNT; ++twist) {
        c.attn.twist = (uint8_t)twist;
        write_seed(dir, twist_names[twist], &c);
    }
    c.attn.twist = FUZZ_ATTN_TWIST_NAN_Q;
    c.attn.q.dtype = c.attn.k.dtype = c.attn.v.dtype = ZYFA_DTYPE_FP8_E4M3FN;
    c.attn.softmax = ZYFA_SOFTMAX_LEAN;
    write_seed(dir, "attn_nan_in_q_lean", &c);

    /* params.key_block (appended after 0.1): 64 and 128 on LEAN rows of several key blocks,
     * values no backend takes, the reserved tail padding set, and a 0.1 caller whose struct ends
     * before key_block (the 128 behind it is not read). */
    c = attn(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 1, 8, 200, 2, 1, 16, 16);
    c.attn.softmax = ZYFA_SOFTMAX_LEAN;
    c.attn.descales = 7;
    c.attn.key_block_kind = 5; /* 128 */
    write_seed(dir, "attn_key_block_128_lean", &c);
    c.attn.key_block_kind = 3; /* 64 */
    write_seed(dir, "attn_key_block_64_lean", &c);
    c.attn.key_block_kind = FUZZ_KEY_BLOCK_RAW;
    c.attn.key_block_value = 63;
    write_seed(dir, "attn_key_block_63", &c);
    c.attn.key_block_value = -1;
    write_seed(dir, "attn_key_block_minus_one", &c);
    c.attn.key_block_kind = 0xFD; /* 128 (0xFD % 8 = 5), reserved 6 */
    write_seed(dir, "attn_reserved_set", &c);
    c.attn.key_block_kind = 5;
    c.attn.size.kind = FUZZ_SIZE_BOUNDARY, c.attn.size.value = 11; /* through flags: 0.1's struct */
    write_seed(dir, "attn_struct_0_1_key_block_beyond", &c);
    c.attn.size.kind = FUZZ_SIZE_ANY;
    c.attn.size.value = (int64_t)offsetof(zyfa_attn_params, key_block) + 2; /* cuts key_block in two */
    write_seed(dir, "attn_struct_cuts_key_block", &c);
    c.attn.key_block_kind = 0xFD;
    c.attn.size.value = (int64_t)offsetof(zyfa_attn_params, reserved) + 1; /* cuts reserved (set) in two */
    write_seed(dir, "attn_struct_cuts_reserved", &c);

    /* params.key_bias (0.1.6): a bias buffer on FP8 LEAN and BF16 rows (success), misaligned and
     * inside o (INVALID_ARGUMENT), and a caller whose struct ends before the field. */
    c = attn(ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_MASK_CAUSAL_BOTTOM_RIGHT, 1, 8, 200, 2, 1, 16, 16);
    c.attn.softmax = ZYFA_SOFTMAX_LEAN;
    c.attn.descales = 7;
    c.attn.key_bias_kind = FUZZ_KEY_BIAS_BUFFER;
    write_seed(dir, "attn_key_bias_lean", &c);
    c.attn.key_bias_kind = FUZZ_KEY_BIAS_ODD;
    write_seed(dir, "attn_key_bias_misaligned", &c);
    c.attn.key_bias_kind = FUZZ_KEY_BIAS_IN_O;
    write_seed(dir, "attn_key_bias_in_o", &c);
    c.attn.key_bias_kind = FUZZ_KEY_BIAS_ODD;
    c.attn.size.kind = FUZZ_SIZE_ANY;
    c.attn.size.value = (int64_t)offsetof(zyfa_attn_params, key_bias); /* a 0.1.5 caller */
    write_seed(dir, "attn_struct_0_1_5_key_bias_beyond", &c);
    c = attn(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32, ZYFA_MASK_CAUSAL, 2, 33, 33, 4, 2, 32, 32);
    c.attn.key_bias_kind = FUZZ_KEY_BIAS_BUFFER;
    write_seed(dir, "attn_key_bias_bf16_gqa", &c);

    /* Quantisation. */
    c = quant(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN, ZYFA_QUANT_HADAMARD, 2, 16, 2, 128);
    write_seed(dir, "quant_bf16_hadamard_128", &c);
    c = quant(ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP8_E4M3FNUZ, ZYFA_QUANT_HADAMARD, 1, 8, 3, 192);
    write_seed(dir, "quant_fp32_hadamard_192", &c);
    c = quant(ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP8_E4M3FN, 0, 1, 8, 2, 96);
    c.quant.in.layout = FUZZ_LAYOUT_PADDED, c.quant.in.pad = 4;
    c.quant.out.layout = FUZZ_LAYOUT_HEAD_MAJOR, c.quant.out.pad = 16;
    write_seed(dir, "quant_fp16_layouts", &c);
    c.quant.flags = ZYFA_QUANT_HADAMARD; /* 96: neither a power of two nor a multiple of 64 */
    write_seed(dir, "quant_hadamard_unsupported_dim", &c);
    c = quant(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN, 0, 3, 10, 2, 64);
    c.quant.varlen = FUZZ_VARLEN_LENGTHS;
    c.quant.cu[0] = 4, c.quant.cu[1] = 0, c.quant.cu[2] = 10;
    write_seed(dir, "quant_varlen", &c);
    c.quant.size.kind = FUZZ_SIZE_BOUNDARY, c.quant.size.value = 0; /* older: no cu_seqlens field */
    write_seed(dir, "quant_older_struct", &c);
    c = quant(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN, 0, 1, 4, 1, 64);
    c.quant.null_descale = 1;
    write_seed(dir, "quant_null_descale", &c);
    c = quant(ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP8_E4M3FN, 0, 2, 4, 2, 64);
    c.data = FUZZ_DATA_BITS;
    write_seed(dir, "quant_any_bits", &c);

    c = quant(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN, 0, 2, 4, 2, 64);
    const char* quant_twists[] = {NULL, "quant_in_odd_address", "quant_out_is_in", "quant_descale_in_out"};
    for (int twist = 1; twist < FUZZ_QUANT_TWIST_COUNT; ++twist) {
        c.quant.twist = (uint8_t)twist;
        write_seed(dir, quant_twists[twist], &c);
    }

    /* K smoothing's mean and Q smoothing's key bias (0.1.6): success with each, a flag without its
     * buffer and a buffer without its flag, a misaligned or aliased buffer, query_heads not a
     * multiple of heads, a NaN key_bias_scale, packed rows, and a 0.1.4 caller (the bias's fields
     * beyond struct_size: the flag alone is then INVALID_ARGUMENT). */
    c = quant(ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3FN, ZYFA_QUANT_SMOOTH | ZYFA_QUANT_HADAMARD, 2, 9, 2, 64);
    c.quant.smooth_kind = FUZZ_QUANT_MEAN_BUFFER;
    write_seed(dir, "quant_smooth_mean", &c);
    c.quant.smooth_kind = FUZZ_QUANT_MEAN_ODD;
    write_seed(dir, "quant_smooth_mean_misaligned", &c);
    c.quant.smooth_kind = FUZZ_QUANT_MEAN_IN_OUT;
    write_seed(dir, "quant_smooth_mean_in_out", &c);
    c.quant.smooth_kind = FUZZ_QUANT_MEAN_NONE;
    write_seed(dir, "quant_smooth_flag_without_mean", &c);
    c.quant.flags = ZYFA_QUANT_HADAMARD, c.quant.smooth_kind = FUZZ_QUANT_MEAN_BUFFER;
    write_seed(dir, "quant_smooth_mean_without_flag", &c);
    c = quant(ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP8_E4M3FN, ZYFA_QUANT_SMOOTH | ZYFA_QUANT_KEY_BIAS, 2, 7, 2, 64);
    c.quant.smooth_kind = FUZZ_QUANT_MEAN_BUFFER;
    c.quant.bias_kind = FUZZ_QUANT_BIAS_BUFFERS;
    c.quant.query_heads = 6;
    c.quant.bias_scale_kind = 1;
    write_seed(dir, "quant_key_bias_gqa", &c);
    c.quant.bias_kind = FUZZ_QUANT_BIAS_ODD;
    write_seed(dir, "quant_key_bias_misaligned", &c);
    c.quant.bias_kind = FUZZ_QUANT_BIAS_IN_IN;
    write_seed(dir, "quant_key_bias_in_in", &c);
    c.quant.bias_kind = FUZZ_QUANT_BIAS_BUFFERS;
    c.quant.query_heads = 5;
    write_seed(dir, "quant_key_bias_query_heads_not_multiple", &c);
    c.quant.query_heads = 4, c.quant.bias_scale_kind = 2;
    write_seed(dir, "quant_key_bias_scale_nan", &c);
    c.quant.bias_scale_kind = 0, c.quant.flags = ZYFA_QUANT_SMOOTH;
    write_seed(dir, "quant_key_bias_fields_without_flag", &c);
    c.quant.flags = ZYFA_QUANT_KEY_BIAS, c.quant.smooth_kind = FUZZ_QUANT_MEAN_NONE;
    c.quant.varlen = FUZZ_VARLEN_LENGTHS;
    c.quant.cu[0] = 3, c.quant.cu[1] = 0, c.quant.cu[2] = 7;
    write_seed(dir, "quant_key_bias_varlen", &c);
    c.quant.varlen = FUZZ_VARLEN_NONE;
    c.quant.size.kind = FUZZ_SIZE_BOUNDARY, c.quant.size.value = 2; /* 0.1.4's sizeof: no bias fields */
    write_seed(dir, "quant_key_bias_struct_0_1_4", &c);

    /* zyfa_attn_merge: fp32 parts, then mixed dtypes with -inf rows, packed, and in place (refused). */
    c = merge(3, ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP32, 2, 5, 3, 16);
    write_seed(dir, "merge_fp32_three_parts", &c);
    c = merge(2, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, 1, 7, 2, 64);
    c.merge.part[1].dtype = ZYFA_DTYPE_FP32;
    c.merge.part[1].layout = FUZZ_LAYOUT_HEAD_MAJOR;
    c.merge.special = 1;
    write_seed(dir, "merge_mixed_dtypes_neg_inf", &c);
    c = merge(3, ZYFA_DTYPE_FP32, ZYFA_DTYPE_BF16, 3, 6, 2, 8);
    c.merge.varlen = FUZZ_VARLEN_LENGTHS;
    c.merge.cu[0] = 4;
    c.merge.cu[1] = 0;
    c.merge.cu[2] = 6;
    c.merge.special = 2;
    write_seed(dir, "merge_packed_nan_lse", &c);
    c = merge(2, ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP32, 1, 4, 2, 8);
    c.merge.twist = FUZZ_MERGE_TWIST_O_IS_PART0;
    write_seed(dir, "merge_in_place_refused", &c);
    return g_failures == 0 ? 0 : 1;
}
