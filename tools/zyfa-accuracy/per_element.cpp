#include "per_element.hpp"

#include <cmath>
#include <cstdio>
#include <functional>

#include "common/block_scale.h"
#include "common/fp8_e4m3.h"
#include "common/lean_p.h"

namespace zyfa_accuracy {

namespace zn = zyfa::numerics;

namespace {

struct Stats {
    double rms = 0.0, mean = 0.0, max_abs = 0.0;
    double log_sd = 0.0;  // standard deviation of log2(decoded / exact): what a rounded row sum sees
};

// x uniform over [-8, 0) (eight octaves below the block maximum), scaled by 2^8 as the kernels do.
Stats over_grid(const std::function<double(double)>& decoded_of_x) {
    const int n = 1 << 18;
    Stats s;
    double lsum = 0.0, lsum2 = 0.0;
    for (int i = 0; i < n; ++i) {
        const double x = -8.0 * (i + 0.5) / n;
        const double exact = std::exp2(x + 8.0);
        const double got = decoded_of_x(x);
        const double rel = got / exact - 1.0;
        s.rms += rel * rel;
        s.mean += rel;
        s.max_abs = std::fmax(s.max_abs, std::fabs(rel));
        const double l = std::log2(got / exact);
        lsum += l;
        lsum2 += l * l;
    }
    s.rms = std::sqrt(s.rms / n);
    s.mean /= n;
    s.log_sd = std::sqrt(lsum2 / n - (lsum / n) * (lsum / n));
    return s;
}

void print(const char* name, const Stats& s) {
    std::printf("%-52s %8.4f %+9.5f %8.4f %8.4f\n", name, s.rms, s.mean, s.max_abs, s.log_sd);
}

}  // namespace

void print_per_element_study() {
    const zn::Fp8Format f = zn::Fp8Format::E4M3FN;
    std::printf("Per-element relative error of P (x uniform over 8 octaves below the maximum, e4m3fn, scale 2^8)\n");
    std::printf("%-52s %8s %9s %8s %8s\n", "method", "rms", "mean", "max", "sd_log2");
    print("exp2 + RNE to e4m3 (EXACT)", over_grid([&](double x) {
              return zn::fp8_decode(zn::fp8_encode(static_cast<float>(std::exp2(x + 8.0)), f), f);
          }));
    // The row maximum sits at x = 0 (code 120 + c): c in (-0.5, 0.5) keeps it off a tie.
    const float centres[] = {-0.75f, -0.625f, -0.5625f, -0.5f, -0.46875f, -0.4375f, -0.375f, -0.25f, 0.0f};
    for (zn::FloatToIntRounding rounding : {zn::FloatToIntRounding::NearestEven, zn::FloatToIntRounding::TowardZero}) {
        for (float c : centres) {
            const float centre = rounding == zn::FloatToIntRounding::NearestEven ? c : c + 0.5f;
            const float bias = zn::lean_p_bias(0.0f, 8, centre, f);
            char name[96];
            std::snprintf(name, sizeof name, "Lean P, c = %+.5f (%s, constant %+.5f)", c,
                          rounding == zn::FloatToIntRounding::NearestEven ? "RNE" : "trunc", centre);
            print(name, over_grid([&](double x) {
                      return zn::fp8_decode(zn::lean_p_code(static_cast<float>(x), 8.0f, bias, rounding, f), f);
                  }));
        }
    }
    // Quadratic correction of the piecewise-linear mantissa: with u = x + 8 and f = fract(u),
    // 2^f - 1 ~= f - kappa * f * (1 - f); code = round(8 * floor(u) + 8 * (that) + 56). Costs
    // fract + two FMAs more than Lean P (see docs/accuracy.md): over LEAN's budget, shown for scale.
    for (double kappa : {0.30, 0.343, 0.36}) {
        char name[96];
        std::snprintf(name, sizeof name, "Lean P + quadratic mantissa (kappa %.3f, RNE)", kappa);
        print(name, over_grid([&](double x) {
                  const float u = static_cast<float>(x + 8.0);
                  const float fr = u - std::floor(u);
                  const float corr = fmaf(fr, fr, -fr);  // f^2 - f
                  const float y = fmaf(corr, static_cast<float>(8.0 * kappa), fmaf(u, 8.0f, 56.0f));
                  const float yc = zn::clamp_float(y, 0.0f, 126.0f);
                  return zn::fp8_decode(static_cast<uint8_t>(zn::round_half_even(yc)), f);
              }));
    }
}

}  // namespace zyfa_accuracy
