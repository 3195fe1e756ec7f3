#include "attention_launch_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/lean_p.h"
#include "common/v_transposed.h"
#include "core/errors.hpp"
#include "core/validate.hpp"
#include "gpu/vector_alignment.hpp"
#include "nvidia/attention_split_params.h"
#include "nvidia/attention_tile_shape.h"
#include "nvidia/attention_ws_tile_shape.h"
#include "split_kv_plan.hpp"
#include "ws_tma_maps.hpp"

namespace zyfa {
namespace cuda {
namespace {

constexpr int kWarps = 8;  // the mma.sync kernels: 128-row query tiles (kernels/nvidia/CMakeLists.txt)
using validation::dtype_name;

// The two kernel structures of kernels/nvidia/attention_kernel_variants.def.
enum class Structure {
    Mma,  // attention_fwd_mma.cuh: 8 warps x 16 rows; sm_80, and sm_90a for misaligned O
    Ws,   // attention_fwd_ws.cuh: warp-specialised, sm_90a
    WsPaged,  // the same, K and V read through a block table (paged K/V), sm_90a
    WsBias,   // the same, adding zyfa_attn_params.key_bias to every score (FP8 E4M3), sm_90a
    Split,    // attention_fwd_split.cuh: split-KV for short query chunks, 16-bit, sm_90a
};

struct KernelFamily {
    Structure structure;
    bool fp8;      // one-byte q/k/v: FP8, or the INT8 Q/K mode
    bool int8_qk;  // the INT8 Q/K mode (s8 Q and K, e4m3 V)
    int head_dim_qk;
    int head_dim_v;
    const char* variant;
    const char* symbol_a;  // BF16 or e4m3 EXACT
    const char* symbol_b;  // FP16 or e4m3 LEAN
    uint32_t shared_bytes;
    bool on_sm80;  // the mma.sync families sm_80 has (16-bit, head dims up to 192)
};

template <int ELEM, int DQK, int DV>
constexpr uint32_t shared_bytes_of() {
    return static_cast<uint32_t>(nvidia::TileShape<ELEM, DQK, DV, kWarps>::kSharedBytes);
}

// The warp-specialised kernels: 128-row tiles, 384 threads (a producer warpgroup and two consumer
// warpgroups), one CTA per SM, each stepping nvidia::ws_key_block's keys: each kernel's shared
// memory is its own tile shape's.
template <int ELEM, int DQK, int DV, bool LEAN>
constexpr uint32_t ws_shared_bytes_of() {
    return static_cast<uint32_t>(
        nvidia::WsTileShape<ELEM, DQK, DV, nvidia::ws_key_block(ELEM == 1, LEAN, DQK, DV)>::kSharedBytes);
}
// The larger of a family's two kernels (the catalogue loads both with one size).
template <int ELEM, int DQK, int DV>
constexpr uint32_t ws_family_shared_bytes_of() {
    return ws_shared_bytes_of<ELEM, DQK, DV, false>() > ws_shared_bytes_of<ELEM, DQK, DV, true>()
               ? ws_shared_bytes_of<ELEM, DQK, DV, false>()
               : ws_shared_bytes_of<ELEM, DQK, DV, true>();
}

// Every kernel family, from the variant list (its names: the list's head comment). sm_80 has the
// 16-bit mma.sync ones up to head dim 192 (no e4m3 MMA there; head dim 256 needs more shared
// memory than sm_80 has) and runs every problem on them; sm_90a runs the warp-specialised ones,
// and the mma.sync ones for an O whose pairs are misaligned only (below).
#define ZYFA_SYMBOL_A_b16 "bf16_"
#define ZYFA_SYMBOL_B_b16 "fp16_"
#define ZYFA_SYMBOL_A_e4m3 "e4m3_exact_"
#define ZYFA_SYMBOL_B_e4m3 "e4m3_lean_"
#define ZYFA_SYMBOL_A_i8e4m3 "i8e4m3_exact_"
#define ZYFA_SYMBOL_B_i8e4m3 "i8e4m3_lean_"
#define ZYFA_FAMILY_mma(family, fp8, dims, dqk, dv, on_sm80)                                                \
    KernelFamily{Structure::Mma, fp8 != 0, fp8 == 2, dqk, dv, "attn_fwd_" #family "_" #dims,                           \
                 "zyfa_attn_fwd_" ZYFA_SYMBOL_A_##family #dims, "zyfa_attn_fwd_" ZYFA_SYMBOL_B_##family #dims, \
                 shared_bytes_of<(fp8) ? 1 : 2, dqk, dv>(), on_sm80 != 0}
#define ZYFA_FAMILY_ws(family, fp8, dims, dqk, dv, on_sm80)                                                   \
    KernelFamily{Structure::Ws, fp8 != 0, fp8 == 2, dqk, dv, "attn_fwd_ws_" #family "_" #dims,                           \
                 "zyfa_attn_fwd_ws_" ZYFA_SYMBOL_A_##family #dims, "zyfa_attn_fwd_ws_" ZYFA_SYMBOL_B_##family #dims, \
                 ws_family_shared_bytes_of<(fp8) ? 1 : 2, dqk, dv>(), on_sm80 != 0}
#define ZYFA_FAMILY_ws_paged(family, fp8, dims, dqk, dv, on_sm80)                                           \
    KernelFamily{Structure::WsPaged, fp8 != 0, fp8 == 2, dqk, dv, "attn_fwd_ws_paged_" #family "_" #dims,        \
                 "zyfa_attn_fwd_ws_paged_" ZYFA_SYMBOL_A_##family #dims,                                        \
                 "zyfa_attn_fwd_ws_paged_" ZYFA_SYMBOL_B_##family #dims,                                        \
                 ws_family_shared_bytes_of<(fp8) ? 1 : 2, dqk, dv>(), on_sm80 != 0}
#define ZYFA_FAMILY_ws_bias(family, fp8, dims, dqk, dv, on_sm80)                                            \
    KernelFamily{Structure::WsBias, fp8 != 0, fp8 == 2, dqk, dv, "attn_fwd_ws_bias_" #family "_" #dims,          \
                 "zyfa_attn_fwd_ws_bias_" ZYFA_SYMBOL_A_##family #dims,                                         \
                 "zyfa_attn_fwd_ws_bias_" ZYFA_SYMBOL_B_##family #dims,                                         \
                 ws_family_shared_bytes_of<(fp8) ? 1 : 2, dqk, dv>(), on_sm80 != 0}
// The split kernels' shared memory (attention_fwd_split.cuh's SplitTileShape): a header, 16 Q
// rows and kSplitStages stages of one 64-key K and V block, every row padded by kRowPad bytes.
template <int DQK, int DV>
constexpr uint32_t split_shared_bytes_of() {
    return static_cast<uint32_t>(nvidia::kHeaderBytes + kSplitRows * (DQK * 2 + nvidia::kRowPad) +
                                 kSplitStages * kSplitKeyBlock * ((DQK * 2 + nvidia::kRowPad) + (DV * 2 + nvidia::kRowPad)));
}
#define ZYFA_FAMILY_split(family, fp8, dims, dqk, dv, on_sm80)                                              \
    KernelFamily{Structure::Split, fp8 != 0, false, dqk, dv, "attn_fwd_split_" #family "_" #dims,                \
                 "zyfa_attn_fwd_split_" ZYFA_SYMBOL_A_##family #dims, "zyfa_attn_fwd_split_" ZYFA_SYMBOL_B_##family #dims, \
                 split_shared_bytes_of<dqk, dv>(), on_sm80 != 0}
#define ZYFA_NVIDIA_ATTN_VARIANT(structure, family, fp8, dims, dqk, dv, on_sm80) \
    (ZYFA_FAMILY_##structure(family, fp8, dims, dqk, dv, on_sm80)),
constexpr KernelFamily kFamilies[] = {
#include "nvidia/attention_kernel_variants.def"
};
#undef ZYFA_NVIDIA_ATTN_VARIANT
#undef ZYFA_FAMILY_ws_paged
#undef ZYFA_FAMILY_ws_bias
#undef ZYFA_FAMILY_split
#undef ZYFA_FAMILY_ws
#undef ZYFA_FAMILY_mma
#undef ZYFA_SYMBOL_B_i8e4m3
#undef ZYFA_SYMBOL_A_i8e4m3
#undef ZYFA_SYMBOL_B_e4m3
#undef ZYFA_SYMBOL_A_e4m3
#undef ZYFA_SYMBOL_B_b16
#undef ZYFA_SYMBOL_A_b16

const KernelFamily* find_family(Structure structure, bool fp8, bool int8_qk, int64_t head_dim_qk, int64_t head_dim_v) {
    for (const KernelFamily& f : kFamilies) {
        if (f.structure == structure && f.fp8 == fp8 && f.int8_qk == int8_qk && f.head_dim_qk == head_dim_qk &&
            f.head_dim_v == head_dim_v) {
            return &f;
        }
    }
    return nullptr;
}

// The warp-specialised kernels store O two elements at a time (8 bytes fp32, 4 bytes 16-bit): O's
// base and strides must keep every even element aligned to that. Otherwise the mma.sync kernel,
// which stores one element at a time, runs the problem: the ws kernels' epilogue writes its pairs
// itself (one store form per output dtype, chosen once per tile) and has no unpaired form.
bool output_pairs_aligned(const TensorView& o) {
    const int64_t elem_bytes = o.dtype == ZYFA_DTYPE_FP32 ? 4 : 2;
    if (reinterpret_cast<uintptr_t>(o.data) % static_cast<uintptr_t>(2 * elem_bytes) != 0) return false;
    return o.stride_batch % 2 == 0 && o.stride_seq % 2 == 0 && o.stride_head % 2 == 0;
}

// The split kernel family for a problem's shape (dtype aside), or null when split-KV does not take
// it: sm_90a, head dims 64/64 or 128/128, and the kernel's own key step (params.key_block 0: an
// explicit key block asks for the unsplit kernels' numerics). Contiguous or paged K/V (page
// indices in int32, as the paged kernels'), with or without sinks.
const KernelFamily* split_family(const AttnProblem& p, const std::string& image_arch) {
    if (image_arch != "sm_90a" || p.key_block != 0 || (p.paged() && p.num_pages > INT32_MAX)) return nullptr;
    return find_family(Structure::Split, false, false, p.head_dim_qk, p.head_dim_v);
}

// The split count of a problem on this device (1: do not split); workspace_bytes -1 = no limit.
int64_t split_count(const AttnProblem& p, const gpu::DeviceInfo& device, int64_t workspace_bytes) {
    const SplitKvShape shape = split_kv_shape(p);
    const int64_t splits = choose_split_count(shape, device.multiprocessors, p.num_splits, workspace_bytes);
    if (splits < 2) return 1;
    // Grid limits of the split and merge launches: fall back to the unsplit kernels beyond them.
    if (split_kv_row_tiles(shape) * p.heads_kv > INT32_MAX || p.batch > 65535 || p.heads_q > 65535 ||
        p.seqlen_q > 65535) {
        return 1;
    }
    return splits;
}

// The warp-specialised kernels start their CTAs over groups of 2^g adjacent query heads (of one
// batch), the heaviest tiles of every head of the group first (sm90/tile_context.cuh, locate_tile).
// g is the largest with 2^g dividing heads_q and the group's tiles (tiles << g) fitting one wave of
// the multiprocessors: each wave then holds the heads whose K and V it reads from L2, as one head at
// a time does, while the group's last tiles are its lightest. One head at a time left the last
// wave's heaviest tiles late at 1K-8K (tools/gpu/cta_order_model.py); the heaviest tiles of every
// head first lost 5-30% to L2 misses (docs/performance.md, 2026-12-06).
int ws_head_group_log2(int64_t tiles, int64_t heads_q, int multiprocessors) {
    int g = 0;
    while (heads_q % (int64_t{2} << g) == 0 && (tiles << (g + 1)) <= multiprocessors) ++g;
    return g;
}

class CudaAttnCatalogue final : public gpu::AttnKernelCatalogue {
public:
    explicit CudaAttnCatalogue(CudaKernelChoice choice) : choice_(choice) {}

    std::vector<gpu::KernelSpec> kernels(const std::string& image_arch) const override {
        std::vector<gpu::KernelSpec> specs;
        auto add = [&](const KernelFamily& family) {
            specs.push_back(gpu::KernelSpec{family.variant, family.symbol_a, family.shared_bytes});
            specs.push_back(gpu::KernelSpec{family.variant, family.symbol_b, family.shared_bytes});
        };
        for (const KernelFamily& family : kFamilies) {
            if ((image_arch == "sm_90a") || (image_arch == "sm_80" && family.structure == Structure::Mma && family.on_sm80)) {
                add(family);
            }
        }
        return specs;
    }

    gpu::AttnLaunch plan(const AttnProblem& p, const gpu::DeviceInfo& device,
                         const std::string& image_arch) const override {
        const zyfa_dtype dtype = p.q.dtype;
        if (dtype == ZYFA_DTYPE_FP8_E4M3FNUZ) {
            throw_not_supported("q.dtype = FP8_E4M3FNUZ has no NVIDIA kernel (e4m3fnuz is the gfx942 format; "
                                "NVIDIA GPUs use FP8_E4M3FN)");
        }
        const bool int8_qk = dtype == ZYFA_DTYPE_INT8;  // the INT8 Q/K mode: v FP8
        if (dtype != ZYFA_DTYPE_BF16 && dtype != ZYFA_DTYPE_FP16 && dtype != ZYFA_DTYPE_FP8_E4M3FN && !int8_qk) {
            throw_not_supported(std::string("q.dtype = ") + dtype_name(dtype) + " has no NVIDIA kernel");
        }
        if (int8_qk && p.v.dtype != ZYFA_DTYPE_FP8_E4M3FN) {
            throw_not_supported(std::string("v.dtype = ") + dtype_name(p.v.dtype) +
                                " with INT8 q/k has no NVIDIA kernel (NVIDIA GPUs use FP8_E4M3FN)");
        }
        const bool fp8 = dtype == ZYFA_DTYPE_FP8_E4M3FN || int8_qk;  // one-byte operands, e4m3 P and V
        if (int8_qk && !find_family(Structure::Ws, fp8, true, p.head_dim_qk, p.head_dim_v)) {
            throw_not_supported("head_dim_qk = " + std::to_string(p.head_dim_qk) + ", head_dim_v = " +
                                std::to_string(p.head_dim_v) +
                                " with INT8 q/k: the NVIDIA INT8 Q/K kernels support head dims 64 and 128");
        }
        if (int8_qk && p.paged()) {
            throw_not_supported("q.dtype = INT8 (the INT8 Q/K mode) with params.block_table set: the NVIDIA INT8 "
                                "Q/K kernels read contiguous K and V only (no paged INT8 kernels); attention "
                                "sinks are supported");
        }
        if (int8_qk && (image_arch != "sm_90a" || !output_pairs_aligned(p.o))) {
            throw_not_supported("q.dtype = INT8 (the INT8 Q/K mode) runs on the sm_90a warp-specialised kernels only, "
                                "with O's element pairs aligned (" + image_arch + ")");
        }
        // The warp-specialised kernels cover every dtype and head dims of the NVIDIA backend.
        if (!find_family(Structure::Ws, fp8, int8_qk, p.head_dim_qk, p.head_dim_v)) {
            throw_not_supported("head_dim_qk = " + std::to_string(p.head_dim_qk) + ", head_dim_v = " +
                                std::to_string(p.head_dim_v) +
                                ": the NVIDIA kernels support head dims 64, 128, 256 and 192/128");
        }
        if (p.softmax == ZYFA_SOFTMAX_LEAN && !fp8) {
            throw_not_supported("params.softmax = LEAN needs FP8 inputs");
        }
        // Split-KV: a short query chunk against long keys, with the caller's workspace. Decided
        // before the unsplit kernel: the split kernel reads paged K/V itself at both of its head dims
        // and writes fp32 parts (the merge writes O, so O's alignment does not matter).
        if (!fp8 && p.workspace != nullptr) {
            const KernelFamily* split = split_family(p, image_arch);
            const int64_t splits = split ? split_count(p, device, p.workspace_bytes) : 1;
            if (splits > 1 && (device.max_shared_bytes_per_block <= 0 ||
                               split->shared_bytes <= static_cast<uint32_t>(device.max_shared_bytes_per_block))) {
                gpu::require_vector_aligned(p.q, "q", 2, "NVIDIA");
                gpu::require_vector_aligned(p.k, "k", 2, "NVIDIA");  // seqlen_k > 0: a problem that splits has keys
                gpu::require_vector_aligned(p.v, "v", 2, "NVIDIA");
                gpu::AttnLaunch launch;
                launch.variant = split->variant;
                launch.symbol = dtype == ZYFA_DTYPE_FP16 ? split->symbol_b : split->symbol_a;
                launch.kernel_name = launch.symbol;
                launch.grid.x = static_cast<uint32_t>(split_kv_row_tiles(split_kv_shape(p)) * p.heads_kv);
                launch.grid.y = static_cast<uint32_t>(splits);
                launch.grid.z = static_cast<uint32_t>(p.batch);
                launch.block.x = static_cast<uint32_t>(kSplitThreads);
                launch.shared_bytes = split->shared_bytes;
                launch.second_parameter = true;  // nvidia::SplitParams (attention_split_params.h)
                launch.splits = splits;
                return launch;
            }
        }
        // sm_90a: the warp-specialised kernels, except for an O whose pairs are misaligned.
        const bool ws_kernel = image_arch == "sm_90a" && output_pairs_aligned(p.o);
        const KernelFamily* family = nullptr;
        if (p.paged()) {
            // Paged K/V: the warp-specialised paged kernels only (attention_kernel_variants.def).
            family = ws_kernel ? find_family(Structure::WsPaged, fp8, int8_qk, p.head_dim_qk, p.head_dim_v) : nullptr;
            if (!family) {
                throw_not_supported("params.block_table is set: the NVIDIA paged kernels need sm_90a, head dims "
                                    "128/128 and an O whose element pairs are aligned (or, for BF16/FP16 at head "
                                    "dims 64 and 128, a split-KV launch: params.workspace); this request has head dims " +
                                    std::to_string(p.head_dim_qk) + "/" + std::to_string(p.head_dim_v) + " on " +
                                    device.arch);
            }
            if (p.num_pages > INT32_MAX) {
                throw_not_supported("params.num_pages = " + std::to_string(p.num_pages) +
                                    " exceeds the NVIDIA kernels' int32 page indices");
            }
        } else if (ws_kernel) {
            family = find_family(Structure::Ws, fp8, int8_qk, p.head_dim_qk, p.head_dim_v);
        } else if (image_arch == "sm_90a" || image_arch == "sm_80") {
            family = find_family(Structure::Mma, fp8, int8_qk, p.head_dim_qk, p.head_dim_v);
            if (family && image_arch == "sm_80" && !family->on_sm80) family = nullptr;
        }
        if (p.key_bias != nullptr) {
            // Q smoothing's per-key bias: the key-bias kernels (attention_kernel_variants.def's ws_bias).
            family = ws_kernel && !p.paged() && !int8_qk && choice_ == CudaKernelChoice::Automatic
                         ? find_family(Structure::WsBias, fp8, false, p.head_dim_qk, p.head_dim_v)
                         : nullptr;
            if (!family) {
                throw_not_supported(std::string("params.key_bias: the NVIDIA kernels add it with FP8_E4M3FN q/k/v at "
                                                "head dims 64/64 and 128/128 on sm_90a (contiguous K/V, O's element "
                                                "pairs aligned); this request: ") +
                                    dtype_name(dtype) + " at " + std::to_string(p.head_dim_qk) + "/" +
                                    std::to_string(p.head_dim_v) + (p.paged() ? ", paged K/V" : "") + " on " +
                                    device.arch);
            }
        }
        if (p.v_transposed) {
            // The producer copies each 128-key block of V as it lies (no transpose): the FP8
            // warp-specialised kernels with 128-key steps, contiguous keys, tensor maps for Q and K.
            const bool steps_128 = nvidia::ws_key_block(fp8, p.softmax == ZYFA_SOFTMAX_LEAN, static_cast<int>(p.head_dim_qk),
                                                        static_cast<int>(p.head_dim_v)) == numerics::kVtPadKeys;
            if (!ws_kernel || int8_qk || !steps_128 || choice_ != CudaKernelChoice::Automatic) {
                throw_not_supported(std::string("params.flags has ZYFA_ATTN_V_TRANSPOSED: the NVIDIA kernels read it with "
                                                "FP8_E4M3FN q/k/v at head dims 64, 128 and 192/128 on sm_90a (128-key "
                                                "steps), O's element pairs aligned; this request: ") +
                                    dtype_name(dtype) + " at " + std::to_string(p.head_dim_qk) + "/" +
                                    std::to_string(p.head_dim_v) + " on " + device.arch);
            }
            if (p.v.stride_seq != numerics::kVtGroupKeys * p.head_dim_v) {
                throw_not_supported("v.stride_seq = " + std::to_string(p.v.stride_seq) +
                                    " with ZYFA_ATTN_V_TRANSPOSED: the NVIDIA kernels copy each 128-key block in one "
                                    "piece, so 16-key groups must be adjacent (stride_seq = 16 * head_dim_v = " +
                                    std::to_string(numerics::kVtGroupKeys * p.head_dim_v) + ")");
            }
        }
        if (!family) {
            throw_not_supported(std::string("no NVIDIA kernel for ") + dtype_name(dtype) + " with head dims " +
                                std::to_string(p.head_dim_qk) + "/" + std::to_string(p.head_dim_v) + " on " +
                                device.arch + " (this build's " + image_arch +
                                " cubins: e4m3 needs sm_90a, head dim 256 needs sm_90a's shared memory)");
        }
        using MmaShape = nvidia::TileShape<2, 64, 64, kWarps>;        // rows and threads do not depend on dims
        using WsShape = nvidia::WsTileShape<1, 128, 128, 64>;         // likewise
        const int rows = ws_kernel ? WsShape::kRows : MmaShape::kRows;
        const int threads = ws_kernel ? WsShape::kThreads : MmaShape::kThreads;
        // Keys per online-softmax step of the chosen kernel: the warp-specialised kernels'
        // nvidia::ws_key_block, 64 for the mma.sync kernels.
        const int key_block = ws_kernel ? nvidia::ws_key_block(fp8, p.softmax == ZYFA_SOFTMAX_LEAN,
                                                               static_cast<int>(p.head_dim_qk),
                                                               static_cast<int>(p.head_dim_v))
                                        : 64;
        if (p.key_block != 0 && p.key_block != key_block) {
            throw_not_supported("params.key_block = " + std::to_string(p.key_block) + ": the NVIDIA kernel for " +
                                dtype_name(dtype) + " " + (p.softmax == ZYFA_SOFTMAX_LEAN ? "LEAN" : "EXACT") +
                                " at head dims " + std::to_string(p.head_dim_qk) + "/" + std::to_string(p.head_dim_v) +
                                " steps " + std::to_string(key_block) + " keys (pass 0 or " +
                                std::to_string(key_block) + ")");
        }
        const int64_t elem_bytes = fp8 ? 1 : 2;
        gpu::require_vector_aligned(p.q, "q", elem_bytes, "NVIDIA");
        if (p.seqlen_k > 0) {  // otherwise no kernel reads K or V (the rows get O = 0, lse = -inf)
            gpu::require_vector_aligned(p.k, "k", elem_bytes, "NVIDIA");
            gpu::require_vector_aligned(p.v, "v", elem_bytes, "NVIDIA");
        }
        if (device.max_shared_bytes_per_block > 0 &&
            family->shared_bytes > static_cast<uint32_t>(device.max_shared_bytes_per_block)) {
            throw_not_supported(std::string(family->variant) + " needs " + std::to_string(family->shared_bytes) +
                                " bytes of shared memory per block, " + device.arch + " allows " +
                                std::to_string(device.max_shared_bytes_per_block));
        }

        const int64_t tiles = (p.seqlen_q + rows - 1) / rows;
        if (tiles > INT32_MAX || p.heads_q > 65535 || p.batch > 65535) {
            throw_not_supported("grid (" + std::to_string(tiles) + ", heads_q = " + std::to_string(p.heads_q) +
                                ", batch = " + std::to_string(p.batch) +
                                ") exceeds CUDA's grid limits (2^31-1, 65535, 65535)");
        }
        gpu::AttnLaunch launch;
        launch.variant = family->variant;
        const bool second = fp8 ? p.softmax == ZYFA_SOFTMAX_LEAN : dtype == ZYFA_DTYPE_FP16;
        launch.symbol = second ? family->symbol_b : family->symbol_a;
        launch.kernel_name = launch.symbol;
        const int head_group_log2 = ws_kernel ? ws_head_group_log2(tiles, p.heads_q, device.multiprocessors) : 0;
        launch.grid.x = static_cast<uint32_t>(tiles << head_group_log2);
        launch.grid.y = static_cast<uint32_t>(p.heads_q >> head_group_log2);
        launch.grid.z = static_cast<uint32_t>(p.batch);
        launch.block.x = static_cast<uint32_t>(threads);
        launch.shared_bytes = family->shared_bytes;
        launch.second_parameter = ws_kernel;  // its tensor maps (attention_ws_tma_params.h)
        return launch;
    }

    // kernels/nvidia/quantize_fp8.cu, built for every arch of ZYFA_CUDA_ARCHS (no FP8 hardware
    // needed: the encoder is integer and fp32 arithmetic).
    gpu::QuantKernelSpec quantize_kernels(const std::string& image_arch) const override {
        if (image_arch != "sm_90a" && image_arch != "sm_80") return {};
        gpu::QuantKernelSpec spec = gpu::quantize_fp8_kernel_names();
        spec.v_transposed = true;  // quantize_fp8.cu writes ZYFA_QUANT_V_TRANSPOSED's layout
        spec.key_bias = "zyfa_quantize_fp8_key_bias";
        return spec;
    }

    // kernels/nvidia/attention_merge.cu, built for every arch of ZYFA_CUDA_ARCHS.
    gpu::MergeKernelSpec merge_kernel(const std::string& image_arch) const override {
        if (image_arch != "sm_90a" && image_arch != "sm_80") return {};
        return gpu::attn_merge_kernel_names();
    }

    uint64_t split_workspace_bytes(const AttnProblem& shape, const gpu::DeviceInfo& device,
                                   const std::string& image_arch) const override {
        if (!split_family(shape, image_arch)) return 0;
        const int64_t splits = split_count(shape, device, -1);
        return splits > 1 ? static_cast<uint64_t>(split_kv_workspace_bytes(split_kv_shape(shape), splits)) : 0;
    }

    void second_parameter(const AttnProblem& p, const gpu::AttnLaunch& launch, gpu::GpuRuntime& runtime,
                          gpu::SecondKernelParameter& out) const override {
        if (launch.splits > 1) {
            static_assert(sizeof(nvidia::SplitParams) <= sizeof(out.bytes), "the split arguments fit the parameter storage");
            const SplitKvLayout layout = split_kv_layout(p.batch, p.seqlen_q, p.heads_q, p.head_dim_v, launch.splits);
            nvidia::SplitParams params;
            std::memset(&params, 0, sizeof(params));
            SplitKvArgs& split = params.split;
            split.part_o = static_cast<float*>(p.workspace);
            split.part_lse = split.part_o + launch.splits * layout.o_stride;
            split.part_o_stride = layout.o_stride;
            split.part_lse_stride = layout.lse_stride;
            split.num_splits = static_cast<int32_t>(launch.splits);
            split.row_tiles = static_cast<int32_t>(split_kv_row_tiles(split_kv_shape(p)));
            if (p.paged()) {  // the kernel gathers each K/V row by cp.async (no tensor maps)
                params.paged.block_table = p.block_table;
                params.paged.seqused_k = p.seqused_k;
                params.paged.block_table_stride = p.block_table_stride;
                params.paged.page_size = static_cast<int32_t>(p.page_size);
                params.paged.num_pages = static_cast<int32_t>(p.num_pages);
            }
            std::memcpy(out.bytes, &params, sizeof(params));
            return;
        }
        static_assert(sizeof(nvidia::WsTmaParams) <= sizeof(out.bytes), "the tensor maps fit the parameter storage");
        static_assert(alignof(nvidia::WsTmaParams) <= alignof(gpu::SecondKernelParameter), "alignment");
        nvidia::WsTmaParams params;
        std::memset(&params, 0, sizeof(params));  // enabled = 0: the kernels copy with cp.async
        const bool one_byte = p.q.dtype == ZYFA_DTYPE_FP8_E4M3FN || p.q.dtype == ZYFA_DTYPE_INT8;
        const int key_block = nvidia::ws_key_block(one_byte, p.softmax == ZYFA_SOFTMAX_LEAN,
                                                   static_cast<int>(p.head_dim_qk), static_cast<int>(p.head_dim_v));
        if (choice_ == CudaKernelChoice::Automatic) params = make_ws_tma_params(p, key_block, runtime);
        // Only the TMA producer copies it (without keys nothing reads V: the cp.async producer copies Q).
        if (p.v_transposed && params.v_transposed == 0 && p.seqlen_k > 0 && !p.empty()) {
            throw_not_supported("params.flags has ZYFA_ATTN_V_TRANSPOSED but the tensor memory accelerator cannot "
                                "address q or k (strides, alignment or the driver's cuTensorMapEncodeTiled)");
        }
        if (p.paged()) {  // the paged kernels' block table (PagedKvArgs), with or without the maps
            params.paged.block_table = p.block_table;
            params.paged.seqused_k = p.seqused_k;
            params.paged.block_table_stride = p.block_table_stride;
            params.paged.page_size = static_cast<int32_t>(p.page_size);
            params.paged.num_pages = static_cast<int32_t>(p.num_pages);
            params.paged.tma_box_rows = params.enabled ? static_cast<int32_t>(std::min<int64_t>(p.page_size, key_block)) : 0;
        }
        params.key_bias = p.key_bias;  // read by the key-bias kernels only (plan chose one when set)
        std::memcpy(out.bytes, &params, sizeof(params));
    }

    // cvt.rni / the magic-number rounding round to nearest even: the reference constant.
    float lean_centre() const override { return numerics::lean_p_centre_for(numerics::FloatToIntRounding::NearestEven); }

private:
    CudaKernelChoice choice_;
};

}  // namespace

std::unique_ptr<gpu::AttnKernelCatalogue> make_cuda_attn_catalogue(CudaKernelChoice choice) {
    return std::make_unique<CudaAttnCatalogue>(choice);
}

}  // namespace cuda
}  // namespace zyfa
