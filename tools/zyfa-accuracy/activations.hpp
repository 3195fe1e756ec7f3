// The input distributions of zyfa-accuracy: fp32 Q, K, V of one sequence, deterministic per seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zyfa_accuracy {

enum class Distribution { Gaussian, LlmLike };

struct ActivationShape {
    Distribution distribution = Distribution::LlmLike;
    int64_t seqlen = 1024;
    int64_t heads = 4;  // heads_q == heads_kv
    int64_t head_dim_qk = 128;
    int64_t head_dim_v = 128;
    uint64_t seed = 1;
};

// [seqlen, heads, dim] row-major fp32 (dim contiguous), plus the softmax scale to use.
struct Activations {
    std::vector<float> q, k, v;
    float softmax_scale = 1.0f;
};

Activations make_activations(const ActivationShape& shape);

const char* distribution_name(Distribution d);

// What each distribution is, for --help and docs/accuracy.md.
extern const char* const kDistributionHelp;

}  // namespace zyfa_accuracy
