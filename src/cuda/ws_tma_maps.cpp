#include "ws_tma_maps.hpp"

#include <algorithm>
#include <cstring>

namespace zyfa {
namespace cuda {
namespace {

constexpr uint64_t kStrideLimit = uint64_t{1} << 40;  // cuTensorMapEncodeTiled's bound on strides

// The map of one tensor with `rows` rows per box; false when the tensor memory accelerator cannot
// address it (the kernels then use cp.async for every tensor).
bool encode(const TensorView& t, int64_t seqlen, int64_t heads, int64_t batch, int64_t head_dim, uint32_t rows,
            gpu::GpuRuntime& runtime, unsigned char* map, int32_t (&axis)[3]) {
    const uint64_t element = t.dtype == ZYFA_DTYPE_BF16 || t.dtype == ZYFA_DTYPE_FP16 ? 2 : 1;
    if (reinterpret_cast<uintptr_t>(t.data) % 16 != 0) return false;
    struct Axis {
        uint64_t extent, stride;
        int which;  // 0 sequence, 1 head, 2 batch
    };
    Axis axes[3] = {{static_cast<uint64_t>(seqlen), static_cast<uint64_t>(t.stride_seq) * element, 0},
                    {static_cast<uint64_t>(heads), static_cast<uint64_t>(t.stride_head) * element, 1},
                    {static_cast<uint64_t>(batch), static_cast<uint64_t>(t.stride_batch) * element, 2}};
    // A negative stride wraps to a huge one and fails the limit below; an axis of extent 1 is
    // only ever read at 0, so its stride is free (given the nested one below).
    // Strides smallest first, extent-1 axes last, so that each stride nests the one before it.
    std::stable_sort(std::begin(axes), std::end(axes), [](const Axis& x, const Axis& y) {
        if ((x.extent == 1) != (y.extent == 1)) return y.extent == 1;
        return x.stride < y.stride;
    });
    gpu::TiledTensorMap4d request;
    request.base = t.data;
    request.element_bytes = static_cast<uint32_t>(element);
    request.dims[0] = static_cast<uint64_t>(head_dim);
    request.box[0] = static_cast<uint32_t>(nvidia::WsTmaParams::kRowBytes / element);
    request.swizzle_128b = true;
    uint64_t packed = static_cast<uint64_t>(head_dim) * element;  // the nested stride of the next axis
    for (int d = 0; d < 3; ++d) {
        Axis& a = axes[d];
        if (a.extent == 1) a.stride = packed;
        if (a.stride == 0 || a.stride % 16 != 0 || a.stride >= kStrideLimit || a.extent > (uint64_t{1} << 32)) {
            return false;
        }
        request.dims[d + 1] = a.extent;
        request.strides_bytes[d] = a.stride;
        request.box[d + 1] = a.which == 0 ? rows : 1;
        axis[a.which] = d + 1;
        packed = a.stride * a.extent;
    }
    return runtime.encode_tensor_map(map, request);
}

}  // namespace

nvidia::WsTmaParams make_ws_tma_params(const AttnProblem& p, int key_block, gpu::GpuRuntime& runtime) {
    nvidia::WsTmaParams params;
    std::memset(&params, 0, sizeof(params));
    const int element = p.q.dtype == ZYFA_DTYPE_BF16 || p.q.dtype == ZYFA_DTYPE_FP16 ? 2 : 1;
    // seqlen_k == 0: a map has no extent 0 (and K, V may be NULL); no tile has a key block to copy, so
    // the cp.async producer, which then copies Q only, costs nothing.
    if (!nvidia::ws_tma_layout(element, static_cast<int>(p.head_dim_qk), static_cast<int>(p.head_dim_v)) ||
        p.varlen() || p.empty() || p.seqlen_k == 0) {
        return params;
    }
    // Paged: maps over the pools, a page's rows as the sequence axis and the pages as the batch axis,
    // boxes of min(page_size, key_block) rows; pages of a power of two >= 8 rows only, so that each
    // copy lands at a multiple of 8 rows of a tile (attention_ws_tma_params.h, PagedKvArgs); other page
    // sizes copy with cp.async.
    const bool paged = p.paged();
    if (paged && (p.page_size < 8 || (p.page_size & (p.page_size - 1)) != 0)) return params;
    const int64_t k_rows = paged ? p.page_size : p.seqlen_k;
    const int64_t k_batches = paged ? p.num_pages : p.batch;
    const uint32_t tma_box_rows = static_cast<uint32_t>(paged ? std::min<int64_t>(p.page_size, key_block) : key_block);
    const bool ok = encode(p.q, p.seqlen_q, p.heads_q, p.batch, p.head_dim_qk, nvidia::WsTmaParams::kQBoxRows, runtime,
                           params.q_map, params.axis[nvidia::kWsTmaQ]) &&
                    encode(p.k, k_rows, p.heads_kv, k_batches, p.head_dim_qk, tma_box_rows, runtime, params.k_map,
                           params.axis[nvidia::kWsTmaK]) &&
                    // FP8 V supplied transposed: bulk copies from AttnKernelArgs::v, no map.
                    (p.v_transposed || encode(p.v, k_rows, p.heads_kv, k_batches, p.head_dim_v, tma_box_rows, runtime,
                                              params.v_map, params.axis[nvidia::kWsTmaV]));
    if (!ok) std::memset(&params, 0, sizeof(params));
    params.enabled = ok ? 1 : 0;
    params.v_transposed = ok && p.v_transposed ? 1 : 0;
    return params;
}

}  // namespace cuda
}  // namespace zyfa
