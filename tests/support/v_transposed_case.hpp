// The transposed-V twin of a contiguous FP8 AttentionCase (attention_case.hpp): its V copied into
// the layout of ZYFA_ATTN_V_TRANSPOSED (kernels/common/v_transposed.h), written here key by key
// through vt_offset, with groups `group_padding` elements further apart than 16 * head_dim_v when
// asked (a layout the CPU reads and the NVIDIA kernels refuse) and the padding keys filled with
// `padding_byte` (0 as zyfa_quantize_fp8 writes it; 0xFF, an e4m3fn NaN, to show that no kernel
// multiplies the padding). Header-only, host memory; the GPU tests copy the buffer to the device.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "attention_case.hpp"
#include "common/v_transposed.h"

namespace zyfa_test {

struct VTransposedLayout {
    uint8_t padding_byte = 0;
    int64_t group_padding = 0;  // extra elements between 16-key groups
};

struct VTransposed {
    std::vector<uint8_t> v;
    zyfa_attn_params params;  // the contiguous case's, with ZYFA_ATTN_V_TRANSPOSED
    zyfa_tensor tv;

    VTransposed(const AttentionCase& c, const VTransposedLayout& layout = VTransposedLayout()) {
        const CaseShape& s = c.shape;
        const int64_t group_stride = zyfa::numerics::kVtGroupKeys * s.head_dim_v + layout.group_padding;
        const int64_t groups = zyfa::numerics::vt_groups(s.seqlen_k);
        const int64_t head_stride = groups * group_stride;
        const int64_t batch_stride = s.heads_kv * head_stride;
        v.assign(static_cast<size_t>(s.batch * batch_stride), layout.padding_byte);
        for (int64_t b = 0; b < s.batch; ++b)
            for (int64_t h = 0; h < s.heads_kv; ++h)
                for (int64_t j = 0; j < s.seqlen_k; ++j)
                    for (int64_t d = 0; d < s.head_dim_v; ++d) {
                        const int64_t src = b * c.tv.stride_batch + j * c.tv.stride_seq + h * c.tv.stride_head + d;
                        const int64_t dst = b * batch_stride + h * head_stride + zyfa::numerics::vt_offset(j, d, group_stride);
                        v[static_cast<size_t>(dst)] = c.v[static_cast<size_t>(src)];
                    }
        params = c.params;
        params.flags = ZYFA_ATTN_V_TRANSPOSED;
        std::memset(&tv, 0, sizeof tv);
        tv.data = v.data();
        tv.dtype = c.tv.dtype;
        tv.stride_batch = batch_stride;
        tv.stride_seq = group_stride;
        tv.stride_head = head_stride;
    }
    VTransposed(const VTransposed&) = delete;
    VTransposed& operator=(const VTransposed&) = delete;
};

}  // namespace zyfa_test
