// FP8 V in the transposed layout (include/zyfa.h: ZYFA_ATTN_V_TRANSPOSED, written by zyfa_quantize_fp8
// with ZYFA_QUANT_V_TRANSPOSED): the bytes the sm_90a kernels' P.V reads from shared memory, so that
// their producer copies each key block as it lies instead of transposing it (the e4m3 wgmma reads V
// with keys contiguous per output column; attention_ws_tile_shape.h, "FP8 Vt is chunk-major").
// One definition for the CPU backend, the quantisers and the CUDA kernels.
//
// Per (batch, kv head), keys come in groups of 16; group g is head_dim_v chunks of 16 bytes, chunk d
// holding column d of the group's 16 keys in the order kVtKeyOrder (the order in which the kernels'
// P fragments hold a 16-key k-step's keys); groups lie stride_seq elements apart (16 * head_dim_v
// for the layout the kernels read: a 128-key block is then 16 KiB in one piece). The sequence is
// padded to a multiple of kVtPadKeys keys (the kernels' key block), the padding keys zero.
#ifndef ZYFA_KERNELS_COMMON_V_TRANSPOSED_H
#define ZYFA_KERNELS_COMMON_V_TRANSPOSED_H

#include <stdint.h>

#include "device_compat.h"

namespace zyfa {
namespace numerics {

constexpr int kVtGroupKeys = 16;  // keys per group: one 16-byte chunk per column
constexpr int kVtPadKeys = 128;   // the sequence is padded to whole blocks of the kernels' 128-key step

// Byte p of a chunk holds key kVtKeyOrder[p] of its group: [0,1,8,9, 2,3,10,11, 4,5,12,13, 6,7,14,15].
// Its inverse, the byte of key k: pairs of keys (k / 2 within its half of 8) four bytes apart, the
// upper half of the group two bytes after the lower.
ZYFA_HD int vt_key_byte(int key_in_group) {
    const int half = key_in_group / 8, k = key_in_group % 8;
    return (k / 2) * 4 + half * 2 + k % 2;
}

// Keys of the layout for seqlen keys: padded to whole kVtPadKeys blocks.
ZYFA_HD int64_t vt_padded_keys(int64_t seqlen) {
    return (seqlen + kVtPadKeys - 1) / kVtPadKeys * kVtPadKeys;
}

// Groups (the layout's rows along stride_seq) for seqlen keys.
ZYFA_HD int64_t vt_groups(int64_t seqlen) { return vt_padded_keys(seqlen) / kVtGroupKeys; }

// Element offset of [key, column d] from the (batch, head) slice's first byte.
ZYFA_HD int64_t vt_offset(int64_t key, int64_t d, int64_t stride_group) {
    return (key / kVtGroupKeys) * stride_group + d * kVtGroupKeys + vt_key_byte(static_cast<int>(key % kVtGroupKeys));
}

}  // namespace numerics
}  // namespace zyfa

#endif
