// The choices that decide the bits of an attention kernel's output, as parameters, so that the
// CPU backend reproduces each GPU kernel's numerics exactly. Defaults are what the kernels use.
#pragma once

#include "common/block_scale.h"
#include "common/key_block.h"
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

    // The model a resolved problem runs with by default (softmax EXACT or LEAN). The CPU's own
    // key block is numerics::kKeyBlock (64); a caller's params.key_block (64 or 128) models the GPU instance that
    // steps that many keys, in EXACT and LEAN alike.
    static NumericsModel for_problem(const AttnProblem& problem) {
        NumericsModel model;
        model.scheme = problem.softmax == ZYFA_SOFTMAX_LEAN ? SoftmaxScheme::Lean : SoftmaxScheme::Exact;
        model.key_block = problem.key_block != 0 ? problem.key_block : numerics::kKeyBlock;
        return model;
    }
};

}  // namespace cpu
}  // namespace zyfa
