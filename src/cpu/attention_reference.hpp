// The fp64 reference: plain, unblocked attention in double precision on the decoded inputs
// (descales applied), which every test compares against.
#pragma once

#include <vector>

#include "core/problem.hpp"

namespace zyfa {
namespace cpu {

struct ReferenceOutput {
    // o[(row * heads_q + h) * head_dim_v + d], row = b * seqlen_q + s, or the packed row when varlen.
    std::vector<double> o;
    // lse in the layout of AttnProblem::lse_index; -inf for rows that see no key.
    std::vector<double> lse;
};

ReferenceOutput attention_reference_fp64(const AttnProblem& problem);

}  // namespace cpu
}  // namespace zyfa
