// zyfa-bench's host buffers: random normal activations, once per run, and from them the q/k/v/o
// tensors of each case (FP8 through zyfa_quantize_fp8, 16-bit by rounding, FP32 as they are).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_options.hpp"
#include "zyfa.h"

namespace zyfa_bench {

// A failed zyfa call: its status, and the message zyfa_last_error_message gave right after it.
class LibraryError : public std::runtime_error {
public:
    LibraryError(const std::string& call, zyfa_status status);
    zyfa_status status() const { return status_; }

private:
    zyfa_status status_;
};

// Throws LibraryError when status is not ZYFA_SUCCESS.
void check_status(const char* call, zyfa_status status);

// The fp32 activations and the sequence layout shared by every case of a run. Tensors are
// [batch, seq, heads, dim], dense, or packed [total rows, heads, dim] when varlen.
struct Activations {
    std::vector<int64_t> lengths_q, lengths_k;  // per sequence
    std::vector<int32_t> cu_seqlens_q, cu_seqlens_k;  // varlen only
    int64_t rows_q = 0, rows_k = 0;  // rows of the seq axis over the whole batch
    std::vector<float> q, k, v;
};

Activations make_activations(const BenchOptions& options);

// One tensor's storage and its view.
struct HostTensor {
    std::vector<uint8_t> bytes;
    zyfa_tensor view{};
};

// Everything zyfa_attn_fwd reads and writes for one case; params point into this object, so it
// is neither copied nor moved once filled.
struct CaseBuffers {
    HostTensor q, k, v, o;
    // [batch, heads_kv], FP8 only; INT8 q/k: q per token [batch, heads_q, seqlen_q], k per 64 keys
    // [batch, heads_kv, ceil(seqlen_k / 64)], v per head
    std::vector<float> q_descale, k_descale, v_descale;
    std::vector<float> sinks;                     // [heads_q], with --sinks only
    std::vector<int32_t> block_table, seqused_k;  // --page-size: k and v hold the page pools
    zyfa_attn_params params{};

    CaseBuffers() = default;
    CaseBuffers(const CaseBuffers&) = delete;
    CaseBuffers& operator=(const CaseBuffers&) = delete;
};

// Fills `buffers` for one case; FP8 inputs are quantised on `ctx` (throws LibraryError).
void make_case_buffers(zyfa_context* ctx, const BenchOptions& options, const BenchCase& bench_case,
                       const Activations& activations, CaseBuffers& buffers);

}  // namespace zyfa_bench
