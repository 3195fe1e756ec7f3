// The per-key-block update of the online softmax, one definition for the CPU model
// (src/cpu/attention_blocked.cpp) and the GPU kernels. Per row, with m the running maximum (log2
// units, row_max.h), l the running row sum and acc the running P.V accumulator, a block with
// maximum m_new and P scale exponent k (block_scale.h) updates
//     alpha = 2^(m - m_new)                          running_max_rescale
//     l     = l * alpha + row sum of the block       running_sum_update
//     acc   = acc * alpha + (P.V of the block) * 2^-k accumulator_update
// Each is written out as separate fp32 products and sums, never fused (the kernels are built with
// -ffp-contract=off / -fmad=false): the order is part of the numerics contract.
#ifndef ZYFA_KERNELS_COMMON_ONLINE_SOFTMAX_H
#define ZYFA_KERNELS_COMMON_ONLINE_SOFTMAX_H

#include "block_scale.h"
#include "device_compat.h"
#include "fp32_exp2_log2.h"

namespace zyfa {
namespace numerics {

// alpha for a running maximum that moves from m_old to m_new, with the exponential the kernel
// uses (exp2_fp32, or on AMD LEAN a polynomial without transcendentals). m_old = -inf (no key seen
// yet: l and acc are 0) gives 0 without calling exp2: when every visible score of the block is
// -inf too, m_new is -inf and m_old - m_new would be NaN, which would poison the 0 state.
template <typename Exp2>
ZYFA_HD float running_max_rescale(float m_old, float m_new, Exp2 exp2) {
    return m_old == -__builtin_huge_valf() ? 0.0f : exp2(m_old - m_new);
}
ZYFA_HD float running_max_rescale(float m_old, float m_new) { return running_max_rescale(m_old, m_new, Exp2Fp32{}); }

// l = l * alpha + the block's row sum (unrounded p for EXACT, the rounded P codes times 2^-k for LEAN).
ZYFA_HD float running_sum_update(float l, float alpha, float block_row_sum) { return l * alpha + block_row_sum; }

// acc = acc * alpha + partial * unscale, partial = the block's P.V in fresh fp32 accumulators and
// unscale = 2^-k, the block's P scale removed (1 where a scaled MFMA already applied it).
ZYFA_HD float accumulator_update(float acc, float alpha, float partial, float unscale) {
    return acc * alpha + partial * unscale;
}

// For a kernel that keeps the accumulator as acc * 2^e, e = the P scale exponent of the latest block
// it saw (integral fp32, block_scale_exponent_integral), and lets the matrix unit add each block's
// P.V to it (the sm_90a ws kernels, attention_fwd_ws.cuh): the factor O is multiplied by before the
// block with exponent e_new adds, alpha * 2^(e_new - e_old). Powers of two scale exactly, so this is
// accumulator_update up to the order of the fp32 sums; the epilogue removes the last 2^-e.
ZYFA_HD float scaled_accumulator_rescale(float alpha, float exponent_new, float exponent_old) {
    return alpha * exp2_integral(exponent_new - exponent_old);
}

}  // namespace numerics
}  // namespace zyfa

#endif
