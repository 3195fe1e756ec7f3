#include "check_cases.hpp"

#include <algorithm>

#include "common/attention_mask.h"

namespace zyfa_check {
namespace {

CheckCase make(const std::string& name, zyfa_dtype dtype, zyfa_mask mask, int64_t heads_q, int64_t heads_kv,
               int64_t seqlen_q, int64_t seqlen_k, int64_t head_dim_qk = 128) {
    CheckCase c;
    c.name = name;
    c.dtype = dtype;
    c.softmax = dtype == ZYFA_DTYPE_BF16 ? ZYFA_SOFTMAX_EXACT : ZYFA_SOFTMAX_LEAN;
    c.mask = mask;
    c.heads_q = heads_q;
    c.heads_kv = heads_kv;
    c.seqlen_q = seqlen_q;
    c.seqlen_k = seqlen_k;
    c.head_dim_qk = head_dim_qk;
    return c;
}

CheckCase varlen(CheckCase c, std::vector<int32_t> lengths_q, std::vector<int32_t> lengths_k) {
    c.batch = static_cast<int64_t>(lengths_q.size());
    c.seqlen_q = c.seqlen_k = 0;
    for (int32_t n : lengths_q) c.seqlen_q = std::max<int64_t>(c.seqlen_q, n);
    for (int32_t n : lengths_k) c.seqlen_k = std::max<int64_t>(c.seqlen_k, n);
    c.lengths_q = std::move(lengths_q);
    c.lengths_k = std::move(lengths_k);
    return c;
}

}  // namespace

std::vector<CheckCase> check_grid(bool tiny, zyfa_dtype fp8) {
    const zyfa_dtype bf16 = ZYFA_DTYPE_BF16;
    const zyfa_mask causal = ZYFA_MASK_CAUSAL, none = ZYFA_MASK_NONE, br = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    std::vector<CheckCase> grid;
    if (tiny) {
        grid.push_back(make("FP8 causal", fp8, causal, 2, 2, 300, 300));
        grid.push_back(make("FP8 none", fp8, none, 2, 2, 77, 130));
        grid.push_back(make("FP8 causal bottom-right", fp8, br, 2, 1, 90, 40));
        grid.push_back(make("FP8 MLA 192/128 causal", fp8, causal, 2, 2, 100, 100, 192));
        grid.push_back(varlen(make("FP8 varlen GQA 4:2", fp8, causal, 4, 2, 0, 0), {5, 0, 1, 70}, {20, 3, 1, 66}));
        grid.push_back(make("BF16 causal", bf16, causal, 2, 2, 130, 130));
        grid.push_back(make("BF16 MLA 192/128 causal", bf16, causal, 2, 1, 70, 70, 192));
        return grid;
    }
    grid.push_back(make("FP8 causal", fp8, causal, 16, 16, 4096, 4096));
    grid.push_back(make("FP8 causal", fp8, causal, 16, 16, 16384, 16384));
    grid.push_back(make("FP8 none", fp8, none, 16, 16, 4096, 4096));
    grid.push_back(make("FP8 causal bottom-right", fp8, br, 16, 16, 2048, 8192));
    grid.push_back(make("FP8 GQA 8:1 causal", fp8, causal, 32, 4, 8192, 8192));
    grid.push_back(make("FP8 MLA 192/128 causal", fp8, causal, 16, 16, 4096, 4096, 192));
    grid.push_back(make("FP8 MLA 192/128 causal", fp8, causal, 16, 16, 16384, 16384, 192));
    grid.push_back(varlen(make("FP8 varlen causal", fp8, causal, 16, 16, 0, 0), {1000, 3000, 17, 4096, 1},
                          {1000, 3000, 17, 4096, 1}));
    grid.push_back(make("BF16 causal", bf16, causal, 16, 16, 4096, 4096));
    grid.push_back(make("BF16 causal", bf16, causal, 16, 16, 16384, 16384));
    grid.push_back(make("BF16 MLA 192/128 causal", bf16, causal, 16, 16, 4096, 4096, 192));
    return grid;
}

int64_t visible_pairs(const CheckCase& c) {
    const auto mask = static_cast<zyfa::numerics::MaskKind>(c.mask);
    int64_t pairs = 0;
    for (int64_t b = 0; b < c.batch; ++b) {
        const int64_t sq = c.lengths_q.empty() ? c.seqlen_q : c.lengths_q[static_cast<size_t>(b)];
        const int64_t sk = c.lengths_k.empty() ? c.seqlen_k : c.lengths_k[static_cast<size_t>(b)];
        for (int64_t row = 0; row < sq; ++row) {
            const zyfa::numerics::KeyRange keys = zyfa::numerics::visible_keys(row, sq, sk, mask, -1, -1);
            pairs += keys.end - keys.begin;
        }
    }
    return pairs;
}

std::string shape_label(const CheckCase& c) {
    std::string s = c.lengths_q.empty() ? "b" + std::to_string(c.batch) : "varlen(" + std::to_string(c.batch) + ")";
    s += " h" + std::to_string(c.heads_q) + "/" + std::to_string(c.heads_kv);
    s += c.seqlen_q == c.seqlen_k ? " s" + std::to_string(c.seqlen_q)
                                  : " sq" + std::to_string(c.seqlen_q) + " sk" + std::to_string(c.seqlen_k);
    s += " d" + std::to_string(c.head_dim_qk);
    if (c.head_dim_v != c.head_dim_qk) s += "/" + std::to_string(c.head_dim_v);
    return s;
}

}  // namespace zyfa_check
