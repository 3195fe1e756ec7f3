// The input distributions of zyfa-accuracy: fp32 Q, K, V of one sequence, deterministic per seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zyfa_accuracy {

enum class Distribution { Gaussian, LlmLike, External };  // External: read from .npy (npy.hpp)

struct ActivationShape {
    Distribution distribution = Distribution::LlmLike;
    int64_t seqlen = 1024;
    int64_t heads = 4;     // heads_q
    int64_t heads_kv = 0;  // 0: heads_q (the generators); fewer for GQA (External only)
    int64_t head_dim_qk = 128;
    int64_t head_dim_v = 128;
    uint64_t seed = 1;
    std::string label;  // External: the directory it was read from
    int64_t kv_heads() const { return heads_kv > 0 ? heads_kv : heads; }
};

// [seqlen, heads, dim] row-major fp32 (dim contiguous; K and V have kv_heads()), plus the softmax scale to use.
struct Activations {
    std::vector<float> q, k, v;
    float softmax_scale = 1.0f;
};

Activations make_activations(const ActivationShape& shape);

const char* distribution_name(Distribution d);
// The distribution's name, or an External shape's label.
std::string shape_name(const ActivationShape& s);

// What each distribution is, for --help and docs/accuracy.md.
extern const char* const kDistributionHelp;

}  // namespace zyfa_accuracy
