#include "bench_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace zyfa_bench {
namespace {

struct Named {
    const char* name;
    int32_t value;
};

const Named kDtypes[] = {{"fp8", ZYFA_DTYPE_FP8_E4M3FN},
                         {"fp8fnuz", ZYFA_DTYPE_FP8_E4M3FNUZ},
                         {"bf16", ZYFA_DTYPE_BF16},
                         {"fp16", ZYFA_DTYPE_FP16},
                         {"fp32", ZYFA_DTYPE_FP32},
                         {"int8", ZYFA_DTYPE_INT8}};  // the INT8 Q/K mode: q, k INT8, v e4m3fn
const Named kSoftmaxes[] = {{"auto", ZYFA_SOFTMAX_AUTO}, {"exact", ZYFA_SOFTMAX_EXACT}, {"lean", ZYFA_SOFTMAX_LEAN}};
const Named kMasks[] = {{"none", ZYFA_MASK_NONE}, {"causal", ZYFA_MASK_CAUSAL}, {"causal-br", ZYFA_MASK_CAUSAL_BOTTOM_RIGHT}};
const Named kBackends[] = {
    {"auto", ZYFA_BACKEND_AUTO}, {"cpu", ZYFA_BACKEND_CPU}, {"hip", ZYFA_BACKEND_HIP}, {"cuda", ZYFA_BACKEND_CUDA}};

template <size_t N>
int32_t lookup(const Named (&table)[N], const std::string& flag, const std::string& value) {
    std::string choices;
    for (const Named& entry : table) {
        if (value == entry.name) return entry.value;
        choices += choices.empty() ? entry.name : std::string("|") + entry.name;
    }
    throw UsageError(flag + ": '" + value + "' is not one of " + choices);
}

template <size_t N>
const char* name_of(const Named (&table)[N], int32_t value) {
    for (const Named& entry : table)
        if (entry.value == value) return entry.name;
    return "?";
}

float parse_float(const std::string& flag, const std::string& text) {
    errno = 0;
    char* end = nullptr;
    const float value = std::strtof(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0) throw UsageError(flag + ": '" + text + "' is not a number");
    return value;
}

int64_t parse_int(const std::string& flag, const std::string& text, int64_t min_value) {
    errno = 0;
    char* end = nullptr;
    const long long value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0) throw UsageError(flag + ": '" + text + "' is not an integer");
    if (value < min_value) throw UsageError(flag + ": " + text + " is below " + std::to_string(min_value));
    return value;
}

// "A" or "A,B": B defaults to A.
void parse_pair(const std::string& flag, const std::string& text, int64_t min_value, int64_t& first,
                int64_t& second) {
    const size_t comma = text.find(',');
    first = parse_int(flag, text.substr(0, comma), min_value);
    second = comma == std::string::npos ? first : parse_int(flag, text.substr(comma + 1), min_value);
}

}  // namespace

const char* dtype_label(zyfa_dtype dtype) { return name_of(kDtypes, dtype); }
const char* softmax_label(zyfa_softmax softmax) { return name_of(kSoftmaxes, softmax); }
const char* mask_label(zyfa_mask mask) { return name_of(kMasks, mask); }
const char* backend_label(zyfa_backend backend) { return name_of(kBackends, backend); }

std::string usage_text() {
    return R"(usage: zyfa-bench [options]

Times zyfa_attn_fwd and checks its output against an fp64 reference. With no options it runs a
representative causal prefill on the best backend present (AUTO: HIP, then CUDA, then the CPU):
FP8 e4m3fn with LEAN softmax, FP8 e4m3fn with EXACT softmax, and BF16 with EXACT softmax, at
batch 1, 8 query heads and 8 kv heads (MHA), seqlen 2048, head_dim 128.

Inputs are random normal activations. FP8 inputs are made by zyfa_quantize_fp8 (one descale per
batch and kv head; under GQA the query heads that share a kv head share one scale); BF16/FP16
inputs are the activations rounded to nearest even. The output O is BF16 (FP32 for FP32 inputs).

options:
  --backend cpu|hip|cuda|auto   context backend (default auto)
  --dtype fp8|fp8fnuz|bf16|fp16|fp32|int8
                                q/k/v dtype; runs one case instead of the default three; int8 is
                                the INT8 Q/K mode (zyfa_quantize_int8: q per token, k per 64 keys;
                                v e4m3fn per head)
  --softmax auto|exact|lean     softmax mode; runs one case (dtype fp8 unless --dtype is given)
  --mask none|causal|causal-br  mask (default causal, top-left; causal-br = bottom-right)
  --window L,R                  sliding window, -1 = unbounded (default -1,-1)
  --sinks S                     attention sinks (params.sinks): the logit S, in the units of the
                                scaled scores, for every query head (default: none)
  --batch N                     batch size (default 1)
  --heads Q[,KV]                query heads and kv heads (default 8,8)
  --seqlen Q[,K]                query and key lengths (default 2048,2048); with --varlen the
                                longest sequence
  --head-dim QK[,V]             head dims of q/k and of v (default 128,128)
  --varlen                      random lengths in [1, seqlen] (the first sequence is the longest),
                                packed with cu_seqlens
  --page-size N                 K and V read through a block table from page pools of N keys per
                                page (1 to 256; the pages in a shuffled order, each sequence's key
                                count in seqused_k): paged K/V, as a serving stack's cache
  --v-transposed                FP8 V quantised with ZYFA_QUANT_V_TRANSPOSED and read with
                                ZYFA_ATTN_V_TRANSPOSED (the NVIDIA kernels copy it without a
                                transpose); fixed lengths, contiguous keys; BF16 cases unchanged
  --decode                      the decode step of issue 22's bar: --batch 64 --heads 32,8
                                --seqlen 1,8192 --head-dim 128 --mask causal-br --dtype bf16
                                --kv-bandwidth (later options override it)
  --num-splits N                split-KV: params.num_splits (0 = the library's heuristic, the
                                default; 1 = never split; N > 1 = at most N)
  --no-workspace                pass no split-KV workspace (nothing splits: the unsplit kernels);
                                otherwise a GPU run allocates what zyfa_attn_fwd_workspace_size
                                asks for
  --kv-bandwidth                under each row, the bytes of K and V the sequences hold divided
                                by the time, and their fraction of 4.3 TB/s (the H200's measured
                                device copy rate, issue 22), and the split count used
  --repeats N                   timed calls after one warm-up call; the median is shown (default 3)
  --sustain-ms N                on a GPU, calls back to back for N ms before the timed ones (default
                                1000): a GPU at its power cap lowers its clock within a second, so
                                without it a short run measures the boost clock; 0 = none
  --threads N                   CPU backend worker threads and reference threads (0 = all cores)
  --seed N                      seed of the random inputs (default 1)
  --no-check                    skip the fp64 reference (error columns show '-')
  --csv                         print comma-separated values instead of a table
  --progress                    progress lines on stderr (phase of each case, seconds so far)
                                even when stderr is not a terminal; at a terminal they are
                                always shown, as one line rewritten in place
  --help                        this text

columns:
  time_ms    median time of one zyfa_attn_fwd: wall time on the CPU backend (synchronous); on
             a GPU backend the time between device events recorded around each call on the
             tool's own stream (inputs in device memory; O is copied back for the check)
  TFLOP/s    FLOPs / time, counting only the (query, key) pairs the mask and window leave
             visible, exactly:
                 FLOPs = 2 * (head_dim_qk + head_dim_v) * visible_pairs * heads_q
             (a multiply-add is 2 FLOPs: Q.K^T costs 2*Dqk and P.V 2*Dv per visible pair).
             Without a mask visible_pairs = B * Sq * Sk, so FLOPs = 4 * B * Hq * Sq * Sk * D with
             D = (Dqk + Dv) / 2, the usual FlashAttention count. Causal with Sq = Sk = S gives
             S * (S + 1) / 2 pairs per sequence: the usual "half of it", larger by a factor
             (S + 1) / S (0.05% at S = 2048). Windows and varlen are counted the same exact way.
  rel_rms    sqrt(sum (O - O_ref)^2 / sum O_ref^2), O_ref the fp64 reference computed on the same
             (quantised) inputs with the same descales, so it measures the kernel's own error
  max_abs    max |O - O_ref|
The reference is plain fp64 attention; when the problem is large it runs on a subset of the
query heads (all rows of each), and the output says which heads.

exit status: 0 success, 1 a zyfa call failed (its status and message are printed), 2 bad options.
)";
}

BenchOptions parse_options(int argc, char** argv) {
    BenchOptions options;
    bool dtype_given = false, softmax_given = false;
    BenchCase single;
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i];
        std::string value;
        bool has_inline_value = false;
        const size_t equals = flag.find('=');
        if (flag.rfind("--", 0) == 0 && equals != std::string::npos) {
            value = flag.substr(equals + 1);
            flag = flag.substr(0, equals);
            has_inline_value = true;
        }
        auto take_value = [&]() -> std::string {
            if (has_inline_value) return value;
            if (i + 1 >= argc) throw UsageError(flag + " needs a value");
            return argv[++i];
        };
        auto no_value = [&]() {
            if (has_inline_value) throw UsageError(flag + " takes no value");
        };

        if (flag == "--help" || flag == "-h") {
            no_value();
            options.help = true;
        } else if (flag == "--backend") {
            options.backend = lookup(kBackends, flag, take_value());
        } else if (flag == "--dtype") {
            single.dtype = lookup(kDtypes, flag, take_value());
            dtype_given = true;
        } else if (flag == "--softmax") {
            single.softmax = lookup(kSoftmaxes, flag, take_value());
            softmax_given = true;
        } else if (flag == "--mask") {
            options.mask = lookup(kMasks, flag, take_value());
        } else if (flag == "--window") {
            int64_t left = 0, right = 0;
            parse_pair(flag, take_value(), -1, left, right);
            if (left > INT32_MAX || right > INT32_MAX) throw UsageError("--window: values must fit in int32");
            options.window_left = static_cast<int32_t>(left);
            options.window_right = static_cast<int32_t>(right);
        } else if (flag == "--sinks") {
            options.sinks = true;
            options.sink_value = parse_float(flag, take_value());
        } else if (flag == "--batch") {
            options.batch = parse_int(flag, take_value(), 0);
        } else if (flag == "--heads") {
            parse_pair(flag, take_value(), 1, options.heads_q, options.heads_kv);
        } else if (flag == "--seqlen") {
            parse_pair(flag, take_value(), 0, options.seqlen_q, options.seqlen_k);
        } else if (flag == "--head-dim") {
            parse_pair(flag, take_value(), 1, options.head_dim_qk, options.head_dim_v);
        } else if (flag == "--varlen") {
            no_value();
            options.varlen = true;
        } else if (flag == "--page-size") {
            options.page_size = static_cast<int32_t>(parse_int(flag, take_value(), 1));
            if (options.page_size > 256) throw UsageError("--page-size: at most 256 keys per page");
        } else if (flag == "--v-transposed") {
            no_value();
            options.v_transposed = true;
        } else if (flag == "--sustain-ms") {
            options.sustain_ms = parse_int(flag, take_value(), 0);
            if (options.sustain_ms > 600000) throw UsageError("--sustain-ms: at most 600000");
        } else if (flag == "--repeats") {
            options.repeats = static_cast<int>(parse_int(flag, take_value(), 1));
        } else if (flag == "--threads") {
            options.threads = static_cast<int>(parse_int(flag, take_value(), 0));
        } else if (flag == "--seed") {
            options.seed = static_cast<uint64_t>(parse_int(flag, take_value(), 0));
        } else if (flag == "--no-check") {
            no_value();
            options.check = false;
        } else if (flag == "--decode") {
            no_value();
            options.batch = 64;
            options.heads_q = 32;
            options.heads_kv = 8;
            options.seqlen_q = 1;
            options.seqlen_k = 8192;
            options.head_dim_qk = options.head_dim_v = 128;
            options.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
            single.dtype = ZYFA_DTYPE_BF16;
            dtype_given = true;
            options.kv_report = true;
        } else if (flag == "--num-splits") {
            const int64_t n = parse_int(flag, take_value(), 0);
            if (n > INT32_MAX) throw UsageError("--num-splits: must fit in int32");
            options.num_splits = static_cast<int32_t>(n);
        } else if (flag == "--no-workspace") {
            no_value();
            options.no_workspace = true;
        } else if (flag == "--kv-bandwidth") {
            no_value();
            options.kv_report = true;
        } else if (flag == "--csv") {
            no_value();
            options.csv = true;
        } else if (flag == "--progress") {
            no_value();
            options.progress = true;
        } else {
            throw UsageError("unknown option '" + std::string(argv[i]) + "'");
        }
    }
    if (options.heads_q % options.heads_kv != 0)
        throw UsageError("--heads: " + std::to_string(options.heads_q) + " query heads are not a multiple of " +
                         std::to_string(options.heads_kv) + " kv heads");
    if (options.repeats > 100000) throw UsageError("--repeats: at most 100000");
    if (options.v_transposed && (options.varlen || options.page_size > 0))
        throw UsageError("--v-transposed: fixed lengths and contiguous keys only (not with --varlen or --page-size)");
    if (options.varlen && options.seqlen_q > INT32_MAX / (options.batch > 0 ? options.batch : 1))
        throw UsageError("--varlen: batch * seqlen must fit in int32 (cu_seqlens)");

    if (dtype_given || softmax_given) {
        options.cases = {single};
    } else {
        options.cases = {{ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN},
                         {ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_EXACT},
                         {ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT}};
    }
    return options;
}

}  // namespace zyfa_bench
