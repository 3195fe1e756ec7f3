/* What the C tests of the quantisation API share (test_quantize_api.c, test_k_smoothing_api.c):
 * code decoding, BF16 conversion and deterministic inputs; the CPU context is the unit tests'
 * unit_cpu_context (tests/unit/unit_support.h). */
#ifndef ZYFA_TESTS_QUANT_API_TEST_SUPPORT_H
#define ZYFA_TESTS_QUANT_API_TEST_SUPPORT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../unit/unit_support.h"
#include "zyfa.h"

/* e4m3fn (bias 7) or e4m3fnuz (bias 8) code -> value; NaN codes are not expected here. */
static inline double decode_e4m3(uint8_t code, int bias) {
    const int e = (code >> 3) & 0xF;
    const int m = code & 0x7;
    const double magnitude = e == 0 ? ldexp(m, -bias - 2) : ldexp(8 + m, e - bias - 3);
    return (code & 0x80) ? -magnitude : magnitude;
}

/* float -> bf16 with round to nearest even (finite inputs) and back. */
static inline uint16_t to_bf16(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}
static inline float from_bf16(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* Deterministic roughly normal values: the sum of four uniforms, centred. */
static inline float pseudo_normal(uint32_t* state) {
    float sum = 0.0f;
    for (int i = 0; i < 4; ++i) {
        *state = *state * 1664525u + 1013904223u;
        sum += (float)(*state >> 8) / (float)(1u << 24);
    }
    return (sum - 2.0f) * 1.7320508f;
}

#endif
