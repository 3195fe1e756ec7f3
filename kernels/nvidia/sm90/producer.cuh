// The producer warpgroup of the warp-specialised sm_90a kernel (attention_fwd_ws.cuh), warpgroup 0
// at kProducerRegisters: loads Q once, then K and V blocks into the ring of stages
// (attention_ws_tile_shape.h), with the tensor memory accelerator where the host passed tensor maps
// (attention_ws_tma_params.h) or with cp.async by all 128 threads into the same layout; FP8 V
// blocks land in a staging buffer and the producer writes their byte transpose into the stage
// (transpose_v_block): the e4m3 wgmma reads both operands K-major, so P.V needs V with keys
// contiguous.
#ifndef ZYFA_KERNELS_NVIDIA_SM90_PRODUCER_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_PRODUCER_CUH

#include <type_traits>

#include "common/v_transposed.h"
#include "nvidia/attention_ws_tma_params.h"
#include "nvidia/primitives/barriers.cuh"
#include "nvidia/primitives/copy.cuh"
#include "nvidia/primitives/ldmatrix.cuh"
#include "nvidia/primitives/tma.cuh"
#include "nvidia/sm90/tile_context.cuh"
#include "nvidia/sm90/traits.cuh"

namespace zyfa {
namespace nvidia {

// Byte transpose of one FP8 V block of KEYS keys: raw (rows = keys of 128 bytes, the 128-byte
// swizzled slice the tensor memory accelerator and producer_load_tile write, DV <= 128 columns
// used) -> vt (rows = DV output columns, KEYS / 16 chunks of 16 keys, chunk-major: chunk g of
// row d at g * (DV * 16) + d * 16), with the keys of each 16-key group in the order
// [0,1,8,9, 2,3,10,11, 4,5,12,13, 6,7,14,15] (see the top of attention_fwd_ws.cuh).
// A unit is 16 keys x 32 columns, one ldmatrix.x4.trans, four PRMT and one stmatrix.x4 per warp:
// matrix j of the ldmatrix is keys 16g + 8 (j % 2) + 0..7 of 16-column chunk 2 cb + j / 2 (lane
// l gives row l % 8 of matrix l / 8), so lane 4c + w receives, per matrix, the 16-bit pairs
// (columns 2c, 2c + 1) of keys 2w and 2w + 1; the PRMTs pair those of keys 2w, 2w + 1 with those
// of keys 2w + 8, 2w + 9 into one word per column, which is word w of that column's chunk g:
// the stmatrix's matrix j is rows 16 (j / 2) + 2 i + (j % 2) of the 32 columns. Reads are
// conflict-free (the swizzle spreads 8 keys of one chunk over 8 bank groups); writes of 8 rows
// 32 bytes apart take two wavefronts.
template <int DV, int KEYS, int kWarps>
__device__ __forceinline__ void transpose_v_block(uint32_t vt, uint32_t raw, int warp, int lane) {
    static_assert(DV == 128 || DV == 64, "32 columns per unit");
    static_assert(kWarps == 4 || kWarps == 2, "the producer's 4 warps, or the paged producer's 2 transposing warps");
    constexpr int kUnits = (KEYS / 16) * (DV / 32);
    constexpr int kColumnBlocks = DV / 32;
    const int i = lane % 8, j = lane / 8;
    auto store_unit = [](uint32_t write, const uint32_t (&r)[4]) {  // the words an ldmatrix read
        const uint32_t out[4] = {__byte_perm(r[0], r[1], 0x6420), __byte_perm(r[0], r[1], 0x7531),
                                 __byte_perm(r[2], r[3], 0x6420), __byte_perm(r[2], r[3], 0x7531)};
        stmatrix_x4(write, out);
    };
    auto unit = [&](uint32_t read, uint32_t write) {
        uint32_t r[4];
        ldmatrix_x4_trans(r, read);
        store_unit(write, r);
    };
    // Unit u is column block u % kColumnBlocks of key group u / kColumnBlocks.
    auto read_of = [&](int cb, int g) { return raw + (16 * g + 8 * (j % 2) + i) * 128 + (((2 * cb + j / 2) ^ i) * 16); };
    auto write_of = [&](int cb, int g) {
        return vt + g * (DV * 16) + (32 * cb + 16 * (j / 2) + 2 * i + (j % 2)) * 16;
    };
    if constexpr (kWarps == 4) {
        static_assert(kUnits % 4 == 0, "units spread evenly over 4 warps");
        // Warp w's units u = w + 4 k differ by whole key groups, which move both addresses by a
        // constant (the swizzle depends on the key's row within 8 only).
        const int cb = warp % kColumnBlocks;
        const int first_group = warp / kColumnBlocks;
        constexpr int kGroupStride = 4 / kColumnBlocks;
        const uint32_t read = read_of(cb, first_group), write = write_of(cb, first_group);
#pragma unroll
        for (int u = 0; u < kUnits / 4; ++u) {
            const int g = u * kGroupStride;  // key groups beyond first_group
            unit(read + g * 16 * 128, write + g * (DV * 16));
        }
    } else {
        // Two warps (the paged producer's transposers): warp w takes key groups 4 w .. 4 w + 3
        // in every column block (16 units at head dim 128), all unrolled, one ldmatrix ahead: the
        // next unit's read is in flight while this one's words are permuted and stored (one unit
        // at a time, the two warps spent their time waiting on each read and paged FP8 LEAN at
        // page 16 ran 0.90x of the contiguous kernel: docs/hopper-kernel-notes.md). raw is
        // 128-byte aligned, so the swizzled column (below 128) is OR'd into column block 0's read
        // address and column block cb's 2 cb is one XOR of bits 5-6: one register for every read
        // address.
        constexpr int kGroupsPerWarp = KEYS / 16 / kWarps, kUnitsPerWarp = kGroupsPerWarp * kColumnBlocks;
        const uint32_t lane_read = read_of(0, warp * kGroupsPerWarp), lane_write = write_of(0, warp * kGroupsPerWarp);
        auto read_of_unit = [&](int u) { return (lane_read + u / kColumnBlocks * 16 * 128) ^ (32 * (u % kColumnBlocks)); };
        uint32_t next[4];
        ldmatrix_x4_trans(next, read_of_unit(0));
#pragma unroll
        for (int u = 0; u < kUnitsPerWarp; ++u) {
            const uint32_t r[4] = {next[0], next[1], next[2], next[3]};
            if (u + 1 < kUnitsPerWarp) ldmatrix_x4_trans(next, read_of_unit(u + 1));
            store_unit(lane_write + u / kColumnBlocks * (DV * 16) + 32 * (u % kColumnBlocks) * 16, r);
        }
    }
}

// Head dim 256: two independent 128-column halves, raw slice h -> Vt half h (each laid out as a
// DV = 128 Vt, KEYS * 128 bytes apart), so that the P.V of each half is an m64n128 wgmma like
// head dim 128's.
template <int DV, int KEYS, int kWarps = 4>
__device__ __forceinline__ void transpose_v_tile(uint32_t vt, uint32_t raw, int warp, int lane) {
    if constexpr (DV == 256) {
        constexpr uint32_t kHalfBytes = KEYS * 128;  // KEYS keys x 128 columns (Vt) = one raw slice
        transpose_v_block<128, KEYS, kWarps>(vt, raw, warp, lane);
        transpose_v_block<128, KEYS, kWarps>(vt + kHalfBytes, raw + kHalfBytes, warp, lane);
    } else {
        transpose_v_block<DV, KEYS, kWarps>(vt, raw, warp, lane);
    }
}

// A whole tile (kRows rows from `seq` on) through map `m` of `tma`, one copy per 128-byte column
// slice (attention_ws_tma_params.h); dims 1..3 of the map hold the sequence, head and batch axes
// in the order tma.axis gives.
template <int kSlices, int kRows, int kElemBytes>
__device__ __forceinline__ void tma_load_tile(uint32_t smem_dst, const WsTmaParams& tma, int m, uint32_t bar, int seq,
                                              int head, int batch) {
    const unsigned char* map = m == kWsTmaQ ? tma.q_map : m == kWsTmaK ? tma.k_map : tma.v_map;
    const int32_t* axis = tma.axis[m];
    auto coordinate = [&](int dim) { return axis[0] == dim ? seq : axis[1] == dim ? head : batch; };
#pragma unroll
    for (int slice = 0; slice < kSlices; ++slice) {
        tma_load_4d(smem_dst + slice * kRows * 128, map, bar, slice * (128 / kElemBytes), coordinate(1), coordinate(2),
                    coordinate(3));
    }
}

// The cp.async form of tma_load_tile for the producer's 128 threads: rows of kChunks 16-byte
// chunks from `global` (row_bytes apart) into 128-byte column slices in the 128-byte swizzle;
// rows from valid_rows on are zero-filled. Consecutive threads take consecutive chunks of a row,
// so a warp's requests are whole rows (contiguous in global memory, one bank cycle per 8 chunks
// in shared memory). Unrolled kUnroll times (kProducerCopyUnroll).
template <int kTileRows, int kChunks, int kUnroll>
__device__ __forceinline__ void producer_load_tile(uint32_t smem_addr, const unsigned char* global, int64_t row_bytes,
                                                   int valid_rows, int producer_thread) {
    static_assert((kTileRows * kChunks) % 128 == 0, "loader shape");
#pragma unroll kUnroll
    for (int i = producer_thread; i < kTileRows * kChunks; i += 128) {
        const int r = i / kChunks, c = i % kChunks;
        const bool valid = r < valid_rows;
        const uint32_t dst = (c / 8) * (kTileRows * 128) + r * 128 + (((c % 8) ^ (r % 8)) * 16);
        cp_async_16(smem_addr + dst, valid ? global + r * row_bytes + c * 16 : global, valid ? 16 : 0);
    }
}

// The paged form of producer_load_tile (attention_ws_tma_params.h, PagedKvArgs): rows [first_row,
// kTileRows) of the block whose first key is key0, row r being key key0 + r of the sequence, read
// from row (key0 + r) % page_size of its page (pool: the K or V pool at the tile's kv head);
// rows from valid_rows on, and rows whose page index lies outside [0, num_pages), are zero-filled.
template <int kTileRows, int kChunks, int kThreads = 128>
__device__ __forceinline__ void producer_load_paged_rows(uint32_t smem_addr, const unsigned char* pool,
                                                         int64_t page_bytes, int64_t row_bytes,
                                                         const int32_t* table_row, const PagedKvArgs& paged, int key0,
                                                         int first_row, int valid_rows, int producer_thread) {
    for (int i = first_row * kChunks + producer_thread; i < kTileRows * kChunks; i += kThreads) {
        const int r = i / kChunks, c = i % kChunks;
        const int key = key0 + r;
        int page = -1;
        if (r < valid_rows) page = table_row[key / paged.page_size];
        const bool valid = static_cast<unsigned>(page) < static_cast<unsigned>(paged.num_pages);
        const unsigned char* src =
            valid ? pool + page * page_bytes + (key % paged.page_size) * row_bytes + c * 16 : pool;
        const uint32_t dst = (c / 8) * (kTileRows * 128) + r * 128 + (((c % 8) ^ (r % 8)) * 16);
        cp_async_16(smem_addr + dst, src, valid ? 16 : 0);
    }
}

// FP8 LEAN's ones tile (WsTileShape::kOnesTile), written by the producer before its first v_full
// arrival, whose fence.proxy.async publishes it to the consumers' wgmma.
template <class Shape>
__device__ __forceinline__ void write_ones_tile(unsigned char* smem, int pt) {
    if constexpr (Shape::kOnesTile) {
        if (pt < Shape::kOnesBytes / 16) {
            const int tile = pt / (Shape::kOnesTileBytes / 16), row = pt % 8;
            const uint32_t word = row == 2 * tile ? 0x38383838u : 0u;  // e4m3 1.0 in row 2 tile
            *reinterpret_cast<uint4*>(smem + Shape::kOnesOffset + pt * 16) = make_uint4(word, word, word, word);
        }
    }
}

// FP8 V's transpose beside the paged producer's copies (produce_paged_with_tma): warps 1-2 take
// each V block as it lands in its staging buffer, write its transpose into the block's stage and
// give the buffer back (staging_free), while warps 0 and 3 only copy. With all four warps
// transposing block n - 1 after warp 0 had issued block n (produce_with_tma's order), a block whose
// sixteen 2 KiB page copies landed late held the copies of block n + 1: paged FP8 LEAN at page 16
// ran 0.73x of the contiguous kernel (H200, 2026-12-04; docs/hopper-kernel-notes.md). The
// contiguous kernel keeps the four-warp order: its two copies per block land in time. The stage
// is free: the transposers wait on its empty barrier themselves.
template <class Traits>
__device__ __forceinline__ void transpose_v_blocks(const TileContext<typename Traits::Shape>& t, int pt) {
    using Shape = typename Traits::Shape;
    constexpr int kStages = Traits::kStages, kBuffers = Shape::kVStagingBuffers;
    const int warp = pt / 32 - 1, lane = pt % 32;
    for (int index = 0; index < t.blocks; ++index) {
        const int stage = index % kStages, buffer = index % kBuffers;
        mbarrier_wait(t.staging_full(buffer), (index / kBuffers) & 1);
        mbarrier_wait(t.v_empty(stage), ((index / kStages) & 1) ^ 1);
        transpose_v_tile<Traits::kDv, Traits::kKeys, Shape::kPagedTransposeWarps>(
            t.smem_base() + Shape::kVOffset + stage * Shape::kVBytes,
            t.smem_base() + Shape::kVStagingOffset + buffer * Shape::kVLoadBytes, warp, lane);
        fence_proxy_async_shared();  // st.shared (Vt, the ones tile) before the consumers' wgmma reads
        mbarrier_arrive(t.v_full(stage));
        mbarrier_arrive(t.staging_free(buffer));  // this thread's reads of the buffer are done
    }
}

// Warp 0's wait before it refills block index's staging buffer: the transpose of the block
// kVStagingBuffers before it has been read out of it.
template <class Traits>
__device__ __forceinline__ void wait_staging_free(const TileContext<typename Traits::Shape>& t, int index) {
    constexpr int kBuffers = Traits::Shape::kVStagingBuffers;
    mbarrier_wait(t.staging_free(index % kBuffers), ((index / kBuffers) & 1) ^ 1);
}

// FP8 V supplied transposed (WsTmaParams::v_transposed, common/v_transposed.h): a block's 16-key
// groups are its stage's bytes, so one bulk copy fills the stage. v_full counts 128 arrivals, as
// the transposing threads' (prepare_tile). Global address of block `index`'s first group:
template <class Traits>
__device__ __forceinline__ const unsigned char* transposed_v_block_source(const TileContext<typename Traits::Shape>& t,
                                                                          const AttnKernelArgs& a, int index) {
    constexpr int kGroupBytes = numerics::kVtGroupKeys * Traits::kDv;  // stride_seq (the host checked it)
    const int key0 = t.block_begin + index * Traits::kKeys;
    return static_cast<const unsigned char*>(a.v) + t.batch * a.v_stride_batch + t.head_kv * a.v_stride_head +
           static_cast<int64_t>(key0 / numerics::kVtGroupKeys) * kGroupBytes;
}

// A block of kKeys valid keys, after thread 0 waited on its stage's empty barrier: thread 0 arrives
// for all 128 and issues the copy, except in block 0, where every thread arrives after its fence
// (those arrivals publish the ones tile, write_ones_tile).
template <class Traits>
__device__ __forceinline__ void copy_transposed_v_block(const TileContext<typename Traits::Shape>& t,
                                                        const AttnKernelArgs& a, int index, int pt) {
    using Shape = typename Traits::Shape;
    static_assert(Traits::kKeys == numerics::kVtPadKeys &&
                      Shape::kVBytes == Traits::kKeys * Traits::kDv,
                  "a 128-key stage is the layout's block");
    const uint32_t bar = t.v_full(index % Traits::kStages);
    if (index == 0) {
        fence_proxy_async_shared();
        if (pt != 0) {
            mbarrier_arrive(bar);
            return;
        }
    } else if (pt != 0) {
        return;
    }
    mbarrier_arrive_expect_tx(bar, Shape::kVBytes);
    if (index != 0) mbarrier_arrive_many(bar, 127);
    bulk_copy_to_shared(t.smem_base() + Shape::kVOffset + (index % Traits::kStages) * Shape::kVBytes,
                        transposed_v_block_source<Traits>(t, a, index), Shape::kVBytes, bar);
}

// The last block when the sequence ends inside it (the tail): its whole groups of valid keys are
// copied, and the producer's threads write the rest, the valid keys of the partial group from
// global memory and zeros for every key past the sequence, as the TMA's bounds give row-major V
// (the layout's padding should be zero, but a NaN there would survive a probability of 0). Every
// thread waits on the stage's empty barrier itself and arrives after its own writes. Only thread 0
// followed the earlier phases of that barrier (the others skip the whole blocks), and a parity wait
// cannot tell a phase from the one two later: once the ring had wrapped twice the other threads
// passed it early, wrote a stage still in use and over-arrived on its full barrier (H200,
// 2026-12-05: a launch failure at 1,000 keys). So they first meet thread 0, which has waited for
// this block's phase (copy_k); no phase can complete past it before their own arrivals below.
template <class Traits>
__device__ __forceinline__ void copy_transposed_v_tail(const TileContext<typename Traits::Shape>& t,
                                                       const AttnKernelArgs& a, int index, int pt) {
    using Shape = typename Traits::Shape;
    constexpr int kKeys = Traits::kKeys, kGroupKeys = numerics::kVtGroupKeys, kDv = Traits::kDv;
    constexpr int kGroupBytes = kGroupKeys * kDv;
    const int stage = index % Traits::kStages;
    const int valid = t.seqlen_k - (t.block_begin + index * kKeys);  // in [1, kKeys)
    const int whole = valid / kGroupKeys, partial_keys = valid % kGroupKeys;
    named_barrier_sync(kProducerBarrier, 128);
    mbarrier_wait(t.v_empty(stage), ((index / Traits::kStages) & 1) ^ 1);
    for (int chunk = whole * kDv + pt; chunk < kKeys / kGroupKeys * kDv; chunk += 128) {
        uint4 bytes = make_uint4(0, 0, 0, 0);
        if (chunk < (whole + 1) * kDv && partial_keys != 0) {  // the partial group
            bytes = *reinterpret_cast<const uint4*>(transposed_v_block_source<Traits>(t, a, index) + chunk * kGroupKeys);
            uint32_t keep[4] = {0, 0, 0, 0};  // the bytes of keys before the sequence's end
#pragma unroll
            for (int key = 0; key < kGroupKeys; ++key) {
                const int byte = numerics::vt_key_byte(key);
                if (key < partial_keys) keep[byte / 4] |= 0xFFu << (8 * (byte % 4));
            }
            bytes = make_uint4(bytes.x & keep[0], bytes.y & keep[1], bytes.z & keep[2], bytes.w & keep[3]);
        }
        *reinterpret_cast<uint4*>(smem + Shape::kVOffset + stage * Shape::kVBytes + chunk * kGroupKeys) = bytes;
    }
    fence_proxy_async_shared();  // st.shared (and, in block 0, the ones tile) before the consumers' wgmma reads
    const uint32_t bar = t.v_full(stage);
    if (pt == 0) {
        mbarrier_arrive_expect_tx(bar, static_cast<uint32_t>(whole * kGroupBytes));
        if (whole > 0) {
            bulk_copy_to_shared(t.smem_base() + Shape::kVOffset + stage * Shape::kVBytes,
                                transposed_v_block_source<Traits>(t, a, index), static_cast<uint32_t>(whole * kGroupBytes),
                                bar);
        }
    } else {
        mbarrier_arrive(bar);
    }
}

// The producer with the tensor memory accelerator: thread 0 issues every copy, one per 128-byte
// column slice of a tile (attention_ws_tma_params.h); FP8 V goes to a staging buffer and all 128
// threads write its transpose into the stage; 16-bit V lands in the stage (the other threads have
// no work). Thread 0 completes each "full" mbarrier's transaction bytes, and waits on the stage's
// "empty" mbarrier before reusing it.
// Block `index`'s K (into its stage) and V (FP8: into its staging buffer; 16-bit: into its stage)
// through the tensor memory accelerator, from key `seq` on, completing their "full" barriers: thread
// 0 of produce_with_tma, and of prepare_tile for block 0 (issue_first_copies). `before_v` runs
// between the two issues (produce_with_tma's wait for a separately freed V stage).
template <class Traits, class BeforeV>
__device__ __forceinline__ void copy_block_with_tma(const TileContext<typename Traits::Shape>& t, const WsTmaParams& tma,
                                                    int index, int seq, BeforeV before_v) {
    using Shape = typename Traits::Shape;
    constexpr int kElem = Traits::kElem, kKeys = Traits::kKeys, kStages = Traits::kStages;
    const int stage = index % kStages;
    mbarrier_arrive_expect_tx(t.k_full(stage), Shape::kKBytes);
    tma_load_tile<Shape::kQkSlices, kKeys, kElem>(t.smem_base() + Shape::kKOffset + stage * Shape::kKBytes, tma, kWsTmaK,
                                                  t.k_full(stage), seq, t.head_kv, t.batch);
    if constexpr (Traits::kFp8) {
        const int buffer = index % Shape::kVStagingBuffers;
        mbarrier_arrive_expect_tx(t.staging_full(buffer), Shape::kVLoadBytes);
        tma_load_tile<Shape::kVSlices, kKeys, kElem>(t.smem_base() + Shape::kVStagingOffset + buffer * Shape::kVLoadBytes,
                                                     tma, kWsTmaV, t.staging_full(buffer), seq, t.head_kv, t.batch);
    } else {  // 16-bit V is used as it lands
        before_v();
        mbarrier_arrive_expect_tx(t.v_full(stage), Shape::kVBytes);
        tma_load_tile<Shape::kVSlices, kKeys, kElem>(t.smem_base() + Shape::kVOffset + stage * Shape::kVBytes, tma,
                                                     kWsTmaV, t.v_full(stage), seq, t.head_kv, t.batch);
    }
}

// The K and V maps prefetched, then Q's tile through the tensor memory accelerator, completing
// q_full: thread 0, in prepare_tile (issue_first_copies), produce_with_tma or produce_paged_with_tma.
template <class Traits>
__device__ __forceinline__ void issue_q_with_tma(const TileContext<typename Traits::Shape>& t, const WsTmaParams& tma) {
    using Shape = typename Traits::Shape;
    tma_prefetch_map(tma.k_map);
    tma_prefetch_map(tma.v_map);
    mbarrier_arrive_expect_tx(t.q_full(), Shape::kQBytes);
    tma_load_tile<Shape::kQkSlices, Traits::kRows, Traits::kElem>(t.smem_base() + Shape::kQOffset, tma, kWsTmaQ,
                                                                  t.q_full(), static_cast<int>(t.first_q) + t.row0,
                                                                  t.head, t.batch);
}

// Q's tile and the first key block's K and V, issued by thread 0 of the CTA as soon as the mbarriers
// exist (prepare_tile), for produce_with_tma: so that their memory latency runs beside the tile's key
// ranges, the two __syncthreads and the register hand-over, which a short sequence's CTA otherwise
// spends before it issues a copy (docs/performance.md: Q's copy alone issued early gained nothing
// while K's still waited). The first block needs the tile's first visible key, which is row0's: a
// row's visible keys begin and end at non-decreasing keys as the row grows (numerics::visible_keys:
// maxima and minima of the row plus constants; numerics_mask's test_ranges_move_forward), so where
// row0 sees a key, the tile's smallest first key (prepare_tile's keys_begin) is row0's. Otherwise nothing is issued here and
// produce_with_tma issues every copy. Returns whether the copies were issued.
template <class Traits>
__device__ __forceinline__ bool issue_first_copies(const TileContext<typename Traits::Shape>& t, const WsTmaParams& tma,
                                                   const AttnKernelArgs& a) {
    using Shape = typename Traits::Shape;
    constexpr int kKeys = Traits::kKeys;
    const numerics::KeyRange row0 =
        numerics::visible_keys(t.row0, t.seqlen_q, t.seqlen_k, t.mask, a.window_left, a.window_right);
    if (!(row0.begin < row0.end)) return false;
    const int block_begin = static_cast<int>(row0.begin) - static_cast<int>(row0.begin) % kKeys;
    issue_q_with_tma<Traits>(t, tma);
    copy_block_with_tma<Traits>(t, tma, 0, static_cast<int>(t.first_k) + block_begin, [] {});
    return true;
}

template <class Traits>
__device__ __forceinline__ void produce_with_tma(const TileContext<typename Traits::Shape>& tile, const WsTmaParams& tma) {
    const TileContext<typename Traits::Shape> t = tile;  // a local copy (TileContext says why)
    using Shape = typename Traits::Shape;
    constexpr int kKeys = Traits::kKeys, kStages = Traits::kStages;
    constexpr bool kFp8 = Traits::kFp8;
    constexpr int DV = Traits::kDv;
    const int pt = threadIdx.x;
    write_ones_tile<Shape>(smem, pt);
    const int k_seq0 = static_cast<int>(t.first_k) + t.block_begin;
    // Thread 0 (the CTA's) may have issued Q and block 0 in prepare_tile (issue_first_copies).
    const int first_index = pt == 0 && t.first_copies_issued ? 1 : 0;
    if (pt == 0 && first_index == 0) issue_q_with_tma<Traits>(t, tma);
    auto finish_v = [&](int index) {  // FP8: V of block index in staging -> its stage, transposed
        // Past this barrier every producer thread is done with finish_v(index - 1), whose
        // staging buffer thread 0 refills with block index + 2 next.
        named_barrier_sync(kProducerBarrier, 128);
        constexpr int kBuffers = kFp8 ? Shape::kVStagingBuffers : 1;  // 16-bit never calls this
        const int buffer = index % kBuffers;
        mbarrier_wait(t.staging_full(buffer), (index / kBuffers) & 1);
        transpose_v_tile<DV, kKeys>(t.smem_base() + Shape::kVOffset + (index % kStages) * Shape::kVBytes,
                                    t.smem_base() + Shape::kVStagingOffset + buffer * Shape::kVLoadBytes, pt / 32,
                                    pt % 32);
        fence_proxy_async_shared();  // st.shared before the consumers' wgmma reads
        mbarrier_arrive(t.v_full(index % kStages));
    };
    for (int index = 0; index < t.blocks; ++index) {
        const int stage = index % kStages;
        if (pt == 0 && index >= first_index) {
            mbarrier_wait(t.k_empty(stage), ((index / kStages) & 1) ^ 1);
            copy_block_with_tma<Traits>(t, tma, index, k_seq0 + index * kKeys, [&] {
                if constexpr (Shape::kSeparateEmpty) mbarrier_wait(t.v_empty(stage), ((index / kStages) & 1) ^ 1);
            });
        }
        if constexpr (kFp8) {
            if (index > 0) finish_v(index - 1);
        }
    }
    if constexpr (kFp8) {
        if (t.blocks > 0) finish_v(t.blocks - 1);
    }
}

// produce_with_tma for FP8 V supplied transposed (WsTmaParams::v_transposed): Q and K as there, V
// by copy_transposed_v_block (no staging buffer, no transpose). A function of its own, so that the
// transposing producer's registers are allocated as without it (24 per thread: kProducerRegs).
template <class Traits>
__device__ __forceinline__ void produce_with_tma_v_transposed(const TileContext<typename Traits::Shape>& tile,
                                                              const WsTmaParams& tma, const AttnKernelArgs& a) {
    const TileContext<typename Traits::Shape> t = tile;  // a local copy (TileContext says why)
    using Shape = typename Traits::Shape;
    constexpr int kRows = Traits::kRows, kElem = Traits::kElem, kKeys = Traits::kKeys, kStages = Traits::kStages;
    static_assert(Traits::kFp8, "the transposed layout is FP8 V's");
    const int pt = threadIdx.x;
    write_ones_tile<Shape>(smem, pt);
    if (pt == 0) {
        tma_prefetch_map(tma.k_map);
        mbarrier_arrive_expect_tx(t.q_full(), Shape::kQBytes);
        tma_load_tile<Shape::kQkSlices, kRows, kElem>(t.smem_base() + Shape::kQOffset, tma, kWsTmaQ, t.q_full(),
                                                      static_cast<int>(t.first_q) + t.row0, t.head, t.batch);
    }
    auto copy_k = [&](int index) {  // thread 0, after the stage's empty barrier
        const int stage = index % kStages;
        mbarrier_wait(t.k_empty(stage), ((index / kStages) & 1) ^ 1);
        mbarrier_arrive_expect_tx(t.k_full(stage), Shape::kKBytes);
        tma_load_tile<Shape::kQkSlices, kKeys, kElem>(t.smem_base() + Shape::kKOffset + stage * Shape::kKBytes, tma,
                                                      kWsTmaK, t.k_full(stage), t.block_begin + index * kKeys, t.head_kv,
                                                      t.batch);
    };
    // The sequence may end inside the last block only: it goes after the loop (fewer values live
    // there, so the 24 registers hold them).
    const bool tail = t.blocks > 0 && t.block_begin + t.blocks * kKeys > t.seqlen_k;
    const int whole_blocks = tail ? t.blocks - 1 : t.blocks;
    for (int index = 0; index < whole_blocks; ++index) {
        if (pt == 0) copy_k(index);
        copy_transposed_v_block<Traits>(t, a, index, pt);
    }
    if (tail) {
        if (pt == 0) copy_k(whole_blocks);
        copy_transposed_v_tail<Traits>(t, a, whole_blocks, pt);
    }
}

// The paged form of produce_with_tma (attention_ws_tma_params.h, PagedKvArgs; enabled = 1), for the
// operands one warp copies: K, V or both (produce_paged_with_tma: warp 0 K, kPagedVWarp V). Each
// block of kKeys keys is kKeys / tma_box_rows pieces of whole pages (tma_box_rows = min(page_size,
// kKeys)), one copy per piece and 128-byte slice into the stage (FP8 V: its staging buffer) at the
// piece's rows, all completing the block's full barrier; each lane reads its piece's page index
// and issues its copies (one thread issuing all of them ran page 16 at 0.81x of this: H200,
// 2026-12-03). A block that ends inside a page or past the sequence (the tail: the TMA box would
// copy the page's rows beyond the sequence, which may hold anything, NaN included) copies its
// whole pieces the same way, while the warp's 32 lanes copy the remaining rows with cp.async,
// zero-filled from the sequence's end on as the contiguous maps' bounds do; lane 0 announces the
// copies' bytes first (expect_tx) and each lane arrives once its own rows have landed (the full
// barriers count kPagedCopyLanes arrivals). So the stage holds exactly the contiguous kernel's
// bytes. Every lane waits itself (not lane 0 for the warp) and arrives after its own rows, so that
// each lane's writes are ordered by its own barrier operations: compute-sanitizer's racecheck
// reported lane 0's wait and arrival, passed on by __syncwarp, as races between the tail rows'
// cp.async and the transposers' reads (H200, 2026-12-04).
template <class Traits, bool kCopyK, bool kCopyV>
__device__ __forceinline__ void copy_paged_blocks(const TileContext<typename Traits::Shape>& t, const WsTmaParams& tma,
                                                  const AttnKernelArgs& a, int lane) {
    using Shape = typename Traits::Shape;
    constexpr int kElem = Traits::kElem, kKeys = Traits::kKeys, kStages = Traits::kStages;
    constexpr bool kFp8 = Traits::kFp8;
    constexpr bool kVToStaging = kFp8;  // FP8 V lands in a staging buffer, 16-bit V in its stage
    static_assert(kKeys / 8 <= 32, "one piece per lane (pages of at least 8 rows)");
    // Kernel parameters (tma.paged, a) are read where used, not held: 24 registers (kProducerRegs).
    const int32_t* table_row = tma.paged.block_table + t.batch * tma.paged.block_table_stride;
    for (int index = 0; index < t.blocks; ++index) {
        const int stage = index % kStages;
        const int key0 = t.block_begin + index * kKeys;
        const int valid = min(kKeys, t.seqlen_k - key0);
        const int box = tma.paged.tma_box_rows;
        const int pieces = valid / box;  // whole pages' pieces: copied by the TMA
        const bool tail = pieces * box < kKeys;
        const int buffer = kVToStaging ? index % Shape::kVStagingBuffers : 0;
        const uint32_t k_dst = t.smem_base() + Shape::kKOffset + stage * Shape::kKBytes;
        const uint32_t v_dst = kVToStaging ? t.smem_base() + Shape::kVStagingOffset + buffer * Shape::kVLoadBytes
                                           : t.smem_base() + Shape::kVOffset + stage * Shape::kVBytes;
        const uint32_t k_bar = t.k_full(stage), v_bar = kVToStaging ? t.staging_full(buffer) : t.v_full(stage);
        // This lane's piece: its page index read before the waits.
        const int key = key0 + lane * box;
        const int page = lane < pieces ? table_row[key >> (__ffs(tma.paged.page_size) - 1)] : 0;
        if constexpr (kCopyK) mbarrier_wait(t.k_empty(stage), ((index / kStages) & 1) ^ 1);
        if constexpr (kCopyV && !kVToStaging && (!kCopyK || Shape::kSeparateEmpty)) {
            mbarrier_wait(t.v_empty(stage), ((index / kStages) & 1) ^ 1);
        }
        if constexpr (kCopyV && kVToStaging) wait_staging_free<Traits>(t, index);  // the transposers wait for the stage
        auto announce = [&](uint32_t bar, int row_bytes) {
            const uint32_t bytes = static_cast<uint32_t>(pieces * box * row_bytes);
            if (tail) {  // each lane's arrival follows its own rows (below)
                mbarrier_expect_tx(bar, bytes);
            } else {  // lane 0 arrives for the warp: no lane writes anything of its own
                mbarrier_arrive_expect_tx(bar, bytes);
                mbarrier_arrive_many(bar, Shape::kPagedCopyLanes - 1);
            }
        };
        if (lane == 0) {
            if constexpr (kCopyK) announce(k_bar, Shape::kQkSlices * 128);
            if constexpr (kCopyV) announce(v_bar, Shape::kVSlices * 128);
        }
        __syncwarp();  // the bytes announced before any lane's copy completes them
        if (lane < pieces) {
            const int row = key & (tma.paged.page_size - 1);
            if constexpr (kCopyK) {
                tma_load_tile<Shape::kQkSlices, kKeys, kElem>(k_dst + lane * box * 128, tma, kWsTmaK, k_bar, row,
                                                              t.head_kv, page);
            }
            if constexpr (kCopyV) {
                tma_load_tile<Shape::kVSlices, kKeys, kElem>(v_dst + lane * box * 128, tma, kWsTmaV, v_bar, row,
                                                             t.head_kv, page);
            }
        }
        if (tail) {
            if constexpr (kCopyK) {
                const unsigned char* k_pool =
                    static_cast<const unsigned char*>(a.k) + static_cast<int64_t>(t.head_kv) * a.k_stride_head * kElem;
                producer_load_paged_rows<kKeys, Shape::kQkChunks, 32>(k_dst, k_pool, a.k_stride_batch * kElem,
                                                                      a.k_stride_seq * kElem, table_row, tma.paged,
                                                                      key0, pieces * box, valid, lane);
            }
            if constexpr (kCopyV) {
                const unsigned char* v_pool =
                    static_cast<const unsigned char*>(a.v) + static_cast<int64_t>(t.head_kv) * a.v_stride_head * kElem;
                producer_load_paged_rows<kKeys, Shape::kVChunks, 32>(v_dst, v_pool, a.v_stride_batch * kElem,
                                                                     a.v_stride_seq * kElem, table_row, tma.paged,
                                                                     key0, pieces * box, valid, lane);
            }
            cp_async_wait_all();
            fence_proxy_async_shared();  // the rows, before the consumers' wgmma (or the V transpose)
            if constexpr (kCopyK) mbarrier_arrive(k_bar);
            if constexpr (kCopyV) mbarrier_arrive(v_bar);
        }
    }
}

// The paged producer with the tensor memory accelerator: warp 0 loads Q and copies K, warp
// kPagedVWarp copies V and warps 1-2 transpose FP8 V (16-bit V: nothing to transpose). A copying
// warp issues a block's copies one page piece per lane, a loop over the active lanes in SASS, so
// each operand has a warp of its own (one warp issuing page 16's K and V held the consumer warps
// of its SM sub-partition: H200, 2026-12-04).
template <class Traits>
__device__ __forceinline__ void produce_paged_with_tma(const TileContext<typename Traits::Shape>& tile,
                                                       const WsTmaParams& tma, const AttnKernelArgs& a) {
    const TileContext<typename Traits::Shape> t = tile;  // a local copy (TileContext says why)
    using Shape = typename Traits::Shape;
    const int pt = threadIdx.x, warp = pt / 32, lane = pt % 32;
    if (warp == 0) {
        if (lane == 0) issue_q_with_tma<Traits>(t, tma);
        copy_paged_blocks<Traits, true, false>(t, tma, a, lane);
    } else if (warp == Shape::kPagedVWarp) {
        copy_paged_blocks<Traits, false, true>(t, tma, a, lane);
    } else if constexpr (Traits::kFp8) {
        write_ones_tile<Shape>(smem, pt - 32);  // published by the transposers' fence
        transpose_v_blocks<Traits>(t, pt);
    }
}

// The producer with cp.async (varlen, strides the tensor memory accelerator cannot take): all 128
// threads copy into the layout the TMA writes, each arriving on the "full" mbarrier when its
// copies land (cp.async.mbarrier.arrive.noinc); it waits on the stage's "empty" mbarrier before
// reusing it.
template <class Traits, bool PAGED = false>
__device__ __forceinline__ void produce_with_cp_async(const TileContext<typename Traits::Shape>& tile,
                                                      const AttnKernelArgs& a, const PagedKvArgs& paged) {
    const TileContext<typename Traits::Shape> t = tile;  // a local copy (TileContext says why)
    using Shape = typename Traits::Shape;
    constexpr int kRows = Traits::kRows, kElem = Traits::kElem, kKeys = Traits::kKeys, kStages = Traits::kStages;
    constexpr bool kFp8 = Traits::kFp8;
    constexpr int DV = Traits::kDv;
    constexpr int kUnroll = Traits::kCopyUnroll;
    const int pt = threadIdx.x;
    write_ones_tile<Shape>(smem, pt);
    const unsigned char* q_global = static_cast<const unsigned char*>(a.q) +
        (t.batch * a.q_stride_batch + (t.first_q + t.row0) * a.q_stride_seq + t.head * a.q_stride_head) * kElem;
    // Paged: the pools at the tile's kv head (pages come from the block table).
    const unsigned char* k_global = static_cast<const unsigned char*>(a.k) +
        ((PAGED ? 0 : t.batch * a.k_stride_batch + t.first_k * a.k_stride_seq) + t.head_kv * a.k_stride_head) * kElem;
    const unsigned char* v_global = static_cast<const unsigned char*>(a.v) +
        ((PAGED ? 0 : t.batch * a.v_stride_batch + t.first_k * a.v_stride_seq) + t.head_kv * a.v_stride_head) * kElem;
    producer_load_tile<kRows, Shape::kQkChunks, kUnroll>(t.smem_base() + Shape::kQOffset, q_global,
                                                         a.q_stride_seq * kElem, min(kRows, t.seqlen_q - t.row0), pt);
    cp_async_arrive_on(t.q_full());
    auto finish_v = [&](int index) {  // FP8: V of block index landed in staging -> its stage
        named_barrier_sync(kProducerBarrier, 128);  // every producer thread's copies are visible
        transpose_v_tile<DV, kKeys>(
            t.smem_base() + Shape::kVOffset + (index % kStages) * Shape::kVBytes,
            t.smem_base() + Shape::kVStagingOffset + (index % (kFp8 ? Shape::kVStagingBuffers : 1)) * Shape::kVLoadBytes,
            pt / 32, pt % 32);
        fence_proxy_async_shared();  // st.shared before the consumers' wgmma reads
        mbarrier_arrive(t.v_full(index % kStages));
    };
    for (int index = 0; index < t.blocks; ++index) {
        const int stage = index % kStages;
        const int block = t.block_begin + index * kKeys;
        const int valid = min(kKeys, t.seqlen_k - block);
        mbarrier_wait(t.k_empty(stage), ((index / kStages) & 1) ^ 1);
        // Paged: k_global and v_global are the pools at the tile's kv head, the table row the sequence's.
        auto load_k_or_v = [&](auto chunks, uint32_t dst, const unsigned char* global, int64_t stride_batch,
                               int64_t stride_seq) {
            if constexpr (PAGED) {
                producer_load_paged_rows<kKeys, decltype(chunks)::value>(
                    dst, global, stride_batch * kElem, stride_seq * kElem,
                    paged.block_table + t.batch * paged.block_table_stride, paged, block, 0, valid, pt);
            } else {
                producer_load_tile<kKeys, decltype(chunks)::value, kUnroll>(dst, global + block * stride_seq * kElem,
                                                                            stride_seq * kElem, valid, pt);
            }
        };
        load_k_or_v(std::integral_constant<int, Shape::kQkChunks>{},
                    t.smem_base() + Shape::kKOffset + stage * Shape::kKBytes, k_global, a.k_stride_batch,
                    a.k_stride_seq);
        cp_async_arrive_on(t.k_full(stage));
        if constexpr (kFp8) {
            // Three staging buffers: the one written here was last read by finish_v(index - 3),
            // which every producer thread left before the barrier of finish_v(index - 2).
            load_k_or_v(std::integral_constant<int, Shape::kVChunks>{},
                        t.smem_base() + Shape::kVStagingOffset + (index % Shape::kVStagingBuffers) * Shape::kVLoadBytes,
                        v_global, a.v_stride_batch, a.v_stride_seq);
            cp_async_commit();
            if (index > 0) {
                cp_async_wait_group<1>();  // V of block index - 1
                finish_v(index - 1);
            }
        } else {
            if constexpr (Shape::kSeparateEmpty) mbarrier_wait(t.v_empty(stage), ((index / kStages) & 1) ^ 1);
            load_k_or_v(std::integral_constant<int, Shape::kVChunks>{},
                        t.smem_base() + Shape::kVOffset + stage * Shape::kVBytes, v_global, a.v_stride_batch,
                        a.v_stride_seq);
            cp_async_arrive_on(t.v_full(stage));
        }
    }
    if constexpr (kFp8) {
        if (t.blocks > 0) {
            cp_async_wait_group<0>();
            finish_v(t.blocks - 1);
        }
    }
    cp_async_wait_all();
}

}  // namespace nvidia
}  // namespace zyfa

#endif
