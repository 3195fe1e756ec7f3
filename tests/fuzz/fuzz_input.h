/*
 * The byte format of one fuzz input: the choices (params, struct_size, dtypes, strides, packed
 * lengths, data) that tests/fuzz/fuzz_api.c turns into one request. Decoding and encoding sit
 * side by side here so that the seed writer (make_seed_corpus.c) writes exactly what the harness
 * reads. Every byte string decodes to something: a reader past the end yields zeros.
 *
 * Integers use a one-byte tag so that small values (what real requests hold) are one byte and the
 * fuzzer still reaches the edges: tags 0..0xDF are the value itself, then -1, INT64_MAX,
 * INT64_MIN, INT32_MAX, INT32_MIN, 2^31, 2^32, a raw u16, a raw i32 and a raw i64.
 */
#ifndef ZYFA_FUZZ_INPUT_H
#define ZYFA_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Packed lengths are read only for batch <= this (the harness owns an array of batch + 1). */
#define FUZZ_MAX_VARLEN_BATCH 64

enum fuzz_op { FUZZ_OP_ATTN = 0, FUZZ_OP_QUANT = 1, FUZZ_OP_COUNT = 2, FUZZ_OP_MERGE = 2 };
/* The op byte: values below 0xF0 pick attention or quantisation (% FUZZ_OP_COUNT, as before merge
 * existed, so older corpus inputs keep their meaning); 0xF0 and above pick zyfa_attn_merge. */
#define FUZZ_OP_MERGE_BYTE 0xF0
#define FUZZ_MAX_MERGE_PARTS 3

/* struct_size choices. */
enum fuzz_size_kind {
    FUZZ_SIZE_CURRENT = 0,  /* sizeof the struct of this header */
    FUZZ_SIZE_BOUNDARY = 1, /* the end of one field: an older caller (value picks the field) */
    FUZZ_SIZE_ANY = 2,      /* value % 8192 bytes, exactly that many allocated */
    FUZZ_SIZE_GARBAGE = 3,  /* UINT32_MAX (an uninitialised struct), only sizeof allocated */
    FUZZ_SIZE_KIND_COUNT = 4
};

/* Tensor layouts. The first three are well formed by construction (non-overlapping). */
enum fuzz_layout {
    FUZZ_LAYOUT_DENSE = 0,       /* [batch, seq, head, dim] contiguous */
    FUZZ_LAYOUT_PADDED = 1,      /* dense plus pad elements after each row, head and batch */
    FUZZ_LAYOUT_HEAD_MAJOR = 2,  /* [batch, head, seq, dim] plus pad after each row */
    FUZZ_LAYOUT_RAW = 3,         /* the three strides as given */
    FUZZ_LAYOUT_COUNT = 4
};

/* Packed sequences. */
enum fuzz_varlen {
    FUZZ_VARLEN_NONE = 0,
    FUZZ_VARLEN_LENGTHS = 1, /* prefix sums of value % (seqlen + 1): well formed */
    FUZZ_VARLEN_Q_ONLY = 2,  /* cu_seqlens_q without cu_seqlens_k (attention only) */
    FUZZ_VARLEN_K_ONLY = 3,
    FUZZ_VARLEN_RAW = 4,     /* the cu_seqlens entries as given */
    FUZZ_VARLEN_COUNT = 5
};

/* Input data. */
enum fuzz_data {
    FUZZ_DATA_SMOOTH = 0, /* values in [-2, 2) */
    FUZZ_DATA_BITS = 1,   /* any bit pattern: NaN, Inf, every FP8 code */
    FUZZ_DATA_ZERO = 2,
    FUZZ_DATA_LARGE = 3,  /* large finite magnitudes */
    FUZZ_DATA_COUNT = 4
};

typedef struct fuzz_tensor_choice {
    int64_t dtype; /* k, v: 0 means "as q" */
    int64_t reserved;
    uint8_t layout;
    uint8_t null_data;
    int64_t pad;       /* PADDED / HEAD_MAJOR */
    int64_t stride[3]; /* RAW: batch, seq, head */
} fuzz_tensor_choice;

typedef struct fuzz_size_choice {
    uint8_t kind;
    int64_t value;
    uint8_t tail_byte; /* bytes beyond this header's struct: all zero but one, which is this */
    int64_t tail_pos;
} fuzz_size_choice;

/* Memory twists applied after the buffers exist (issue 18): misaligned pointers, outputs that
 * alias an input or each other, a NaN planted in q. */
enum {
    FUZZ_ATTN_TWIST_NONE = 0,
    FUZZ_ATTN_TWIST_Q_ODD = 1,    /* q.data + 1 */
    FUZZ_ATTN_TWIST_LSE_ODD = 2,  /* lse + 2 bytes */
    FUZZ_ATTN_TWIST_O_IS_K = 3,   /* o.data = k's buffer */
    FUZZ_ATTN_TWIST_LSE_IN_O = 4, /* lse = o's buffer */
    FUZZ_ATTN_TWIST_NAN_Q = 5,    /* q element 0 is NaN */
    FUZZ_ATTN_TWIST_COUNT = 6
};
enum {
    FUZZ_QUANT_TWIST_NONE = 0,
    FUZZ_QUANT_TWIST_IN_ODD = 1,         /* in.data + 1 */
    FUZZ_QUANT_TWIST_OUT_IS_IN = 2,      /* out.data = in's buffer */
    FUZZ_QUANT_TWIST_DESCALE_IN_OUT = 3, /* descale = out's buffer */
    FUZZ_QUANT_TWIST_COUNT = 4
};

typedef struct fuzz_attn_choice {
    fuzz_size_choice size;
    int64_t mask, batch, seqlen_q, seqlen_k, heads_q, heads_kv, head_dim_qk, head_dim_v;
    uint8_t scale_kind; /* 0: 0 (default), 1: value / 16, 2: raw float bits */
    int64_t scale_value;
    int64_t softmax, window_left, window_right, flags;
    fuzz_tensor_choice q, k, v, o;
    uint8_t descales; /* bit 0 q, bit 1 k, bit 2 v */
    uint8_t lse;
    uint8_t varlen;
    int64_t cu_q[FUZZ_MAX_VARLEN_BATCH + 1], cu_k[FUZZ_MAX_VARLEN_BATCH + 1];
    uint8_t twist; /* FUZZ_ATTN_TWIST_*: read after the fields above, so older inputs decode as none */
    /* params.key_block and params.reserved, read after twist so that inputs older than the field
     * decode as 0: see fuzz_key_block / fuzz_reserved. */
    uint8_t key_block_kind;
    int64_t key_block_value; /* read only for FUZZ_KEY_BLOCK_RAW */
    /* params.key_bias (0.1.6), read last so that older inputs decode as none: FUZZ_KEY_BIAS_*. */
    uint8_t key_bias_kind;
} fuzz_attn_choice;

/* key_bias_kind % 4: none, a buffer of the documented size, that buffer + 2 bytes (misaligned),
 * o's buffer (an input overlapping the output). */
enum { FUZZ_KEY_BIAS_NONE = 0, FUZZ_KEY_BIAS_BUFFER = 1, FUZZ_KEY_BIAS_ODD = 2, FUZZ_KEY_BIAS_IN_O = 3 };

/* key_block_kind % 8: mostly the accepted values, sometimes any integer (mostly invalid). */
enum { FUZZ_KEY_BLOCK_RAW = 7 };

static inline int64_t fuzz_key_block(const fuzz_attn_choice* a) {
    switch (a->key_block_kind % 8) {
        case 0:
        case 1:
        case 2: return 0;
        case 3:
        case 4: return 64;
        case 5:
        case 6: return 128;
        default: return a->key_block_value;
    }
}

/* key_block_kind 0xF8..0xFF (1 in 32) also sets params.reserved, a newer caller's field. */
static inline int32_t fuzz_reserved(const fuzz_attn_choice* a) {
    return a->key_block_kind >= 0xF8 ? (int32_t)(a->key_block_kind - 0xF7) : 0;
}

typedef struct fuzz_quant_choice {
    fuzz_size_choice size;
    int64_t flags, batch, seqlen, heads, head_dim;
    fuzz_tensor_choice in, out;
    uint8_t null_descale;
    uint8_t varlen;
    int64_t cu[FUZZ_MAX_VARLEN_BATCH + 1];
    uint8_t twist; /* FUZZ_QUANT_TWIST_* */
    /* Read last so that older inputs decode as none. smooth_kind % 4: FUZZ_QUANT_MEAN_*, what
     * params.smooth_mean points at (set whatever the flags say: a mismatch is INVALID_ARGUMENT).
     * bias_kind % 4: FUZZ_QUANT_BIAS_*, what params.query_mean and params.key_bias point at (0.1.6);
     * with it query_heads and bias_scale_kind % 4 (key_bias_scale 0, 0.125, NaN, +inf). */
    uint8_t smooth_kind;
    uint8_t bias_kind;
    int64_t query_heads;
    uint8_t bias_scale_kind;
} fuzz_quant_choice;

/* params.smooth_mean: none, a buffer of the documented size, that buffer + 2 bytes (misaligned),
 * or out's own memory (an output aliasing an output). */
enum { FUZZ_QUANT_MEAN_NONE = 0, FUZZ_QUANT_MEAN_BUFFER = 1, FUZZ_QUANT_MEAN_ODD = 2, FUZZ_QUANT_MEAN_IN_OUT = 3 };
/* params.query_mean and params.key_bias: none, buffers of their documented sizes, the bias buffer +
 * 2 bytes (misaligned), or the bias written over in's memory (an output aliasing an input). */
enum { FUZZ_QUANT_BIAS_NONE = 0, FUZZ_QUANT_BIAS_BUFFERS = 1, FUZZ_QUANT_BIAS_ODD = 2, FUZZ_QUANT_BIAS_IN_IN = 3 };

enum {
    FUZZ_MERGE_TWIST_NONE = 0,
    FUZZ_MERGE_TWIST_O_IS_PART0 = 1,    /* o.data = part 0's buffer (in place: refused) */
    FUZZ_MERGE_TWIST_LSE_IS_PART = 2,   /* params.lse = part 0's lse */
    FUZZ_MERGE_TWIST_PART_LSE_ODD = 3,  /* part_lse[0] + 2 bytes */
    FUZZ_MERGE_TWIST_PART_LSE_NULL = 4, /* part_lse[last] = NULL */
    FUZZ_MERGE_TWIST_COUNT = 5
};

typedef struct fuzz_merge_choice {
    fuzz_size_choice size;
    int64_t num_parts, batch, seqlen_q, heads, head_dim;
    fuzz_tensor_choice part[FUZZ_MAX_MERGE_PARTS], o;
    uint8_t lse;     /* bit 0: the merged lse is requested */
    uint8_t special; /* % 4: part lse values finite, with -inf, with NaN / +inf, all -inf */
    uint8_t varlen;
    int64_t cu[FUZZ_MAX_VARLEN_BATCH + 1];
    uint8_t twist;   /* FUZZ_MERGE_TWIST_* */
} fuzz_merge_choice;

typedef struct fuzz_choice {
    uint8_t op;
    uint8_t context; /* which of the harness's CPU contexts (1 or 2 worker threads) */
    uint8_t data;
    uint32_t seed;
    fuzz_attn_choice attn;
    fuzz_quant_choice quant;
    fuzz_merge_choice merge;
} fuzz_choice;

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct fuzz_reader {
    const uint8_t* data;
    size_t size, pos;
} fuzz_reader;

static inline uint8_t fuzz_read_u8(fuzz_reader* r) { return r->pos < r->size ? r->data[r->pos++] : 0; }

static inline uint64_t fuzz_read_raw(fuzz_reader* r, int bytes) {
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= (uint64_t)fuzz_read_u8(r) << (8 * i);
    return value;
}

/* Two's complement reinterpretation without implementation-defined conversions. */
static inline int64_t fuzz_i64_from_bits(uint64_t bits) {
    int64_t value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline int64_t fuzz_read_int(fuzz_reader* r) {
    const uint8_t tag = fuzz_read_u8(r);
    if (tag < 0xE0) return tag;
    switch (tag) {
        case 0xE0: return -1;
        case 0xE1: return INT64_MAX;
        case 0xE2: return INT64_MIN;
        case 0xE3: return INT32_MAX;
        case 0xE4: return INT32_MIN;
        case 0xE5: return (int64_t)1 << 31;
        case 0xE6: return (int64_t)1 << 32;
        case 0xE7: return (int64_t)fuzz_read_raw(r, 2);
        case 0xE8: return (int64_t)(int32_t)(uint32_t)fuzz_read_raw(r, 4);
        default: return fuzz_i64_from_bits(fuzz_read_raw(r, 8));
    }
}

static inline void fuzz_read_size(fuzz_reader* r, fuzz_size_choice* s) {
    s->kind = (uint8_t)(fuzz_read_u8(r) % FUZZ_SIZE_KIND_COUNT);
    s->value = fuzz_read_int(r);
    s->tail_byte = fuzz_read_u8(r);
    s->tail_pos = fuzz_read_int(r);
}

static inline void fuzz_read_tensor(fuzz_reader* r, fuzz_tensor_choice* t) {
    t->dtype = fuzz_read_int(r);
    t->reserved = fuzz_read_int(r);
    const uint8_t flags = fuzz_read_u8(r);
    t->layout = (uint8_t)(flags % FUZZ_LAYOUT_COUNT);
    t->null_data = (uint8_t)((flags >> 4) & 1);
    t->pad = 0;
    t->stride[0] = t->stride[1] = t->stride[2] = 0;
    if (t->layout == FUZZ_LAYOUT_PADDED || t->layout == FUZZ_LAYOUT_HEAD_MAJOR) t->pad = fuzz_read_int(r);
    if (t->layout == FUZZ_LAYOUT_RAW) {
        for (int i = 0; i < 3; ++i) t->stride[i] = fuzz_read_int(r);
    }
}

/* Packed lengths come last: how many there are depends on batch. */
static inline void fuzz_read_cu(fuzz_reader* r, int64_t batch, int64_t* cu) {
    memset(cu, 0, sizeof(int64_t) * (FUZZ_MAX_VARLEN_BATCH + 1));
    if (batch < 0 || batch > FUZZ_MAX_VARLEN_BATCH) return;
    for (int64_t i = 0; i <= batch; ++i) cu[i] = fuzz_read_int(r);
}

static inline void fuzz_decode(const uint8_t* data, size_t size, fuzz_choice* c) {
    fuzz_reader reader = {data, size, 0};
    fuzz_reader* r = &reader;
    memset(c, 0, sizeof *c);
    const uint8_t op_byte = fuzz_read_u8(r);
    c->op = (uint8_t)(op_byte >= FUZZ_OP_MERGE_BYTE ? FUZZ_OP_MERGE : op_byte % FUZZ_OP_COUNT);
    c->context = (uint8_t)(fuzz_read_u8(r) % 2);
    c->data = (uint8_t)(fuzz_read_u8(r) % FUZZ_DATA_COUNT);
    c->seed = (uint32_t)fuzz_read_raw(r, 4);
    if (c->op == FUZZ_OP_ATTN) {
        fuzz_attn_choice* a = &c->attn;
        fuzz_read_size(r, &a->size);
        a->mask = fuzz_read_int(r);
        a->batch = fuzz_read_int(r);
        a->seqlen_q = fuzz_read_int(r);
        a->seqlen_k = fuzz_read_int(r);
        a->heads_q = fuzz_read_int(r);
        a->heads_kv = fuzz_read_int(r);
        a->head_dim_qk = fuzz_read_int(r);
        a->head_dim_v = fuzz_read_int(r);
        a->scale_kind = (uint8_t)(fuzz_read_u8(r) % 3);
        a->scale_value = fuzz_read_int(r);
        a->softmax = fuzz_read_int(r);
        a->window_left = fuzz_read_int(r);
        a->window_right = fuzz_read_int(r);
        a->flags = fuzz_read_int(r);
        fuzz_read_tensor(r, &a->q);
        fuzz_read_tensor(r, &a->k);
        fuzz_read_tensor(r, &a->v);
        fuzz_read_tensor(r, &a->o);
        a->descales = (uint8_t)(fuzz_read_u8(r) & 7);
        a->lse = (uint8_t)(fuzz_read_u8(r) & 1);
        a->varlen = (uint8_t)(fuzz_read_u8(r) % FUZZ_VARLEN_COUNT);
        if (a->varlen != FUZZ_VARLEN_NONE) {
            fuzz_read_cu(r, a->batch, a->cu_q);
            fuzz_read_cu(r, a->batch, a->cu_k);
        }
        a->twist = (uint8_t)(fuzz_read_u8(r) % FUZZ_ATTN_TWIST_COUNT);
        a->key_block_kind = fuzz_read_u8(r);
        if (a->key_block_kind % 8 == FUZZ_KEY_BLOCK_RAW) a->key_block_value = fuzz_read_int(r);
        a->key_bias_kind = (uint8_t)(fuzz_read_u8(r) % 4);
    } else if (c->op == FUZZ_OP_MERGE) {
        fuzz_merge_choice* m = &c->merge;
        fuzz_read_size(r, &m->size);
        m->num_parts = fuzz_read_int(r);
        m->batch = fuzz_read_int(r);
        m->seqlen_q = fuzz_read_int(r);
        m->heads = fuzz_read_int(r);
        m->head_dim = fuzz_read_int(r);
        for (int i = 0; i < FUZZ_MAX_MERGE_PARTS; ++i) fuzz_read_tensor(r, &m->part[i]);
        fuzz_read_tensor(r, &m->o);
        m->lse = (uint8_t)(fuzz_read_u8(r) & 1);
        m->special = (uint8_t)(fuzz_read_u8(r) % 4);
        m->varlen = (uint8_t)(fuzz_read_u8(r) % FUZZ_VARLEN_COUNT);
        if (m->varlen != FUZZ_VARLEN_NONE) fuzz_read_cu(r, m->batch, m->cu);
        m->twist = (uint8_t)(fuzz_read_u8(r) % FUZZ_MERGE_TWIST_COUNT);
    } else {
        fuzz_quant_choice* q = &c->quant;
        fuzz_read_size(r, &q->size);
        q->flags = fuzz_read_int(r);
        q->batch = fuzz_read_int(r);
        q->seqlen = fuzz_read_int(r);
        q->heads = fuzz_read_int(r);
        q->head_dim = fuzz_read_int(r);
        fuzz_read_tensor(r, &q->in);
        fuzz_read_tensor(r, &q->out);
        q->null_descale = (uint8_t)(fuzz_read_u8(r) & 1);
        q->varlen = (uint8_t)(fuzz_read_u8(r) % FUZZ_VARLEN_COUNT);
        if (q->varlen != FUZZ_VARLEN_NONE) fuzz_read_cu(r, q->batch, q->cu);
        q->twist = (uint8_t)(fuzz_read_u8(r) % FUZZ_QUANT_TWIST_COUNT);
        q->smooth_kind = (uint8_t)(fuzz_read_u8(r) % 4);
        q->bias_kind = (uint8_t)(fuzz_read_u8(r) % 4);
        if (q->bias_kind != FUZZ_QUANT_BIAS_NONE) {
            q->query_heads = fuzz_read_int(r);
            q->bias_scale_kind = (uint8_t)(fuzz_read_u8(r) % 4);
        }
    }
}

/* ---- writing (seed corpus) ----------------------------------------------------------------- */

typedef struct fuzz_writer {
    uint8_t* data;
    size_t capacity, size;
} fuzz_writer;

static inline void fuzz_write_u8(fuzz_writer* w, uint8_t byte) {
    if (w->size < w->capacity) w->data[w->size] = byte;
    w->size++;
}

static inline void fuzz_write_raw(fuzz_writer* w, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) fuzz_write_u8(w, (uint8_t)(value >> (8 * i)));
}

static inline void fuzz_write_int(fuzz_writer* w, int64_t value) {
    if (value >= 0 && value < 0xE0) {
        fuzz_write_u8(w, (uint8_t)value);
    } else {
        fuzz_write_u8(w, 0xE9);
        uint64_t bits;
        memcpy(&bits, &value, sizeof bits);
        fuzz_write_raw(w, bits, 8);
    }
}

static inline void fuzz_write_size(fuzz_writer* w, const fuzz_size_choice* s) {
    fuzz_write_u8(w, s->kind);
    fuzz_write_int(w, s->value);
    fuzz_write_u8(w, s->tail_byte);
    fuzz_write_int(w, s->tail_pos);
}

static inline void fuzz_write_tensor(fuzz_writer* w, const fuzz_tensor_choice* t) {
    fuzz_write_int(w, t->dtype);
    fuzz_write_int(w, t->reserved);
    fuzz_write_u8(w, (uint8_t)(t->layout | (t->null_data ? 0x10 : 0)));
    if (t->layout == FUZZ_LAYOUT_PADDED || t->layout == FUZZ_LAYOUT_HEAD_MAJOR) fuzz_write_int(w, t->pad);
    if (t->layout == FUZZ_LAYOUT_RAW) {
        for (int i = 0; i < 3; ++i) fuzz_write_int(w, t->stride[i]);
    }
}

static inline void fuzz_write_cu(fuzz_writer* w, int64_t batch, const int64_t* cu) {
    if (batch < 0 || batch > FUZZ_MAX_VARLEN_BATCH) return;
    for (int64_t i = 0; i <= batch; ++i) fuzz_write_int(w, cu[i]);
}

/* Returns the encoded size (which may exceed capacity: then only capacity bytes were written). */
static inline size_t fuzz_encode(const fuzz_choice* c, uint8_t* data, size_t capacity) {
    fuzz_writer writer = {data, capacity, 0};
    fuzz_writer* w = &writer;
    fuzz_write_u8(w, c->op == FUZZ_OP_MERGE ? FUZZ_OP_MERGE_BYTE : c->op);
    fuzz_write_u8(w, c->context);
    fuzz_write_u8(w, c->data);
    fuzz_write_raw(w, c->seed, 4);
    if (c->op == FUZZ_OP_ATTN) {
        const fuzz_attn_choice* a = &c->attn;
        fuzz_write_size(w, &a->size);
        fuzz_write_int(w, a->mask);
        fuzz_write_int(w, a->batch);
        fuzz_write_int(w, a->seqlen_q);
        fuzz_write_int(w, a->seqlen_k);
        fuzz_write_int(w, a->heads_q);
        fuzz_write_int(w, a->heads_kv);
        fuzz_write_int(w, a->head_dim_qk);
        fuzz_write_int(w, a->head_dim_v);
        fuzz_write_u8(w, a->scale_kind);
        fuzz_write_int(w, a->scale_value);
        fuzz_write_int(w, a->softmax);
        fuzz_write_int(w, a->window_left);
        fuzz_write_int(w, a->window_right);
        fuzz_write_int(w, a->flags);
        fuzz_write_tensor(w, &a->q);
        fuzz_write_tensor(w, &a->k);
        fuzz_write_tensor(w, &a->v);
        fuzz_write_tensor(w, &a->o);
        fuzz_write_u8(w, a->descales);
        fuzz_write_u8(w, a->lse);
        fuzz_write_u8(w, a->varlen);
        if (a->varlen != FUZZ_VARLEN_NONE) {
            fuzz_write_cu(w, a->batch, a->cu_q);
            fuzz_write_cu(w, a->batch, a->cu_k);
        }
        fuzz_write_u8(w, a->twist);
        /* Omitted when 0 (with no key bias after them), so a seed without them is the same bytes as
         * before the fields. */
        if (a->key_block_kind != 0 || a->key_bias_kind != 0) {
            fuzz_write_u8(w, a->key_block_kind);
            if (a->key_block_kind % 8 == FUZZ_KEY_BLOCK_RAW) fuzz_write_int(w, a->key_block_value);
        }
        if (a->key_bias_kind != 0) fuzz_write_u8(w, a->key_bias_kind);
    } else if (c->op == FUZZ_OP_MERGE) {
        const fuzz_merge_choice* m = &c->merge;
        fuzz_write_size(w, &m->size);
        fuzz_write_int(w, m->num_parts);
        fuzz_write_int(w, m->batch);
        fuzz_write_int(w, m->seqlen_q);
        fuzz_write_int(w, m->heads);
        fuzz_write_int(w, m->head_dim);
        for (int i = 0; i < FUZZ_MAX_MERGE_PARTS; ++i) fuzz_write_tensor(w, &m->part[i]);
        fuzz_write_tensor(w, &m->o);
        fuzz_write_u8(w, m->lse);
        fuzz_write_u8(w, m->special);
        fuzz_write_u8(w, m->varlen);
        if (m->varlen != FUZZ_VARLEN_NONE) fuzz_write_cu(w, m->batch, m->cu);
        fuzz_write_u8(w, m->twist);
    } else {
        const fuzz_quant_choice* q = &c->quant;
        fuzz_write_size(w, &q->size);
        fuzz_write_int(w, q->flags);
        fuzz_write_int(w, q->batch);
        fuzz_write_int(w, q->seqlen);
        fuzz_write_int(w, q->heads);
        fuzz_write_int(w, q->head_dim);
        fuzz_write_tensor(w, &q->in);
        fuzz_write_tensor(w, &q->out);
        fuzz_write_u8(w, q->null_descale);
        fuzz_write_u8(w, q->varlen);
        if (q->varlen != FUZZ_VARLEN_NONE) fuzz_write_cu(w, q->batch, q->cu);
        fuzz_write_u8(w, q->twist);
        /* Omitted when 0, so a seed without them is the same bytes as before the fields. */
        if (q->smooth_kind != 0 || q->bias_kind != 0) {
            fuzz_write_u8(w, q->smooth_kind);
            fuzz_write_u8(w, q->bias_kind);
            if (q->bias_kind != FUZZ_QUANT_BIAS_NONE) {
                fuzz_write_int(w, q->query_heads);
                fuzz_write_u8(w, q->bias_scale_kind);
            }
        }
    }
    return w->size;
}

#endif /* ZYFA_FUZZ_INPUT_H */
