// The choices that decide the bits of an attention kernel's output, as parameters, so that the
// CPU backend reproduces each GPU kernel's numerics exactly. Defaults are what the kernels use.
#pragma once

#include <limits>

#include "common/block_scale.h"
#include "common/key_block.h"
#include "common/lean_anchor.h"
#include "common/lean_p.h"
#include "core/problem.hpp"

namespace zyfa {
namespace cpu {

enum class SoftmaxScheme {
    Naive,  // baseline (not a mode): p = exp2(t) rounded straight to FP8; denominator unrounded p
    Exact,  // zyfa EXACT: exp2 in fp32; FP8: p * 2^8 rounded to e4m3 (RNE); denominator unrounded p
    Lean,   // zyfa LEAN (ZYFA): Lean P codes, per-block 2^k scaling, denominator of rounded p
};

struct NumericsModel {
    SoftmaxScheme scheme = SoftmaxScheme::Exact;
    int key_block = numerics::kKeyBlock;  // keys per online-softmax step (the GPU kernels' BLOCK_N)
    // Lean P
    float lean_centre = numerics::kLeanPCentre;
    numerics::FloatToIntRounding rounding = numerics::FloatToIntRounding::NearestEven;
    // LEAN's two other techniques, separately switchable for ablations. Without block scaling
    // every block uses 2^8, as EXACT does; without the rounded row sum the denominator is the sum
    // of the unrounded exp2(t).
    bool block_scaling = true;
    bool rounded_row_sum = true;
    int max_block_exponent = numerics::kBlockScaleMaxExponent;
    // Lean P codes 1..7 are e4m3 subnormals; true maps them to 0 (an accuracy study only: the
    // kernels keep them, see common/lean_p.h and docs/accuracy.md).
    bool flush_subnormal_codes = false;
    // Two more studies of where LEAN's error comes from (docs/accuracy.md, "LEAN versus EXACT on
    // real activations"); no kernel has either, and the defaults leave LEAN's bits unchanged.
    // Probabilities with t = s * scale_log2 - m >= lean_exact_p_from (log2 units, 0 at the running
    // maximum) are exp2(t) scaled by the block's 2^k and rounded to FP8 (RNE) instead of read from
    // the Lean P code: -inf replaces every code (Lean P's piecewise-linear law removed, block
    // scaling and rounded row sum kept), +inf none.
    float lean_exact_p_from = std::numeric_limits<float>::infinity();
    // Each block's own maximum on a power of two: the block exponent k plus the fractional part of
    // the block's gap below the running maximum, removed by an fp32 multiply (2^-k * 2^-fraction).
    bool lean_fractional_block_exponent = false;
    // LEAN's P scale: block_scale.h's per-block exponent (the 64-key instance), or the 128-key
    // instance's lazy anchor (common/lean_anchor.h: a per-row anchor that moves only when a block's
    // maximum leaves its window, and a constant exponent). Auto picks by key_block, as the kernels
    // do; the other two and the window's lower size are for the accuracy studies (every kernel uses
    // kLeanAnchorBelow). Without block_scaling (an ablation) neither: every block at 2^8.
    enum class LeanPScale { Auto, PerBlockExponent, LazyAnchor };
    LeanPScale lean_p_scale = LeanPScale::Auto;
    float lean_anchor_below = numerics::kLeanAnchorBelow;
    bool lazy_anchor() const {
        return scheme == SoftmaxScheme::Lean && block_scaling &&
               (lean_p_scale == LeanPScale::LazyAnchor || (lean_p_scale == LeanPScale::Auto && key_block == 128));
    }

    // The model a resolved problem runs with by default (softmax EXACT or LEAN). The CPU's own
    // key block is numerics::kKeyBlock (64); a caller's params.key_block (64 or 128) models the GPU instance that
    // steps that many keys, in EXACT and LEAN alike; LEAN's 128-key instance also has the lazy anchor.
    static NumericsModel for_problem(const AttnProblem& problem) {
        NumericsModel model;
        model.scheme = problem.softmax == ZYFA_SOFTMAX_LEAN ? SoftmaxScheme::Lean : SoftmaxScheme::Exact;
        model.key_block = problem.key_block != 0 ? problem.key_block : numerics::kKeyBlock;
        return model;
    }
};

}  // namespace cpu
}  // namespace zyfa
