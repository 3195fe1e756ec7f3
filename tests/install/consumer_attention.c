/*
 * A consumer of an installed zyfa, written only from zyfa.h and docs/api.md: no internal header,
 * no helper from the source tree. It builds causal GQA varlen attention on FP8 e4m3fn inputs
 * with codes it encodes itself, runs it on the CPU backend, and compares the result with its own
 * fp64 computation from the decoded codes.
 *
 * Built twice by run-install-test.sh: with `pkg-config --cflags --libs zyfa` and with CMake's
 * find_package(zyfa) + zyfa::zyfa. Exit status 0 means every check passed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zyfa.h>

/* ---- OCP FP8 e4m3fn, written here from its definition ------------------------------------------
 * 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits; exponent field 0 is subnormal
 * (m/8 * 2^-6); S.1111.111 is NaN; no infinity; largest finite 0x7E = 448. */
static double e4m3fn_decode(uint8_t code) {
    const int exponent = (code >> 3) & 0xF;
    const int mantissa = code & 0x7;
    double magnitude;
    if ((code & 0x7F) == 0x7F) return NAN;
    if (exponent == 0) {
        magnitude = ldexp((double)mantissa / 8.0, -6);
    } else {
        magnitude = ldexp(1.0 + (double)mantissa / 8.0, exponent - 7);
    }
    return (code & 0x80) ? -magnitude : magnitude;
}

/* Round to nearest, ties to even, saturating at 448. Searches the 127 non-negative codes, whose
 * values increase with the code: slow and obviously right, which is what a test encoder needs. */
static uint8_t e4m3fn_encode(double x) {
    const uint8_t sign = (x < 0.0 || (x == 0.0 && signbit(x))) ? 0x80 : 0x00;
    const double magnitude = fabs(x);
    uint8_t best = 0;
    uint8_t code;
    if (magnitude >= 448.0) return (uint8_t)(sign | 0x7E);
    for (code = 1; code <= 0x7E; ++code) {
        const double below = e4m3fn_decode(best);
        const double candidate = e4m3fn_decode(code);
        if (candidate > magnitude) {
            /* magnitude lies in [below, candidate): nearest, ties to the even code */
            const double to_below = magnitude - below;
            const double to_candidate = candidate - magnitude;
            if (to_candidate < to_below || (to_candidate == to_below && (code & 1) == 0)) best = code;
            return (uint8_t)(sign | best);
        }
        best = code;
    }
    return (uint8_t)(sign | best);
}

static int check_codec(void) {
    int code;
    for (code = 0; code < 256; ++code) {
        if ((code & 0x7F) == 0x7F) continue; /* NaN */
        if (e4m3fn_encode(e4m3fn_decode((uint8_t)code)) != code) {
            fprintf(stderr, "codec self-check: code 0x%02X does not round-trip\n", code);
            return 0;
        }
    }
    /* 1.0625 is the midpoint of 1.0 (0x38) and 1.125 (0x39): ties go to the even code. */
    if (e4m3fn_encode(1.0625) != 0x38 || e4m3fn_encode(1.1875) != 0x3A || e4m3fn_encode(1e6) != 0x7E) {
        fprintf(stderr, "codec self-check: rounding or saturation is wrong\n");
        return 0;
    }
    return 1;
}

/* ---- deterministic random numbers (splitmix64) ------------------------------------------------ */
static uint64_t rng_state = 0x5EED2026u;
static double uniform(double lo, double hi) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

/* ---- the problem ------------------------------------------------------------------------------
 * Four packed sequences of lengths 5, 0, 1 and 100: an empty one, one that sees a single key, and
 * one longer than a 64-key block. GQA: 8 query heads share 2 kv heads. */
enum { BATCH = 4, HEADS_Q = 8, HEADS_KV = 2, HEAD_DIM = 64, TOTAL = 106, LONGEST = 100 };
static const int32_t cu_seqlens[BATCH + 1] = {0, 5, 5, 6, 106};

/* Rows of the packed [TOTAL, heads, HEAD_DIM] tensors. */
#define Q_INDEX(s, h, d) (((size_t)(s) * HEADS_Q + (size_t)(h)) * HEAD_DIM + (size_t)(d))
#define KV_INDEX(s, h, d) (((size_t)(s) * HEADS_KV + (size_t)(h)) * HEAD_DIM + (size_t)(d))

static uint8_t q_codes[TOTAL * HEADS_Q * HEAD_DIM];
static uint8_t k_codes[TOTAL * HEADS_KV * HEAD_DIM];
static uint8_t v_codes[TOTAL * HEADS_KV * HEAD_DIM];
static float q_descale[BATCH * HEADS_KV], k_descale[BATCH * HEADS_KV], v_descale[BATCH * HEADS_KV];
static double reference_o[TOTAL * HEADS_Q * HEAD_DIM];
static double reference_lse[HEADS_Q * TOTAL];
static float o[TOTAL * HEADS_Q * HEAD_DIM];
static float lse[HEADS_Q * TOTAL];

/* Values as a quantiser would produce them: the real value divided by a per-(sequence, kv head)
 * descale, rounded to e4m3. Descales differ from 1 and between heads, so a kernel that ignores
 * them, or applies the wrong one, fails. */
static void make_inputs(void) {
    int b, s, h, d;
    for (b = 0; b < BATCH; ++b) {
        for (h = 0; h < HEADS_KV; ++h) {
            q_descale[b * HEADS_KV + h] = 0.0078125f * (float)(1 + b + 2 * h);  /* exact in fp32 */
            k_descale[b * HEADS_KV + h] = 0.01f + 0.004f * (float)(b + h);
            v_descale[b * HEADS_KV + h] = 0.005f * (float)(1 + h) + 0.001f * (float)b;
        }
    }
    for (b = 0; b < BATCH; ++b) {
        for (s = cu_seqlens[b]; s < cu_seqlens[b + 1]; ++s) {
            for (h = 0; h < HEADS_Q; ++h) {
                const double descale = q_descale[b * HEADS_KV + h / (HEADS_Q / HEADS_KV)];
                for (d = 0; d < HEAD_DIM; ++d) q_codes[Q_INDEX(s, h, d)] = e4m3fn_encode(uniform(-2.0, 2.0) / descale);
            }
            for (h = 0; h < HEADS_KV; ++h) {
                for (d = 0; d < HEAD_DIM; ++d) {
                    k_codes[KV_INDEX(s, h, d)] = e4m3fn_encode(uniform(-2.0, 2.0) / k_descale[b * HEADS_KV + h]);
                    v_codes[KV_INDEX(s, h, d)] = e4m3fn_encode(uniform(-1.0, 1.0) / v_descale[b * HEADS_KV + h]);
                }
            }
        }
    }
}

/* fp64 attention from the decoded codes, per docs/api.md: s_ij = scale * (q_i*q_descale).(k_j*
 * k_descale); ZYFA_MASK_CAUSAL with equal lengths: query i sees keys j <= i of its own sequence;
 * query head h reads kv head h / (HEADS_Q / HEADS_KV); lse = ln sum_j exp(s_ij). */
static void reference_attention(void) {
    const double scale = 1.0 / sqrt((double)HEAD_DIM);
    static double p[LONGEST];
    int b, h, i, j, d;
    for (b = 0; b < BATCH; ++b) {
        const int start = cu_seqlens[b], length = cu_seqlens[b + 1] - cu_seqlens[b];
        for (h = 0; h < HEADS_Q; ++h) {
            const int kv = h / (HEADS_Q / HEADS_KV);
            const double qd = q_descale[b * HEADS_KV + kv], kd = k_descale[b * HEADS_KV + kv];
            const double vd = v_descale[b * HEADS_KV + kv];
            for (i = 0; i < length; ++i) {
                double row_max = -INFINITY, sum = 0.0;
                for (j = 0; j <= i; ++j) {
                    double dot = 0.0;
                    for (d = 0; d < HEAD_DIM; ++d) {
                        dot += e4m3fn_decode(q_codes[Q_INDEX(start + i, h, d)]) * qd *
                               (e4m3fn_decode(k_codes[KV_INDEX(start + j, kv, d)]) * kd);
                    }
                    p[j] = scale * dot;
                    if (p[j] > row_max) row_max = p[j];
                }
                for (j = 0; j <= i; ++j) {
                    p[j] = exp(p[j] - row_max);
                    sum += p[j];
                }
                for (d = 0; d < HEAD_DIM; ++d) {
                    double acc = 0.0;
                    for (j = 0; j <= i; ++j) acc += p[j] * e4m3fn_decode(v_codes[KV_INDEX(start + j, kv, d)]) * vd;
                    reference_o[Q_INDEX(start + i, h, d)] = acc / sum;
                }
                reference_lse[(size_t)h * TOTAL + (size_t)(start + i)] = row_max + log(sum);
            }
        }
    }
}

static zyfa_tensor packed_tensor(void* data, zyfa_dtype dtype, int heads) {
    zyfa_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_batch = 0; /* ignored for packed (varlen) sequences */
    t.stride_seq = (int64_t)heads * HEAD_DIM;
    t.stride_head = HEAD_DIM;
    return t;
}

/* Runs one softmax mode and compares with the reference. The tolerances come from rounding the
 * probabilities P to e4m3 before P.V (3 mantissa bits), the only inexact step besides fp32:
 *  - output: a rounded probability is off by at most -8%..+6.4% (Lean P: code linear in log2 p,
 *    then rounded to an integer code) or +-3.2% (EXACT: round-to-nearest e4m3), RMS about 3% and
 *    2.7%, and errors of independent keys partly cancel in the weighted average while the row
 *    maximum is exact (it maps to 2^8). The relative RMS error over all outputs is therefore
 *    well under the per-probability RMS; 5% bounds it with margin for short rows.
 *  - lse: exp(lse) is a sum of rounded probabilities, so it carries at most their worst relative
 *    error: |ln 0.92| = 0.084 for Lean P, ln 1.033 = 0.032 for EXACT, plus fp32 noise.
 *  - the length-1 sequence sees only itself: probability exactly 1 in every mode, so its output is
 *    v * v_descale up to fp32 rounding (relative 1e-5). */
static int run_and_compare(zyfa_context* ctx, zyfa_softmax softmax, const char* mode, double lse_tolerance) {
    const double output_rms_tolerance = 0.05;
    const double single_key_tolerance = 1e-5;
    zyfa_attn_params p;
    zyfa_tensor q, k, v, out;
    zyfa_status status;
    const char* kernel;
    double error_sq = 0.0, reference_sq = 0.0, relative_rms, worst_lse = 0.0;
    size_t n;
    int h, d, failed = 0;

    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL;
    p.batch = BATCH;
    p.seqlen_q = LONGEST;
    p.seqlen_k = LONGEST;
    p.heads_q = HEADS_Q;
    p.heads_kv = HEADS_KV;
    p.head_dim_qk = HEAD_DIM;
    p.head_dim_v = HEAD_DIM;
    p.softmax_scale = 0.0f; /* 1/sqrt(head_dim) */
    p.softmax = softmax;
    p.cu_seqlens_q = cu_seqlens;
    p.cu_seqlens_k = cu_seqlens;
    p.q_descale = q_descale;
    p.k_descale = k_descale;
    p.v_descale = v_descale;
    p.lse = lse;
    q = packed_tensor(q_codes, ZYFA_DTYPE_FP8_E4M3FN, HEADS_Q);
    k = packed_tensor(k_codes, ZYFA_DTYPE_FP8_E4M3FN, HEADS_KV);
    v = packed_tensor(v_codes, ZYFA_DTYPE_FP8_E4M3FN, HEADS_KV);
    out = packed_tensor(o, ZYFA_DTYPE_FP32, HEADS_Q);

    /* NaN everywhere first, so a row the library fails to write is caught. */
    for (n = 0; n < sizeof o / sizeof o[0]; ++n) o[n] = NAN;
    for (n = 0; n < sizeof lse / sizeof lse[0]; ++n) lse[n] = NAN;

    status = zyfa_attn_supported(ctx, &p, &q, &k, &v, &out);
    if (status != ZYFA_SUCCESS) {
        fprintf(stderr, "%s: zyfa_attn_supported: %s (%s)\n", mode, zyfa_status_string(status), zyfa_last_error_message());
        return 0;
    }
    kernel = zyfa_attn_kernel_name(ctx, &p, &q, &k, &v, &out);
    if (kernel == NULL) {
        fprintf(stderr, "%s: zyfa_attn_kernel_name returned NULL for a supported request\n", mode);
        return 0;
    }
    status = zyfa_attn_fwd(ctx, &p, &q, &k, &v, &out, NULL);
    if (status != ZYFA_SUCCESS) {
        fprintf(stderr, "%s: zyfa_attn_fwd: %s (%s)\n", mode, zyfa_status_string(status), zyfa_last_error_message());
        return 0;
    }

    for (n = 0; n < sizeof o / sizeof o[0]; ++n) {
        const double error = (double)o[n] - reference_o[n];
        if (!isfinite(o[n])) {
            fprintf(stderr, "%s: output element %zu not written or not finite (%g)\n", mode, n, (double)o[n]);
            return 0;
        }
        error_sq += error * error;
        reference_sq += reference_o[n] * reference_o[n];
    }
    relative_rms = sqrt(error_sq / reference_sq);
    for (n = 0; n < sizeof lse / sizeof lse[0]; ++n) {
        const double error = fabs((double)lse[n] - reference_lse[n]);
        if (!(error <= worst_lse)) worst_lse = error; /* NaN propagates into the maximum */
    }
    /* The length-1 sequence is row cu_seqlens[2] of the packed tensors. */
    for (h = 0; h < HEADS_Q; ++h) {
        for (d = 0; d < HEAD_DIM; ++d) {
            const size_t at = Q_INDEX(cu_seqlens[2], h, d);
            if (fabs((double)o[at] - reference_o[at]) > single_key_tolerance * fabs(reference_o[at])) {
                fprintf(stderr, "%s: single-key row, head %d dim %d: %.9g, expected %.9g\n", mode, h, d,
                        (double)o[at], reference_o[at]);
                failed = 1;
            }
        }
    }
    printf("%-5s kernel %-28s output relative RMS error %.4f (limit %.2f), lse max error %.4f (limit %.3f)\n",
           mode, kernel, relative_rms, output_rms_tolerance, worst_lse, lse_tolerance);
    if (!(relative_rms < output_rms_tolerance)) failed = 1;
    if (!(worst_lse < lse_tolerance)) failed = 1;
    return !failed;
}

int main(void) {
    zyfa_context_options options;
    zyfa_context* ctx = NULL;
    zyfa_status status;
    int ok = 1;

    /* The header and the loaded library agree; before 1.0 the minor must match too. */
    printf("zyfa header %d.%d.%d, library %s (%s)\n", ZYFA_VERSION_MAJOR, ZYFA_VERSION_MINOR, ZYFA_VERSION_PATCH,
           zyfa_version_string(), zyfa_build_info());
    if (zyfa_version() / 100 != ZYFA_VERSION_NUMBER / 100) {
        fprintf(stderr, "library version %u does not match header %d\n", zyfa_version(), ZYFA_VERSION_NUMBER);
        return 1;
    }
    if (!check_codec()) return 1;

    zyfa_context_options_init(&options, sizeof options);
    options.backend = ZYFA_BACKEND_CPU;
    status = zyfa_context_create(&options, &ctx);
    if (status != ZYFA_SUCCESS || ctx == NULL) {
        fprintf(stderr, "zyfa_context_create: %s (%s)\n", zyfa_status_string(status), zyfa_last_error_message());
        return 1;
    }
    if (zyfa_context_backend(ctx) != ZYFA_BACKEND_CPU || strcmp(zyfa_context_device_name(ctx), "cpu") != 0) {
        fprintf(stderr, "context reports backend %d device '%s', expected the CPU\n", (int)zyfa_context_backend(ctx),
                zyfa_context_device_name(ctx));
        ok = 0;
    }

    make_inputs();
    reference_attention();
    /* AUTO is LEAN for FP8 inputs (docs/api.md). */
    ok &= run_and_compare(ctx, ZYFA_SOFTMAX_AUTO, "AUTO", 0.09);
    ok &= run_and_compare(ctx, ZYFA_SOFTMAX_EXACT, "EXACT", 0.035);

    zyfa_context_destroy(ctx);
    printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
