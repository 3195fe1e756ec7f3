#include "accuracy_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/fp8_e4m3.h"
#include "common/hadamard.h"
#include "common/half_types.h"
#include "core/validate.hpp"
#include "cpu/attention_blocked.hpp"
#include "cpu/attention_reference.hpp"
#include "cpu/tensor_access.hpp"

namespace zyfa_accuracy {

namespace {

zyfa_tensor dense_view(void* data, zyfa_dtype dtype, int64_t heads, int64_t dim) {
    zyfa_tensor t;
    std::memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_head = dim;
    t.stride_seq = heads * dim;
    t.stride_batch = 0;
    return t;
}

void check(const char* call, zyfa_status st) {
    if (st != ZYFA_SUCCESS)
        throw std::runtime_error(std::string(call) + ": " + zyfa_status_string(st) + ": " + zyfa_last_error_message());
}

// Rows of the sampled tiles: every tile when there are at most max_tiles, else max_tiles spread
// evenly over the sequence, always including the last (the longest rows).
std::vector<int64_t> sample_tiles(int64_t seqlen, int64_t max_tiles) {
    const int64_t count = seqlen / kTileRows;
    std::vector<int64_t> rows;
    if (count <= max_tiles) {
        for (int64_t t = 0; t < count; ++t) rows.push_back(t * kTileRows);
    } else {
        for (int64_t i = 0; i < max_tiles; ++i) rows.push_back(((i + 1) * count / max_tiles - 1) * kTileRows);
    }
    return rows;
}

}  // namespace

AccuracyConfig::AccuracyConfig(const ActivationShape& shape, int64_t max_tiles, zyfa::cpu::WorkerPool& pool,
                               zyfa_context* ctx, int key_block)
    : shape_(shape), act_(make_activations(shape)), tiles_(sample_tiles(shape.seqlen, max_tiles)), pool_(pool),
      ctx_(ctx), key_block_(key_block) {
    if (shape.seqlen % kTileRows != 0) throw std::runtime_error("seqlen must be a multiple of 32");
}

AccuracyConfig::AccuracyConfig(const ActivationShape& shape, Activations act, int64_t max_tiles,
                               zyfa::cpu::WorkerPool& pool, zyfa_context* ctx, int key_block)
    : shape_(shape), act_(std::move(act)), tiles_(sample_tiles(shape.seqlen, max_tiles)), pool_(pool), ctx_(ctx),
      key_block_(key_block) {
    if (shape.seqlen % kTileRows != 0) throw std::runtime_error("seqlen must be a multiple of 32");
    if (shape.heads % shape.kv_heads() != 0) throw std::runtime_error("heads_q must be a multiple of heads_kv");
    const size_t S = static_cast<size_t>(shape.seqlen);
    if (act_.q.size() != S * static_cast<size_t>(shape.heads * shape.head_dim_qk) ||
        act_.k.size() != S * static_cast<size_t>(shape.kv_heads() * shape.head_dim_qk) ||
        act_.v.size() != S * static_cast<size_t>(shape.kv_heads() * shape.head_dim_v))
        throw std::runtime_error("activations do not match their shape");
}

int AccuracyConfig::key_block() const {
    zyfa::AttnProblem p;
    p.key_block = key_block_;
    return zyfa::cpu::NumericsModel::for_problem(p).key_block;
}

KernelInputs AccuracyConfig::original() const {
    KernelInputs in;
    in.dtype = ZYFA_DTYPE_FP32;
    auto bytes = [](const std::vector<float>& x) {
        std::vector<uint8_t> b(x.size() * 4);
        std::memcpy(b.data(), x.data(), b.size());
        return b;
    };
    in.q = bytes(act_.q);
    in.k = bytes(act_.k);
    in.v = bytes(act_.v);
    return in;
}

KernelInputs AccuracyConfig::bf16() const {
    KernelInputs in;
    in.dtype = ZYFA_DTYPE_BF16;
    auto bytes = [](const std::vector<float>& x) {
        std::vector<uint8_t> b(x.size() * 2);
        for (size_t i = 0; i < x.size(); ++i) {
            const uint16_t h = zyfa::numerics::float_to_bf16(x[i]);
            std::memcpy(&b[2 * i], &h, 2);
        }
        return b;
    };
    in.q = bytes(act_.q);
    in.k = bytes(act_.k);
    in.v = bytes(act_.v);
    return in;
}

KernelInputs AccuracyConfig::fp8(zyfa_dtype format, bool hadamard_qk, bool smooth_k, bool smooth_q) const {
    if (smooth_q && !smooth_k) throw std::invalid_argument("Q smoothing is measured with K smoothed");
    KernelInputs in;
    in.dtype = format;
    in.hadamard_qk = hadamard_qk;
    // query_mean set: ZYFA_QUANT_KEY_BIAS, Q smoothing's per-key bias into in.key_bias [1, H, S].
    auto quantise = [&](const std::vector<float>& x, int64_t H, int64_t dim, bool hadamard, std::vector<uint8_t>& out,
                        std::vector<float>& descale, std::vector<float>* mean = nullptr,
                        const std::vector<float>* query_mean = nullptr) {
        zyfa_quant_params qp;
        zyfa_quant_params_init(&qp, sizeof qp);
        qp.flags = (hadamard ? ZYFA_QUANT_HADAMARD : 0u) | (mean ? ZYFA_QUANT_SMOOTH : 0u) |
                   (query_mean ? ZYFA_QUANT_KEY_BIAS : 0u);
        if (mean) {
            mean->assign(static_cast<size_t>(H * dim), 0.0f);
            qp.smooth_mean = mean->data();
        }
        if (query_mean) {
            in.key_bias.assign(static_cast<size_t>(shape_.heads * shape_.seqlen), 0.0f);
            qp.query_mean = query_mean->data();
            qp.key_bias = in.key_bias.data();
            qp.query_heads = shape_.heads;
            qp.key_bias_scale = act_.softmax_scale;
        }
        qp.batch = 1;
        qp.seqlen = shape_.seqlen;
        qp.heads = H;
        qp.head_dim = dim;
        out.assign(x.size(), 0);
        descale.assign(static_cast<size_t>(H), 1.0f);
        const zyfa_tensor tin = dense_view(const_cast<float*>(x.data()), ZYFA_DTYPE_FP32, H, dim);
        const zyfa_tensor tout = dense_view(out.data(), format, H, dim);
        check("zyfa_quantize_fp8", zyfa_quantize_fp8(ctx_, &qp, &tin, &tout, descale.data(), nullptr));
    };
    const int64_t HKV = shape_.kv_heads(), G = shape_.heads / HKV, D = shape_.head_dim_qk;
    std::vector<float> q_mean;  // Q smoothing: [H, D], the mean the quantiser subtracted from Q
    if (G == 1) {
        quantise(act_.q, shape_.heads, D, hadamard_qk, in.q, in.q_descale, smooth_q ? &q_mean : nullptr);
    } else {
        // GQA: zyfa_attn_fwd takes q_descale per (batch, kv head), so the G query heads of a group
        // share one scale: Q is quantised as [S, HKV, G * dim] (the same bytes, and its mean is then
        // [H, dim]). The rotation is applied here per query head first, as the quantiser rotates K
        // (a G * dim row would be rotated in other blocks).
        std::vector<float> q = act_.q;
        if (hadamard_qk)
            for (size_t r = 0; r < q.size(); r += static_cast<size_t>(D))
                if (!zyfa::numerics::hadamard_rotate_row(&q[r], D))
                    throw std::runtime_error("no Hadamard rotation for this head_dim_qk");
        quantise(q, HKV, G * D, false, in.q, in.q_descale, smooth_q ? &q_mean : nullptr);
        // That mean is in the rotated basis; the key bias needs K's (unrotated): H / sqrt(n) is its
        // own inverse.
        if (smooth_q && hadamard_qk)
            for (size_t r = 0; r < q_mean.size(); r += static_cast<size_t>(D))
                zyfa::numerics::hadamard_rotate_row(&q_mean[r], D);
    }
    quantise(act_.k, HKV, D, hadamard_qk, in.k, in.k_descale, smooth_k ? &in.k_mean : nullptr,
             smooth_q ? &q_mean : nullptr);
    quantise(act_.v, HKV, shape_.head_dim_v, false, in.v, in.v_descale);  // rotating V would rotate O
    return in;
}

KernelInputs AccuracyConfig::int8_qk(zyfa_dtype format, bool hadamard_qk, bool smooth_k) const {
    KernelInputs in;
    in.dtype = ZYFA_DTYPE_INT8;
    in.v_dtype = format;
    in.hadamard_qk = hadamard_qk;
    const int64_t HKV = shape_.kv_heads();
    auto quantise = [&](const std::vector<float>& x, int64_t H, int64_t dim, int32_t scale_rows, bool hadamard,
                        std::vector<uint8_t>& out, std::vector<float>& descale, std::vector<float>* mean) {
        zyfa_quant_params qp;
        zyfa_quant_params_init(&qp, sizeof qp);
        qp.flags = (hadamard ? ZYFA_QUANT_HADAMARD : 0u) | (mean ? ZYFA_QUANT_SMOOTH : 0u);
        if (mean) {
            mean->assign(static_cast<size_t>(H * dim), 0.0f);
            qp.smooth_mean = mean->data();
        }
        qp.batch = 1;
        qp.seqlen = shape_.seqlen;
        qp.heads = H;
        qp.head_dim = dim;
        qp.scale_rows = scale_rows;
        out.assign(x.size(), 0);
        descale.assign(static_cast<size_t>(H * ((shape_.seqlen + scale_rows - 1) / scale_rows)), 1.0f);
        const zyfa_tensor tin = dense_view(const_cast<float*>(x.data()), ZYFA_DTYPE_FP32, H, dim);
        const zyfa_tensor tout = dense_view(out.data(), ZYFA_DTYPE_INT8, H, dim);
        check("zyfa_quantize_int8", zyfa_quantize_int8(ctx_, &qp, &tin, &tout, descale.data(), nullptr));
    };
    // Per-token scales are per query head ([batch, heads_q, seqlen_q]): no sharing under GQA.
    quantise(act_.q, shape_.heads, shape_.head_dim_qk, 1, hadamard_qk, in.q, in.q_token_descale, nullptr);
    quantise(act_.k, HKV, shape_.head_dim_qk, ZYFA_INT8_KEY_BLOCK, hadamard_qk, in.k, in.k_block_descale,
             smooth_k ? &in.k_mean : nullptr);
    // V e4m3 per head, exactly as the FP8 path quantises it.
    zyfa_quant_params qp;
    zyfa_quant_params_init(&qp, sizeof qp);
    qp.batch = 1;
    qp.seqlen = shape_.seqlen;
    qp.heads = HKV;
    qp.head_dim = shape_.head_dim_v;
    in.v.assign(act_.v.size(), 0);
    in.v_descale.assign(static_cast<size_t>(HKV), 1.0f);
    const zyfa_tensor tin = dense_view(const_cast<float*>(act_.v.data()), ZYFA_DTYPE_FP32, HKV, shape_.head_dim_v);
    const zyfa_tensor tout = dense_view(in.v.data(), format, HKV, shape_.head_dim_v);
    check("zyfa_quantize_fp8", zyfa_quantize_fp8(ctx_, &qp, &tin, &tout, in.v_descale.data(), nullptr));
    return in;
}

void AccuracyConfig::correct_smoothed_lse(TileOutputs& out, const KernelInputs& in, bool dequantised_q) const {
    const int64_t H = shape_.heads, HKV = shape_.kv_heads(), D = shape_.head_dim_qk;
    if (in.k_mean.size() != static_cast<size_t>(HKV * D)) throw std::runtime_error("K was not smoothed");
    std::vector<float> mean = in.k_mean;  // per kv head; rotated when q is the rotated FP8 q
    if (dequantised_q && in.hadamard_qk)
        for (int64_t g = 0; g < HKV; ++g)
            if (!zyfa::numerics::hadamard_rotate_row(&mean[static_cast<size_t>(g * D)], D))
                throw std::runtime_error("no Hadamard rotation for this head_dim_qk");
    const zyfa::numerics::Fp8Format format = zyfa::cpu::fp8_format_of(in.dtype);
    const size_t lse_size = static_cast<size_t>(kTileRows * H);
    for (size_t t = 0; t < tiles_.size(); ++t)
        for (int64_t h = 0; h < H; ++h) {
            const int64_t g = h / (H / HKV);
            const bool int8 = in.dtype == ZYFA_DTYPE_INT8;
            for (int64_t r = 0; r < kTileRows; ++r) {
                const size_t base = static_cast<size_t>(((tiles_[t] + r) * H + h) * D);
                const double q_descale =
                    int8 ? in.q_token_descale[static_cast<size_t>(h * shape_.seqlen + tiles_[t] + r)]
                         : in.q_descale.empty() ? 1.0 : in.q_descale[static_cast<size_t>(g)];
                double dot = 0.0;
                for (int64_t d = 0; d < D; ++d) {
                    const uint8_t code = in.q[base + static_cast<size_t>(d)];
                    const double decoded = int8 ? static_cast<double>(static_cast<int8_t>(code))
                                                : static_cast<double>(zyfa::numerics::fp8_decode(code, format));
                    const double q = dequantised_q ? decoded * q_descale
                                                   : static_cast<double>(act_.q[base + static_cast<size_t>(d)]);
                    dot += q * mean[static_cast<size_t>(g * D + d)];
                }
                out.lse[t * lse_size + static_cast<size_t>(h * kTileRows + r)] += act_.softmax_scale * dot;
            }
        }
}

// Rows [row_begin, row_begin + 32) of the causal problem see keys [0, row_begin + 32): as a problem of
// 32 queries with bottom-right causal masking over that key prefix, each row computes exactly what
// it computes in the full sequence (key blocks stay aligned to key 0).
zyfa::AttnProblem AccuracyConfig::tile_problem(const KernelInputs& in, int64_t row_begin, float* o, float* lse,
                                               TileDescales& descales) const {
    const int64_t H = shape_.heads, HKV = shape_.kv_heads(), DQ = shape_.head_dim_qk, DV = shape_.head_dim_v;
    const size_t es = zyfa::cpu::dtype_size(in.dtype);
    zyfa_attn_params p;
    zyfa_attn_params_init(&p, sizeof p);
    p.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
    p.batch = 1;
    p.seqlen_q = kTileRows;
    p.seqlen_k = row_begin + kTileRows;
    p.heads_q = H;
    p.heads_kv = HKV;
    p.head_dim_qk = DQ;
    p.head_dim_v = DV;
    p.softmax_scale = act_.softmax_scale;
    p.softmax = ZYFA_SOFTMAX_EXACT;  // the numerics model passed to attention_blocked decides
    p.q_descale = in.q_descale.empty() ? nullptr : in.q_descale.data();
    p.k_descale = in.k_descale.empty() ? nullptr : in.k_descale.data();
    p.v_descale = in.v_descale.empty() ? nullptr : in.v_descale.data();
    p.lse = lse;
    p.key_block = key_block_;
    if (!in.key_bias.empty()) {  // Q smoothing: the tile's keys are the sequence's first ones
        descales.key_bias.resize(static_cast<size_t>(H * p.seqlen_k));
        for (int64_t h = 0; h < H; ++h)
            for (int64_t j = 0; j < p.seqlen_k; ++j)
                descales.key_bias[static_cast<size_t>(h * p.seqlen_k + j)] =
                    in.key_bias[static_cast<size_t>(h * shape_.seqlen + j)];
        p.key_bias = descales.key_bias.data();
    }
    if (in.dtype == ZYFA_DTYPE_INT8) {
        // The tile's descales in its own layouts: [1, H, 32] and [1, HKV, ceil(seqlen_k / 64)].
        const int64_t S = shape_.seqlen, blocks_all = (S + ZYFA_INT8_KEY_BLOCK - 1) / ZYFA_INT8_KEY_BLOCK;
        const int64_t blocks = (p.seqlen_k + ZYFA_INT8_KEY_BLOCK - 1) / ZYFA_INT8_KEY_BLOCK;
        descales.q_token.resize(static_cast<size_t>(H * kTileRows));
        descales.k_block.resize(static_cast<size_t>(HKV * blocks));
        for (int64_t h = 0; h < H; ++h)
            for (int64_t r = 0; r < kTileRows; ++r)
                descales.q_token[static_cast<size_t>(h * kTileRows + r)] =
                    in.q_token_descale[static_cast<size_t>(h * S + row_begin + r)];
        for (int64_t g = 0; g < HKV; ++g)
            for (int64_t n = 0; n < blocks; ++n)
                descales.k_block[static_cast<size_t>(g * blocks + n)] = in.k_block_descale[static_cast<size_t>(g * blocks_all + n)];
        p.q_descale_per_token = descales.q_token.data();
        p.k_descale_per_block = descales.k_block.data();
    }
    auto* qbase = const_cast<uint8_t*>(in.q.data()) + static_cast<size_t>(row_begin * H * DQ) * es;
    const zyfa_tensor tq = dense_view(qbase, in.dtype, H, DQ);
    const zyfa_tensor tk = dense_view(const_cast<uint8_t*>(in.k.data()), in.dtype, HKV, DQ);
    const zyfa_tensor tv = dense_view(const_cast<uint8_t*>(in.v.data()), in.v_dtype != 0 ? in.v_dtype : in.dtype, HKV, DV);
    const zyfa_tensor to = dense_view(o, ZYFA_DTYPE_FP32, H, DV);
    return zyfa::validate_attn(&p, &tq, &tk, &tv, &to, ZYFA_BACKEND_CPU);
}

TileOutputs AccuracyConfig::reference(const KernelInputs& in, const KernelInputs* v_from) const {
    const int64_t H = shape_.heads, DV = shape_.head_dim_v;
    const size_t o_size = static_cast<size_t>(kTileRows * H * DV), lse_size = static_cast<size_t>(kTileRows * H);
    TileOutputs out;
    out.o.assign(tiles_.size() * o_size, 0.0);
    out.lse.assign(tiles_.size() * lse_size, 0.0);
    // One (tile, head) per index: the reference is single-threaded, the pool spreads it.
    pool_.parallel_for(static_cast<int64_t>(tiles_.size()) * H, [&](int64_t index, int /*slot*/) {
        const size_t t = static_cast<size_t>(index / H);
        const int64_t h = index % H;
        const int64_t hk = h / (H / shape_.kv_heads());  // GQA: the kv head query head h reads
        std::vector<float> o_dummy(o_size), lse_dummy(lse_size);
        TileDescales descales;
        zyfa::AttnProblem p = tile_problem(in, tiles_[t], o_dummy.data(), lse_dummy.data(), descales);
        // One head: shift the views to head h and make the problem single-headed.
        if (v_from) {
            p.v.data = const_cast<uint8_t*>(v_from->v.data());
            p.v.dtype = v_from->dtype;
            p.v_descale = v_from->v_descale.empty() ? nullptr : v_from->v_descale.data();
        }
        auto shift = [&](zyfa::TensorView& v, int64_t head, int64_t dim) {
            v.data = static_cast<uint8_t*>(v.data) + static_cast<size_t>(head * dim) * zyfa::cpu::dtype_size(v.dtype);
        };
        shift(p.q, h, p.head_dim_qk);
        shift(p.k, hk, p.head_dim_qk);
        shift(p.v, hk, p.head_dim_v);
        if (p.q_descale) p.q_descale += hk;  // descales are per (batch, kv head)
        if (p.k_descale) p.k_descale += hk;
        if (p.v_descale) p.v_descale += hk;
        if (p.q_descale_per_token) p.q_descale_per_token += h * kTileRows;  // INT8: [1, H, 32]
        if (p.k_descale_per_block) p.k_descale_per_block += hk * p.int8_key_blocks();
        if (p.key_bias) p.key_bias += h * p.seqlen_k;  // [1, H, seqlen_k]
        p.heads_q = p.heads_kv = 1;
        const zyfa::cpu::ReferenceOutput ref = zyfa::cpu::attention_reference_fp64(p);
        for (int64_t r = 0; r < kTileRows; ++r) {
            for (int64_t d = 0; d < DV; ++d)
                out.o[t * o_size + static_cast<size_t>((r * H + h) * DV + d)] = ref.o[static_cast<size_t>(r * DV + d)];
            out.lse[t * lse_size + static_cast<size_t>(h * kTileRows + r)] = ref.lse[static_cast<size_t>(r)];
        }
    });
    return out;
}

TileOutputs AccuracyConfig::run_model(const KernelInputs& in, const zyfa::cpu::NumericsModel& model) const {
    const int64_t H = shape_.heads, DV = shape_.head_dim_v;
    const size_t o_size = static_cast<size_t>(kTileRows * H * DV), lse_size = static_cast<size_t>(kTileRows * H);
    TileOutputs out;
    out.o.assign(tiles_.size() * o_size, 0.0);
    out.lse.assign(tiles_.size() * lse_size, 0.0);
    std::vector<float> o(o_size), lse(lse_size);
    zyfa::cpu::NumericsModel m = model;
    m.key_block = key_block();
    TileDescales descales;
    for (size_t t = 0; t < tiles_.size(); ++t) {
        const zyfa::AttnProblem p = tile_problem(in, tiles_[t], o.data(), lse.data(), descales);
        zyfa::cpu::attention_blocked(p, m, pool_);
        for (size_t i = 0; i < o_size; ++i) out.o[t * o_size + i] = o[i];
        for (size_t i = 0; i < lse_size; ++i) out.lse[t * lse_size + i] = lse[i];
    }
    return out;
}

ErrorFigures AccuracyConfig::compare(const TileOutputs& got, const TileOutputs& want) {
    ErrorFigures e;
    double err2 = 0.0, ref2 = 0.0;
    for (size_t i = 0; i < want.o.size(); ++i) {
        const double diff = got.o[i] - want.o[i];
        err2 += diff * diff;
        ref2 += want.o[i] * want.o[i];
        e.max_abs = std::isnan(diff) ? INFINITY : std::fmax(e.max_abs, std::fabs(diff));
    }
    e.rel_rms = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    std::vector<double> abs_diffs;
    double sum = 0.0;
    for (size_t i = 0; i < want.lse.size(); ++i) {
        const double diff = got.lse[i] - want.lse[i];
        e.lse_max_abs = std::isnan(diff) ? INFINITY : std::fmax(e.lse_max_abs, std::fabs(diff));
        abs_diffs.push_back(std::isnan(diff) ? INFINITY : std::fabs(diff));
        sum += diff;
    }
    if (!abs_diffs.empty()) {
        const size_t mid = abs_diffs.size() / 2;
        std::nth_element(abs_diffs.begin(), abs_diffs.begin() + static_cast<std::ptrdiff_t>(mid), abs_diffs.end());
        e.lse_median_abs = abs_diffs[mid];
        e.lse_mean = sum / static_cast<double>(abs_diffs.size());
    }
    return e;
}

std::vector<double> AccuracyConfig::per_head_rel_rms(const TileOutputs& got, const TileOutputs& want,
                                                     const ActivationShape& shape) {
    const size_t heads = static_cast<size_t>(shape.heads), dv = static_cast<size_t>(shape.head_dim_v);
    std::vector<double> err2(heads, 0.0), ref2(heads, 0.0);
    for (size_t i = 0; i < want.o.size(); ++i) {  // o is [tile][row][head][dv]
        const size_t h = (i / dv) % heads;
        const double diff = got.o[i] - want.o[i];
        err2[h] += diff * diff;
        ref2[h] += want.o[i] * want.o[i];
    }
    std::vector<double> out(heads);
    for (size_t h = 0; h < heads; ++h) out[h] = ref2[h] > 0.0 ? std::sqrt(err2[h] / ref2[h]) : std::sqrt(err2[h]);
    return out;
}

}  // namespace zyfa_accuracy
