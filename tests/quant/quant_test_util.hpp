// Shared helpers of the quantisation tests: a seeded normal generator and e4m3 error bounds.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace quant_test {

// xorshift64* + Box-Muller: fixed seeds give the same inputs on every platform and compiler.
class NormalRng {
public:
    explicit NormalRng(uint64_t seed) : state_(seed ? seed : 0x9E3779B97F4A7C15ull) {}
    double uniform() {  // in (0, 1)
        state_ ^= state_ >> 12;
        state_ ^= state_ << 25;
        state_ ^= state_ >> 27;
        const uint64_t r = state_ * 0x2545F4914F6CDD1Dull;
        return (static_cast<double>(r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    }
    float normal() {
        const double u1 = uniform();
        const double u2 = uniform();
        return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }

private:
    uint64_t state_;
};

// Half the e4m3 quantum at the (already scaled) magnitude m: 3 mantissa bits, so the quantum of
// the binade [2^e, 2^(e+1)) is 2^(e-3); below the smallest normal 2^(1-bias) it is 2^(-bias-2).
// A value just under 2^(e+1) that rounds up to it still errs by at most half the lower quantum,
// so using the binade of the unrounded value is right.
inline double e4m3_half_quantum(double m, int bias) {
    const int min_normal_exponent = 1 - bias;
    int e = m > 0 ? static_cast<int>(std::floor(std::log2(m))) : min_normal_exponent;
    if (e < min_normal_exponent) e = min_normal_exponent;
    return std::ldexp(1.0, e - 3) / 2.0;
}

// Relative RMS of (approx - exact) over the given values.
inline double relative_rms(const std::vector<double>& approx, const std::vector<double>& exact) {
    double err = 0.0, ref = 0.0;
    for (size_t i = 0; i < exact.size(); ++i) {
        err += (approx[i] - exact[i]) * (approx[i] - exact[i]);
        ref += exact[i] * exact[i];
    }
    return ref > 0.0 ? std::sqrt(err / ref) : std::sqrt(err);
}

}  // namespace quant_test
