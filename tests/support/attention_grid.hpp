// The attention shapes every backend's tier runs (CPU vs fp64, CUDA vs CPU and fp64): one list, so
// a case added here is checked on every backend. Each tier loops over its own dtype/softmax modes
// and may add shapes of its own.
#pragma once

#include <vector>

#include "support/attention_case.hpp"

namespace zyfa_test {

enum class GridGroup { Causal, NoMask, BottomRight, Windows, Gqa, Varlen };

// The (head_dim_qk, head_dim_v) pairs the GPU kernels are built for; a tier may add pairs its
// backend also runs.
constexpr int64_t kKernelHeadDims[][2] = {{64, 64}, {128, 128}, {192, 128}, {256, 256}};

struct GridShape {
    GridGroup group;
    const char* name;
    void (*apply)(CaseShape&);
};

inline const std::vector<GridShape>& attention_grid() {
    static const std::vector<GridShape> grid = {
        {GridGroup::Causal, "causal hd128 sq=sk=200",
         [](CaseShape& s) {
             s.seqlen_q = s.seqlen_k = 200;
             s.head_dim_qk = s.head_dim_v = 128;
         }},
        {GridGroup::NoMask, "none sq=37 sk=150 hd64",
         [](CaseShape& s) {
             s.mask = ZYFA_MASK_NONE;
             s.seqlen_q = 37;
             s.seqlen_k = 150;
         }},
        {GridGroup::BottomRight, "causal-br sq=50 sk=130",
         [](CaseShape& s) {
             s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
             s.seqlen_q = 50;
             s.seqlen_k = 130;
         }},
        {GridGroup::BottomRight, "causal-br sq=130 sk=50 (rows with no key)",
         [](CaseShape& s) {
             s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
             s.seqlen_q = 130;
             s.seqlen_k = 50;
         }},
        {GridGroup::BottomRight, "causal top-left sq=50 sk=130",
         [](CaseShape& s) {
             s.seqlen_q = 50;
             s.seqlen_k = 130;
         }},
        {GridGroup::Windows, "causal window 17,-1 s=160",
         [](CaseShape& s) {
             s.seqlen_q = s.seqlen_k = 160;
             s.window_left = 17;
         }},
        {GridGroup::Windows, "none window 8,3 s=100",
         [](CaseShape& s) {
             s.mask = ZYFA_MASK_NONE;
             s.seqlen_q = s.seqlen_k = 100;
             s.window_left = 8;
             s.window_right = 3;
         }},
        {GridGroup::Windows, "none window 0,0 (diagonal only)",
         [](CaseShape& s) {
             s.mask = ZYFA_MASK_NONE;
             s.seqlen_q = s.seqlen_k = 70;
             s.window_left = 0;
             s.window_right = 0;
         }},
        {GridGroup::Gqa, "gqa 8/2 batch 2",
         [](CaseShape& s) {
             s.batch = 2;
             s.heads_q = 8;
             s.heads_kv = 2;
             s.seqlen_q = s.seqlen_k = 90;
         }},
        {GridGroup::Gqa, "gqa 12/1 (mqa, ratio 12)",
         [](CaseShape& s) {
             s.heads_q = 12;
             s.heads_kv = 1;
             s.seqlen_q = s.seqlen_k = 70;
         }},
        {GridGroup::Gqa, "gqa 24/2 (ratio 12)",
         [](CaseShape& s) {
             s.heads_q = 24;
             s.heads_kv = 2;
             s.seqlen_q = s.seqlen_k = 40;
             s.head_dim_qk = s.head_dim_v = 128;
         }},
        {GridGroup::Varlen, "varlen q{5,0,1,70,1} k{7,3,0,70,1} gqa 4/2",
         [](CaseShape& s) {
             s.batch = 5;
             s.lengths_q = {5, 0, 1, 70, 1};
             s.lengths_k = {7, 3, 0, 70, 1};
             s.seqlen_q = s.seqlen_k = 70;
             s.heads_q = 4;
             s.heads_kv = 2;
         }},
        {GridGroup::Varlen, "varlen causal-br q{3,65} k{130,65}",
         [](CaseShape& s) {
             s.mask = ZYFA_MASK_CAUSAL_BOTTOM_RIGHT;
             s.batch = 2;
             s.lengths_q = {3, 65};
             s.lengths_k = {130, 65};
             s.seqlen_q = 65;
             s.seqlen_k = 130;
         }},
    };
    return grid;
}

}  // namespace zyfa_test
