// The calls the fault tier fails: context creation, attention, FP8 quantisation and merging through the
// public API. Each case owns its buffers, so that preparing and checking a call allocates nothing
// while the interposer is armed.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "zyfa.h"

namespace zyfa_fault {

constexpr uint8_t kSentinel = 0xA5;

class Case {
public:
    explicit Case(std::string name) : name_(std::move(name)) {}
    virtual ~Case() = default;
    Case(const Case&) = delete;
    Case& operator=(const Case&) = delete;

    const char* name() const { return name_.c_str(); }
    virtual void prepare() = 0;           // outputs to their sentinels; allocates nothing
    virtual zyfa_status call() = 0;       // the zyfa call under test
    virtual bool as_after_failure() const = 0;  // what a failed call must leave: sentinels, *out NULL
    virtual void keep_reference() = 0;    // the outputs of an unfailed call
    virtual bool matches_reference() const = 0;
    virtual void release() {}             // undoes a successful call (destroys a created context)

private:
    std::string name_;
};

// zyfa_context_create of a CPU context with num_threads threads.
class CreateCase final : public Case {
public:
    explicit CreateCase(int num_threads)
        : Case("zyfa_context_create(" + std::to_string(num_threads) + " thread" + (num_threads == 1 ? ")" : "s)")) {
        zyfa_context_options_init(&options_, sizeof options_);
        options_.backend = ZYFA_BACKEND_CPU;
        options_.num_threads = num_threads;
    }
    ~CreateCase() override { release(); }

    void prepare() override { ctx_ = reinterpret_cast<zyfa_context*>(static_cast<uintptr_t>(0xA5A5A5A5u)); }
    zyfa_status call() override { return zyfa_context_create(&options_, &ctx_); }
    bool as_after_failure() const override { return ctx_ == nullptr; }
    void keep_reference() override {}
    bool matches_reference() const override { return ctx_ != nullptr && zyfa_context_backend(ctx_) == ZYFA_BACKEND_CPU; }
    void release() override {
        if (ctx_ != nullptr && reinterpret_cast<uintptr_t>(ctx_) != 0xA5A5A5A5u) zyfa_context_destroy(ctx_);
        ctx_ = nullptr;
    }

private:
    zyfa_context_options options_;
    zyfa_context* ctx_ = nullptr;
};

inline size_t dtype_bytes(zyfa_dtype dtype) {
    switch (dtype) {
        case ZYFA_DTYPE_FP32: return 4;
        case ZYFA_DTYPE_FP16:
        case ZYFA_DTYPE_BF16: return 2;
        default: return 1;
    }
}

// Deterministic finite values in [-1, 1): fp32 and its bf16 truncation, or FP8 codes of moderate
// magnitude (never NaN).
inline std::vector<uint8_t> input_values(zyfa_dtype dtype, size_t count, uint32_t seed) {
    std::vector<uint8_t> bytes(count * dtype_bytes(dtype));
    uint32_t state = seed * 747796405u + 2891336453u;
    for (size_t i = 0; i < count; ++i) {
        state = state * 1664525u + 1013904223u;
        const float x = static_cast<float>(state >> 8) * 0x1p-23f - 1.0f;
        uint32_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        if (dtype == ZYFA_DTYPE_FP32) {
            std::memcpy(&bytes[i * 4], &x, 4);
        } else if (dtype == ZYFA_DTYPE_BF16) {
            const uint16_t top = static_cast<uint16_t>(bits >> 16);
            std::memcpy(&bytes[i * 2], &top, 2);
        } else {
            bytes[i] = static_cast<uint8_t>(0x18 + ((state >> 20) & 0x3F) + ((state >> 12) & 0x80));
        }
    }
    return bytes;
}

// A dense [batch, rows, heads, dim] view (rows = the packed total when varlen).
inline zyfa_tensor dense_view(void* data, zyfa_dtype dtype, int64_t rows, int64_t heads, int64_t dim) {
    zyfa_tensor t;
    std::memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.stride_head = dim;
    t.stride_seq = heads * dim;
    t.stride_batch = rows * heads * dim;
    return t;
}

// Outputs of a case as one list of buffers, to fill and compare without allocating.
struct OutputBuffers {
    std::vector<std::vector<uint8_t>*> buffers;
    std::vector<std::vector<uint8_t>> reference;

    void fill() const {
        for (auto* b : buffers) std::memset(b->data(), kSentinel, b->size());
    }
    bool all_sentinel() const {
        for (const auto* b : buffers)
            for (uint8_t byte : *b)
                if (byte != kSentinel) return false;
        return true;
    }
    void keep() {
        reference.clear();
        for (const auto* b : buffers) reference.push_back(*b);
    }
    bool match() const {
        if (reference.size() != buffers.size()) return false;
        for (size_t i = 0; i < buffers.size(); ++i)
            if (std::memcmp(buffers[i]->data(), reference[i].data(), reference[i].size()) != 0) return false;
        return true;
    }
};

struct AttnShape {
    const char* label;
    zyfa_dtype input, output;
    zyfa_mask mask;
    zyfa_softmax softmax;
    int64_t batch, seqlen_q, seqlen_k, heads_q, heads_kv, dim_qk, dim_v;
    bool varlen, descales, lse;
};

// zyfa_attn_fwd of one problem on a given context.
class AttnCase final : public Case {
public:
    AttnCase(zyfa_context* ctx, int threads, const AttnShape& s)
        : Case(std::string("zyfa_attn_fwd ") + s.label + " (" + std::to_string(threads) + " threads)"), ctx_(ctx) {
        zyfa_attn_params_init(&params_, sizeof params_);
        params_.mask = s.mask;
        params_.softmax = s.softmax;
        params_.batch = s.batch;
        params_.seqlen_q = s.seqlen_q;
        params_.seqlen_k = s.seqlen_k;
        params_.heads_q = s.heads_q;
        params_.heads_kv = s.heads_kv;
        params_.head_dim_qk = s.dim_qk;
        params_.head_dim_v = s.dim_v;
        int64_t rows_q = s.seqlen_q, rows_k = s.seqlen_k, batches = s.batch;
        if (s.varlen) {  // sequence b: seqlen - 7b queries, seqlen - 5b keys
            cu_q_.push_back(0);
            cu_k_.push_back(0);
            for (int64_t b = 0; b < s.batch; ++b) {
                cu_q_.push_back(cu_q_.back() + static_cast<int32_t>(s.seqlen_q - 7 * b));
                cu_k_.push_back(cu_k_.back() + static_cast<int32_t>(s.seqlen_k - 5 * b));
            }
            params_.cu_seqlens_q = cu_q_.data();
            params_.cu_seqlens_k = cu_k_.data();
            rows_q = cu_q_.back();
            rows_k = cu_k_.back();
            batches = 1;
        }
        if (s.descales) {
            for (int64_t i = 0; i < s.batch * s.heads_kv; ++i) descale_.push_back(0.75f + 0.125f * static_cast<float>(i % 4));
            params_.q_descale = params_.k_descale = params_.v_descale = descale_.data();
        }
        q_data_ = input_values(s.input, static_cast<size_t>(batches * rows_q * s.heads_q * s.dim_qk), 1);
        k_data_ = input_values(s.input, static_cast<size_t>(batches * rows_k * s.heads_kv * s.dim_qk), 2);
        v_data_ = input_values(s.input, static_cast<size_t>(batches * rows_k * s.heads_kv * s.dim_v), 3);
        o_data_.resize(static_cast<size_t>(batches * rows_q * s.heads_q * s.dim_v) * dtype_bytes(s.output));
        outputs_.buffers.push_back(&o_data_);
        if (s.lse) {
            lse_data_.resize(static_cast<size_t>(batches * rows_q * s.heads_q) * sizeof(float));
            params_.lse = reinterpret_cast<float*>(lse_data_.data());
            outputs_.buffers.push_back(&lse_data_);
        }
        q_ = dense_view(q_data_.data(), s.input, rows_q, s.heads_q, s.dim_qk);
        k_ = dense_view(k_data_.data(), s.input, rows_k, s.heads_kv, s.dim_qk);
        v_ = dense_view(v_data_.data(), s.input, rows_k, s.heads_kv, s.dim_v);
        o_ = dense_view(o_data_.data(), s.output, rows_q, s.heads_q, s.dim_v);
    }

    void prepare() override { outputs_.fill(); }
    zyfa_status call() override { return zyfa_attn_fwd(ctx_, &params_, &q_, &k_, &v_, &o_, nullptr); }
    bool as_after_failure() const override { return outputs_.all_sentinel(); }
    void keep_reference() override { outputs_.keep(); }
    bool matches_reference() const override { return outputs_.match(); }

private:
    zyfa_context* ctx_;
    zyfa_attn_params params_;
    std::vector<int32_t> cu_q_, cu_k_;
    std::vector<float> descale_;
    std::vector<uint8_t> q_data_, k_data_, v_data_, o_data_, lse_data_;
    zyfa_tensor q_, k_, v_, o_;
    OutputBuffers outputs_;
};

// zyfa_quantize_fp8 of a BF16 [2, 12, 3, 64] tensor to e4m3fn, with flags 0, ZYFA_QUANT_HADAMARD,
// ZYFA_QUANT_SMOOTH or both (the means are a third output then).
class QuantCase final : public Case {
public:
    QuantCase(zyfa_context* ctx, int threads, uint32_t flags)
        : Case(std::string("zyfa_quantize_fp8") + ((flags & ZYFA_QUANT_HADAMARD) ? " HADAMARD" : "") +
               ((flags & ZYFA_QUANT_SMOOTH) ? " SMOOTH" : "") + " (" + std::to_string(threads) + " threads)"),
          ctx_(ctx) {
        zyfa_quant_params_init(&params_, sizeof params_);
        params_.flags = flags;
        params_.batch = 2;
        params_.seqlen = 12;
        params_.heads = 3;
        params_.head_dim = 64;
        const int64_t count = params_.batch * params_.seqlen * params_.heads * params_.head_dim;
        in_data_ = input_values(ZYFA_DTYPE_BF16, static_cast<size_t>(count), 4);
        codes_.resize(static_cast<size_t>(count));
        descale_.resize(static_cast<size_t>(params_.batch * params_.heads) * sizeof(float));
        in_ = dense_view(in_data_.data(), ZYFA_DTYPE_BF16, params_.seqlen, params_.heads, params_.head_dim);
        out_ = dense_view(codes_.data(), ZYFA_DTYPE_FP8_E4M3FN, params_.seqlen, params_.heads, params_.head_dim);
        outputs_.buffers = {&codes_, &descale_};
        if (flags & ZYFA_QUANT_SMOOTH) {
            mean_.resize(static_cast<size_t>(params_.batch * params_.heads * params_.head_dim) * sizeof(float));
            params_.smooth_mean = reinterpret_cast<float*>(mean_.data());
            outputs_.buffers.push_back(&mean_);
        }
    }

    void prepare() override { outputs_.fill(); }
    zyfa_status call() override {
        return zyfa_quantize_fp8(ctx_, &params_, &in_, &out_, reinterpret_cast<float*>(descale_.data()), nullptr);
    }
    bool as_after_failure() const override { return outputs_.all_sentinel(); }
    void keep_reference() override { outputs_.keep(); }
    bool matches_reference() const override { return outputs_.match(); }

private:
    zyfa_context* ctx_;
    zyfa_quant_params params_;
    std::vector<uint8_t> in_data_, codes_, descale_, mean_;
    zyfa_tensor in_, out_;
    OutputBuffers outputs_;
};

// zyfa_attn_merge of three parts (FP32, BF16, FP32) of [2, 9, 3, 64] into BF16 o and lse; the
// validation's per-part names and ranges are the allocations to fail.
class MergeCase final : public Case {
public:
    MergeCase(zyfa_context* ctx, int threads)
        : Case("zyfa_attn_merge 3 parts (" + std::to_string(threads) + " threads)"), ctx_(ctx) {
        zyfa_merge_params_init(&params_, sizeof params_);
        params_.num_parts = kParts;
        params_.batch = 2;
        params_.seqlen_q = 9;
        params_.heads = 3;
        params_.head_dim_v = 64;
        const int64_t count = params_.batch * params_.seqlen_q * params_.heads * params_.head_dim_v;
        const int64_t rows = params_.batch * params_.heads * params_.seqlen_q;
        for (int i = 0; i < kParts; ++i) {
            const zyfa_dtype dtype = i == 1 ? ZYFA_DTYPE_BF16 : ZYFA_DTYPE_FP32;
            part_data_[i] = input_values(dtype, static_cast<size_t>(count), static_cast<uint32_t>(10 + i));
            part_lse_[i].resize(static_cast<size_t>(rows));
            for (int64_t r = 0; r < rows; ++r) part_lse_[i][static_cast<size_t>(r)] = static_cast<float>((r * 7 + i * 3) % 11) - 5.0f;
            parts_[i] = dense_view(part_data_[i].data(), dtype, params_.seqlen_q, params_.heads, params_.head_dim_v);
            lse_ptrs_[i] = part_lse_[i].data();
        }
        o_data_.resize(static_cast<size_t>(count) * 2);
        lse_data_.resize(static_cast<size_t>(rows) * sizeof(float));
        o_ = dense_view(o_data_.data(), ZYFA_DTYPE_BF16, params_.seqlen_q, params_.heads, params_.head_dim_v);
        params_.lse = reinterpret_cast<float*>(lse_data_.data());
        outputs_.buffers = {&o_data_, &lse_data_};
    }

    void prepare() override { outputs_.fill(); }
    zyfa_status call() override { return zyfa_attn_merge(ctx_, &params_, parts_, lse_ptrs_, &o_, nullptr); }
    bool as_after_failure() const override { return outputs_.all_sentinel(); }
    void keep_reference() override { outputs_.keep(); }
    bool matches_reference() const override { return outputs_.match(); }

private:
    static constexpr int kParts = 3;
    zyfa_context* ctx_;
    zyfa_merge_params params_;
    std::vector<uint8_t> part_data_[kParts], o_data_, lse_data_;
    std::vector<float> part_lse_[kParts];
    zyfa_tensor parts_[kParts], o_;
    const float* lse_ptrs_[kParts];
    OutputBuffers outputs_;
};

}  // namespace zyfa_fault
