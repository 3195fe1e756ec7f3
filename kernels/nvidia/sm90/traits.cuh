// Compile-time facts of the warp-specialised sm_90a kernel (attention_fwd_ws.cuh) that every role
// reads: the key block and tile shape of an instance, the register split between the producer and
// the consumers, the named barriers, the ring slots, and the analysis builds' SASS markers.
#ifndef ZYFA_KERNELS_NVIDIA_SM90_TRAITS_CUH
#define ZYFA_KERNELS_NVIDIA_SM90_TRAITS_CUH

#include "nvidia/attention_fwd_common.cuh"
#include "nvidia/attention_ws_tile_shape.h"
#include "nvidia/input_kind.h"

namespace zyfa {
namespace nvidia {

// What the producer gives up the consumers take, from the entry count of 168 (384 threads, the
// CTA's whole allocation: setmaxnreg.inc waits, forever, for registers the CTA does not hold):
// 128 (168 - 56) = 256 (224 - 168); head dim 256 (O in 128 accumulators) moves 16 more per
// consumer thread, 128 (168 - 40) = 256 (232 - 168); the 128-key steps (64 scores and P's A
// fragments per thread: FP8 two buffers of 16 registers, 16-bit two of 32 at head dim 64 or one
// beside O's 64 accumulators; both rows' softmax chains in flight) take all a producer can give,
// 128 (168 - 24) = 256 (240 - 168): their producer's work is TMA copies (or cp.async, unrolled
// less) and FP8's V transpose.
template <int DV, int KEYS>
constexpr int kProducerRegisters = KEYS == 128 ? 24 : DV == 256 ? 40 : 56;
template <int DV, int KEYS>
constexpr int kConsumerRegisters = KEYS == 128 ? 240 : DV == 256 ? 232 : 224;
constexpr int kEntryRegisters = 168;  // 65536 / 384, in steps of 8
static_assert(kWsConsumerWarpgroups == 2, "two consumer warpgroups (the register split above)");
template <int DV, int KEYS>
constexpr bool kRegistersFit = 128 * kProducerRegisters<DV, KEYS> + 256 * kConsumerRegisters<DV, KEYS> <= 384 * kEntryRegisters;
static_assert(kRegistersFit<128, 64> && kRegistersFit<256, 64> && kRegistersFit<128, 128>,
              "registers beyond the CTA's allocation");
// The cp.async producer's copy loop unrolled by 2 (fully unrolled it keeps every copy's address
// live and spills at 56 registers), by 1 at 24 registers.
template <int DV, int KEYS>
constexpr int kProducerCopyUnroll = kProducerRegisters<DV, KEYS> <= 24 ? 1 : 2;
constexpr int kProducerBarrier = 1;   // named barrier of the producer's 128 threads
constexpr int kConsumerBarrier0 = 2;  // + consumer: that consumer warpgroup's 128 threads
// Analysis builds only (tools/gpu/ws-step-sass.py): PMTRIG instructions that mark, in the SASS, a
// consumer step (pmevent 1 begin, 2 end) and the branches inside it that a long sequence's blocks
// do not take (3/4 the masked softmax, 5/6 16-bit EXACT's per-row exponent form, 7/8 the fence
// after cp.async), so that a script can count one step's usual path without a GPU.
#ifndef ZYFA_WS_SASS_MARKERS
#define ZYFA_WS_SASS_MARKERS 0
#endif
template <int kBit>
__device__ __forceinline__ void sass_marker() {
    if constexpr (ZYFA_WS_SASS_MARKERS != 0) asm volatile("pmevent %0;" ::"n"(kBit));
}

template <bool INT8>
struct ScoreRegOf {
    using type = float;
};
template <>
struct ScoreRegOf<true> {
    using type = uint32_t;
};

// The key block and tile shape of one kernel instance, and the per-thread sizes the consumer's
// registers follow from. KEY_BIAS: the variant that adds zyfa_attn_params.key_bias to every score
// (common/key_bias.h; the ws_bias kernels of attention_kernel_variants.def, FP8 E4M3 only).
template <InKind IN, PMode PM, int DQK, int DV, bool KEY_BIAS = false>
struct WsKernelTraits {
    // One-byte operands: FP8 inputs, and the INT8 Q/K mode (s8 Q and K, whose K tiles are bytes
    // like e4m3's; V and P e4m3): every FP8 mechanism but the score product and its conversion.
    static constexpr bool kFp8 = IN == InKind::E4m3 || IN == InKind::Int8;
    static constexpr bool kInt8 = IN == InKind::Int8;
    static constexpr int kKeyBlock = WsKeyBlock<kFp8, PM == PMode::Lean, DQK, DV>::kValue;
    using Shape = WsTileShape<kFp8 ? 1 : 2, DQK, DV, kKeyBlock>;
    static constexpr int kRows = Shape::kRows, kElem = Shape::kElem, kKeys = Shape::kKeys, kStages = Shape::kStages;
    static constexpr InKind kPvIn = kFp8 ? InKind::E4m3 : IN;  // the P.V product's operand kind
    // The score registers: s32 accumulators of the s8 wgmma (an .s32 operand cannot be an .f32
    // register), fp32 otherwise.
    using ScoreReg = typename ScoreRegOf<kInt8>::type;
    static constexpr int kDqk = DQK, kDv = DV;
    static constexpr InKind kIn = IN;
    static constexpr PMode kPMode = PM;
    static constexpr bool kKeyBias = KEY_BIAS;
    // The key-bias kernels hold the block's biases beside the scores (LEAN: 32 registers across
    // both passes, sm90/softmax.cuh): Q's fragments stay in registers only where ptxas then spills
    // nothing (FP8 EXACT at head dim 128; tests/gpu/check_ws_kernels.sh checks every instance).
    static constexpr bool kKeyBiasQRegs = PM == PMode::Exact && DQK == 128;
    static_assert(!KEY_BIAS || IN == InKind::E4m3, "the key-bias kernels are FP8 E4M3's (Q smoothing)");
    static constexpr int kAcc = DV / 2;  // O's accumulators per consumer thread
    // LEAN's row sums: per block by a wgmma against the ones tile (into block_sum), added to
    // l_scaled, which holds l times 2^acc_exponent and takes O's rescales in fp32 in the
    // model's order (l * alpha + the block's sum). Head dim 256 too: its 4 block_sum registers fit
    // beside O's 128 (no spill, nvcc 13.0), where the FP16 row-sum product's 16 once did not, and
    // they replace two instructions per score (509 -> 432 a step, tools/gpu/ws-step-sass.py).
    static constexpr bool kRowSumByMma = PM == PMode::Lean && Shape::kOnesTile;
    // LEAN's 128-key instance scales P against a lazy anchor (kernels/common/lean_anchor.h), the
    // CPU model's params.key_block = 128: a warp whose rows all keep their anchor skips O's rescale.
    static constexpr bool kLeanLazyAnchor = PM == PMode::Lean && kKeys == 128;
    static constexpr int kQkSteps = DQK * kElem / 32;  // k-steps of S = Q K^T (32 bytes of a row each)
    // Head dim 256 keeps Q in shared memory: its 32 (64) fragment registers do not fit beside
    // O's 128 accumulators; so do the 128-key steps beyond 16 fragment registers (FP8 192/128's
    // 24, 16-bit 128's 32 and 192/128's 48), which would spill beside 64 scores once both rows'
    // softmax chains are in flight (the score wgmma then reads Q by descriptor).
    static constexpr bool kQRegs = !KEY_BIAS ? (kKeys == 64 ? DQK <= 192 : kQkSteps <= 4) : kKeyBiasQRegs;
    static constexpr int kScores = kKeys / 2;  // per thread: 2 rows x kKeys / 4 keys
    static constexpr int kTiles = kKeys / 8;   // 8-key accumulator tiles of a block
    static_assert(kKeys == 64 || DV <= 128, "128-key blocks: 64 scores per thread beside at most 64 accumulators of O");
    static constexpr int kPvSteps = kFp8 ? kKeys / 32 : kKeys / 16;  // k-steps of P.V over a block
    // P's A fragments in two buffers where they fit (FlashAttention-3's overlap: the next block's
    // softmax packs into one while P.V reads the other); in one for the 16-bit 128-key steps at
    // head_dim_v 128, whose two (2 x 32 registers beside 64 scores and O's 64 accumulators)
    // spilled: there the softmax leaves the next block's probabilities in the score registers and
    // packs them after P.V's wait (sm90/mainloop.cuh's step).
    static constexpr bool kOnePBuffer = !kFp8 && kKeys == 128 && DV == 128;
    static constexpr uint32_t kSignBits = kFp8 ? 0x80808080u : 0x80008000u;  // of each element of a word
    static constexpr int kProducerRegs = kProducerRegisters<DV, kKeys>;
    static constexpr int kConsumerRegs = kConsumerRegisters<DV, kKeys>;
    static constexpr int kCopyUnroll = kProducerCopyUnroll<DV, kKeys>;
};

// A ring stage and the parity of its current use (the mbarrier phase to wait for), carried from
// block to block instead of index % stages and (index / stages) & 1 per wait.
struct RingSlot {
    int stage;
    int parity;
};
template <int kStages>
__device__ __forceinline__ RingSlot next_slot(RingSlot r) {
    return r.stage + 1 == kStages ? RingSlot{0, r.parity ^ 1} : RingSlot{r.stage + 1, r.parity};
}

// The thread index read again where the consumer's loop needs it (the masked softmax, the stage
// release, the epilogue): a volatile read the compiler cannot merge with the one at the
// consumer's start, so that the index and what derives from it are not live, or spilled, across
// the loop.
__device__ __forceinline__ int thread_now() {
    uint32_t t;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
    return static_cast<int>(t);
}
__device__ __forceinline__ int lane_now() { return thread_now() % 32; }

}  // namespace nvidia
}  // namespace zyfa

#endif
