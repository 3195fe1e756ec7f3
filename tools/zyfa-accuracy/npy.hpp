// A reader for NumPy .npy files (format versions 1-3), for zyfa-accuracy --npy-dir: the arrays a
// user captured from a model. Little-endian float32, float16 and bfloat16 stored as uint16 ('<u2')
// are accepted, C order only; everything else is rejected with a message that says what was found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "activations.hpp"

namespace zyfa_accuracy {

struct NpyArray {
    std::string descr;           // as in the header: "<f4", "<f2" or "<u2" (bf16 bits)
    std::vector<int64_t> shape;  // C order
    std::vector<float> data;     // decoded to fp32 (exact for all three dtypes)
};

// `name` only labels the error messages (std::runtime_error).
NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& name);
NpyArray read_npy(const std::string& path);

// DIR/q.npy [S, Hq, Dqk], DIR/k.npy [S, Hkv, Dqk], DIR/v.npy [S, Hkv, Dv]: one sequence, Q after
// RoPE, Hq a multiple of Hkv (GQA: query head h reads K/V head h / (Hq / Hkv)). Rows past the last
// multiple of 32 are dropped (the tool samples 32-row tiles; a causal prefix stays exact). Fills
// `shape` (External, labelled with DIR); softmax scale 1/sqrt(Dqk) unless softmax_scale > 0.
Activations load_npy_activations(const std::string& dir, float softmax_scale, ActivationShape& shape);

}  // namespace zyfa_accuracy
