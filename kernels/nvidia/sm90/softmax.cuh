// The online softmax of the warp-specialised sm_90a kernel's consumers (attention_fwd_ws.cuh): one
// key block's scores, in the S accumulator registers, -> P packed into the A operand of the P.V
// wgmma, and each row's running maximum m, sum l, O's scale exponent and the rescale that O takes.
// The numerics are the CPU model's step by step (attention_fwd_common.cuh).
#ifndef ZYFA_KERNELS_NVIDIA_SM90_SOFTMAX_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_SOFTMAX_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "common/key_bias.h"
#include "common/lean_anchor.h"
#include "common/lean_p.h"
#include "common/online_softmax.h"
#include "nvidia/primitives/convert.cuh"
#include "nvidia/sm90/tile_context.cuh"
#include "nvidia/sm90/traits.cuh"

namespace zyfa {
namespace nvidia {

// The magic-number sum of a Lean P code before its cap (low byte = round(clamp(y, 0, 128))):
// numerics::lean_p_uncapped_bits_from_saturated (kernels/common/lean_p.h, the algebra and its CPU
// test) after the saturating FMA it expects: two instructions.
__device__ __forceinline__ uint32_t lean_code_bits(float s, float scale8_div128, float bias_div128) {
    float y128;  // y / 128, saturated to [0, 1] (NaN -> +0)
    asm("fma.rn.sat.f32 %0, %1, %2, %3;" : "=f"(y128) : "f"(s), "f"(scale8_div128), "f"(bias_div128));
    return numerics::lean_p_uncapped_bits_from_saturated(y128);
}

// Two magic-number sums -> their codes in the low bytes of two 16-bit lanes, uncapped
// (numerics::lean_p_code_lanes: for rows where numerics::lean_p_cap_unreachable holds): one PRMT.
__device__ __forceinline__ uint32_t code_lanes(uint32_t lo, uint32_t hi) { return __byte_perm(lo, hi, 0x5410); }

// Two magic-number sums -> their codes capped at 126 in the low bytes of two 16-bit lanes
// (numerics::lean_p_capped_code_lanes): one PRMT and one min.u16x2 (VIMNMX.U16x2) per two codes,
// where a min per code cost 32 FMNMX per row block.
__device__ __forceinline__ uint32_t capped_code_lanes(uint32_t lo, uint32_t hi) {
    uint32_t capped;
    asm("min.u16x2 %0, %1, %2;" : "=r"(capped) : "r"(__byte_perm(lo, hi, 0x5410)), "r"(0x007E007Eu));
    return capped;
}

// The key-bias kernels' Lean P FMA constant for a key with bias z (log2 units), from the row's
// constant already divided by 128: fma(z, 2^-4, bias / 128) is numerics::lean_p_bias_with_key_bias
// (bias + 8 z) divided by 128 exactly (scaling by a power of two commutes with the one rounding, as
// the row constant's own division does), so the codes are the CPU model's: one FFMA per score.
__device__ __forceinline__ float lean_code_constant_with_key_bias(float bias_div128, float z) {
    return __fmaf_rn(z, 0x1p-4f, bias_div128);
}

// 2^x for the rescale alpha = 2^(m_old - m_new) <= 1: one MUFU.EX2 where exp2f adds range handling
// (about 2 ulp, within the bounds against the CPU model's exp2; results below 2^-126 flush to 0,
// a contribution below fp32's resolution of the row).
__device__ __forceinline__ float exp2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// The online softmax of one block for a consumer thread's two rows: block `index`'s scores in s ->
// its P in `out`, and m, l, rescale, acc_exponent. It refers to consumer_warpgroup's variables,
// each by reference as the lambda it replaces captured them (sm90/mainloop.cuh says why). The
// choice between the masked and the unmasked copy stays a lambda there (run_softmax): in a member
// function here the compiler merged the two computations of the block's first key and laid the
// branches out the other way round.
template <class Traits>
struct OnlineSoftmax {
    static constexpr InKind IN = Traits::kIn;
    static constexpr PMode PM = Traits::kPMode;
    static constexpr bool kFp8 = Traits::kFp8;
    static constexpr bool kInt8 = Traits::kInt8;  // s holds int32 scores (kernels/common/int8_qk.h)
    static constexpr int kKeys = Traits::kKeys, kTiles = Traits::kTiles;
    static constexpr int kHalves = kKeys / numerics::kInt8KeyBlock;  // INT8: k descale blocks per key block
    using ScoreReg = typename Traits::ScoreReg;
    static constexpr bool kRowSumByMma = Traits::kRowSumByMma;
    static constexpr bool kOnePBuffer = Traits::kOnePBuffer;
    static constexpr bool kLazyAnchor = Traits::kLeanLazyAnchor;
    static constexpr bool kKeyBias = Traits::kKeyBias;
    static constexpr float kNegInf = -__builtin_huge_valf();
    // The exponent argument s * c - m of the exact exponential (EXACT). The CPU model rounds the
    // product and the difference (Twice). One FFMA (Fused) differs from it by at most half an ulp
    // of s * c, which for |m| < kFusedExponentLimit is below 2^-12 in the exponent: a relative
    // 1.7e-4 in p, under the rounding of P to BF16, FP16 or e4m3 (a code flips only within that
    // of a rounding boundary, as ex2's own ulps already make some flip: the P-code tests' EXACT
    // bounds). FP8 also folds P's scale 2^k into the addend, k - m rounded once per row (another
    // 2^-12 at most), so ex2 returns p * 2^k and the multiply per score goes. A row with a larger
    // (or non-finite) maximum keeps the model's form: the product's residual of a huge score would
    // itself reach the exponent (2^residual overflows). Every EXACT kernel but INT8's and the
    // key-bias ones, in the blocks every row of the tile sees; in the masked ones (a tile has one or
    // two) only 16-bit at head_dim_v <= 128, where the second pass fits twice in the registers
    // (FP8 at 64, 128 and 256 spilled with both forms compiled there).
    enum class ExponentForm { Twice, Fused, PerRow };
    template <ExponentForm F>
    struct ExponentTag {
        static constexpr ExponentForm value = F;
    };
    static constexpr bool kFusedExponent = !kInt8 && !kKeyBias && PM == PMode::Exact;
    // ... in masked blocks too where both forms then fit (16-bit, head_dim_v <= 128).
    static constexpr bool kFusedExponentMasked = kFusedExponent && !kFp8 && Traits::kDv <= 128;
    static constexpr float kFusedExponentLimit = 4096.0f;
    // LEAN's codes without their cap at 126 where every row of the warp has a finite scale m with
    // |m| < 2^19 (numerics::lean_p_cap_unreachable: the cap cannot act there): one min.u16x2 per
    // two codes less, in the blocks every row sees. Head dim 128 only: at 64 the same change ran
    // slower and at 256 no faster (H200 A/B, docs/hopper-kernel-notes.md); the INT8 and key-bias
    // kernels keep the cap (their FMA constants are not lean_p_bias's).
    static constexpr bool kUncappedCodes =
        PM == PMode::Lean && !kInt8 && !kKeyBias && Traits::kDqk == 128 && Traits::kDv == 128;
    template <bool kCap>
    using CapTag = std::integral_constant<bool, kCap>;

    // The 16-bit A fragment (k16) of P: out[n / 2][2 (n % 2) + rr] holds the pair of S tile n, row rr.
    template <class POut>
    static __device__ __forceinline__ uint32_t& p16_fragment(POut& out, int n, int rr) {
        return out[n / 2][2 * (n % 2) + rr];
    }

    const int& block_begin;                       // the tile's first key block
    const int& whole_begin;                       // keys every row of the tile sees:
    const int& whole_end;                         //   [whole_begin, whole_end)
    const int (&row_first_key)[2];                // the keys each of the thread's two rows sees
    const int (&row_end_key)[2];
    ScoreReg (&s)[Traits::kScores];               // the block's scores (kOnePBuffer: then its probabilities)
    const float& scale_log2;                      // |softmax_scale * descales| * log2(e)
    const float& scale8_div128;                   // lean_code_bits' operand
    const float& lean_centre;
    const int& max_block_exponent;
    float (&m)[2];                                // the running maximum of s * c, log2 units (kLazyAnchor: the anchor)
    float (&running_max)[2];                      // kLazyAnchor: the running maximum (else unused)
    float (&l)[2];                                // the running sum
    float (&rescale)[2];                          // what O's accumulator takes after this block
    float (&acc_exponent)[2];                     // O's accumulator is acc * 2^acc_exponent
    // The INT8 Q/K mode only: softmax_scale * q_descale_per_token of the two rows, this (batch, kv
    // head)'s k descales per 64 keys (null = 1), and the sequence's key count (entries end there).
    const float (&q_scale)[2];
    const float* k_block_descale;
    const int& key_count;
    // The key-bias kernels (kKeyBias): this (batch, query head)'s biases, indexed by the key's place
    // in its sequence (null otherwise).
    const float* key_bias_row;

    // INT8: the biased fp32 of int32 score i (one IADD, exact; numerics::int8_score_biased).
    __device__ __forceinline__ float biased_score(int i) const {
        if constexpr (kInt8) {
            return numerics::int8_score_biased(static_cast<int32_t>(s[i]));
        } else {
            return 0.0f;
        }
    }

    // Online softmax of block `index` (scores in s) -> its P in `out` (kOnePBuffer: its
    // probabilities in s, for pack_probabilities), m, l, rescale.
    template <class POut, class MaskedTagT>
    __device__ __forceinline__ void softmax_block(int index, POut& out, MaskedTagT masked_tag) const {
        constexpr bool kMasked = decltype(masked_tag)::value;
        if constexpr (kMasked) sass_marker<3>();
        const int block = block_begin + index * kKeys;
        auto visible = [&](int rr, int n, int e) {
            if constexpr (!kMasked) return true;
            const int key = block + 8 * n + 2 * (lane_now() % 4) + e;
            return key >= row_first_key[rr] && key < row_end_key[rr];
        };
        // Two passes over the thread's two rows: first both maxima and what follows from them
        // (the latency-bound chain: max tree, quad shuffles, exponent, bias), then both rows'
        // probabilities, so that the chains of the two rows overlap.
        float m_new[2], alpha[2], exponent[2], bias[2];
        // The key-bias kernels: the block's biases in log2 units, z for key 8n + 2 (lane % 4) + e of
        // the block, shared by the thread's two rows (common/key_bias.h); the maximum sees
        // t = fma(s, c, z). EXACT exponentiates t - m: t replaces s at once, so no z stays live.
        // LEAN's constant takes 8z: z[n][e] is kept for the second pass. 0 past the sequence:
        // those keys are never visible.
        [[maybe_unused]] float z[kKeyBias && PM == PMode::Lean ? kTiles : 1][2];
        if constexpr (kKeyBias) {
            const int key0 = block + 2 * (lane_now() % 4);
#pragma unroll
            for (int n = 0; n < kTiles; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int key = key0 + 8 * n + e;
                    const float zz = !kMasked || key < key_count ? numerics::key_bias_log2(key_bias_row[key]) : 0.0f;
                    if constexpr (PM == PMode::Lean) {
                        z[n][e] = zz;
                    } else {
#pragma unroll
                        for (int rr = 0; rr < 2; ++rr)
                            s[4 * n + 2 * rr + e] = numerics::biased_score_log2(s[4 * n + 2 * rr + e], scale_log2, zz);
                    }
                }
        }
        // INT8: the factors of each row and 64-key half, in numerics::score_scale_log2's order
        // ((softmax_scale * q_descale) * k_descale) * log2(e), and 8 times them; the LEAN biases
        // with the score's 1.5 * 2^23 folded in follow below.
        [[maybe_unused]] float half_log2[2][kHalves], half_log2x8[2][kHalves], half_bias[2][kHalves];
        if constexpr (kInt8) {
#pragma unroll
            for (int h = 0; h < kHalves; ++h) {
                const int first = block + h * numerics::kInt8KeyBlock;
                const float kd = k_block_descale && first < key_count ? k_block_descale[first / numerics::kInt8KeyBlock]
                                                                      : 1.0f;
#pragma unroll
                for (int rr = 0; rr < 2; ++rr) {
                    half_log2[rr][h] = (q_scale[rr] * kd) * numerics::kLog2e;
                    half_log2x8[rr][h] = 8.0f * half_log2[rr][h];
                }
            }
        }
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            // max(s * c) = max(s) * c for c >= 0 (rounding is monotonic; c < 0 was turned into
            // -Q and |c| in ConsumerMainloop's set-up): one multiply per row instead of one per score. Four partial
            // maxima, then a tree: max is exact in any order, and four independent chains hide
            // the FMNMX latency a single chain would expose. It keeps NaN
            // (kernels/common/row_max.h), so this holds for NaN and infinite scores and scales
            // too, except c = 0 with a raw -inf beside finite scores (max(s) * c = 0, s * c NaN):
            // 16-bit inputs have no descale, so c != 0 there, and FP8 scores are never infinite.
            float block_max;
            if constexpr (kInt8) {
                // Per half: max(s * c) = max(s) * c for c >= 0 and min(s) * c for c < 0 (rounding is
                // monotonic; a NaN c gives NaN either way), s the exact int32 score as fp32.
                // When no factor of the warp is negative (zyfa_quantize_int8's descales never are)
                // only the maxima are scanned: one IMNMX per score instead of two.
                block_max = kNegInf;
#pragma unroll
                for (int h = 0; h < kHalves; ++h) {
                    const float c = half_log2[rr][h];
                    int32_t hi = INT32_MIN, lo = INT32_MAX;
                    bool seen = false;
                    auto scan = [&](auto with_min) {
#pragma unroll
                        for (int n = h * (kTiles / kHalves); n < (h + 1) * (kTiles / kHalves); ++n)
#pragma unroll
                            for (int e = 0; e < 2; ++e)
                                if (visible(rr, n, e)) {
                                    const int32_t v = static_cast<int32_t>(s[4 * n + 2 * rr + e]);
                                    hi = max(hi, v);
                                    if constexpr (decltype(with_min)::value) lo = min(lo, v);
                                    seen = true;
                                }
                    };
                    if (__all_sync(0xffffffffu, !(c < 0.0f))) {
                        scan(std::false_type{});
                    } else {
                        scan(std::true_type{});
                    }
                    const int32_t pick = c < 0.0f ? lo : hi;
                    const float half_max = numerics::int8_score_value(numerics::int8_score_biased(pick)) * c;
                    if (seen) block_max = numerics::max_keep_nan(block_max, half_max);
                }
            } else {
                // value(n, e): the score of the row's key 8n + 2 (lane % 4) + e that the maximum takes
                auto float_max = [&](auto value) {
                    float part[4];
#pragma unroll
                    for (int i = 0; i < 4; ++i) part[i] = kNegInf;
#pragma unroll
                    for (int n = 0; n < kTiles; ++n)
#pragma unroll
                        for (int e = 0; e < 2; ++e)
                            if (visible(rr, n, e)) {
                                part[(2 * n + e) % 4] = numerics::max_keep_nan(part[(2 * n + e) % 4], value(n, e));
                            }
                    return numerics::max_keep_nan(numerics::max_keep_nan(part[0], part[1]),
                                                  numerics::max_keep_nan(part[2], part[3]));
                };
                // What the maximum takes: the raw score, or in the key-bias kernels the biased score
                // t in log2 units (EXACT holds it in s already; LEAN forms it here, its codes need s).
                auto max_value = [&](int n, int e) {
                    if constexpr (kKeyBias && PM == PMode::Lean) {
                        return numerics::biased_score_log2(s[4 * n + 2 * rr + e], scale_log2, z[n][e]);
                    } else {
                        return static_cast<float>(s[4 * n + 2 * rr + e]);
                    }
                };
                float extreme;
                // (LEAN's key-bias kernel keeps the float maximum: with the integer one ptxas spilled
                // 8 bytes in its loop, nvcc 13.0.)
                if constexpr (!kMasked && !(kKeyBias && PM == PMode::Lean)) {
                    // The scores' maximum from their bit patterns as signed integers: among
                    // fp32 values >= +0 (and the matrix unit's and the FMA's NaN, 0x7FFFFFFF) the
                    // integer order is the float order and every negative value orders below them,
                    // so a nonnegative integer maximum is the float maximum, NaN kept
                    // (max_keep_nan). Three-input integer max (VIMNMX3) takes two scores per
                    // instruction where FMNMX takes one. A warp in which some row's scores are all
                    // negative takes the float maximum.
                    int part[4];
#pragma unroll
                    for (int i = 0; i < 4; ++i) part[i] = INT_MIN;
#pragma unroll
                    for (int n = 0; n < kTiles; ++n)
#pragma unroll
                        for (int e = 0; e < 2; ++e)
                            part[(2 * n + e) % 4] = max(part[(2 * n + e) % 4], __float_as_int(max_value(n, e)));
                    const int top = max(max(part[0], part[1]), max(part[2], part[3]));
                    if (__all_sync(0xFFFFFFFFu, top >= 0)) {
                        extreme = __int_as_float(top);
                    } else {
                        sass_marker<5>();  // (ws-step-sass.py leaves the rare path out of a step's count)
                        extreme = float_max(max_value);
                        sass_marker<6>();
                    }
                } else {
                    extreme = float_max(max_value);
                }
                // -inf when this thread sees nothing of the block (rather than the identity times c,
                // NaN for c = 0 or NaN)
                bool any_visible = true;
                if constexpr (kMasked) {
                    any_visible = false;
#pragma unroll
                    for (int n = 0; n < kTiles; ++n)
#pragma unroll
                        for (int e = 0; e < 2; ++e) any_visible = any_visible || visible(rr, n, e);
                }
                block_max = any_visible ? (kKeyBias ? extreme : extreme * scale_log2) : kNegInf;
            }
            block_max = quad_max(block_max);
            if constexpr (kLazyAnchor) {  // m is the anchor; k is constant (common/lean_anchor.h)
                // A row that sees nothing of the block has block_max = -inf: M holds by itself.
                running_max[rr] = numerics::max_keep_nan(running_max[rr], block_max);
                m_new[rr] = numerics::lean_anchor_update(m[rr], running_max[rr], block_max);
                alpha[rr] = numerics::anchor_rescale(m[rr], m_new[rr], [](float x) { return exp2_approx(x); });
            } else {
                m_new[rr] = numerics::max_keep_nan(m[rr], block_max);
                alpha[rr] = numerics::running_max_rescale(m[rr], m_new[rr], [](float x) { return exp2_approx(x); });
            }
            // the model's k (integral): P is scaled by 2^k before rounding
            if constexpr (PM == PMode::Lean) {
                constexpr auto kFormat = numerics::Fp8Format::E4M3FN;
                exponent[rr] = kLazyAnchor ? static_cast<float>(numerics::lean_anchor_exponent(kFormat))
                                           : numerics::block_scale_exponent_integral(m_new[rr], block_max,
                                                                                     max_block_exponent, kFormat);
                bias[rr] = numerics::lean_p_bias(m_new[rr], exponent[rr], lean_centre, numerics::Fp8Format::E4M3FN);
                if constexpr (kInt8) {
#pragma unroll
                    for (int h = 0; h < kHalves; ++h)
                        half_bias[rr][h] = numerics::int8_lean_p_bias(bias[rr], half_log2x8[rr][h]) * 0x1p-7f;
                }
            } else {
                exponent[rr] = kFp8 ? numerics::p_scale_base_exponent(numerics::Fp8Format::E4M3FN) : 0.0f;
                bias[rr] = 0.0f;
            }
        }
        // The second pass: both rows' probabilities (or codes) from m_new and what followed from it,
        // P's fragments, and each row's m, l, rescale; `form` picks the exponent argument's form.
        [[maybe_unused]] bool fused_row[2] = {false, false};
        auto finish = [&](auto form, auto cap) {
            [[maybe_unused]] constexpr ExponentForm kForm = decltype(form)::value;
            [[maybe_unused]] constexpr bool kCap = decltype(cap)::value;
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) {
                float row_sum = 0.0f;
                // S tile n's P pair (FP8 LEAN: in the low 16 bits; FP8 EXACT: n even, tiles n and n + 1)
                [[maybe_unused]] uint32_t pairs[kTiles];
                [[maybe_unused]] float p8[2][2];  // FP8 EXACT: tiles n - 1 and n's probabilities at P's scale
                if constexpr (PM == PMode::Lean) {
                    // code * 2^-120 as an fp32: every value is a multiple of 2^-129 below 2^-111, so
                    // up to 128 of them sum exactly in any order; four partial sums hide the FADD latency.
                    // (Unused, and removed by the compiler, when the P.V wgmma sums the rows.)
                    float sums[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                    for (int n = 0; n < kTiles; ++n) {
                        uint32_t bits[2];  // magic-number sums: low byte = the code
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            if constexpr (kInt8) {  // the bias removal folded into the FMA's constant
                                const int h = n / (kTiles / kHalves);
                                bits[e] = visible(rr, n, e) ? lean_code_bits(biased_score(4 * n + 2 * rr + e),
                                                                             half_log2x8[rr][h] * 0x1p-7f, half_bias[rr][h])
                                                            : 0x4B400000u;
                            } else {
                                float constant = bias[rr] * 0x1p-7f;
                                if constexpr (kKeyBias) constant = lean_code_constant_with_key_bias(constant, z[n][e]);
                                bits[e] = visible(rr, n, e) ? lean_code_bits(s[4 * n + 2 * rr + e], scale8_div128, constant)
                                                            : 0x4B400000u;
                            }
                            sums[(2 * n + e) % 4] += numerics::bits_float(bits[e] << 20);
                        }
                        pairs[n] = kCap ? capped_code_lanes(bits[0], bits[1]) : code_lanes(bits[0], bits[1]);
                    }
                    if constexpr (!kRowSumByMma) {
                        row_sum = (sums[0] + sums[1]) + (sums[2] + sums[3]);
                        row_sum = quad_sum(row_sum) * 0x1p120f * numerics::exp2_integral(-exponent[rr]);
                    }
                } else {
                    const float up = numerics::exp2_integral(exponent[rr]);
                    [[maybe_unused]] const bool fused =
                        kForm == ExponentForm::Fused || (kForm == ExponentForm::PerRow && fused_row[rr]);
                    // FP8, fused: P's scale 2^k joins the FMA's addend (k - m, rounded once per row),
                    // so ex2 gives p * 2^k at once and the row sum of those takes 2^-k once.
                    const bool scaled_exp2 = kFp8 && fused;
                    [[maybe_unused]] const float addend = scaled_exp2 ? exponent[rr] - m_new[rr] : -m_new[rr];
#pragma unroll
                    for (int n = 0; n < kTiles; ++n) {
                        float p[2];
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            // s * c - m (ExponentForm), then one MUFU.EX2: ex2's 2 ulp are within
                            // the bounds against the CPU.
                            if constexpr (kInt8) {  // the exact score times its (row, half) factor
                                const float x = numerics::int8_score_value(biased_score(4 * n + 2 * rr + e)) *
                                                half_log2[rr][n / (kTiles / kHalves)];
                                p[e] = visible(rr, n, e) ? exp2_approx(x - m_new[rr]) : 0.0f;
                            } else {
                                const float score = s[4 * n + 2 * rr + e];
                                // the key-bias kernels hold the biased score t (log2 units) in s
                                const float x = kKeyBias ? score - m_new[rr]
                                                : fused  ? __fmaf_rn(score, scale_log2, addend)
                                                         : score * scale_log2 - m_new[rr];
                                p[e] = visible(rr, n, e) ? exp2_approx(x) : 0.0f;
                            }
                            row_sum += p[e];  // EXACT: the denominator of unrounded probabilities
                        }
                        if constexpr (kFp8) {  // e4m3, two tiles at a time: pairs[n - 1] holds both
                            p8[n % 2][0] = scaled_exp2 ? p[0] : p[0] * up;
                            p8[n % 2][1] = scaled_exp2 ? p[1] : p[1] * up;
                            if (n % 2 == 1) pairs[n - 1] = pack_e4m3x4(p8[0][0], p8[0][1], p8[1][0], p8[1][1]);
                        } else if constexpr (kOnePBuffer) {  // P's buffer is still read by P.V
                            s[4 * n + 2 * rr] = p[0];
                            s[4 * n + 2 * rr + 1] = p[1];
                        } else {
                            pairs[n] = pack_p16<IN>(p[0], p[1]);
                        }
                    }
                    if (scaled_exp2) row_sum *= numerics::exp2_integral(-exponent[rr]);  // exact: a power of two
                    row_sum = quad_sum(row_sum);
                }
                // A fragments: 16-bit (k16) out[n/2][2*(n%2) + rr] = the pair of tile n; e4m3 (k32)
                // out[n/4][2*((n%4)/2) + rr] = the pairs of tiles n, n+1 (n even).
#pragma unroll
                for (int n = 0; n < kTiles; ++n) {
                    if constexpr (PM == PMode::Lean) {  // codes in the low bytes of 16-bit lanes
                        if (n % 2 == 0) out[n / 4][2 * ((n % 4) / 2) + rr] = __byte_perm(pairs[n], pairs[n + 1], 0x6420);
                    } else if constexpr (kFp8) {
                        if (n % 2 == 0) out[n / 4][2 * ((n % 4) / 2) + rr] = pairs[n];  // tiles n, n + 1
                    } else if constexpr (!kOnePBuffer) {
                        p16_fragment(out, n, rr) = pairs[n];
                    }
                }
                // a row that sees nothing of the block keeps m, l and acc
                const bool active = kMasked ? max(row_first_key[rr], block) < min(row_end_key[rr], block + kKeys) : true;
                rescale[rr] = 1.0f;
                if (active) {
                    l[rr] = numerics::running_sum_update(l[rr], alpha[rr], row_sum);
                    m[rr] = m_new[rr];
                    if constexpr (kLazyAnchor) {
                        // k is a constant, acc_exponent holds it from the start (consumer_warpgroup):
                        // the rescale is alpha, exactly 1 while the anchor holds
                        rescale[rr] = alpha[rr];
                    } else {
                        rescale[rr] = numerics::scaled_accumulator_rescale(alpha[rr], exponent[rr], acc_exponent[rr]);
                        acc_exponent[rr] = exponent[rr];
                    }
                }
            }
        };
        // EXACT: fused where every row of the warp allows it, else chosen per row (rare:
        // huge or non-finite maxima), so that no row's result depends on its neighbours.
        if constexpr (kMasked ? kFusedExponentMasked : kFusedExponent) {
#pragma unroll
            for (int rr = 0; rr < 2; ++rr) fused_row[rr] = fabsf(m_new[rr]) < kFusedExponentLimit;
            if (__all_sync(0xFFFFFFFFu, fused_row[0] && fused_row[1])) {
                finish(ExponentTag<ExponentForm::Fused>{}, CapTag<true>{});
            } else {
                sass_marker<5>();
                finish(ExponentTag<ExponentForm::PerRow>{}, CapTag<true>{});
                sass_marker<6>();
            }
        } else if constexpr (kUncappedCodes && !kMasked) {
            if (__all_sync(0xFFFFFFFFu, numerics::lean_p_cap_unreachable(m_new[0]) &&
                                            numerics::lean_p_cap_unreachable(m_new[1]))) {
                finish(ExponentTag<ExponentForm::Twice>{}, CapTag<false>{});
            } else {
                sass_marker<5>();
                finish(ExponentTag<ExponentForm::Twice>{}, CapTag<true>{});
                sass_marker<6>();
            }
        } else {
            finish(ExponentTag<ExponentForm::Twice>{}, CapTag<true>{});
        }
        if constexpr (kMasked) sass_marker<4>();
    }

    // kOnePBuffer: the probabilities softmax_block left in s -> P's A fragments in `out`, once
    // the P.V that read `out` is done.
    template <class POut>
    __device__ __forceinline__ void pack_probabilities(POut& out) const {
        static_assert(kOnePBuffer, "the other instances pack in softmax_block");
#pragma unroll
        for (int rr = 0; rr < 2; ++rr)
#pragma unroll
            for (int n = 0; n < kTiles; ++n) {
                p16_fragment(out, n, rr) = pack_p16<IN>(s[4 * n + 2 * rr], s[4 * n + 2 * rr + 1]);
            }
    }
};

}  // namespace nvidia
}  // namespace zyfa

#endif
