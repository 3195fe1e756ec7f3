// Gaussian and LLM-like activations. The LLM-like generator imitates what makes real prefill
// activations hard for FP8, each part with its own fixed seed stream so that shapes stay comparable:
// outlier channels in Q and K, RoPE, an attention sink at key 0, peaked and flat heads, and V with
// per-channel scales and non-zero channel means.
#include "activations.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace zyfa_accuracy {

const char* const kDistributionHelp =
    "  gaussian  Q, K, V ~ N(0, 1) i.i.d., softmax scale 1/sqrt(head_dim_qk).\n"
    "  llm       LLM-like, per head h (seeded by --seed):\n"
    "            - Q, K ~ N(0, 1); head_dim_qk/32 outlier channels (at least 2) per head, picked in\n"
    "              the low-frequency half of the RoPE pairs, scaled by a factor uniform in [10, 50]\n"
    "              (the same channel in Q and K), K's outlier channels also carry a mean of 1 x factor;\n"
    "            - RoPE (NeoX halves, base 10000) on Q and K at their positions;\n"
    "            - head temperature: Q is rescaled so that the scaled scores of non-sink keys have\n"
    "              standard deviation tau over the keys of a row: even heads peaked (tau uniform in\n"
    "              [2.5, 4]), odd heads flat (tau uniform in [0.3, 1]), measured on 16 rows x 256 keys;\n"
    "            - attention sink: after RoPE one channel (the last, otherwise quiet) of every query\n"
    "              carries +a (4x the RMS of Q's elements) and key 0 carries +b, so key 0 scores g\n"
    "              above its ordinary score, g uniform in [6, 12] natural-log units per head (ln 4096\n"
    "              = 8.3: at 4K the sink holds about half the mass of a flat head);\n"
    "            - V: channel d is s_d * (N(0, 1) + mu_d), s_d log-uniform in [1/4, 4], mu_d ~ N(0, 1).\n"
    "            softmax scale 1/sqrt(head_dim_qk).\n";

const char* distribution_name(Distribution d) {
    return d == Distribution::Gaussian ? "gaussian" : d == Distribution::LlmLike ? "llm" : "npy";
}

std::string shape_name(const ActivationShape& s) {
    return s.distribution == Distribution::External ? s.label : distribution_name(s.distribution);
}

namespace {

// Separate streams per purpose and head: changing the seqlen does not reshuffle the head setup.
std::mt19937_64 stream(uint64_t seed, uint64_t purpose, int64_t head) {
    std::seed_seq seq{seed, purpose, static_cast<uint64_t>(head)};
    return std::mt19937_64(seq);
}

void fill_normal(std::vector<float>& x, int64_t seqlen, int64_t heads, int64_t dim, int64_t h, std::mt19937_64& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t s = 0; s < seqlen; ++s)
        for (int64_t d = 0; d < dim; ++d) x[static_cast<size_t>((s * heads + h) * dim + d)] = normal(rng);
}

// NeoX-style RoPE: pairs (i, i + dim/2), angle pos * base^(-2i/dim).
void apply_rope(std::vector<float>& x, int64_t seqlen, int64_t heads, int64_t dim, int64_t h) {
    const int64_t half = dim / 2;
    for (int64_t s = 0; s < seqlen; ++s) {
        float* row = &x[static_cast<size_t>((s * heads + h) * dim)];
        for (int64_t i = 0; i < half; ++i) {
            const double angle = static_cast<double>(s) * std::pow(10000.0, -2.0 * i / dim);
            const double c = std::cos(angle), sn = std::sin(angle);
            const double a = row[i], b = row[i + half];
            row[i] = static_cast<float>(a * c - b * sn);
            row[i + half] = static_cast<float>(a * sn + b * c);
        }
    }
}

double dot(const float* a, const float* b, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(a[i]) * b[i];
    return sum;
}

void make_llm_head(const ActivationShape& sh, int64_t h, float softmax_scale, Activations& a) {
    const int64_t S = sh.seqlen, H = sh.heads, D = sh.head_dim_qk, DV = sh.head_dim_v;
    std::mt19937_64 rng_q = stream(sh.seed, 1, h), rng_k = stream(sh.seed, 2, h), rng_v = stream(sh.seed, 3, h);
    std::mt19937_64 setup = stream(sh.seed, 4, h);
    fill_normal(a.q, S, H, D, h, rng_q);
    fill_normal(a.k, S, H, D, h, rng_k);

    // Outlier channels in the low-frequency half of the pairs (index in [D/4, D/2) or its partner).
    const int64_t outliers = std::max<int64_t>(2, D / 32);
    std::uniform_int_distribution<int64_t> pick(D / 4, D / 2 - 2);  // D/2 - 1 is the sink's pair
    std::uniform_real_distribution<float> factor(10.0f, 50.0f);
    std::uniform_int_distribution<int> partner(0, 1);
    for (int64_t o = 0; o < outliers; ++o) {
        const int64_t d = pick(setup) + (partner(setup) ? D / 2 : 0);
        const float f = factor(setup);
        for (int64_t s = 0; s < S; ++s) {
            a.q[static_cast<size_t>((s * H + h) * D + d)] *= f;
            float& kv = a.k[static_cast<size_t>((s * H + h) * D + d)];
            kv = f * (kv + 1.0f);
        }
    }
    apply_rope(a.q, S, H, D, h);
    apply_rope(a.k, S, H, D, h);

    // The sink channel (the last) is quiet in ordinary rows; the sink below makes it loud.
    for (int64_t s = 0; s < S; ++s) {
        a.q[static_cast<size_t>((s * H + h) * D + D - 1)] = 0.0f;
        a.k[static_cast<size_t>((s * H + h) * D + D - 1)] *= 0.1f;
    }

    // Temperature: scale Q so that scaled scores of ordinary keys have standard deviation tau.
    const bool peaked = h % 2 == 0;
    std::uniform_real_distribution<float> tau_dist(peaked ? 2.5f : 0.3f, peaked ? 4.0f : 1.0f);
    const double tau = tau_dist(setup);
    // Peakedness is the spread over keys within a query row (per-row offsets do not matter to
    // softmax): the mean over 16 sampled rows of the standard deviation over 256 sampled keys.
    std::uniform_int_distribution<int64_t> pos(1, S - 1);
    double var_sum = 0.0;
    const int rows = 16, keys = 256;
    for (int r = 0; r < rows; ++r) {
        const int64_t qi = pos(setup);
        double sum = 0.0, sum2 = 0.0;
        for (int j = 0; j < keys; ++j) {
            const int64_t kj = pos(setup);
            const double sc = softmax_scale * dot(&a.q[static_cast<size_t>((qi * H + h) * D)],
                                                  &a.k[static_cast<size_t>((kj * H + h) * D)], D);
            sum += sc;
            sum2 += sc * sc;
        }
        var_sum += std::max(0.0, sum2 / keys - (sum / keys) * (sum / keys));
    }
    const double sd = std::sqrt(std::max(1e-30, var_sum / rows));
    const float q_gain = static_cast<float>(tau / sd);
    for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d) a.q[static_cast<size_t>((s * H + h) * D + d)] *= q_gain;

    // Sink: the last channel (after RoPE) of every query gets +qa, key 0 gets +kb, so key 0's scaled
    // score rises by softmax_scale * qa * kb = g (plus its ordinary score, mean ~ mean * q_gain).
    std::uniform_real_distribution<float> gap(6.0f, 12.0f);
    const double g = gap(setup);
    // qa: 4x the RMS of the query's ordinary channels (a large, not massive, activation).
    double q_energy = 0.0;
    for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < D; ++d) {
            const double x = a.q[static_cast<size_t>((s * H + h) * D + d)];
            q_energy += x * x;
        }
    const double qa = 4.0 * std::sqrt(q_energy / static_cast<double>(S * D));
    const double kb = g / (softmax_scale * qa);
    for (int64_t s = 0; s < S; ++s) a.q[static_cast<size_t>((s * H + h) * D + D - 1)] += static_cast<float>(qa);
    a.k[static_cast<size_t>(h * D + D - 1)] += static_cast<float>(kb);

    // V with per-channel scale spread and non-zero channel means.
    std::uniform_real_distribution<double> log_scale(std::log(0.25), std::log(4.0));
    std::normal_distribution<double> channel_mean(0.0, 1.0);
    std::vector<double> scale(static_cast<size_t>(DV)), mu(static_cast<size_t>(DV));
    for (int64_t d = 0; d < DV; ++d) {
        scale[d] = std::exp(log_scale(setup));
        mu[d] = channel_mean(setup);
    }
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int64_t s = 0; s < S; ++s)
        for (int64_t d = 0; d < DV; ++d)
            a.v[static_cast<size_t>((s * H + h) * DV + d)] = static_cast<float>(scale[d] * (normal(rng_v) + mu[d]));
}

}  // namespace

Activations make_activations(const ActivationShape& sh) {
    Activations a;
    const int64_t S = sh.seqlen, H = sh.heads;
    a.q.assign(static_cast<size_t>(S * H * sh.head_dim_qk), 0.0f);
    a.k.assign(a.q.size(), 0.0f);
    a.v.assign(static_cast<size_t>(S * H * sh.head_dim_v), 0.0f);
    a.softmax_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(sh.head_dim_qk)));
    for (int64_t h = 0; h < H; ++h) {
        if (sh.distribution == Distribution::LlmLike) {
            make_llm_head(sh, h, a.softmax_scale, a);
        } else {
            std::mt19937_64 rq = stream(sh.seed, 1, h), rk = stream(sh.seed, 2, h), rv = stream(sh.seed, 3, h);
            fill_normal(a.q, S, H, sh.head_dim_qk, h, rq);
            fill_normal(a.k, S, H, sh.head_dim_qk, h, rk);
            fill_normal(a.v, S, H, sh.head_dim_v, h, rv);
        }
    }
    return a;
}

}  // namespace zyfa_accuracy
