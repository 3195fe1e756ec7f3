// One accuracy configuration (distribution x seqlen x head dims): the kernel inputs it needs, the
// fp64 references on sampled query tiles, and the error of each numerics model against them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "activations.hpp"
#include "cpu/numerics_model.hpp"
#include "cpu/worker_pool.hpp"
#include "zyfa.h"

namespace zyfa_accuracy {

constexpr int64_t kTileRows = 32;  // query rows per sampled tile (the CPU model's query tile)

// Kernel inputs of one sequence in one dtype: raw bytes [seqlen, heads, dim] and per-head descales
// (K and V: kv heads).
struct KernelInputs {
    zyfa_dtype dtype = ZYFA_DTYPE_FP32;  // q and k; v too unless v_dtype is set
    zyfa_dtype v_dtype = 0;              // the INT8 Q/K mode: v's FP8 format
    std::vector<uint8_t> q, k, v;
    std::vector<float> q_descale, k_descale, v_descale;  // empty: no descale (= 1)
    // The INT8 Q/K mode (zyfa_quantize_int8): q per token [heads, seqlen], k per 64 keys
    // [heads_kv, seqlen / 64] (q_descale and k_descale are then empty).
    std::vector<float> q_token_descale, k_block_descale;
    std::vector<float> k_mean;  // K smoothed by ZYFA_QUANT_SMOOTH: its mean [heads_kv, head_dim_qk]
    // Q smoothed too: softmax_scale * mean_q . (k_j - mean_k) per [heads_q, seqlen], written by
    // zyfa_quantize_fp8 (ZYFA_QUANT_KEY_BIAS) and passed as zyfa_attn_params.key_bias.
    std::vector<float> key_bias;
    bool hadamard_qk = false;   // Q and K rotated (q holds rotated codes)
};

// The outputs for all sampled tiles, tile after tile: o [tile][row][head][dv], lse [tile][head][row].
struct TileOutputs {
    std::vector<double> o, lse;
};

struct ErrorFigures {
    double rel_rms = 0.0;  // sqrt(sum (o - ref)^2 / sum ref^2) over all sampled elements
    double max_abs = 0.0;  // of o
    double lse_max_abs = 0.0;
    double lse_median_abs = 0.0;  // median over the sampled rows of |lse - ref|
    double lse_mean = 0.0;        // mean of lse - ref (signed: LEAN's bias)
};

class AccuracyConfig {
public:
    // key_block is params.key_block for every problem (0 = the CPU backend's own, 64 or 128).
    AccuracyConfig(const ActivationShape& shape, int64_t max_tiles, zyfa::cpu::WorkerPool& pool, zyfa_context* ctx,
                   int key_block = 0);
    // External activations (load_npy_activations): `shape` describes `act`.
    AccuracyConfig(const ActivationShape& shape, Activations act, int64_t max_tiles, zyfa::cpu::WorkerPool& pool,
                   zyfa_context* ctx, int key_block = 0);

    const ActivationShape& shape() const { return shape_; }
    const std::vector<int64_t>& tiles() const { return tiles_; }  // first query row of each sampled tile
    int64_t sampled_rows() const { return static_cast<int64_t>(tiles_.size()) * kTileRows; }
    // The keys per online-softmax step the models run with (params.key_block, 0 resolved as the
    // CPU backend resolves it).
    int key_block() const;

    // The fp32 activations (end-to-end reference), rounded to bf16, or quantised to FP8.
    KernelInputs original() const;
    KernelInputs bf16() const;
    // smooth_k: K quantised with ZYFA_QUANT_SMOOTH (its mean kept in k_mean). smooth_q (with
    // smooth_k): Q quantised with ZYFA_QUANT_SMOOTH too, and K with ZYFA_QUANT_KEY_BIAS (key_bias).
    KernelInputs fp8(zyfa_dtype format, bool hadamard_qk, bool smooth_k = false, bool smooth_q = false) const;
    // The INT8 Q/K mode: Q and K by zyfa_quantize_int8 (Q per token, K per 64 keys, optionally
    // rotated and K smoothed), V by zyfa_quantize_fp8 per head in `format`.
    KernelInputs int8_qk(zyfa_dtype format, bool hadamard_qk, bool smooth_k) const;

    // Adds softmax_scale * q . k_mean to every lse of `out` (outputs of `in`, whose K was smoothed):
    // the unsmoothed lse. q is the fp32 activations (the documented correction), or with
    // dequantised_q the decoded FP8 q of `in` (rotated like K; the mean is then rotated too).
    void correct_smoothed_lse(TileOutputs& out, const KernelInputs& in, bool dequantised_q) const;

    // The fp64 reference on these inputs (decoded, descales applied) for the sampled tiles.
    // With v_from set, V (and its descale) come from v_from instead: the input error of Q and K alone.
    TileOutputs reference(const KernelInputs& in, const KernelInputs* v_from = nullptr) const;
    // cpu::attention_blocked with `model` on these inputs for the sampled tiles.
    // The model's key_block is replaced by the problem's (key_block() above), so that every scheme
    // and ablation runs the instance asked for.
    TileOutputs run_model(const KernelInputs& in, const zyfa::cpu::NumericsModel& model) const;

    static ErrorFigures compare(const TileOutputs& got, const TileOutputs& want);
    // The relative RMS error of O per query head (outputs of a configuration of this shape).
    static std::vector<double> per_head_rel_rms(const TileOutputs& got, const TileOutputs& want,
                                                const ActivationShape& shape);

private:
    // A tile's own copies of the INT8 descales, in the tile problem's layouts.
    struct TileDescales {
        std::vector<float> q_token, k_block, key_bias;
    };
    zyfa::AttnProblem tile_problem(const KernelInputs& in, int64_t row_begin, float* o, float* lse,
                                   TileDescales& descales) const;

    ActivationShape shape_;
    Activations act_;
    std::vector<int64_t> tiles_;
    zyfa::cpu::WorkerPool& pool_;
    zyfa_context* ctx_;
    int key_block_;
};

}  // namespace zyfa_accuracy
