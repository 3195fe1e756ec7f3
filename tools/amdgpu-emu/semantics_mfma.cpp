// Matrix instructions (MFMA) with the operand layouts of docs/emulator.md (ISA facts):
//   A (M x K): lane l holds row l % M; B (K x N): lane l holds column l % N; for lane group
//   g = l / M (l / N for B) and element e the K index is kpl*g + e, except the 8-bit f8f6f4 forms,
//   which hold blocks of 16: k = (G*16)*(e/16) + 16*g + e%16 (G = 64/M groups).
//   C/D: lane l, register v: column l % N, row (4G)(v/4) + 4(l/N) + v%4.
//   Scaled forms: the E8M0 scale of A row i (B column j) for K block blk (32 K each) is in lane
//   i + M*blk (j + N*blk), byte op_sel[x] + 2*op_sel_hi[x] of the scale VGPR.
// Numerics: every product is exact in double (bf16 x bf16: 16 bits; fp8 x fp8: 8 bits), the sum
// over the instruction's K is formed in double (exact for fp8/fp4; for bf16 within 2^-53
// relative), scaled by the E8M0 factors and added to C with a single rounding to f32. Real
// hardware's internal order/precision is not documented; docs/emulator.md states this.
// Integer forms (v_mfma_i32_*_i8): signed 8-bit A and B, int32 C and D, D = C + A.B exactly (an
// integer sum has no order). A D outside the int32 range is an error: the ISA guides in reach do
// not say whether the accumulator wraps or saturates (docs/emulator.md).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "fp_formats.hpp"
#include "semantics.hpp"

namespace zyfa {
namespace emu {

namespace {

enum class ElemType { Bf16, Fp8, Bf8, Fp4, Fp6, Bf6, I8 };

struct MfmaShape {
    int m = 0, n = 0, k = 0;
    bool f8f6f4 = false, scaled = false;
    bool integer = false;  // v_mfma_i32_*_i8: int32 C/D
    ElemType a = ElemType::Bf16, b = ElemType::Bf16;
};

bool parse_shape(const Instruction& in, MfmaShape& s, std::string& why) {
    const std::string& name = in.base;
    s.scaled = name.rfind("v_mfma_scale_f32_", 0) == 0;
    size_t at = name.find("_f32_");
    if (at == std::string::npos && name.rfind("v_mfma_i32_", 0) == 0) {
        at = name.find("_i32_");
        s.integer = true;
    }
    if (at == std::string::npos || std::sscanf(name.c_str() + at + 5, "%dx%dx%d", &s.m, &s.n, &s.k) != 3) {
        why = "unrecognised MFMA name";
        return false;
    }
    if (!((s.m == 32 && s.n == 32) || (s.m == 16 && s.n == 16))) {
        why = "only 32x32 and 16x16 MFMA shapes are modelled";
        return false;
    }
    auto ends = [&](const char* suffix) {
        const size_t n = std::strlen(suffix);
        return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
    };
    if (s.integer) {
        if (!ends("_i8")) {
            why = "integer MFMA element type not modelled (i8 is)";
            return false;
        }
        s.a = s.b = ElemType::I8;
    } else if (ends("bf16") || ends("bf16_1k")) {
        s.a = s.b = ElemType::Bf16;
    } else if (ends("_fp8_fp8") || ends("_fp8_bf8") || ends("_bf8_fp8") || ends("_bf8_bf8")) {
        const std::string t = name.substr(name.size() - 7);
        s.a = t[0] == 'f' ? ElemType::Fp8 : ElemType::Bf8;
        s.b = t[4] == 'f' ? ElemType::Fp8 : ElemType::Bf8;
    } else if (ends("f8f6f4")) {
        s.f8f6f4 = true;
        const ElemType kinds[] = {ElemType::Fp8, ElemType::Bf8, ElemType::Fp6, ElemType::Bf6, ElemType::Fp4};
        if (in.cbsz > 4 || in.blgp > 4) {
            why = "cbsz/blgp type code above 4";
            return false;
        }
        s.a = kinds[in.cbsz];
        s.b = kinds[in.blgp];
    } else {
        why = "MFMA element type not modelled (bf16, fp8/bf8 and f8f6f4 are)";
        return false;
    }
    if (!s.f8f6f4 && (in.cbsz || in.abid || in.blgp)) {
        why = "MFMA broadcast controls (cbsz/abid/blgp) are not modelled";
        return false;
    }
    if (s.a == ElemType::Fp6 || s.a == ElemType::Bf6 || s.b == ElemType::Fp6 || s.b == ElemType::Bf6) {
        why = "fp6/bf6 operand layout is unconfirmed (docs/emulator.md), not modelled";
        return false;
    }
    return true;
}

int bits_of(ElemType t) { return t == ElemType::Bf16 ? 16 : t == ElemType::Fp4 ? 4 : 8; }

double decode(ElemType t, uint32_t code, Arch arch) {
    switch (t) {
        case ElemType::Bf16: return bf16_to_float(static_cast<uint16_t>(code));
        case ElemType::Fp8: return minifloat_to_double(code, arch == Arch::Gfx950 ? Minifloat::E4M3Fn : Minifloat::E4M3Fnuz);
        case ElemType::Bf8: return minifloat_to_double(code, arch == Arch::Gfx950 ? Minifloat::E5M2 : Minifloat::E5M2Fnuz);
        case ElemType::Fp4: return minifloat_to_double(code, Minifloat::E2M1);
        case ElemType::I8: return static_cast<double>(static_cast<int8_t>(code));
        default: return std::numeric_limits<double>::quiet_NaN();
    }
}

// K index of element e in lane group g.
int k_index(const MfmaShape& s, ElemType t, int g, int e) {
    const int groups = 64 / s.m;
    const int per_lane = s.k / groups;
    if (s.f8f6f4 && bits_of(t) == 8) return (groups * 16) * (e / 16) + 16 * g + e % 16;
    return per_lane * g + e;
}

void mfma(R& r, Wave& w, const Instruction& in) {
    MfmaShape s;
    std::string why;
    if (!parse_shape(in, s, why)) r.fail(w, in, why);
    // What the matrix unit does with a partial EXEC is not documented in the sources we have
    // (docs/emulator.md); strict by default. ZYFA_EMU_MFMA_IGNORES_EXEC=1 computes all lanes.
    static const bool ignore_exec = [] {
        const char* env = std::getenv("ZYFA_EMU_MFMA_IGNORES_EXEC");
        return env && *env == '1';
    }();
    if (w.exec != ~uint64_t(0) && !ignore_exec) {
        r.fail(w, in, "MFMA under a partial EXEC mask (EXEC = " + std::to_string(w.exec) +
                          "): its semantics are not documented; keep MFMAs in uniform control flow");
    }
    const bool new_bf16 = s.a == ElemType::Bf16 && ((s.m == 32 && s.k == 16) || (s.m == 16 && s.k == 32));
    // gfx950 doubled K of the i8 forms: 32x32x32 and 16x16x64 (gfx942 has 32x32x16 and 16x16x32).
    const bool new_i8 = s.integer && ((s.m == 32 && s.k == 32) || (s.m == 16 && s.k == 64));
    const bool gfx950_only = s.f8f6f4 || s.scaled || new_bf16 || new_i8;
    if (gfx950_only && r.arch != Arch::Gfx950) r.fail(w, in, in.base + " exists on gfx950 only");
    const int groups = 64 / s.m;
    const int per_lane = s.k / groups;
    const int a_regs = per_lane * bits_of(s.a) / 32, b_regs = per_lane * bits_of(s.b) / 32;
    const int out_regs = s.m * s.n / 64;
    if (in.ops.size() < 4 || in.ops[1].count < a_regs || in.ops[2].count < b_regs ||
        (in.ops[0].count != out_regs)) {
        r.fail(w, in, "MFMA operand tuple sizes do not match the instruction");
    }
    static thread_local std::vector<double> A, B;
    A.assign(size_t(s.m) * s.k, 0.0);
    B.assign(size_t(s.k) * s.n, 0.0);
    for (int l = 0; l < kLanes; ++l) {
        const int g = l / s.m;
        for (int e = 0; e < per_lane; ++e) {
            const int ka = k_index(s, s.a, g, e), kb = k_index(s, s.b, g, e);
            const int ba = e * bits_of(s.a), bb = e * bits_of(s.b);
            const uint32_t ca = (r.reg_value(w, in.ops[1], ba / 32, l) >> (ba % 32)) & ((1u << bits_of(s.a)) - 1);
            const uint32_t cb = (r.reg_value(w, in.ops[2], bb / 32, l) >> (bb % 32)) & ((1u << bits_of(s.b)) - 1);
            A[size_t(l % s.m) * s.k + ka] = decode(s.a, ca, r.arch);
            B[size_t(kb) * s.n + l % s.n] = decode(s.b, cb, r.arch);
        }
    }
    // Scales per (row or column, K block of 32).
    const int blocks = s.scaled ? s.k / 32 : 1;
    std::vector<double> scale_a(size_t(s.m) * blocks, 1.0), scale_b(size_t(s.n) * blocks, 1.0);
    if (s.scaled) {
        if (in.ops.size() < 6) r.fail(w, in, "scaled MFMA without its scale operands");
        const int byte_a = in.op_sel[0] + 2 * in.op_sel_hi[0], byte_b = in.op_sel[1] + 2 * in.op_sel_hi[1];
        for (int blk = 0; blk < blocks; ++blk) {
            for (int i = 0; i < s.m; ++i) {
                scale_a[size_t(i) * blocks + blk] = e8m0_to_double(r.read32(w, in.ops[4], i + s.m * blk) >> (8 * byte_a));
            }
            for (int j = 0; j < s.n; ++j) {
                scale_b[size_t(j) * blocks + blk] = e8m0_to_double(r.read32(w, in.ops[5], j + s.n * blk) >> (8 * byte_b));
            }
        }
    }
    // D = C + A.B, one rounding.
    uint32_t out[16][kLanes];
    const int block_k = s.k / blocks;
    for (int l = 0; l < kLanes; ++l) {
        for (int v = 0; v < out_regs; ++v) {
            const int j = l % s.n;
            const int i = (4 * groups) * (v / 4) + 4 * (l / s.n) + v % 4;
            double sum = 0.0;
            for (int blk = 0; blk < blocks; ++blk) {
                double part = 0.0;
                for (int kk = blk * block_k; kk < (blk + 1) * block_k; ++kk) part += A[size_t(i) * s.k + kk] * B[size_t(kk) * s.n + j];
                sum += part * scale_a[size_t(i) * blocks + blk] * scale_b[size_t(j) * blocks + blk];
            }
            const Operand& c = in.ops[3];
            if (s.integer) {
                // Every product and sum is an integer below 2^53: exact in double.
                const uint32_t cbits = c.kind == OperandKind::Constant ? r.read32(w, c, l) : r.reg_value(w, c, v, l);
                const double total = static_cast<double>(static_cast<int32_t>(cbits)) + sum;
                if (total < -2147483648.0 || total > 2147483647.0) {
                    r.fail(w, in, "integer MFMA result outside the int32 range (wrap or saturation is not documented)");
                }
                out[v][l] = static_cast<uint32_t>(static_cast<int32_t>(total));
                continue;
            }
            const double cval = c.kind == OperandKind::Constant ? as_float(r.read32(w, c, l))
                                                                : as_float(r.reg_value(w, c, v, l));
            out[v][l] = as_bits(static_cast<float>(cval + sum));
        }
    }
    for (int v = 0; v < out_regs; ++v) {
        for (int l = 0; l < kLanes; ++l) r.reg(w, in.ops[0], v, l) = out[v][l];
    }
}

}  // namespace

int mfma_passes(const Instruction& in) {
    MfmaShape s;
    std::string why;
    if (!parse_shape(in, s, why)) return 16;  // executing it fails with `why`
    if (s.f8f6f4) {
        const bool eight_bit = bits_of(s.a) == 8 || bits_of(s.b) == 8;
        return s.m == 32 ? (eight_bit ? 16 : 8) : (eight_bit ? 8 : 4);
    }
    return s.m == 32 ? 8 : 4;
}

void register_mfma(Registry& reg) {
    const char* names[] = {
        "v_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_16x16x16bf16_1k", "v_mfma_f32_32x32x8_bf16", "v_mfma_f32_16x16x16_bf16", "v_mfma_f32_32x32x16_bf16",
        "v_mfma_f32_16x16x32_bf16", "v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_32x32x16_fp8_bf8",
        "v_mfma_f32_32x32x16_bf8_fp8", "v_mfma_f32_32x32x16_bf8_bf8", "v_mfma_f32_16x16x32_fp8_fp8",
        "v_mfma_f32_16x16x32_fp8_bf8", "v_mfma_f32_16x16x32_bf8_fp8", "v_mfma_f32_16x16x32_bf8_bf8",
        "v_mfma_f32_32x32x64_f8f6f4", "v_mfma_f32_16x16x128_f8f6f4", "v_mfma_scale_f32_32x32x64_f8f6f4",
        "v_mfma_scale_f32_16x16x128_f8f6f4", "v_mfma_i32_32x32x16_i8", "v_mfma_i32_16x16x32_i8",
        "v_mfma_i32_32x32x32_i8", "v_mfma_i32_16x16x64_i8"};
    for (const char* n : names) reg.add(n, mfma, Unit::Mfma, 1);
}

}  // namespace emu
}  // namespace zyfa
