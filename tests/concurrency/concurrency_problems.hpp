// Problems for the concurrency tests: each owns its inputs and outputs and runs through the public
// C API only (zyfa.h, libzyfa.so), as a serving stack would. Problem i differs from problem j in
// dtype, mask, shape, GQA ratio, packing, window, softmax mode, descales or operation
// (attention or FP8 quantisation), so threads sharing a context run genuinely different work.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "zyfa.h"

namespace zyfa_concurrency {

inline size_t dtype_size(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return 4;
        case ZYFA_DTYPE_FP16:
        case ZYFA_DTYPE_BF16: return 2;
        default: return 1;
    }
}

// Deterministic values in [-1, 1), exactly representable in every input dtype (FP8 codes are
// picked directly).
inline void fill(std::vector<uint8_t>& bytes, zyfa_dtype dtype, size_t count, uint32_t seed) {
    bytes.assign(count * dtype_size(dtype), 0);
    uint32_t state = seed * 2654435761u + 1u;
    for (size_t i = 0; i < count; ++i) {
        state = state * 1664525u + 1013904223u;
        const float x = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
        uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        switch (dtype) {
            case ZYFA_DTYPE_FP32: std::memcpy(&bytes[i * 4], &x, 4); break;
            case ZYFA_DTYPE_BF16: {
                const uint16_t h = static_cast<uint16_t>(bits >> 16);
                std::memcpy(&bytes[i * 2], &h, 2);
                break;
            }
            case ZYFA_DTYPE_FP16: {
                // |x| < 1: exponent within fp16 normals or flushed to a signed zero.
                const uint32_t sign = (bits >> 16) & 0x8000u;
                const int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xFFu) - 127 + 15;
                const uint16_t h = exponent <= 0 ? static_cast<uint16_t>(sign)
                                                 : static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent) << 10) |
                                                                         ((bits >> 13) & 0x3FFu));
                std::memcpy(&bytes[i * 2], &h, 2);
                break;
            }
            default: bytes[i] = static_cast<uint8_t>(0x20 + ((state >> 24) & 0x3F) + ((state >> 16) & 0x80)); break;
        }
    }
}

constexpr uint8_t kSentinel = 0xA5;

// One request with its own buffers; run() writes only this object's outputs.
class Problem {
public:
    explicit Problem(int index) : index_(index) {
        if (index % 4 == 3) {
            make_quant();
        } else {
            make_attention();
        }
    }
    Problem(const Problem&) = delete;
    Problem& operator=(const Problem&) = delete;

    bool is_attention() const { return attention_; }
    std::string describe() const { return description_; }

    // Sentinel outputs, then the call. Returns its status.
    zyfa_status run(zyfa_context* ctx) {
        clear_outputs();
        if (attention_) return zyfa_attn_fwd(ctx, &params_, &q_, &k_, &v_, &o_, nullptr);
        return zyfa_quantize_fp8(ctx, &quant_params_, &in_, &out_, descale_.data(), nullptr);
    }

    // A malformed variant of this request naming `marker` in its error message: heads_kv = marker
    // for attention (it does not divide heads_q), heads = -marker for quantisation.
    zyfa_status run_malformed(zyfa_context* ctx, int64_t marker) {
        clear_outputs();
        if (attention_) {
            zyfa_attn_params bad = params_;
            bad.heads_kv = marker;
            return zyfa_attn_fwd(ctx, &bad, &q_, &k_, &v_, &o_, nullptr);
        }
        zyfa_quant_params bad = quant_params_;
        bad.heads = -marker;
        return zyfa_quantize_fp8(ctx, &bad, &in_, &out_, descale_.data(), nullptr);
    }

    // Every output byte (o and lse, or codes and descales), to compare runs bitwise.
    std::vector<uint8_t> outputs() const {
        std::vector<uint8_t> all(output_.begin(), output_.end());
        const uint8_t* extra = attention_ ? reinterpret_cast<const uint8_t*>(lse_.data())
                                          : reinterpret_cast<const uint8_t*>(descale_.data());
        const size_t extra_bytes = (attention_ ? lse_.size() : descale_.size()) * sizeof(float);
        all.insert(all.end(), extra, extra + extra_bytes);
        const uint8_t* means = reinterpret_cast<const uint8_t*>(mean_.data());
        all.insert(all.end(), means, means + mean_.size() * sizeof(float));  // K smoothing's, if any
        return all;
    }

    bool outputs_untouched() const {
        for (uint8_t b : outputs()) {
            if (b != kSentinel) return false;
        }
        return true;
    }

private:
    void clear_outputs() {
        // memset with a null pointer is undefined even for 0 bytes (an empty vector's data()).
        if (!output_.empty()) std::memset(output_.data(), kSentinel, output_.size());
        if (!lse_.empty()) std::memset(lse_.data(), kSentinel, lse_.size() * sizeof(float));
        if (!descale_.empty()) std::memset(descale_.data(), kSentinel, descale_.size() * sizeof(float));
        if (!mean_.empty()) std::memset(mean_.data(), kSentinel, mean_.size() * sizeof(float));
    }

    static zyfa_tensor view(void* data, zyfa_dtype dtype, int64_t rows, int64_t heads, int64_t dim, int64_t pad) {
        zyfa_tensor t;
        std::memset(&t, 0, sizeof t);
        t.data = data;
        t.dtype = dtype;
        t.stride_head = dim + pad;
        t.stride_seq = heads * t.stride_head;
        t.stride_batch = rows * t.stride_seq;
        return t;
    }

    void make_attention() {
        attention_ = true;
        const int i = index_;
        static const zyfa_dtype kInputs[] = {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16,
                                             ZYFA_DTYPE_FP8_E4M3FNUZ, ZYFA_DTYPE_FP32};
        static const zyfa_dtype kOutputs[] = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP32, ZYFA_DTYPE_FP16};
        static const int64_t kDims[][2] = {{64, 64}, {128, 128}, {32, 32}, {192, 128}};
        const zyfa_dtype input = kInputs[i % 5];
        const zyfa_dtype output = kOutputs[i % 3];
        const bool fp8 = input == ZYFA_DTYPE_FP8_E4M3FN || input == ZYFA_DTYPE_FP8_E4M3FNUZ;
        const bool varlen = i % 5 == 2;
        const int64_t batch = 1 + i % 3, heads_kv = 1 + i % 2, heads_q = heads_kv * (1 + i % 3);
        const int64_t dqk = kDims[i % 4][0], dv = kDims[i % 4][1];
        const int64_t seq_q = 16 + 8 * (i % 4), seq_k = seq_q + 16 * (i % 3);
        const int64_t pad = i % 6 == 1 ? 8 : 0;  // padded rows: strides that are not dense

        zyfa_attn_params_init(&params_, sizeof params_);
        params_.mask = static_cast<zyfa_mask>(i % 3);
        params_.batch = batch;
        params_.seqlen_q = seq_q;
        params_.seqlen_k = seq_k;
        params_.heads_q = heads_q;
        params_.heads_kv = heads_kv;
        params_.head_dim_qk = dqk;
        params_.head_dim_v = dv;
        if (i % 7 == 3) {
            params_.window_left = 12;
            params_.window_right = 2;
        }
        if (fp8 && i % 6 == 0) params_.softmax = ZYFA_SOFTMAX_EXACT;

        int64_t rows_q = seq_q, rows_k = seq_k;
        if (varlen) {
            cu_q_.push_back(0);
            cu_k_.push_back(0);
            for (int64_t b = 0; b < batch; ++b) {
                cu_q_.push_back(cu_q_.back() + static_cast<int32_t>((seq_q * (b + 1)) / batch));
                cu_k_.push_back(cu_k_.back() + static_cast<int32_t>(seq_k - b));
            }
            params_.cu_seqlens_q = cu_q_.data();
            params_.cu_seqlens_k = cu_k_.data();
            rows_q = cu_q_.back();
            rows_k = cu_k_.back();
        }
        const int64_t batches = varlen ? 1 : batch;
        fill(q_data_, input, static_cast<size_t>(batches * rows_q * heads_q * (dqk + pad)), 3u * i + 1);
        fill(k_data_, input, static_cast<size_t>(batches * rows_k * heads_kv * (dqk + pad)), 3u * i + 2);
        fill(v_data_, input, static_cast<size_t>(batches * rows_k * heads_kv * (dv + pad)), 3u * i + 3);
        output_.assign(static_cast<size_t>(batches * rows_q * heads_q * (dv + pad)) * dtype_size(output), kSentinel);
        lse_.assign(static_cast<size_t>(batches * rows_q * heads_q), 0.0f);
        params_.lse = lse_.data();
        if (fp8 && i % 2 == 0) {
            for (int64_t j = 0; j < batch * heads_kv; ++j) descales_.push_back(0.5f + 0.125f * static_cast<float>(j % 5));
            params_.q_descale = descales_.data();
            params_.k_descale = descales_.data();
            params_.v_descale = descales_.data();
        }
        q_ = view(q_data_.data(), input, rows_q, heads_q, dqk, pad);
        k_ = view(k_data_.data(), input, rows_k, heads_kv, dqk, pad);
        v_ = view(v_data_.data(), input, rows_k, heads_kv, dv, pad);
        o_ = view(output_.data(), output, rows_q, heads_q, dv, pad);
        description_ = "attention #" + std::to_string(i) + " dtype " + std::to_string(input) + " -> " +
                       std::to_string(output) + " mask " + std::to_string(i % 3) + (varlen ? " varlen" : "") +
                       " batch " + std::to_string(batch) + " seq " + std::to_string(seq_q) + "/" +
                       std::to_string(seq_k) + " heads " + std::to_string(heads_q) + "/" + std::to_string(heads_kv) +
                       " dims " + std::to_string(dqk) + "/" + std::to_string(dv);
    }

    void make_quant() {
        attention_ = false;
        const int i = index_;
        static const zyfa_dtype kInputs[] = {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32};
        const zyfa_dtype input = kInputs[(i / 4) % 3];
        const zyfa_dtype output = (i / 4) % 2 == 0 ? ZYFA_DTYPE_FP8_E4M3FN : ZYFA_DTYPE_FP8_E4M3FNUZ;
        const bool hadamard = (i / 4) % 2 == 1;
        const bool smooth = (i / 8) % 2 == 1;
        const int64_t batch = 2, seqlen = 24 + i, heads = 2 + (i / 4) % 2;
        const int64_t dim = hadamard ? 128 : 96;
        zyfa_quant_params_init(&quant_params_, sizeof quant_params_);
        quant_params_.flags = (hadamard ? ZYFA_QUANT_HADAMARD : 0u) | (smooth ? ZYFA_QUANT_SMOOTH : 0u);
        if (smooth) {
            mean_.assign(static_cast<size_t>(batch * heads * dim), 0.0f);
            quant_params_.smooth_mean = mean_.data();
        }
        quant_params_.batch = batch;
        quant_params_.seqlen = seqlen;
        quant_params_.heads = heads;
        quant_params_.head_dim = dim;
        fill(q_data_, input, static_cast<size_t>(batch * seqlen * heads * dim), 7u * i + 1);
        output_.assign(static_cast<size_t>(batch * seqlen * heads * dim), kSentinel);
        descale_.assign(static_cast<size_t>(batch * heads), 0.0f);
        in_ = view(q_data_.data(), input, seqlen, heads, dim, 0);
        out_ = view(output_.data(), output, seqlen, heads, dim, 0);
        description_ = "quantize #" + std::to_string(i) + " dtype " + std::to_string(input) + " -> " +
                       std::to_string(output) + (hadamard ? " hadamard" : "") + (smooth ? " smooth" : "") + " dim " +
                       std::to_string(dim);
    }

    int index_;
    bool attention_ = false;
    std::string description_;
    zyfa_attn_params params_{};
    zyfa_quant_params quant_params_{};
    std::vector<uint8_t> q_data_, k_data_, v_data_, output_;
    std::vector<float> lse_, descales_, descale_, mean_;
    std::vector<int32_t> cu_q_, cu_k_;
    zyfa_tensor q_{}, k_{}, v_{}, o_{}, in_{}, out_{};
};

// A CPU context with `threads` worker threads, or nullptr.
inline zyfa_context* cpu_context(int threads) {
    zyfa_context_options options;
    zyfa_context_options_init(&options, sizeof options);
    options.backend = ZYFA_BACKEND_CPU;
    options.num_threads = threads;
    zyfa_context* ctx = nullptr;
    if (zyfa_context_create(&options, &ctx) != ZYFA_SUCCESS) return nullptr;
    return ctx;
}

// The iteration count: ZYFA_CONCURRENCY_ITERATIONS when set (run-tests.sh lowers it under
// ThreadSanitizer), else the default.
inline int iterations(int fallback) {
    const char* text = std::getenv("ZYFA_CONCURRENCY_ITERATIONS");
    if (text == nullptr || *text == '\0') return fallback;
    const int value = std::atoi(text);
    return value > 0 ? value : fallback;
}

}  // namespace zyfa_concurrency
