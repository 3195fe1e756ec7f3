// The grid zyfa-check runs: FP8 (LEAN, the arch's FP8 format) and BF16 (EXACT) cases covering the
// masks, head dims 128 and 192/128, GQA and varlen; full-size shapes for a real GPU, tiny ones for
// the emulator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zyfa.h"

namespace zyfa_check {

struct CheckCase {
    std::string name;
    zyfa_dtype dtype = ZYFA_DTYPE_BF16;
    zyfa_softmax softmax = ZYFA_SOFTMAX_EXACT;
    zyfa_mask mask = ZYFA_MASK_CAUSAL;
    int64_t batch = 1, heads_q = 1, heads_kv = 1, seqlen_q = 0, seqlen_k = 0;
    int64_t head_dim_qk = 128, head_dim_v = 128;
    std::vector<int32_t> lengths_q, lengths_k;  // non-empty: varlen, seqlen_* are the longest
    zyfa_dtype out_dtype = ZYFA_DTYPE_BF16;
};

// tiny: shapes the emulator runs in seconds (not a multiple of 64 or 256, GQA, varlen with an
// empty and a length-1 sequence); otherwise 4K-16K tokens, which a GPU runs in milliseconds.
std::vector<CheckCase> check_grid(bool tiny, zyfa_dtype fp8_dtype);

// Query-key pairs the mask leaves visible, summed over the batch (one head).
int64_t visible_pairs(const CheckCase& c);

// "b1 h16/16 s4096 d128 causal", "varlen(4) h8/2 ..."
std::string shape_label(const CheckCase& c);

}  // namespace zyfa_check
