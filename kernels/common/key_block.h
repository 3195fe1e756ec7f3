// The key-block size of the online softmax: how many keys one step of the running max / row sum /
// accumulator update consumes, with blocks aligned to multiples of it from key 0 of the sequence.
// It is part of the numerics, not only of the tiling: LEAN's per-block P scale exponent
// (block_scale.h) is taken per block, so the CPU model, the HIP C++ kernels, the mma.sync kernels
// and the generated gfx950 kernels reproduce each other only while they step the same blocks.
// (The sm_90a warp-specialised kernels step twice this at head_dim_v <= 128, nvidia::ws_key_block;
// the CPU model follows params.key_block, so params.key_block = 128 models them; LEAN's 128-key
// instance scales P against a per-row anchor instead, lean_anchor.h.)
#ifndef ZYFA_KERNELS_COMMON_KEY_BLOCK_H
#define ZYFA_KERNELS_COMMON_KEY_BLOCK_H

namespace zyfa {
namespace numerics {

constexpr int kKeyBlock = 64;

}  // namespace numerics
}  // namespace zyfa

#endif
