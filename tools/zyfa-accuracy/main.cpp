// zyfa-accuracy: the error of zyfa's FP8 softmax schemes against fp64 on Gaussian and LLM-like
// inputs, kernel-only (inputs exact in their dtype) and end to end (quantised from fp32, with and
// without the Hadamard rotation of Q and K and, with --smooth, K smoothing). Runs the CPU model of the GPU numerics
// (cpu::attention_blocked) with explicit numerics models, so NAIVE and LEAN's ablations are
// available although the library ships only EXACT and LEAN.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy_run.hpp"
#include "npy.hpp"
#include "per_element.hpp"
#include "zyfa.h"

namespace zyfa_accuracy {
namespace {

using zyfa::cpu::NumericsModel;
using zyfa::cpu::SoftmaxScheme;

struct Options {
    std::vector<Distribution> distributions{Distribution::Gaussian, Distribution::LlmLike};
    std::vector<int64_t> seqlens{1024, 4096, 16384, 32768};
    std::vector<std::pair<int64_t, int64_t>> head_dims{{128, 128}};
    int64_t heads = 4;
    int64_t max_tiles = 32;
    uint64_t seed = 1;
    zyfa_dtype format = ZYFA_DTYPE_FP8_E4M3FN;
    int key_block = 0;  // params.key_block: 0 = the CPU backend's own (64)
    int threads = 2;
    std::string csv;
    bool study = false;
    bool per_element = false;
    bool smooth = false;                 // also the e2e rows with K smoothing (ZYFA_QUANT_SMOOTH)
    std::vector<std::string> npy_dirs;  // external activations instead of the generators
    float softmax_scale = 0.0f;          // 0: 1/sqrt(head_dim_qk)
    double check_lean_exact = 0.0;       // > 0: fail when kernel-only LEAN > this x EXACT
    bool int8 = false;                   // also the INT8 Q/K mode's rows and the summary
    double check_int8 = 0.0;             // > 0: fail when the median INT8 / FP8 e2e ratio exceeds it
};

const char* kUsage =
    "usage: zyfa-accuracy [options]\n"
    "Relative RMS error (and max abs error of O; max abs, median abs and mean of the lse error) against\n"
    "fp64 of BF16 and the FP8\n"
    "softmax schemes NAIVE, EXACT, LEAN and LEAN's ablations, run on the CPU model of the kernels.\n"
    "Causal self-attention, batch 1, heads_q = heads_kv (--npy-dir: GQA as in the files). For each\n"
    "configuration:\n"
    "  kernel: inputs exact in their dtype (fp32 activations quantised by zyfa_quantize_fp8, or\n"
    "          rounded to bf16), reference = fp64 on those decoded inputs: the kernel's own error;\n"
    "  e2e:    reference = fp64 on the fp32 activations: input quantisation + kernel error;\n"
    "  e2e-hadamard: the same with ZYFA_QUANT_HADAMARD on Q and K (V is never rotated);\n"
    "  e2e-smooth, e2e-hadamard-smooth (with --smooth): K also quantised with ZYFA_QUANT_SMOOTH;\n"
    "          their lse is corrected to the unsmoothed one, lse + softmax_scale * q . mean_k with the\n"
    "          fp32 q; the rows '... (lse: dequantised q)' correct it with the FP8 q instead;\n"
    "  e2e-hadamard-smooth-qk (with --smooth): Hadamard, K and Q smoothed, and Q smoothing's exact\n"
    "          per-key bias softmax_scale * mean_q . (k_j - mean_k) from ZYFA_QUANT_KEY_BIAS passed\n"
    "          as zyfa_attn_params.key_bias; a summary of the transforms follows the rows;\n"
    "  the row INPUT is fp64 attention on the quantised inputs: the input error alone; INPUT-QK\n"
    "          quantises only Q and K (V stays fp32): the part a rotation of Q and K can change.\n"
    "Rows of long sequences are sampled: the fp64 reference is O(S^2 D) in double, so at most\n"
    "--tiles tiles of 32 consecutive query rows per head are evaluated, spread evenly over the\n"
    "sequence and including the last tile (all rows when seqlen/32 <= --tiles). Each sampled row is\n"
    "computed exactly as in the full causal problem (same key blocks, same fp32 order).\n"
    "\n"
    "options:\n"
    "  --dist LIST        gaussian,llm (default both)\n"
    "  --seqlens LIST     default 1024,4096,16384,32768 (multiples of 32)\n"
    "  --head-dims LIST   QK/V pairs, default 128/128; e.g. 128/128,192/128\n"
    "  --heads N          default 4 (LLM-like: even heads peaked, odd heads flat)\n"
    "  --tiles N          sampled 32-row query tiles per head, default 32\n"
    "  --seed N           default 1\n"
    "  --format F         e4m3fn (default) or e4m3fnuz\n"
    "  --key-block N      params.key_block, keys per online-softmax step, for every row: 0 (default,\n"
    "                     the CPU backend's own: 64; the AMD kernels' instance), 64, or 128 (the\n"
    "                     NVIDIA sm_90 FP8 kernels' instance at head_dim_v <= 128); it moves LEAN's\n"
    "                     block scales and the running maximum both schemes round against\n"
    "  --threads N        default 2\n"
    "  --csv FILE         also write every row as CSV (columns key_block, lse_median_abs, lse_mean last)\n"
    "  --smooth           add the end-to-end rows with K smoothing (ZYFA_QUANT_SMOOTH), alone and\n"
    "                     with the Hadamard rotation of Q and K\n"
    "  --study            add the decision studies: Lean P constant c (RNE and truncating\n"
    "                     conversion), subnormal codes flushed, block-scale policy and cap, the\n"
    "                     128-key instance's anchor window against the per-block exponent,\n"
    "                     rounded row sum versus V's mean; and where LEAN's error comes from:\n"
    "                     LEAN/EXACT per query head, the Lean P code replaced by exp2 + RNE (all\n"
    "                     probabilities, or those within 3, 2, 1 octaves of the running maximum),\n"
    "                     each block's maximum on a power of two (fractional block exponent)\n"
    "  --per-element      print the per-element error of P for each method and exit\n"
    "  --npy-dir LIST     run on external activations instead of the generators: each DIR holds\n"
    "                     q.npy [seq, heads_q, head_dim_qk] (after RoPE), k.npy [seq, heads_kv,\n"
    "                     head_dim_qk], v.npy [seq, heads_kv, head_dim_v], one sequence, C order,\n"
    "                     float32 ('<f4'), float16 ('<f2') or bfloat16 bits as uint16 ('<u2');\n"
    "                     heads_q a multiple of heads_kv (GQA). Rows past the last multiple of 32\n"
    "                     are dropped. --dist, --seqlens, --head-dims, --heads, --seed are ignored;\n"
    "                     FP8 is zyfa_quantize_fp8 per (batch, head) as for the generators, except\n"
    "                     that under GQA a KV head's query heads share one Q scale (zyfa_attn_fwd's\n"
    "                     q_descale is [batch, heads_kv]); e2e's reference is fp64 on the files' values\n"
    "  --softmax-scale X  with --npy-dir, default 1/sqrt(head_dim_qk)\n"
    "  --check-lean-exact R  exit 3 when any configuration's kernel-only LEAN error exceeds R x EXACT's\n"
    "  --int8             add the INT8 Q/K mode (zyfa_quantize_int8: Q per token, K per 64 keys; V e4m3\n"
    "                     per head): kernel-int8qk (inputs exact), e2e-int8qk and e2e-int8qk-hadamard-\n"
    "                     smooth (Hadamard on Q and K, K smoothed; lse corrected), and at the end a\n"
    "                     summary per configuration: e2e error of BF16, FP8 per head (today's e2e rows)\n"
    "                     and INT8 Q/K, the ratios INT8 / FP8 and their medians over the configurations\n"
    "  --check-int8 R     with --int8: exit 3 when the median e2e ratio INT8 Q/K (Hadamard + smoothing,\n"
    "                     LEAN) / FP8 per head (LEAN) exceeds R (the bar of issue 20 is 0.35)\n"
    "  --help\n"
    "\n"
    "distributions:\n";

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(item);
    return out;
}

int64_t to_int(const std::string& s) {
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end == s.c_str() || *end != '\0') throw std::invalid_argument("not an integer: " + s);
    return v;
}

double to_double(const std::string& s) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') throw std::invalid_argument("not a number: " + s);
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            std::printf("%s%s", kUsage, kDistributionHelp);
            std::exit(0);
        } else if (a == "--dist") {
            o.distributions.clear();
            for (const auto& d : split(value())) {
                if (d == "gaussian") o.distributions.push_back(Distribution::Gaussian);
                else if (d == "llm") o.distributions.push_back(Distribution::LlmLike);
                else throw std::invalid_argument("unknown distribution " + d);
            }
        } else if (a == "--seqlens") {
            o.seqlens.clear();
            for (const auto& s : split(value())) o.seqlens.push_back(to_int(s));
        } else if (a == "--head-dims") {
            o.head_dims.clear();
            for (const auto& s : split(value())) {
                const auto slash = s.find('/');
                if (slash == std::string::npos) throw std::invalid_argument("head dims are QK/V: " + s);
                o.head_dims.push_back({to_int(s.substr(0, slash)), to_int(s.substr(slash + 1))});
            }
        } else if (a == "--heads") {
            o.heads = to_int(value());
        } else if (a == "--tiles") {
            o.max_tiles = to_int(value());
        } else if (a == "--seed") {
            o.seed = static_cast<uint64_t>(to_int(value()));
        } else if (a == "--format") {
            const std::string f = value();
            if (f == "e4m3fn") o.format = ZYFA_DTYPE_FP8_E4M3FN;
            else if (f == "e4m3fnuz") o.format = ZYFA_DTYPE_FP8_E4M3FNUZ;
            else throw std::invalid_argument("unknown format " + f);
        } else if (a == "--key-block") {
            const std::string v = value();
            // Rejected here rather than by zyfa's validation, which would only fail mid-run.
            if (v != "0" && v != "64" && v != "128")
                throw std::invalid_argument("--key-block must be 0, 64 or 128, not '" + v + "'");
            o.key_block = static_cast<int>(to_int(v));
        } else if (a == "--threads") {
            o.threads = static_cast<int>(to_int(value()));
        } else if (a == "--csv") {
            o.csv = value();
        } else if (a == "--study") {
            o.study = true;
        } else if (a == "--per-element") {
            o.per_element = true;
        } else if (a == "--smooth") {
            o.smooth = true;
        } else if (a == "--npy-dir") {
            o.npy_dirs = split(value());
        } else if (a == "--softmax-scale") {
            o.softmax_scale = static_cast<float>(to_double(value()));
            if (!(o.softmax_scale > 0.0f)) throw std::invalid_argument("--softmax-scale must be positive");
        } else if (a == "--int8") {
            o.int8 = true;
        } else if (a == "--check-int8") {
            o.check_int8 = to_double(value());
            if (!(o.check_int8 > 0.0)) throw std::invalid_argument("--check-int8 must be positive");
        } else if (a == "--check-lean-exact") {
            o.check_lean_exact = to_double(value());
            if (!(o.check_lean_exact > 0.0)) throw std::invalid_argument("--check-lean-exact must be positive");
        } else {
            throw std::invalid_argument("unknown option " + a);
        }
    }
    for (int64_t s : o.seqlens)
        if (s <= 0 || s % kTileRows != 0) throw std::invalid_argument("seqlens must be positive multiples of 32");
    if (o.heads <= 0 || o.max_tiles <= 0) throw std::invalid_argument("--heads and --tiles must be positive");
    if (o.check_int8 > 0.0 && !o.int8) throw std::invalid_argument("--check-int8 needs --int8");
    return o;
}

NumericsModel model(SoftmaxScheme scheme) {
    NumericsModel m;
    m.scheme = scheme;
    return m;
}

NumericsModel lean_ablation(bool block_scaling, bool rounded_row_sum) {
    NumericsModel m = model(SoftmaxScheme::Lean);
    m.block_scaling = block_scaling;
    m.rounded_row_sum = rounded_row_sum;
    return m;
}

class Report {
public:
    explicit Report(const std::string& csv_path) {
        if (!csv_path.empty()) {
            csv_.reset(std::fopen(csv_path.c_str(), "w"));
            if (!csv_) throw std::runtime_error("cannot write " + csv_path);
            std::fprintf(csv_.get(), "dist,seqlen,head_dim_qk,head_dim_v,heads,sampled_rows,format,inputs,scheme,"
                                     "rel_rms,max_abs,lse_max_abs,key_block,lse_median_abs,lse_mean\n");
        }
    }

    void header(const AccuracyConfig& c, const char* format) {
        const ActivationShape& s = c.shape();
        std::printf("\n== %s  seqlen %lld  head dims %lld/%lld  heads %lld/%lld  %s  key block %d  sampled rows/head "
                    "%lld of %lld\n",
                    shape_name(s).c_str(), static_cast<long long>(s.seqlen), static_cast<long long>(s.head_dim_qk),
                    static_cast<long long>(s.head_dim_v), static_cast<long long>(s.heads),
                    static_cast<long long>(s.kv_heads()), format, c.key_block(), static_cast<long long>(c.sampled_rows()),
                    static_cast<long long>(s.seqlen));
        std::printf("%-20s %-30s %10s %10s %10s %10s %10s\n", "inputs", "scheme", "rel_rms", "max_abs", "lse_err",
                    "lse_med", "lse_mean");
    }

    void row(const AccuracyConfig& c, const char* format, const char* inputs, const std::string& scheme,
             const ErrorFigures& e) {
        std::printf("%-20s %-30s %10.4e %10.3e %10.3e %10.3e %+10.2e\n", inputs, scheme.c_str(), e.rel_rms, e.max_abs,
                    e.lse_max_abs, e.lse_median_abs, e.lse_mean);
        std::fflush(stdout);
        if (csv_) {
            const ActivationShape& s = c.shape();
            std::fprintf(csv_.get(), "%s,%lld,%lld,%lld,%lld,%lld,%s,%s,%s,%.6e,%.6e,%.6e,%d,%.6e,%.6e\n",
                         shape_name(s).c_str(), static_cast<long long>(s.seqlen),
                         static_cast<long long>(s.head_dim_qk), static_cast<long long>(s.head_dim_v),
                         static_cast<long long>(s.heads), static_cast<long long>(c.sampled_rows()), format, inputs,
                         scheme.c_str(), e.rel_rms, e.max_abs, e.lse_max_abs, c.key_block(), e.lse_median_abs,
                         e.lse_mean);
            std::fflush(csv_.get());
        }
    }

private:
    struct Closer {
        void operator()(std::FILE* f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> csv_;
};

// End-to-end O errors (rel_rms against fp64 on the fp32 activations) of one configuration, for the
// INT8 summary.
struct E2eSummary {
    std::string name;
    double bf16 = 0.0;
    double fp8_exact = 0.0, fp8_lean = 0.0;            // per head, no transform: today's FP8
    double int8_exact = 0.0, int8_lean = 0.0;          // INT8 Q/K, no transform
    double int8_hs_exact = 0.0, int8_hs_lean = 0.0;    // INT8 Q/K, Hadamard on Q and K, K smoothed
    double fp8_hs_exact = 0.0, fp8_hs_lean = 0.0;      // FP8, Hadamard on Q and K, K smoothed (--smooth)
    double fp8_hsq_exact = 0.0, fp8_hsq_lean = 0.0;    // the same with Q smoothed and its key bias
};

// The INT8 Q/K mode's rows of one configuration (--int8).
void run_int8_rows(const AccuracyConfig& c, const Options& o, Report& report, const char* format,
                   const TileOutputs& ref_orig, const KernelInputs& orig, E2eSummary& summary) {
    {
        const KernelInputs in = c.int8_qk(o.format, false, false);
        const TileOutputs ref = c.reference(in);
        for (auto [name, scheme] : {std::pair<const char*, SoftmaxScheme>{"EXACT", SoftmaxScheme::Exact},
                                    {"LEAN", SoftmaxScheme::Lean}})
            report.row(c, format, "kernel-int8qk", name, AccuracyConfig::compare(c.run_model(in, model(scheme)), ref));
    }
    for (int t = 0; t < 2; ++t) {
        const bool transforms = t == 1;
        const char* inputs = transforms ? "e2e-int8qk-had-smooth" : "e2e-int8qk";
        const KernelInputs in = c.int8_qk(o.format, transforms, transforms);
        auto unsmoothed = [&](TileOutputs out) {
            if (transforms) c.correct_smoothed_lse(out, in, false);
            return out;
        };
        report.row(c, format, inputs, "INPUT (fp64 on int8/fp8)", AccuracyConfig::compare(unsmoothed(c.reference(in)), ref_orig));
        report.row(c, format, inputs, "INPUT-QK (int8 Q+K only)",
                   AccuracyConfig::compare(unsmoothed(c.reference(in, &orig)), ref_orig));
        for (auto [name, scheme] : {std::pair<const char*, SoftmaxScheme>{"EXACT", SoftmaxScheme::Exact},
                                    {"LEAN", SoftmaxScheme::Lean}}) {
            const ErrorFigures e = AccuracyConfig::compare(unsmoothed(c.run_model(in, model(scheme))), ref_orig);
            report.row(c, format, inputs, name, e);
            const bool lean = scheme == SoftmaxScheme::Lean;
            (transforms ? (lean ? summary.int8_hs_lean : summary.int8_hs_exact)
                        : (lean ? summary.int8_lean : summary.int8_exact)) = e.rel_rms;
        }
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? NAN : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The INT8 summary table; returns the median ratio INT8 Q/K (Hadamard + smoothing, LEAN) / FP8 LEAN.
double print_int8_summary(const std::vector<E2eSummary>& rows) {
    std::printf("\n== INT8 Q/K mode, end to end (O rel_rms vs fp64 on the fp32 activations; FP8 = zyfa_quantize_fp8 "
                "per head, no transform; INT8 = zyfa_quantize_int8 Q per token, K per 64 keys; V e4m3 per head in both)\n");
    std::printf("%-28s %10s %10s %10s %10s %10s %10s %10s %9s %9s %9s\n", "configuration", "BF16", "FP8 EXACT",
                "FP8 LEAN", "I8 EXACT", "I8 LEAN", "I8HS EXACT", "I8HS LEAN", "I8/FP8", "I8HS/FP8", "I8HS/BF16");
    std::vector<double> plain, hs, hs_exact, vs_bf16;
    for (const E2eSummary& r : rows) {
        plain.push_back(r.int8_lean / r.fp8_lean);
        hs.push_back(r.int8_hs_lean / r.fp8_lean);
        hs_exact.push_back(r.int8_hs_exact / r.fp8_exact);
        vs_bf16.push_back(r.int8_hs_lean / r.bf16);
        std::printf("%-28s %10.4e %10.4e %10.4e %10.4e %10.4e %10.4e %10.4e %9.3f %9.3f %9.2f\n", r.name.c_str(), r.bf16,
                    r.fp8_exact, r.fp8_lean, r.int8_exact, r.int8_lean, r.int8_hs_exact, r.int8_hs_lean, plain.back(),
                    hs.back(), vs_bf16.back());
    }
    const double m = median(hs);
    std::printf("median over %zu configurations: INT8/FP8 (LEAN) %.3f; INT8 Hadamard+smooth / FP8: LEAN %.3f, EXACT %.3f; "
                "INT8 Hadamard+smooth LEAN / BF16 %.2f\n",
                rows.size(), median(plain), m, median(hs_exact), median(vs_bf16));
    return m;
}

// The transforms' summary (--smooth): FP8 with Hadamard + K smoothing (zyfa_quantize_fp8's flags)
// and with Q smoothed too and its exact per-key bias (ZYFA_QUANT_KEY_BIAS), against per-head FP8.
void print_transform_summary(const std::vector<E2eSummary>& rows) {
    std::printf("\n== FP8 transforms, end to end (O rel_rms vs fp64 on the fp32 activations; ratios to per-head FP8 "
                "of the same softmax; HS = Hadamard + K smoothing, HSQ = HS + Q smoothing with its exact per-key "
                "bias)\n");
    std::printf("%-28s %10s %10s %10s %10s %10s %10s %9s %9s %9s %9s\n", "configuration", "FP8 EXACT", "FP8 LEAN",
                "HS EXACT", "HS LEAN", "HSQ EXACT", "HSQ LEAN", "HS/FP8 E", "HS/FP8 L", "HSQ/FP8 E", "HSQ/FP8 L");
    std::vector<double> hs_e, hs_l, hsq_e, hsq_l;
    for (const E2eSummary& r : rows) {
        hs_e.push_back(r.fp8_hs_exact / r.fp8_exact);
        hs_l.push_back(r.fp8_hs_lean / r.fp8_lean);
        hsq_e.push_back(r.fp8_hsq_exact / r.fp8_exact);
        hsq_l.push_back(r.fp8_hsq_lean / r.fp8_lean);
        std::printf("%-28s %10.4e %10.4e %10.4e %10.4e %10.4e %10.4e %9.3f %9.3f %9.3f %9.3f\n", r.name.c_str(),
                    r.fp8_exact, r.fp8_lean, r.fp8_hs_exact, r.fp8_hs_lean, r.fp8_hsq_exact, r.fp8_hsq_lean,
                    hs_e.back(), hs_l.back(), hsq_e.back(), hsq_l.back());
    }
    std::printf("median over %zu configurations: HS/FP8 EXACT %.3f, LEAN %.3f; HSQ/FP8 EXACT %.3f, LEAN %.3f\n",
                rows.size(), median(hs_e), median(hs_l), median(hsq_e), median(hsq_l));
}

// Returns kernel-only LEAN error / EXACT error.
double run_config(const AccuracyConfig& c, const Options& o, Report& report, E2eSummary& summary) {
    summary.name = shape_name(c.shape());
    const char* format = o.format == ZYFA_DTYPE_FP8_E4M3FN ? "e4m3fn" : "e4m3fnuz";
    report.header(c, format);
    const KernelInputs fp8 = c.fp8(o.format, false);
    const TileOutputs ref_fp8 = c.reference(fp8);
    auto kernel = [&](const std::string& name, const NumericsModel& m) {
        const ErrorFigures e = AccuracyConfig::compare(c.run_model(fp8, m), ref_fp8);
        report.row(c, format, "kernel", name, e);
        return e.rel_rms;
    };
    {
        const KernelInputs bf = c.bf16();
        report.row(c, format, "kernel", "BF16", AccuracyConfig::compare(c.run_model(bf, model(SoftmaxScheme::Exact)),
                                                                        c.reference(bf)));
    }
    kernel("NAIVE", model(SoftmaxScheme::Naive));
    const TileOutputs exact_out = c.run_model(fp8, model(SoftmaxScheme::Exact));
    const TileOutputs lean_out = c.run_model(fp8, model(SoftmaxScheme::Lean));
    const double exact = AccuracyConfig::compare(exact_out, ref_fp8).rel_rms;
    const double lean = AccuracyConfig::compare(lean_out, ref_fp8).rel_rms;
    report.row(c, format, "kernel", "EXACT", AccuracyConfig::compare(exact_out, ref_fp8));
    report.row(c, format, "kernel", "LEAN", AccuracyConfig::compare(lean_out, ref_fp8));
    kernel("LEAN-P", lean_ablation(false, false));
    kernel("LEAN-P+blockscale", lean_ablation(true, false));
    kernel("LEAN-P+rowsum", lean_ablation(false, true));

    if (o.study) {
        const std::vector<double> exact_heads = AccuracyConfig::per_head_rel_rms(exact_out, ref_fp8, c.shape());
        const std::vector<double> lean_heads = AccuracyConfig::per_head_rel_rms(lean_out, ref_fp8, c.shape());
        std::printf("%-20s %-30s", "kernel", "LEAN/EXACT per query head");
        for (size_t h = 0; h < exact_heads.size(); ++h) std::printf(" %.3f", lean_heads[h] / exact_heads[h]);
        std::printf("\n");
        // Where LEAN's error comes from: the Lean P code replaced by exp2 rounded to e4m3 (RNE, at
        // the block's scale) for every probability, or for those within 1, 2, 3 octaves of the
        // running maximum; each block's maximum on a power of two (a fractional block exponent).
        for (float from : {-INFINITY, -3.0f, -2.0f, -1.0f}) {
            NumericsModel m = model(SoftmaxScheme::Lean);
            m.lean_exact_p_from = from;
            char name[64];
            if (std::isinf(from)) std::snprintf(name, sizeof name, "LEAN exp2+RNE codes");
            else std::snprintf(name, sizeof name, "LEAN exp2+RNE for t >= %g", from);
            kernel(name, m);
        }
        // (This study and the cap's below are of the per-block exponent, at either key block.)
        NumericsModel fractional = model(SoftmaxScheme::Lean);
        fractional.lean_p_scale = NumericsModel::LeanPScale::PerBlockExponent;
        fractional.lean_fractional_block_exponent = true;
        kernel("LEAN fractional block exp.", fractional);
        for (float c_rne : {-0.625f, -0.5625f, -0.484375f, -0.453125f, -0.4375f, -0.375f, -0.25f}) {
            NumericsModel m = model(SoftmaxScheme::Lean);
            m.lean_centre = c_rne;
            char name[64];
            std::snprintf(name, sizeof name, "LEAN c=%+.6g", c_rne);
            kernel(name, m);
        }
        NumericsModel trunc = model(SoftmaxScheme::Lean);
        trunc.rounding = zyfa::numerics::FloatToIntRounding::TowardZero;
        trunc.lean_centre = zyfa::numerics::lean_p_centre_for(trunc.rounding);
        kernel("LEAN trunc (c+0.5)", trunc);
        NumericsModel flush = model(SoftmaxScheme::Lean);
        flush.flush_subnormal_codes = true;
        kernel("LEAN flush-subnormal", flush);
        for (int cap : {8, 12, 16, 24}) {
            NumericsModel m = model(SoftmaxScheme::Lean);
            m.lean_p_scale = NumericsModel::LeanPScale::PerBlockExponent;
            m.max_block_exponent = cap;
            char name[64];
            std::snprintf(name, sizeof name, "LEAN blockscale cap %d", cap);
            kernel(name, m);
        }
        // LEAN's P scale (kernels/common/lean_anchor.h): the 64-key instance's per-block exponent
        // against the 128-key instance's anchor, with windows of 1 to 6 octaves below it.
        {
            NumericsModel per_block = model(SoftmaxScheme::Lean);
            per_block.lean_p_scale = NumericsModel::LeanPScale::PerBlockExponent;
            kernel("LEAN per-block exponent", per_block);
            for (float below : {1.0f, 2.0f, 3.0f, 4.0f, 6.0f}) {
                NumericsModel m = model(SoftmaxScheme::Lean);
                m.lean_p_scale = NumericsModel::LeanPScale::LazyAnchor;
                m.lean_anchor_below = below;
                char name[64];
                std::snprintf(name, sizeof name, "LEAN anchor, window %g", below);
                kernel(name, m);
            }
        }
        kernel("LEAN no-blockscale", lean_ablation(false, true));
        kernel("LEAN unrounded-sum", lean_ablation(true, false));
    }

    const KernelInputs orig = c.original();
    const TileOutputs ref_orig = c.reference(orig);
    {
        const KernelInputs bf = c.bf16();
        report.row(c, format, "e2e", "INPUT (fp64 on bf16)", AccuracyConfig::compare(c.reference(bf), ref_orig));
        const ErrorFigures e = AccuracyConfig::compare(c.run_model(bf, model(SoftmaxScheme::Exact)), ref_orig);
        report.row(c, format, "e2e", "BF16", e);
        summary.bf16 = e.rel_rms;
    }
    // t = 4: Hadamard, K and Q smoothed, with the exact per-key bias (KernelInputs::key_bias).
    const int transforms = o.smooth ? 5 : 2;
    for (int t = 0; t < transforms; ++t) {
        const bool hadamard = (t & 1) != 0 || t == 4, smooth = (t & 2) != 0 || t == 4, smooth_q = t == 4;
        static const char* const kInputs[] = {"e2e", "e2e-hadamard", "e2e-smooth", "e2e-hadamard-smooth",
                                              "e2e-hadamard-smooth-qk"};
        const char* inputs = kInputs[t];
        const KernelInputs in = t == 0 ? fp8 : c.fp8(o.format, hadamard, smooth, smooth_q);
        // With K smoothed, every lse is the smoothed one until corrected (O needs nothing).
        auto unsmoothed = [&](TileOutputs out, bool dequantised_q = false) {
            if (smooth) c.correct_smoothed_lse(out, in, dequantised_q);
            return out;
        };
        report.row(c, format, inputs, "INPUT (fp64 on fp8)", AccuracyConfig::compare(unsmoothed(c.reference(in)), ref_orig));
        report.row(c, format, inputs, "INPUT-QK (fp8 Q+K only)",
                   AccuracyConfig::compare(unsmoothed(c.reference(in, &orig)), ref_orig));
        for (auto [name, scheme] : {std::pair<const char*, SoftmaxScheme>{"NAIVE", SoftmaxScheme::Naive},
                                    {"EXACT", SoftmaxScheme::Exact},
                                    {"LEAN", SoftmaxScheme::Lean}}) {
            const TileOutputs got = c.run_model(in, model(scheme));
            const ErrorFigures e = AccuracyConfig::compare(unsmoothed(got), ref_orig);
            report.row(c, format, inputs, name, e);
            if (t == 0 && scheme == SoftmaxScheme::Exact) summary.fp8_exact = e.rel_rms;
            if (t == 0 && scheme == SoftmaxScheme::Lean) summary.fp8_lean = e.rel_rms;
            if (t == 3 && scheme == SoftmaxScheme::Exact) summary.fp8_hs_exact = e.rel_rms;
            if (t == 3 && scheme == SoftmaxScheme::Lean) summary.fp8_hs_lean = e.rel_rms;
            if (t == 4 && scheme == SoftmaxScheme::Exact) summary.fp8_hsq_exact = e.rel_rms;
            if (t == 4 && scheme == SoftmaxScheme::Lean) summary.fp8_hsq_lean = e.rel_rms;
            // The dequantised q of a smoothed Q is q - mean_q: its lse correction is not this one.
            if (smooth && !smooth_q && scheme != SoftmaxScheme::Naive)
                report.row(c, format, inputs, std::string(name) + " (lse: dequantised q)",
                           AccuracyConfig::compare(unsmoothed(got, true), ref_orig));
        }
    }
    if (o.int8) run_int8_rows(c, o, report, format, ref_orig, orig, summary);
    return lean / exact;
}

int run(const Options& o) {
    if (o.per_element) {
        print_per_element_study();
        return 0;
    }
    zyfa_context_options copts;
    zyfa_context_options_init(&copts, sizeof copts);
    copts.backend = ZYFA_BACKEND_CPU;
    copts.num_threads = o.threads;
    zyfa_context* ctx = nullptr;
    if (zyfa_context_create(&copts, &ctx) != ZYFA_SUCCESS)
        throw std::runtime_error(std::string("zyfa_context_create: ") + zyfa_last_error_message());
    std::unique_ptr<zyfa_context, void (*)(zyfa_context*)> guard(ctx, zyfa_context_destroy);
    zyfa::cpu::WorkerPool pool(o.threads);
    Report report(o.csv);
    int status = 0;
    auto check = [&](const ActivationShape& s, double ratio) {
        if (o.check_lean_exact > 0.0 && !(ratio <= o.check_lean_exact)) {
            std::fprintf(stderr, "zyfa-accuracy: %s: kernel-only LEAN is %.3fx EXACT, above --check-lean-exact %.3g\n",
                         shape_name(s).c_str(), ratio, o.check_lean_exact);
            status = 3;
        }
    };
    std::vector<E2eSummary> summaries;
    auto finish = [&]() {
        if (o.smooth) print_transform_summary(summaries);
        if (!o.int8) return status;
        const double m = print_int8_summary(summaries);
        if (o.check_int8 > 0.0 && !(m <= o.check_int8)) {
            std::fprintf(stderr, "zyfa-accuracy: the median INT8 Q/K / FP8 e2e ratio is %.3f, above --check-int8 %.3g\n",
                         m, o.check_int8);
            return 3;
        }
        return status;
    };
    for (const std::string& dir : o.npy_dirs) {
        ActivationShape shape;
        Activations act = load_npy_activations(dir, o.softmax_scale, shape);
        const AccuracyConfig config(shape, std::move(act), o.max_tiles, pool, ctx, o.key_block);
        summaries.emplace_back();
        check(shape, run_config(config, o, report, summaries.back()));
    }
    if (!o.npy_dirs.empty()) return finish();
    for (Distribution d : o.distributions)
        for (auto [dqk, dv] : o.head_dims)
            for (int64_t s : o.seqlens) {
                ActivationShape shape;
                shape.distribution = d;
                shape.seqlen = s;
                shape.heads = o.heads;
                shape.head_dim_qk = dqk;
                shape.head_dim_v = dv;
                shape.seed = o.seed;
                const AccuracyConfig config(shape, o.max_tiles, pool, ctx, o.key_block);
                summaries.emplace_back();
                check(shape, run_config(config, o, report, summaries.back()));
            }
    return finish();
}

}  // namespace
}  // namespace zyfa_accuracy

int main(int argc, char** argv) {
    try {
        return zyfa_accuracy::run(zyfa_accuracy::parse(argc, argv));
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "zyfa-accuracy: %s (see --help)\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "zyfa-accuracy: %s\n", e.what());
        return 1;
    }
}
