// The input dtype / softmax modes the attention tiers loop over, one table for all of them, and
// the loop itself: each tier picks the modes its backend supports and passes its own check.
#pragma once

#include <string>
#include <vector>

#include "support/attention_case.hpp"
#include "support/attention_grid.hpp"

namespace zyfa_test {

struct DtypeMode {
    zyfa_dtype dtype;
    zyfa_softmax softmax;
    const char* name;
};

constexpr DtypeMode kFp32{ZYFA_DTYPE_FP32, ZYFA_SOFTMAX_EXACT, "fp32"};
constexpr DtypeMode kFp16{ZYFA_DTYPE_FP16, ZYFA_SOFTMAX_EXACT, "fp16"};
constexpr DtypeMode kBf16{ZYFA_DTYPE_BF16, ZYFA_SOFTMAX_EXACT, "bf16"};
constexpr DtypeMode kE4m3fnExact{ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_EXACT, "e4m3fn-exact"};
constexpr DtypeMode kE4m3fnLean{ZYFA_DTYPE_FP8_E4M3FN, ZYFA_SOFTMAX_LEAN, "e4m3fn-lean"};
constexpr DtypeMode kE4m3fnuzExact{ZYFA_DTYPE_FP8_E4M3FNUZ, ZYFA_SOFTMAX_EXACT, "e4m3fnuz-exact"};
constexpr DtypeMode kE4m3fnuzLean{ZYFA_DTYPE_FP8_E4M3FNUZ, ZYFA_SOFTMAX_LEAN, "e4m3fnuz-lean"};
// The INT8 Q/K mode: q and k INT8, v e4m3fn (CaseShape::v_dtype_int8).
constexpr DtypeMode kInt8qkExact{ZYFA_DTYPE_INT8, ZYFA_SOFTMAX_EXACT, "int8qk-exact"};
constexpr DtypeMode kInt8qkLean{ZYFA_DTYPE_INT8, ZYFA_SOFTMAX_LEAN, "int8qk-lean"};

// Every mode the CPU backend runs; NVIDIA runs neither FP32 inputs, e4m3fnuz nor INT8 q/k (yet).
inline const std::vector<DtypeMode>& all_modes() {
    static const std::vector<DtypeMode> modes = {kFp32,         kFp16,         kBf16,        kE4m3fnExact,
                                                 kE4m3fnLean,   kE4m3fnuzExact, kE4m3fnuzLean, kInt8qkExact,
                                                 kInt8qkLean};
    return modes;
}
inline const std::vector<DtypeMode>& nvidia_modes() {
    static const std::vector<DtypeMode> modes = {kFp16, kBf16, kE4m3fnExact, kE4m3fnLean};
    return modes;
}

// The default shape in mode m; FP8 and INT8 inputs carry descales (folded into the score scale).
inline CaseShape mode_shape(const DtypeMode& m) {
    CaseShape s;
    s.dtype = m.dtype;
    s.softmax = m.softmax;
    s.descales = zyfa::cpu::dtype_is_fp8(m.dtype) || m.dtype == ZYFA_DTYPE_INT8;
    return s;
}

// For each mode: mode_shape, then shape_of, then check(shape, "<what> <mode name>").
template <class ShapeOf, class Check>
void for_each_mode(const std::vector<DtypeMode>& modes, const std::string& what, ShapeOf shape_of, Check check) {
    for (const DtypeMode& m : modes) {
        CaseShape s = mode_shape(m);
        shape_of(s);
        check(s, what + " " + m.name);
    }
}

// Every shape of one group of the shared grid (tests/support/attention_grid.hpp), every mode.
template <class Check>
void for_grid_group(const std::vector<DtypeMode>& modes, GridGroup group, Check check) {
    for (const GridShape& shape : attention_grid())
        if (shape.group == group) for_each_mode(modes, shape.name, shape.apply, check);
}

// The output dtypes every tier checks, each on a square 80-row causal case.
template <class Check>
void for_each_output_dtype(const std::vector<DtypeMode>& modes, Check check) {
    for (zyfa_dtype out : {ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP16, ZYFA_DTYPE_FP32})
        for_each_mode(modes, "out dtype " + std::to_string(out),
                      [out](CaseShape& s) {
                          s.out_dtype = out;
                          s.seqlen_q = s.seqlen_k = 80;
                      },
                      check);
}

// "hd <qk>/<v>", the label of a head-dim pair.
inline std::string head_dims_label(int64_t qk, int64_t v) {
    return "hd " + std::to_string(qk) + "/" + std::to_string(v);
}

}  // namespace zyfa_test
