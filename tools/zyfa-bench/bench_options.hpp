// zyfa-bench's command line: what to run (one or more cases on one problem shape) and how.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "zyfa.h"

namespace zyfa_bench {

// A command-line mistake: printed with a hint to --help, exit code 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One timed configuration: the q/k/v dtype and the softmax mode.
struct BenchCase {
    zyfa_dtype dtype = ZYFA_DTYPE_FP8_E4M3FN;
    zyfa_softmax softmax = ZYFA_SOFTMAX_AUTO;
};

struct BenchOptions {
    zyfa_backend backend = ZYFA_BACKEND_AUTO;
    std::vector<BenchCase> cases;  // the default trio unless --dtype / --softmax narrow it to one
    zyfa_mask mask = ZYFA_MASK_CAUSAL;
    int32_t window_left = -1;
    int32_t window_right = -1;
    bool sinks = false;       // --sinks S: params.sinks, S for every query head
    float sink_value = 0.0f;
    int64_t batch = 1;
    int64_t heads_q = 8;
    int64_t heads_kv = 8;
    int64_t seqlen_q = 2048;
    int64_t seqlen_k = 2048;
    int64_t head_dim_qk = 128;
    int64_t head_dim_v = 128;
    bool varlen = false;
    int32_t page_size = 0;  // --page-size: K and V in a paged cache of this many keys per page (0: contiguous)
    bool v_transposed = false;  // --v-transposed: FP8 V in ZYFA_ATTN_V_TRANSPOSED's layout
    int repeats = 3;
    // --sustain-ms: on a GPU, calls back to back for this long before the timed ones, so that they
    // run at the clock a sustained load gets under the card's power cap (docs/performance.md)
    int64_t sustain_ms = 1000;
    int threads = 0;  // 0 = all hardware threads
    bool check = true;
    bool csv = false;
    bool help = false;
    bool progress = false;  // --progress: progress lines on stderr even when it is not a terminal
    uint64_t seed = 1;
    // Split-KV (zyfa_attn_params.num_splits and workspace): on a GPU backend the workspace that
    // zyfa_attn_fwd_workspace_size asks for is allocated unless no_workspace (then nothing splits).
    int32_t num_splits = 0;
    bool no_workspace = false;
    bool kv_report = false;  // --kv-bandwidth / --decode: K/V bytes per second under each row
};

// Throws UsageError for an unknown flag or a malformed value.
BenchOptions parse_options(int argc, char** argv);

std::string usage_text();

const char* dtype_label(zyfa_dtype dtype);        // "fp8", "fp8fnuz", "bf16", ...
const char* softmax_label(zyfa_softmax softmax);  // "auto", "exact", "lean"
const char* mask_label(zyfa_mask mask);           // "none", "causal", "causal-br"
const char* backend_label(zyfa_backend backend);  // "auto", "cpu", "hip", "cuda"

}  // namespace zyfa_bench
