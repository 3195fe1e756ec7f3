// What every role of the warp-specialised sm_90a kernel knows of its CTA's tile (attention_fwd_ws.cuh):
// which query rows, head and batch it is, the shared memory and its mbarriers, and the range of
// key blocks the tile visits (found once by the tile's rows, before the roles split).
#ifndef ZYFA_KERNELS_NVIDIA_SM90_TILE_CONTEXT_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_TILE_CONTEXT_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "nvidia/attention_ws_tma_params.h"
#include "nvidia/primitives/barriers.cuh"
#include "nvidia/primitives/copy.cuh"

namespace zyfa {
namespace nvidia {

// The dynamic shared memory (attention_ws_tile_shape.h's layout), one array of the kernel. Its
// shared address is a constant of the kernel, read where it is needed rather than carried in
// TileContext: a copy would be an unknown value in each role's function, and the compiler
// would associate the address arithmetic differently.
extern __shared__ __align__(1024) unsigned char smem[];

// Each role's function copies it into a local first (const TileContext t = tile): the compiler
// simplifies a function before inlining it, and a member read through the reference where the code
// needs it is then an unknown value at each use (reloaded after every asm with a memory clobber,
// associated differently), so the code would differ from the kernel's of one function.
template <class Shape>
struct TileContext {
    int tile;
    int head, batch;
    SequenceSpan span;
    int64_t first_q, first_k;
    int seqlen_q, seqlen_k;
    int row0;  // the tile's first query row
    int head_kv;
    numerics::MaskKind mask;
    bool use_tma;
    // Keys: [keys_begin, keys_end) seen by some row, [whole_begin, whole_end) by every row; the
    // tile visits `blocks` key blocks from block_begin on.
    int keys_begin, keys_end;
    int whole_begin, whole_end;
    int block_begin;
    int blocks;
    // Thread 0 only: Q and block 0 were issued in prepare_tile (issue_first_copies in sm90/producer.cuh).
    bool first_copies_issued;

    static __device__ __forceinline__ uint32_t smem_base() { return shared_address(smem); }
    static __device__ __forceinline__ uint32_t q_full() { return smem_base() + Shape::kQFullOffset; }
    __device__ __forceinline__ uint32_t k_full(int stage) const { return smem_base() + Shape::kKFullOffset + 8 * stage; }
    __device__ __forceinline__ uint32_t v_full(int stage) const { return smem_base() + Shape::kVFullOffset + 8 * stage; }
    // A stage's K and V halves free (the same barrier unless Shape::kSeparateEmpty).
    __device__ __forceinline__ uint32_t k_empty(int stage) const { return smem_base() + Shape::kKEmptyOffset + 8 * stage; }
    __device__ __forceinline__ uint32_t v_empty(int stage) const { return smem_base() + Shape::kVEmptyOffset + 8 * stage; }
    __device__ __forceinline__ uint32_t staging_full(int buffer) const {
        return smem_base() + Shape::kStagingFullOffset + 8 * buffer;
    }
    __device__ __forceinline__ uint32_t staging_free(int buffer) const {
        return smem_base() + Shape::kStagingFreeOffset + 8 * buffer;
    }
};

// The tile of this CTA, heaviest (last, under a causal mask) tiles first; false when it lies
// beyond the sequence (varlen).
template <class Shape>
__device__ __forceinline__ bool locate_tile(TileContext<Shape>& t, const AttnKernelArgs& a) {
    // The grid is (tiles x G, heads_q / G, batch) for groups of G = 2^g adjacent heads
    // (src/cuda/attention_launch_plan.cpp, ws_head_group_log2): x = (tile from the heaviest) * G +
    // the head within its group, so the group's heaviest tiles of every head start first while its
    // heads' K and V stay in L2. gridDim.x = tiles << g, hence g from the leading zeros.
    const unsigned tiles = (static_cast<unsigned>(a.seqlen_q) + Shape::kRows - 1) / Shape::kRows;
    const int g = __clz(tiles) - __clz(gridDim.x);
    t.tile = static_cast<int>(tiles) - 1 - static_cast<int>(blockIdx.x >> g);
    t.head = static_cast<int>((blockIdx.y << g) | (blockIdx.x & ((1u << g) - 1)));
    t.batch = blockIdx.z;
    t.span = sequence_span(a, t.batch);
    t.first_q = t.span.first_q, t.first_k = t.span.first_k;
    t.seqlen_q = t.span.seqlen_q, t.seqlen_k = t.span.seqlen_k;
    t.row0 = t.tile * Shape::kRows;
    return t.row0 < t.seqlen_q;
}

// Paged K/V (PagedKvArgs): the sequence's key count from seqused_k (else seqlen_k); its keys start at
// key 0 of its pages. Before prepare_tile, which finds the tile's key ranges from it.
template <class Shape>
__device__ __forceinline__ void use_paged_key_count(TileContext<Shape>& t, const AttnKernelArgs& a,
                                                    const PagedKvArgs& paged) {
    t.seqlen_k = paged_key_count(a, paged, t.batch);
    t.first_k = 0;
    t.span.seqlen_k = t.seqlen_k;
    t.span.first_k = 0;
}

// The mbarriers (thread 0) and the tile's key ranges (its rows), both behind a __syncthreads; paged:
// the producer of produce_paged_with_tma (K and V copied by warps 0 and 3, FP8 V transposed by 1-2).
// first_copies(t): thread 0's, once the mbarriers are initialised; whether it issued Q and the first
// key block (t.first_copies_issued).
template <class Shape, class FirstCopies>
__device__ __forceinline__ void prepare_tile(TileContext<Shape>& t, const AttnKernelArgs& a, const WsTmaParams& tma,
                                             bool paged, FirstCopies first_copies) {
    constexpr int kStages = Shape::kStages;
    int* tile_keys = reinterpret_cast<int*>(smem + Shape::kKeyRangeOffset);  // the tile's key ranges
    t.head_kv = kv_head_of(a, t.head);
    t.mask = static_cast<numerics::MaskKind>(a.mask);
    t.use_tma = Shape::kTma && tma.enabled != 0;
    t.first_copies_issued = false;

    if (threadIdx.x == 0) {
        tile_keys[0] = t.seqlen_k;
        tile_keys[1] = 0;
        tile_keys[2] = 0;
        tile_keys[3] = t.seqlen_k;
        // cp.async: one (cp.async-tracked) arrival per producer thread; TMA: the issuing thread's
        // arrive.expect_tx, the copies complete the bytes; paged TMA: one arrival per lane of the
        // operand's copying warp, each after its own tail rows (copy_paged_blocks). FP8 V's stage
        // is written by the producer's transposing threads: warps 1-2 beside the paged TMA
        // copies, else all 128.
        const uint32_t copy_arrivals = t.use_tma ? 1 : 128;
        const uint32_t block_arrivals = t.use_tma ? (paged ? Shape::kPagedCopyLanes : 1) : 128;
        const uint32_t transpose_arrivals = paged && t.use_tma ? 32 * Shape::kPagedTransposeWarps : 128;
        mbarrier_init(t.q_full(), copy_arrivals);
        for (int st = 0; st < kStages; ++st) {
            mbarrier_init(t.k_full(st), block_arrivals);
            mbarrier_init(t.v_full(st), Shape::kFp8 ? transpose_arrivals : block_arrivals);
            mbarrier_init(t.k_empty(st), 4 * Shape::kConsumerWarpgroups);  // one arrival per consumer warp
            if constexpr (Shape::kSeparateEmpty) mbarrier_init(t.v_empty(st), 4 * Shape::kConsumerWarpgroups);
        }
        if constexpr (Shape::kFp8) {
            for (int b = 0; b < Shape::kVStagingBuffers; ++b) {
                mbarrier_init(t.staging_full(b), t.use_tma ? block_arrivals : 1);
                if (paged) mbarrier_init(t.staging_free(b), 32 * Shape::kPagedTransposeWarps);
            }
        }
        mbarrier_init_fence();
        t.first_copies_issued = first_copies(t);
    }
    __syncthreads();
    if (threadIdx.x < Shape::kRows) {
        bool sees_keys = false;
        if (t.row0 + static_cast<int>(threadIdx.x) < t.seqlen_q) {
            const auto range = numerics::visible_keys(t.row0 + threadIdx.x, t.seqlen_q, t.seqlen_k, t.mask,
                                                      a.window_left, a.window_right);
            if (range.begin < range.end) {
                sees_keys = true;
                atomicMin(&tile_keys[0], static_cast<int>(range.begin));
                atomicMax(&tile_keys[1], static_cast<int>(range.end));
                atomicMax(&tile_keys[2], static_cast<int>(range.begin));
                atomicMin(&tile_keys[3], static_cast<int>(range.end));
            }
        }
        if (!sees_keys) atomicMin(&tile_keys[3], 0);  // a row seeing nothing: every block is masked
    }
    __syncthreads();
    t.keys_begin = tile_keys[0], t.keys_end = tile_keys[1];
    t.whole_begin = tile_keys[2], t.whole_end = tile_keys[3];
    t.block_begin = t.keys_begin - t.keys_begin % Shape::kKeys;
    t.blocks = t.keys_end > t.block_begin ? (t.keys_end - t.block_begin + Shape::kKeys - 1) / Shape::kKeys : 0;
}

}  // namespace nvidia
}  // namespace zyfa

#endif
